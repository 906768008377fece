package storage

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"
)

// HistoryEntry is one table version (R-T4): what DESCRIBE HISTORY lists.
type HistoryEntry struct {
	Version   int64
	Timestamp time.Time
	Operation string
	Params    map[string]string
	// Rows inserted, updated and deleted by the commit (its net effect on
	// each row, as its change records show).
	RowsInserted, RowsUpdated, RowsDeleted int64
	// ChangeDataFeed: the change feed was on for this commit (its row
	// changes are recorded).
	ChangeDataFeed bool
	// Rewritten: the commit switched the table to new content written as
	// a generation (generation.go); its row changes are not recorded.
	Rewritten bool
	// ChangesAt: the slot the commit's change records are under instead of
	// its version (changeSlot; inserts staged on an engine that cannot
	// ingest, stage_generation.go); 0 for none.
	ChangesAt int64
}

const historyFormat byte = 1

func encodeHistory(h *HistoryEntry) []byte {
	b := make([]byte, 0, 64)
	b = append(b, historyFormat)
	b = binary.AppendVarint(b, h.Timestamp.UnixMicro())
	b = appendBytes(b, []byte(h.Operation))
	keys := make([]string, 0, len(h.Params))
	for k := range h.Params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = appendBytes(b, []byte(k))
		b = appendBytes(b, []byte(h.Params[k]))
	}
	b = binary.AppendVarint(b, h.RowsInserted)
	b = binary.AppendVarint(b, h.RowsUpdated)
	b = binary.AppendVarint(b, h.RowsDeleted)
	switch { // the feed byte: 1 on, 0 off, 2 off as the table was rewritten
	case h.ChangeDataFeed:
		b = append(b, 1)
	case h.Rewritten:
		b = append(b, 2)
	default:
		b = append(b, 0)
	}
	if h.ChangesAt != 0 { // absent in entries written before it existed
		b = binary.AppendVarint(b, h.ChangesAt)
	}
	return b
}

func decodeHistory(version int64, v []byte) (HistoryEntry, error) {
	d := decoder{b: v}
	h := HistoryEntry{Version: version}
	if d.byte() != historyFormat {
		d.fail("history entry")
	}
	h.Timestamp = time.UnixMicro(d.varint()).UTC()
	h.Operation = string(d.bytes())
	if n := d.uvarint(); n > 0 && d.err == nil {
		h.Params = make(map[string]string, n)
		for i := uint64(0); i < n && d.err == nil; i++ {
			k := string(d.bytes())
			h.Params[k] = string(d.bytes())
		}
	}
	h.RowsInserted = d.varint()
	h.RowsUpdated = d.varint()
	h.RowsDeleted = d.varint()
	feed := d.byte()
	h.ChangeDataFeed, h.Rewritten = feed == 1, feed == 2
	if d.err == nil && len(d.b) > 0 {
		h.ChangesAt = d.varint()
	}
	if d.err != nil {
		return h, fmt.Errorf("%w (history version %d)", d.err, version)
	}
	return h, nil
}

func historyKeyVersion(k []byte) int64 {
	return int64(binary.BigEndian.Uint64(k[tablePrefixLen:]))
}

// History returns the table's versions as this txn's snapshot sees them,
// newest first (R-T4). A serializable transaction reads the whole table
// by it: a later commit to the table would add a version.
func (t *Txn) History(tbl TableID) ([]HistoryEntry, error) {
	if t.reads != nil && t.alive() == nil {
		t.reads.addWhole(tbl)
	}
	if t.db.pdb == nil {
		// A dropped table's history may be deleted after the drop's
		// commit (commit.go's encodeTable): none without a state.
		if _, ok, err := t.snapState(tbl); err != nil || !ok {
			return nil, err
		}
	}
	var out []HistoryEntry
	err := t.scanHistory(tbl, 0, -1, true, func(h HistoryEntry) bool {
		out = append(out, h)
		return true
	})
	return out, err
}

// scanHistory calls fn for the history entries with from <= version <= to
// (to < 0: no bound), newest first when reverse, until fn returns false.
func (t *Txn) scanHistory(tbl TableID, from, to int64, reverse bool, fn func(HistoryEntry) bool) error {
	if err := t.alive(); err != nil {
		return err
	}
	lower := versionKey(prefixHistory, tbl, from)
	var upper []byte
	if to >= 0 {
		upper = versionKey(prefixHistory, tbl, to+1)
	} else {
		_, upper = tableSpan(prefixHistory, tbl)
	}
	it, err := t.snap.newIter(lower, upper)
	if err != nil {
		return err
	}
	step, ok := it.Next, it.First()
	if reverse {
		step, ok = it.Prev, it.Last()
	}
	for ; ok; ok = step() {
		v, err := it.ValueAndErr()
		if err != nil {
			_ = it.Close()
			return err
		}
		h, err := decodeHistory(historyKeyVersion(it.Key()), v)
		if err != nil {
			_ = it.Close()
			return err
		}
		if !fn(h) {
			break
		}
	}
	return it.Close()
}

// operation names the history operation of a commit (R-T4): CreateTable's op
// when the table was created, the one noted op, "MERGE" for several, else
// inferred from the row changes.
func (p *tablePlan) operation() string {
	tw := p.tw
	switch {
	case tw.created:
		return tw.createOp
	case tw.setOp != "":
		return tw.setOp
	case len(tw.ops) == 1:
		return tw.ops[0]
	case len(tw.ops) > 1:
		return "MERGE"
	}
	kinds, op := 0, "WRITE"
	if p.ins > 0 {
		kinds, op = kinds+1, "WRITE"
	}
	if p.upd > 0 {
		kinds, op = kinds+1, "UPDATE"
	}
	if p.del > 0 {
		kinds, op = kinds+1, "DELETE"
	}
	if kinds > 1 {
		return "MERGE"
	}
	return op
}

// ChangedRows sums the row changes (inserted + deleted + 2 × updated: an
// update is two images) of tbl's versions in (from, to], from its history:
// what reading the change feed over that range would return, known without
// reading it (the refresh cost model, R-I6).
func (t *Txn) ChangedRows(tbl TableID, from, to int64) (int64, error) {
	var n int64
	err := t.scanHistory(tbl, from+1, to, false, func(h HistoryEntry) bool {
		n += h.RowsInserted + h.RowsDeleted + 2*h.RowsUpdated
		return true
	})
	return n, err
}
