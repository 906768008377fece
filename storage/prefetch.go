package storage

import (
	"bytes"
	"slices"
)

// Batched reads. A refresh touches a few thousand scattered keys (a
// group's stored state, the view row it replaces, the row it inserts),
// and a point Get per key builds a fresh iterator over every memtable and
// level: most of an incremental refresh's cost. Prefetch reads such a set
// of keys with one iterator, in key order (so sstable blocks are met in
// order and each level's iterator is reused), and keeps the snapshot's
// answers: later reads of those keys (Get, GetMeta, insert probes) take
// them from memory. Measured on 300k rows, 6,000 keys half present: about
// 1.3-2.2 µs a key against 1.6-3.8 µs for a Get each.
//
// Only snapshot reads are cached, and a snapshot never changes, so an
// answer stays right for the whole transaction; the transaction's own
// writes are consulted before the snapshot as always.

// fetched is the snapshot's answer for one Pebble key.
type fetched struct {
	value []byte // nil when absent
	ok    bool
}

// PrefetchMeta reads the snapshot's values of the given meta keys.
func (t *Txn) PrefetchMeta(keys [][]byte) error {
	if err := t.alive(); err != nil {
		return err
	}
	pkeys := make([][]byte, len(keys))
	for i, k := range keys {
		pkeys[i] = metaKey(nil, k)
	}
	return t.prefetch(pkeys)
}

// PrefetchRows reads the snapshot's rows of tbl at keys.
func (t *Txn) PrefetchRows(tbl TableID, keys [][]byte) error {
	if err := t.alive(); err != nil {
		return err
	}
	rows, err := t.rowsOf(tbl)
	if err != nil {
		return err
	}
	pkeys := make([][]byte, len(keys))
	for i, k := range keys {
		pkeys[i] = rowKey(nil, rows, k)
	}
	return t.prefetch(pkeys)
}

// prefetchMax bounds the answers a transaction keeps: a prefetch that
// would pass it first drops the earlier ones, and reads only the first
// prefetchMax keys of a bigger set (the rest are looked up one by one).
const prefetchMax = 1 << 18

func (t *Txn) prefetch(pkeys [][]byte) error {
	if len(pkeys) == 0 {
		return nil
	}
	slices.SortFunc(pkeys, bytes.Compare)
	pkeys = slices.CompactFunc(pkeys, bytes.Equal)
	pkeys = pkeys[:min(len(pkeys), prefetchMax)]
	if t.fetched == nil || len(t.fetched)+len(pkeys) > prefetchMax {
		t.fetched = make(map[string]fetched, len(pkeys))
	}
	it, err := t.snap.newIter(pkeys[0], PrefixEnd(pkeys[len(pkeys)-1]))
	if err != nil {
		return err
	}
	for _, k := range pkeys {
		if _, ok := t.fetched[string(k)]; ok {
			continue
		}
		f := fetched{}
		if it.SeekPrefixGE(k) && bytes.Equal(it.Key(), k) {
			v, err := it.ValueAndErr()
			if err != nil {
				it.Close()
				return err
			}
			f = fetched{value: cloneBytes(v), ok: true}
		}
		t.fetched[string(k)] = f
	}
	return it.Close()
}
