package storage

import (
	"bytes"
	"fmt"
	"iter"
)

// Iterator walks rows (Scan) or meta keys (ScanMeta) in key order, merging the
// transaction's own writes over its snapshot. The own writes are those made
// before Scan was called: writes made while the iterator is open are not
// seen (so an UPDATE that moves keys forward never meets its own rows again).
//
// Without own writes in range it reads Pebble directly: per row it only
// parses the row header and allocates nothing.
type Iterator struct {
	txn   *Txn
	pit   engineIter // nil when the snapshot side is empty
	strip int        // bytes of key-space prefix to strip from Pebble keys
	meta  bool       // values have no row header

	bset  *writeSet               // the own writes bnext walks a clone of
	bnext func() (rowWrite, bool) // own writes, nil when none
	bstop func()

	started, done, closed bool
	pValid, bValid        bool
	pAdvance, bAdvance    bool
	bw                    rowWrite

	row Row
	err error

	onRelease func() // OnRelease's
	// aux is a snapshot iterator its owner reads beside this one (an
	// index scan's row fetches, multiget.go), closed with it.
	aux engineIter

	// A serializable transaction's iterator records the part of its Pebble
	// range [rlo, rhi) of table rtbl it walked (serializable.go).
	rtrack   bool
	rtbl     TableID
	rlo, rhi []byte
}

// Scan returns the rows of tbl with start <= key < end in key order (nil
// start or end: unbounded).
func (t *Txn) Scan(tbl TableID, start, end []byte) *Iterator {
	it := &Iterator{txn: t, strip: tablePrefixLen}
	if err := t.alive(); err != nil {
		it.err, it.done = err, true
		return it
	}
	if end != nil && bytes.Compare(start, end) >= 0 {
		it.done = true
		return it
	}
	tw := t.tables[tbl]
	if tw != nil {
		if err := tw.unreadable(); err != nil {
			it.err, it.done = err, true
			return it
		}
	}
	if tw == nil || !tw.truncated {
		rows, err := t.rowsOf(tbl)
		if err != nil {
			it.err, it.done = err, true
			return it
		}
		lower, upper := rowSpan(rows, start, end)
		if !it.openPebble(lower, upper) {
			return it
		}
		if rows != tbl {
			// Read sets name rows by the table's own id.
			lower, upper = rowSpan(tbl, start, end)
		}
		it.trackReads(tbl, lower, upper)
	}
	if tw != nil && tw.rows.Len() > 0 {
		it.openBuffer(tw.rows, start, end)
	}
	t.track(it)
	return it
}

// rowSpan is the Pebble key range of tbl's rows with start <= key < end
// (nil start or end: unbounded).
func rowSpan(tbl TableID, start, end []byte) (lower, upper []byte) {
	lower = rowKey(nil, tbl, start)
	if end != nil {
		return lower, rowKey(nil, tbl, end)
	}
	_, upper = tableSpan(prefixRows, tbl)
	return lower, upper
}

// ScanMeta returns the meta keys that start with prefix, in key order.
// Row.Key and Row.Value only.
func (t *Txn) ScanMeta(prefix []byte) *Iterator {
	it := &Iterator{txn: t, strip: 1, meta: true}
	if err := t.alive(); err != nil {
		it.err, it.done = err, true
		return it
	}
	lower := metaKey(nil, prefix)
	upper := PrefixEnd(lower)
	if !it.openPebble(lower, upper) {
		return it
	}
	if t.meta != nil && t.meta.Len() > 0 {
		it.openBuffer(t.meta, prefix, PrefixEnd(prefix))
	}
	t.track(it)
	return it
}

func (t *Txn) track(it *Iterator) {
	if t.iters == nil {
		t.iters = make(map[*Iterator]struct{})
	}
	t.iters[it] = struct{}{}
}

func (it *Iterator) openPebble(lower, upper []byte) bool {
	pit, err := it.txn.snap.newIter(lower, upper)
	if err != nil {
		it.err, it.done = err, true
		return false
	}
	it.pit = pit
	return true
}

// openBuffer iterates a clone of the own writes (copy-on-write: O(1)
// now, later writes copy what they touch).
func (it *Iterator) openBuffer(set *writeSet, start, end []byte) {
	it.bset = set
	it.bnext, it.bstop = iter.Pull(set.clone().Ascend(start, end))
}

// Next advances to the next row; false at the end or on error (see Err).
func (it *Iterator) Next() bool {
	if it.done || it.err != nil {
		return false
	}
	if !it.started {
		it.started = true
		if it.pit != nil {
			it.pValid = it.pit.First()
		}
		if it.bnext != nil {
			it.bw, it.bValid = it.bnext()
		}
	} else {
		if it.pAdvance {
			it.pValid, it.pAdvance = it.nextPebble(), false
		}
		if it.bAdvance {
			it.bw, it.bValid = it.bnext()
			it.bAdvance = false
		}
	}
	for {
		if !it.bValid {
			if !it.pValid {
				it.done = true
				if it.pit != nil {
					it.err = it.pit.Error()
				}
				return false
			}
			it.pAdvance = true
			return it.emitPebble()
		}
		if it.pValid {
			c := bytes.Compare(it.pit.Key()[it.strip:], it.bw.key)
			if c < 0 {
				it.pAdvance = true
				return it.emitPebble()
			}
			if c == 0 { // the own write shadows the snapshot row
				it.pValid = it.nextPebble()
			}
		}
		if it.bw.del {
			it.bw, it.bValid = it.bnext()
			continue
		}
		it.bAdvance = true
		it.row = Row{Key: it.bw.key, Value: it.bw.value, RowID: it.bw.rowID, CommitVersion: -1}
		if it.meta {
			it.row.RowID, it.row.CommitVersion = 0, 0
		}
		return true
	}
}

