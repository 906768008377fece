package storage

import (
	"encoding/binary"
	"fmt"
	"time"
)

// ChangeType is the _change_type of a change record (R-T7).
type ChangeType uint8

const (
	ChangeInsert ChangeType = iota + 1
	ChangeDelete
	ChangeUpdatePreimage
	ChangeUpdatePostimage
)

func (c ChangeType) String() string {
	switch c {
	case ChangeInsert:
		return "insert"
	case ChangeDelete:
		return "delete"
	case ChangeUpdatePreimage:
		return "update_preimage"
	case ChangeUpdatePostimage:
		return "update_postimage"
	}
	return fmt.Sprintf("ChangeType(%d)", uint8(c))
}

// Change is one row change of the change data feed.
type Change struct {
	Version   int64
	Timestamp time.Time
	Type      ChangeType
	RowID     int64
	Key       []byte // the row's key (for an update preimage: the old key)
	Value     []byte // the row's value (for an update preimage: the old value)
}

// Change records on disk. An update is one record holding both images.
const (
	recInsert byte = 1
	recDelete byte = 2
	recUpdate byte = 3
)

func appendChangeRecord(dst []byte, typ byte, rowID int64, key, value, newKey, newValue []byte) []byte {
	dst = append(dst, typ)
	dst = binary.AppendUvarint(dst, uint64(rowID))
	dst = appendBytes(dst, key)
	dst = appendBytes(dst, value)
	if typ == recUpdate {
		dst = appendBytes(dst, newKey)
		dst = appendBytes(dst, newValue)
	}
	return dst
}

// ChangeIterator walks change records in version order, then in the order
// within the commit (key order of the rows' old keys; a delete sorts before an
// insert at the same key). An update yields its preimage, then its postimage.
type ChangeIterator struct {
	txn        *Txn
	pit        engineIter
	start      int64
	timestamps []time.Time // by version - start
	// spans: the key ranges the records are in, in version order; pit
	// walks spans[span]. One range of versions but for a version whose
	// records are in a change slot (HistoryEntry.ChangesAt).
	spans []changeSpan
	span  int

	cur         Change
	post        Change
	pendingPost bool
	started     bool
	done        bool
	closed      bool
	err         error
}

// Changes returns the change records of tbl with startVersion <= version <=
// endVersion (endVersion < 0: the latest version) as this txn's snapshot sees
// them. Asking for a version whose commit did not record changes (feed off)
// or whose records were vacuumed fails with a *ChangesUnavailableError
// naming the version they are available from (R-T7, R-T9). A range past the
// latest version is empty.
func (t *Txn) Changes(tbl TableID, startVersion, endVersion int64) *ChangeIterator {
	it := &ChangeIterator{txn: t}
	if err := it.open(tbl, startVersion, endVersion); err != nil {
		it.err, it.done = err, true
	}
	return it
}

func (it *ChangeIterator) open(tbl TableID, start, end int64) error {
	t := it.txn
	ps, ok, err := t.snapState(tbl)
	if err != nil {
		return err
	}
	if !ok {
		it.done = true
		return nil
	}
	if start < 0 {
		start = 0
	}
	if end < 0 || end > ps.version {
		if t.reads != nil {
			// Open-ended: a later commit's changes would be in it.
			t.reads.addWhole(tbl)
		}
		end = ps.version
	}
	if start > end {
		it.done = true
		return nil
	}
	it.start = start
	it.timestamps = make([]time.Time, end-start+1)
	off, rewritten := int64(-1), int64(-1)
	next := start // the first version no span holds yet
	if err := t.scanHistory(tbl, start, end, false, func(h HistoryEntry) bool {
		it.timestamps[h.Version-start] = h.Timestamp
		if !h.ChangeDataFeed {
			off = h.Version
		}
		if h.Rewritten {
			rewritten = h.Version
		}
		if h.ChangesAt != 0 {
			if next < h.Version {
				it.spans = append(it.spans, changeSpan{lower: cdfKey(nil, tbl, next, 0), upper: cdfKey(nil, tbl, h.Version, 0)})
			}
			lower, upper := slotSpan(tbl, h.ChangesAt)
			it.spans = append(it.spans, changeSpan{lower: lower, upper: upper, slotOf: h.Version, slot: true})
			next = h.Version + 1
		}
		return true
	}); err != nil {
		return err
	}
	if off >= 0 || start < ps.vacuumedBelow {
		from, err := t.changesAvailableFrom(tbl, ps)
		if err != nil {
			return err
		}
		return &ChangesUnavailableError{Table: tbl, Start: start, AvailableFrom: from,
			Vacuumed: off < 0, Rewritten: rewritten}
	}
	if next <= end {
		it.spans = append(it.spans, changeSpan{lower: cdfKey(nil, tbl, next, 0), upper: cdfKey(nil, tbl, end+1, 0)})
	}
	if len(it.spans) == 0 {
		it.done = true
		return nil
	}
	pit, err := t.snap.newIter(it.spans[0].lower, it.spans[0].upper)
	if err != nil {
		return err
	}
	it.pit = pit
	t.trackChanges(it)
	return nil
}

// changeSpan is a key range of change records; a slot's records are all
// of version slotOf.
type changeSpan struct {
	lower, upper []byte
	slot         bool
	slotOf       int64
}

