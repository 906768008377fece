package storage

import (
	"bytes"

	"github.com/cockroachdb/pebble/v2"
)

// Existence probes. An insert must know whether its key (row key, or a
// unique index entry) is in the snapshot; a point Get per row is most of
// the cost of a bulk load. A snapshot never changes, so after a few probes
// of one span (a table's rows, one index's entries) the transaction reads
// bounds of the span's keys once and answers every probe outside them
// without a lookup: a load into an empty table, ids above the current
// maximum and negative ids below the minimum need none.
//
// Reading a bound steps over every deleted key (every version of it the
// memtable holds) between the span's end and the first key still there.
// A queue table, rows deleted at its low end and appended at its top,
// would pay for all its deleted rows on each append's First(). So the
// bound on the side the probes move towards is read first, and only as
// far as the probe that reads it (Pebble's iterator limits): when no key
// lies beyond that probe, the probes run past the span's keys and the
// bound behind them is not read at all; otherwise both bounds are read in
// full. (A Get of a deleted key also steps over its versions, so reading
// the bound behind is no dearer than the Gets it saves when the probes go
// through deleted keys, and nearly free when they do not.)
//
// Row keys a recent commit deleted are answered before any of this, from
// the recently deleted keys (deleted.go).
//
// The bounds only ever skip lookups whose answer is "absent" in the
// snapshot; concurrent commits are still caught at commit (first committer
// wins, doc.go invariant 5).

// probeBoundsAfter is how many probes of a span go straight to Get before
// its bounds are read: a small transaction pays no iterator.
const probeBoundsAfter = 8

// spanBounds bound a span's keys in the snapshot: none is below first
// (nil: no bound), none above last (none at or above it when lastExcl;
// nil: no bound).
type spanBounds struct {
	probes      int
	prev        []byte // the last probe before the bounds were read
	loaded      bool
	empty       bool
	first, last []byte
	lastExcl    bool
	// steps counts the internal keys the bounds' walks stepped over (a
	// test's measure of their cost).
	steps int
}

// snapHasIn reports whether the snapshot holds pkey, which lies in the
// span that b describes; span returns the span's [lower, upper).
func (t *Txn) snapHasIn(b *spanBounds, span func() (lower, upper []byte), pkey []byte) (bool, error) {
	if !b.loaded {
		if b.probes < probeBoundsAfter {
			b.probes++
			b.prev = append(b.prev[:0], pkey...)
			return t.snapHas(pkey)
		}
		lower, upper := span()
		down := bytes.Compare(pkey, b.prev) < 0
		if err := t.loadBounds(b, lower, upper, pkey, down); err != nil {
			return false, err
		}
	}
	if b.outside(pkey) {
		return false, nil
	}
	return t.snapHas(pkey)
}

// outside reports whether the bounds place pkey outside the span's keys.
func (b *spanBounds) outside(pkey []byte) bool {
	if b.empty || b.first != nil && bytes.Compare(pkey, b.first) < 0 {
		return true
	}
	if b.last == nil {
		return false
	}
	c := bytes.Compare(pkey, b.last)
	return c > 0 || c == 0 && b.lastExcl
}

// loadBounds reads b for the span [lower, upper) at probe pkey; down: the
// probes move towards lower.
func (t *Txn) loadBounds(b *spanBounds, lower, upper, pkey []byte, down bool) error {
	it, err := t.snap.newIter(lower, upper)
	if err != nil {
		return err
	}
	if pit, ok := it.(*pebble.Iterator); ok {
		pebbleBounds(b, pit, lower, upper, pkey, down)
	} else {
		seekBounds(b, it, lower, upper, pkey, down)
	}
	if err := it.Close(); err != nil {
		return err
	}
	b.loaded = true
	return nil
}

// pebbleBounds reads b with Pebble's seeks to a limit, which stop at pkey
// instead of stepping over the deleted keys before it, and counts the
// steps taken.
func pebbleBounds(b *spanBounds, it *pebble.Iterator, lower, upper, pkey []byte, down bool) {
	if down {
		switch it.SeekGEWithLimit(lower, pkey) {
		case pebble.IterExhausted:
			b.empty = true
		case pebble.IterAtLimit:
			// No key in [lower, pkey): the probes run below them all.
			b.first = cloneBytes(pkey)
		case pebble.IterValid:
			b.first = cloneBytes(it.Key())
			if it.Last() {
				b.last = cloneBytes(it.Key())
			}
		}
	} else {
		switch it.SeekLTWithLimit(upper, pkey) {
		case pebble.IterExhausted:
			b.empty = true
		case pebble.IterAtLimit:
			// No key in [pkey, upper): the probes run above them all.
			b.last, b.lastExcl = cloneBytes(pkey), true
		case pebble.IterValid:
			b.last = cloneBytes(it.Key())
			if it.First() {
				b.first = cloneBytes(it.Key())
			}
		}
	}
	st := it.Stats()
	b.steps = st.ForwardStepCount[pebble.InternalIterCall] + st.ReverseStepCount[pebble.InternalIterCall]
}

// seekBounds reads b with plain seeks (an engine without limits): the
// first and last keys of the span, as far as pkey allows.
func seekBounds(b *spanBounds, it engineIter, lower, upper, pkey []byte, down bool) {
	if !it.SeekGE(lower) {
		b.empty = true
		return
	}
	if down && bytes.Compare(it.Key(), pkey) >= 0 {
		b.first = cloneBytes(pkey)
		return
	}
	b.first = cloneBytes(it.Key())
	if it.SeekLT(upper) {
		if !down && bytes.Compare(it.Key(), pkey) < 0 {
			b.last, b.lastExcl = cloneBytes(pkey), true
			return
		}
		b.last = cloneBytes(it.Key())
	}
}

// rowExists reports whether the snapshot holds a row of tw's table at key.
func (t *Txn) rowExists(tw *tableWrites, key []byte) (bool, error) {
	rows, err := t.rowsOf(tw.id)
	if err != nil {
		return false, err
	}
	// The recently deleted keys and read sets name rows by the table's
	// own id; Pebble holds them under rows.
	t.keyBuf = rowKey(t.keyBuf[:0], tw.id, key)
	if t.db.deleted.absent(t.keyBuf, t.beginSeq) {
		return false, nil
	}
	if rows != tw.id {
		t.keyBuf = rowKey(t.keyBuf[:0], rows, key)
	}
	exists, err := t.snapHasIn(&tw.rowBounds, func() ([]byte, []byte) { return tableSpan(prefixRows, rows) }, t.keyBuf)
	if exists && t.reads != nil {
		// A duplicate is a read (ON CONFLICT acts on it); an absent key is
		// written, and first committer wins covers it.
		t.readPoint(tw.id, rowKey(nil, tw.id, key))
	}
	return exists, err
}
