package storage

import (
	"fmt"
	"testing"
)

// TestWriteHistoryRanges: writtenAfter finds a key written after a
// sequence, alone or inside a range, and prune drops the commits at or
// below the oldest Begin while a key's later write stays.
func TestWriteHistoryRanges(t *testing.T) {
	var h writeHistory
	h.init(DefaultHistoryLimit)
	st := newTableState(1)
	commit := func(seq uint64, keys ...string) {
		tw := &tableWrites{id: 1, st: st, rows: newWriteSet()}
		for _, key := range keys {
			tw.rows.Put(rowWrite{key: k(key), value: k("v")})
		}
		h.record(seq, []*tablePlan{{tw: tw, st: st}})
	}
	commit(3, "b", "d")
	commit(5, "d", "f")
	rk := func(key string) []byte { return rowKey(nil, 1, k(key)) }
	for _, c := range []struct {
		lo, hi string // hi "": the key lo alone
		after  uint64
		want   bool
	}{
		{"b", "", 2, true}, {"b", "", 3, false}, {"c", "", 0, false},
		{"d", "", 4, true}, // rewritten at 5
		{"a", "c", 2, true}, {"a", "c", 3, false}, {"c", "d", 0, false},
		{"c", "e", 4, true}, {"e", "z", 4, true}, {"g", "z", 0, false},
	} {
		var hi []byte
		if c.hi != "" {
			hi = rk(c.hi)
		}
		if got := h.writtenAfter(rk(c.lo), hi, c.after); got != c.want {
			t.Errorf("[%s, %s) after %d: %v, want %v", c.lo, c.hi, c.after, got, c.want)
		}
	}
	h.prune(3)
	if h.len() != 2 || h.writtenAfter(rk("b"), nil, 0) {
		t.Fatalf("after prune(3): %d keys, b still there: %v", h.len(), h.writtenAfter(rk("b"), nil, 0))
	}
	if !h.writtenAfter(rk("d"), nil, 4) {
		t.Fatal("prune dropped d's later write")
	}
	h.prune(5)
	if h.len() != 0 || h.bytes != 0 || len(h.queue) != 0 || st.coarseSeq != 0 {
		t.Fatalf("after prune(5): %d keys, %d bytes, %d commits, coarseSeq %d", h.len(), h.bytes, len(h.queue), st.coarseSeq)
	}
}

// TestSerializableNoBookkeeping: transactions begun with Begin record no
// reads, and their commits add nothing to the write history while no
// serializable transaction is open; the history empties once the last
// one ended.
func TestSerializableNoBookkeeping(t *testing.T) {
	db := openMem(t)
	seedRows(t, db, tA, "a", "1")
	tx := db.Begin()
	scanAll(t, tx, tA.ID, nil, nil)
	get(t, tx, tA.ID, "a")
	if tx.reads != nil {
		t.Fatal("a snapshot-isolation transaction records reads")
	}
	tx.Rollback()
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "b", "2"); return nil })
	if n := db.history.len(); n != 0 {
		t.Fatalf("history holds %d keys with no serializable transaction open", n)
	}
	ser := db.BeginSerializable()
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "c", "3"); return nil })
	if n := db.history.len(); n != 1 {
		t.Fatalf("history holds %d keys, want 1", n)
	}
	ser.Rollback()
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "d", "4"); return nil })
	if n := db.history.len(); n != 0 || len(db.history.queue) != 0 || db.history.bytes != 0 {
		t.Fatalf("history not emptied: %d keys, %d commits, %d bytes", n, len(db.history.queue), db.history.bytes)
	}
}

// TestSerializableHistoryBound: the write history stays under its limit;
// the commits it gives up count as writes of their whole tables, which
// fails an old serializable transaction that read one of them, and only
// such a transaction.
func TestSerializableHistoryBound(t *testing.T) {
	const limit = 4 << 10
	db, err := Open(Options{InMemory: true, CacheSize: 8 << 20, HistoryLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tB, tC := TableInfo{ID: 2}, TableInfo{ID: 3}
	seedRows(t, db, tA, "x", "1")
	seedRows(t, db, tB, "x", "1")
	createTable(t, db, tC)
	readsA, readsB := db.BeginSerializable(), db.BeginSerializable()
	get(t, readsA, tA.ID, "x")
	get(t, readsB, tB.ID, "x")
	for i := range 200 {
		update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, fmt.Sprintf("k%03d", i), "v"); return nil })
		if db.history.bytes > limit {
			t.Fatalf("history at %d bytes, over its limit %d", db.history.bytes, limit)
		}
	}
	mustInsert(t, readsA, tC, "a", "1")
	mustInsert(t, readsB, tC, "b", "1")
	wantReadDependency(t, commitErr(t, readsA)) // x itself was never written
	if err := commitErr(t, readsB); err != nil {
		t.Fatal(err)
	}
	// A commit too big for the history at all goes to coarseSeq directly.
	late := db.BeginSerializable()
	get(t, late, tA.ID, "x")
	update(t, db, func(tx *Txn) error {
		for i := range limit {
			mustInsert(t, tx, tA, fmt.Sprintf("big%05d", i), "v")
		}
		return nil
	})
	if db.history.bytes > limit {
		t.Fatalf("history at %d bytes after a big commit", db.history.bytes)
	}
	mustInsert(t, late, tC, "c", "1")
	wantReadDependency(t, commitErr(t, late))
}
