package storage

// ScanMetaRange returns the meta keys k with start <= k < end, in key order
// (nil end: every meta key from start on). Row.Key and Row.Value only. It
// reads only that span, where ScanMeta reads a whole prefix: a caller whose
// keys are ordered by time reads one window of a long history.
func (t *Txn) ScanMetaRange(start, end []byte) *Iterator {
	it := &Iterator{txn: t, strip: 1, meta: true}
	if err := t.alive(); err != nil {
		it.err, it.done = err, true
		return it
	}
	lower := metaKey(nil, start)
	var upper []byte
	if end != nil {
		upper = metaKey(nil, end)
	} else {
		upper = PrefixEnd(metaKey(nil, nil))
	}
	if !it.openPebble(lower, upper) {
		return it
	}
	if t.meta != nil && t.meta.Len() > 0 {
		it.openBuffer(t.meta, start, end)
	}
	t.track(it)
	return it
}

// DeleteMetaRange deletes the meta keys k with start <= k < end (nil end:
// every meta key from start on), as the transaction sees them.
func (t *Txn) DeleteMetaRange(start, end []byte) error {
	it := t.ScanMetaRange(start, end)
	var keys [][]byte
	for it.Next() {
		keys = append(keys, cloneBytes(it.Row().Key))
	}
	err := it.Err()
	it.Close()
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := t.DeleteMeta(k); err != nil {
			return err
		}
	}
	return nil
}
