package storage

import (
	"bytes"

	"github.com/cockroachdb/pebble/v2"
)

// Existence probes. An insert must know whether its key (row key, or a
// unique index entry) is in the snapshot; a point Get per row is most of
// the cost of a bulk load. A snapshot never changes, so after a few probes
// of one span (a table's rows, one index's entries) the transaction reads
// the span's first and last keys once and answers every probe outside
// [first, last] without a lookup: a load into an empty table, ids above
// the current maximum and negative ids below the minimum need none.
//
// The bounds only ever skip lookups whose answer is "absent" in the
// snapshot; concurrent commits are still caught at commit (first committer
// wins, doc.go invariant 5).

// probeBoundsAfter is how many probes of a span go straight to Get before
// its bounds are read: a small transaction pays no iterator.
const probeBoundsAfter = 8

// spanBounds are a span's first and last Pebble keys in the snapshot.
type spanBounds struct {
	probes      int
	loaded      bool
	empty       bool
	first, last []byte
}

// snapHasIn reports whether the snapshot holds pkey, which lies in the
// span that b describes; span returns the span's [lower, upper).
func (t *Txn) snapHasIn(b *spanBounds, span func() (lower, upper []byte), pkey []byte) (bool, error) {
	if !b.loaded {
		if b.probes < probeBoundsAfter {
			b.probes++
			return t.snapHas(pkey)
		}
		lower, upper := span()
		if err := t.loadBounds(b, lower, upper); err != nil {
			return false, err
		}
	}
	if b.empty || bytes.Compare(pkey, b.first) < 0 || bytes.Compare(pkey, b.last) > 0 {
		return false, nil
	}
	return t.snapHas(pkey)
}

func (t *Txn) loadBounds(b *spanBounds, lower, upper []byte) error {
	it, err := t.snap.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	if !it.First() {
		b.empty = true
	} else {
		b.first = cloneBytes(it.Key())
		b.last = b.first
		if it.Last() {
			b.last = cloneBytes(it.Key())
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	b.loaded = true
	return nil
}

// rowExists reports whether the snapshot holds a row of tw's table at key.
func (t *Txn) rowExists(tw *tableWrites, key []byte) (bool, error) {
	t.keyBuf = rowKey(t.keyBuf[:0], tw.id, key)
	return t.snapHasIn(&tw.rowBounds, func() ([]byte, []byte) { return tableSpan(prefixRows, tw.id) }, t.keyBuf)
}