// nextPebble moves the Pebble iterator to the next key. NextPrefix, with
// the default comparer's whole-key prefixes, is Next, except that it seeks
// past the older versions of the key it leaves (the memtable keeps every
// write of a key since its last flush) instead of stepping over each: a
// table whose rows are updated over and over is scanned at the cost of its
// rows, not of their versions.
func (it *Iterator) nextPebble() bool { return it.pit.NextPrefix() }

func (it *Iterator) emitPebble() bool {
	k := it.pit.Key()
	v, err := it.pit.ValueAndErr()
	if err != nil {
		it.err = err
		return false
	}
	if it.meta {
		it.row = Row{Key: k[it.strip:], Value: v}
		return true
	}
	rowID, ver, val, err := parseRowValue(v)
	if err != nil {
		it.err = fmt.Errorf("%w at key %x", err, k)
		return false
	}
	it.row = Row{Key: k[it.strip:], Value: val, RowID: rowID, CommitVersion: ver}
	return true
}

// SnapshotOnly reports whether the iterator reads the snapshot alone (no
// own writes in its range). Such an iterator touches nothing of its Txn
// until Close, so its Next may run on another goroutine than the one that
// opened it, one call at a time, as long as Close waits for the last.
func (it *Iterator) SnapshotOnly() bool { return it.bnext == nil }

// Retarget points the iterator at rows [start, end) of tbl, reusing its
// Pebble iterator (Pebble's SetBounds): a scan of many small key ranges —
// an IN list, a refresh's lookups by key — then opens one iterator, not
// one per range. It applies to an iterator of tbl's rows that reads the
// snapshot alone (SnapshotOnly) and has not failed, while the transaction
// has no own writes of tbl (a new Scan would merge those); otherwise it
// returns false and changes nothing, and the caller opens a new Scan.
func (it *Iterator) Retarget(tbl TableID, start, end []byte) bool {
	if it.closed || it.err != nil || it.pit == nil || it.bnext != nil || it.meta || it.onRelease != nil {
		return false
	}
	if tw := it.txn.tables[tbl]; tw != nil && (tw.truncated || tw.rows.Len() > 0) {
		return false
	}
	return it.retarget(tbl, start, end, rowSpan)
}

// retarget sets the Pebble bounds of a snapshot-only iterator to the keys
// span gives for [start, end) under tbl's rows id (the read set names
// them under tbl) and starts it again; false, changing nothing, for an
// empty range or when the rows id cannot be read.
func (it *Iterator) retarget(tbl TableID, start, end []byte, span func(id TableID, start, end []byte) (lower, upper []byte)) bool {
	if end != nil && bytes.Compare(start, end) >= 0 {
		return false
	}
	rows, err := it.txn.rowsOf(tbl)
	if err != nil {
		return false
	}
	if it.txn.reads != nil {
		it.noteRead()
		lower, upper := span(tbl, start, end)
		it.trackReads(tbl, lower, upper)
	}
	lower, upper := span(rows, start, end)
	it.pit.SetBounds(lower, upper)
	it.started, it.done = false, false
	it.pValid, it.pAdvance, it.bValid, it.bAdvance = false, false, false, false
	it.row = Row{}
	return true
}

// OnRelease sets a function that runs first when the iterator is released,
// by Close or by the end of its transaction: the end of a transaction
// releases its open iterators, so a goroutine reading one (SnapshotOnly)
// is stopped there before the iterator goes.
func (it *Iterator) OnRelease(f func()) { it.onRelease = f }

// Row returns the current row; its slices are valid until Next.
func (it *Iterator) Row() Row { return it.row }

// Err returns the error that stopped the iteration, if any.
func (it *Iterator) Err() error { return it.err }

// Close releases the iterator and returns Err.
func (it *Iterator) Close() error {
	if !it.closed && it.txn != nil && it.txn.iters != nil {
		delete(it.txn.iters, it)
	}
	return it.release()
}

func (it *Iterator) release() error {
	if it.closed {
		return it.err
	}
	if f := it.onRelease; f != nil {
		it.onRelease = nil
		f()
	}
	if it.rtrack {
		it.noteRead() // before the Pebble iterator, whose key it copies, closes
	}
	it.closed, it.done = true, true
	if it.bstop != nil {
		it.bstop()
		it.bset.unclone()
	}
	if it.pit != nil {
		if err := it.pit.Close(); err != nil && it.err == nil {
			it.err = err
		}
	}
	if it.aux != nil {
		if err := it.aux.Close(); err != nil && it.err == nil {
			it.err = err
		}
		it.aux = nil
	}
	return it.err
}