// nextSpan positions pit at the first record of the spans after
// it.span that has one.
func (it *ChangeIterator) nextSpan() bool {
	for it.span+1 < len(it.spans) {
		if it.err = it.pit.Close(); it.err != nil {
			it.pit = nil
			return false
		}
		it.span++
		sp := it.spans[it.span]
		pit, err := it.txn.snap.newIter(sp.lower, sp.upper)
		if err != nil {
			it.pit, it.err = nil, err
			return false
		}
		it.pit = pit
		if pit.First() {
			return true
		}
		if pit.Error() != nil {
			return false
		}
	}
	return false
}

// changesAvailableFrom is the first version v such that every version in
// [v, latest] recorded its changes and none was vacuumed; -1 if none.
func (t *Txn) changesAvailableFrom(tbl TableID, ps persistedState) (int64, error) {
	from := ps.version + 1
	err := t.scanHistory(tbl, 0, ps.version, true, func(h HistoryEntry) bool {
		if !h.ChangeDataFeed || h.Version < ps.vacuumedBelow {
			return false
		}
		from = h.Version
		return true
	})
	if from > ps.version {
		from = -1
	}
	return from, err
}

// Next advances to the next change.
func (it *ChangeIterator) Next() bool {
	if it.done || it.err != nil {
		return false
	}
	if it.pendingPost {
		it.cur, it.pendingPost = it.post, false
		return true
	}
	var ok bool
	if !it.started {
		it.started, ok = true, it.pit.First()
	} else {
		ok = it.pit.Next()
	}
	if !ok && it.pit.Error() == nil {
		ok = it.nextSpan()
	}
	if !ok {
		it.done = true
		if it.err == nil && it.pit != nil {
			it.err = it.pit.Error()
		}
		return false
	}
	k := it.pit.Key()
	v, err := it.pit.ValueAndErr()
	if err != nil {
		it.err = err
		return false
	}
	if len(k) != tablePrefixLen+12 {
		it.err = fmt.Errorf("storage: corrupt change key %x", k)
		return false
	}
	version := int64(binary.BigEndian.Uint64(k[tablePrefixLen:]))
	if sp := &it.spans[it.span]; sp.slot {
		version = sp.slotOf
	}
	var ts time.Time
	if i := version - it.start; i >= 0 && i < int64(len(it.timestamps)) {
		ts = it.timestamps[i]
	}
	d := decoder{b: v}
	typ := d.byte()
	rowID := int64(d.uvarint())
	key, value := d.bytes(), d.bytes()
	it.cur = Change{Version: version, Timestamp: ts, RowID: rowID, Key: key, Value: value}
	switch typ {
	case recInsert:
		it.cur.Type = ChangeInsert
	case recDelete:
		it.cur.Type = ChangeDelete
	case recUpdate:
		it.cur.Type = ChangeUpdatePreimage
		it.post = Change{Version: version, Timestamp: ts, Type: ChangeUpdatePostimage, RowID: rowID}
		it.post.Key, it.post.Value = d.bytes(), d.bytes()
		it.pendingPost = true
	default:
		d.fail("change record type")
	}
	if d.err != nil {
		it.err = fmt.Errorf("%w at key %x", d.err, k)
		return false
	}
	return true
}

// Change returns the current change; its slices are valid until Next.
func (it *ChangeIterator) Change() Change { return it.cur }

// Err returns the error that stopped the iteration (a
// *ChangesUnavailableError when the range is not available).
func (it *ChangeIterator) Err() error { return it.err }

// Close releases the iterator and returns Err.
func (it *ChangeIterator) Close() error {
	if !it.closed && it.txn != nil && it.txn.changeIters != nil {
		delete(it.txn.changeIters, it)
	}
	return it.release()
}

func (it *ChangeIterator) release() error {
	if it.closed {
		return it.err
	}
	it.closed, it.done = true, true
	if it.pit != nil {
		if err := it.pit.Close(); err != nil && it.err == nil {
			it.err = err
		}
	}
	return it.err
}

func (t *Txn) trackChanges(it *ChangeIterator) {
	if t.changeIters == nil {
		t.changeIters = make(map[*ChangeIterator]struct{})
	}
	t.changeIters[it] = struct{}{}
}

// VacuumChanges removes, at commit, the change records of every version of
// tbl committed before the given time (R-T9: VACUUM … RETAIN n HOURS) and
// returns the first version whose records are kept. It makes no version.
// Changes over vacuumed versions then fail with a *ChangesUnavailableError.
func (t *Txn) VacuumChanges(tbl TableID, before time.Time) (keptFrom int64, err error) {
	if err := t.alive(); err != nil {
		return 0, err
	}
	ps, ok, err := t.snapState(tbl)
	if err != nil || !ok {
		return 0, err
	}
	keptFrom = ps.version + 1
	var slots []int64 // change slots of the versions vacuumed now
	err = t.scanHistory(tbl, 0, ps.version, false, func(h HistoryEntry) bool {
		if !h.Timestamp.Before(before) {
			keptFrom = h.Version
			return false
		}
		if h.ChangesAt != 0 && h.Version >= ps.vacuumedBelow {
			slots = append(slots, h.ChangesAt)
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	if keptFrom <= ps.vacuumedBelow {
		return ps.vacuumedBelow, nil
	}
	tw := t.tableByID(tbl)
	if tw.dropped {
		return keptFrom, nil
	}
	tw.vacuum = true
	tw.vacuumBelow = max(tw.vacuumBelow, keptFrom)
	tw.vacuumSlots = append(tw.vacuumSlots, slots...)
	return keptFrom, nil
}
