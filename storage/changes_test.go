package storage

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// waitFor polls cond until it holds or a deadline passes.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met before the deadline")
		}
		time.Sleep(time.Millisecond)
	}
}

// changes renders the change records of tbl in [start, end].
func changes(t testing.TB, tx *Txn, tbl TableID, start, end int64) ([]string, error) {
	t.Helper()
	var out []string
	it := tx.Changes(tbl, start, end)
	for it.Next() {
		c := it.Change()
		if c.Timestamp.IsZero() {
			t.Fatalf("change without timestamp: %+v", c)
		}
		out = append(out, fmt.Sprintf("v%d %s #%d %s=%s", c.Version, c.Type, c.RowID, c.Key, c.Value))
	}
	return out, it.Close()
}

func history(t testing.TB, db *DB, tbl TableID) []HistoryEntry {
	t.Helper()
	tx := db.Begin()
	defer tx.Rollback()
	h, err := tx.History(tbl)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHistory(t *testing.T) {
	db := openMem(t)
	update(t, db, func(tx *Txn) error {
		return tx.CreateTable(tA, "CREATE TABLE", map[string]string{"delta.enableChangeDataFeed": "true"})
	})
	update(t, db, func(tx *Txn) error {
		tx.NoteOperation(tA.ID, "WRITE")
		mustInsert(t, tx, tA, "a", "1")
		mustInsert(t, tx, tA, "b", "2")
		mustInsert(t, tx, tA, "c", "3")
		return nil
	})
	update(t, db, func(tx *Txn) error {
		tx.NoteOperation(tA.ID, "UPDATE")
		return tx.Update(tA, k("a"), k("a"), k("1x"))
	})
	update(t, db, func(tx *Txn) error { // two operations in one txn → MERGE
		tx.NoteOperation(tA.ID, "DELETE")
		if err := tx.Delete(tA, k("b")); err != nil {
			return err
		}
		tx.NoteOperation(tA.ID, "WRITE")
		mustInsert(t, tx, tA, "d", "4")
		return nil
	})
	update(t, db, func(tx *Txn) error {
		return tx.RecordVersion(tA, "SET TBLPROPERTIES", map[string]string{"k": "v"})
	})
	update(t, db, func(tx *Txn) error { // no op noted: inferred
		return tx.Delete(tA, k("c"))
	})
	update(t, db, func(tx *Txn) error { tx.NoteOperation(tA.ID, "DELETE"); return nil }) // nothing changed: no version

	h := history(t, db, tA.ID)
	type row struct {
		v          int64
		op         string
		ins, u, dl int64
	}
	want := []row{
		{5, "DELETE", 0, 0, 1},
		{4, "SET TBLPROPERTIES", 0, 0, 0},
		{3, "MERGE", 1, 0, 1},
		{2, "UPDATE", 0, 1, 0},
		{1, "WRITE", 3, 0, 0},
		{0, "CREATE TABLE", 0, 0, 0},
	}
	if len(h) != len(want) {
		t.Fatalf("%d history entries, want %d: %+v", len(h), len(want), h)
	}
	for i, w := range want {
		g := h[i]
		if g.Version != w.v || g.Operation != w.op || g.RowsInserted != w.ins || g.RowsUpdated != w.u || g.RowsDeleted != w.dl || !g.ChangeDataFeed {
			t.Fatalf("history[%d] = %+v, want %+v", i, g, w)
		}
		if i > 0 && !g.Timestamp.Before(h[i-1].Timestamp) {
			t.Fatalf("timestamps not strictly increasing")
		}
	}
	if h[5].Params["delta.enableChangeDataFeed"] != "true" || h[1].Params["k"] != "v" {
		t.Fatalf("params: %v / %v", h[5].Params, h[1].Params)
	}
	// CreateTable of an existing table.
	tx := db.Begin()
	defer tx.Rollback()
	if err := tx.CreateTable(tA, "CREATE TABLE", nil); !errors.Is(err, ErrTableExists) {
		t.Fatalf("create existing: %v", err)
	}
}

func TestTimestampsStrictlyIncreasing(t *testing.T) {
	fixed := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	db, err := Open(Options{InMemory: true, Clock: func() time.Time { return fixed }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	createTable(t, db, tA)
	for i := 0; i < 3; i++ {
		update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, fmt.Sprint(i), "v"); return nil })
	}
	h := history(t, db, tA.ID)
	for i := 1; i < len(h); i++ {
		if d := h[i-1].Timestamp.Sub(h[i].Timestamp); d != time.Microsecond {
			t.Fatalf("versions %d and %d are %v apart, want 1µs", h[i].Version, h[i-1].Version, d)
		}
	}
}

func TestChangeFeed(t *testing.T) {
	db := openMem(t)
	createTable(t, db, tA)
	var ida, idb int64
	update(t, db, func(tx *Txn) error { // v1
		ida = mustInsert(t, tx, tA, "a", "1")
		idb = mustInsert(t, tx, tA, "b", "2")
		return nil
	})
	update(t, db, func(tx *Txn) error { // v2: update in place, update with key change
		if err := tx.Update(tA, k("a"), k("a"), k("1x")); err != nil {
			return err
		}
		return tx.Update(tA, k("b"), k("c"), k("2c"))
	})
	update(t, db, func(tx *Txn) error { return tx.Delete(tA, k("a")) }) // v3
	update(t, db, func(tx *Txn) error {                                 // v4: inserted and deleted in one txn: nothing
		mustInsert(t, tx, tA, "tmp", "t")
		return tx.Delete(tA, k("tmp"))
	})
	tx := db.Begin()
	defer tx.Rollback()
	got, err := changes(t, tx, tA.ID, 1, -1)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		fmt.Sprintf("v1 insert #%d a=1", ida),
		fmt.Sprintf("v1 insert #%d b=2", idb),
		fmt.Sprintf("v2 update_preimage #%d a=1", ida),
		fmt.Sprintf("v2 update_postimage #%d a=1x", ida),
		fmt.Sprintf("v2 update_preimage #%d b=2", idb),
		fmt.Sprintf("v2 update_postimage #%d c=2c", idb),
		fmt.Sprintf("v3 delete #%d a=1x", ida),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Sub-ranges and a range past the end.
	if got, _ := changes(t, tx, tA.ID, 2, 2); len(got) != 4 {
		t.Fatalf("v2 only: %v", got)
	}
	if got, err := changes(t, tx, tA.ID, 9, -1); err != nil || len(got) != 0 {
		t.Fatalf("past the end: %v %v", got, err)
	}
	if v, _ := tx.TableVersion(tA.ID); v != 4 {
		t.Fatalf("version %d", v)
	}
}

func TestChangeFeedOff(t *testing.T) {
	db := openMem(t)
	off := TableInfo{ID: 7}
	createTable(t, db, off)
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, off, "a", "1"); return nil }) // v1
	on := TableInfo{ID: 7, ChangeDataFeed: true}
	update(t, db, func(tx *Txn) error { // v2: SET TBLPROPERTIES turns it on
		return tx.RecordVersion(on, "SET TBLPROPERTIES", map[string]string{"delta.enableChangeDataFeed": "true"})
	})
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, on, "b", "2"); return nil }) // v3
	h := history(t, db, 7)
	if len(h) != 4 || h[3].ChangeDataFeed || h[2].ChangeDataFeed || !h[1].ChangeDataFeed || !h[0].ChangeDataFeed {
		t.Fatalf("history CDF flags: %+v", h)
	}
	if h[2].RowsInserted != 1 {
		t.Fatalf("metrics without CDF: %+v", h[2])
	}
	// No change records exist for the versions committed with the feed off.
	s, e := tableSpan(prefixCDF, 7)
	it, err := db.eng.newIter(s, e)
	if err != nil {
		t.Fatal(err)
	}
	var versions []int64
	for ok := it.First(); ok; ok = it.Next() {
		versions = append(versions, historyKeyVersion(it.Key()))
	}
	_ = it.Close()
	if !slices.Equal(versions, []int64{3}) {
		t.Fatalf("change records at versions %v, want [3]", versions)
	}
	tx := db.Begin()
	defer tx.Rollback()
	got, err := changes(t, tx, 7, 2, -1)
	if err != nil || len(got) != 1 || !strings.HasPrefix(got[0], "v3 insert") {
		t.Fatalf("changes from v2: %v %v", got, err)
	}
	_, err = changes(t, tx, 7, 0, -1)
	var cu *ChangesUnavailableError
	if !errors.As(err, &cu) || !errors.Is(err, ErrChangesUnavailable) || cu.AvailableFrom != 2 || cu.Vacuumed {
		t.Fatalf("changes from v0: %v", err)
	}
	if !strings.Contains(err.Error(), "available from version 2") {
		t.Fatalf("message %q", err)
	}
}

func TestTruncate(t *testing.T) {
	db := openMem(t)
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error {
		for _, s := range []string{"a", "b", "c"} {
			mustInsert(t, tx, tA, s, s)
		}
		return nil
	})
	update(t, db, func(tx *Txn) error {
		if err := tx.Update(tA, k("a"), k("a"), k("a2")); err != nil { // before the truncate: the preimage is the snapshot row
			return err
		}
		if err := tx.Truncate(tA); err != nil {
			return err
		}
		if got := scanAll(t, tx, tA.ID, nil, nil); len(got) != 0 {
			t.Fatalf("rows after truncate in txn: %v", got)
		}
		mustInsert(t, tx, tA, "b", "new-b") // same key as a truncated row
		return nil
	})
	tx := db.Begin()
	defer tx.Rollback()
	if got := scanAll(t, tx, tA.ID, nil, nil); !slices.Equal(got, []string{"b=new-b"}) {
		t.Fatalf("after truncate: %v", got)
	}
	got, err := changes(t, tx, tA.ID, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, g := range got {
		f := strings.Fields(g)
		kinds = append(kinds, f[1]+" "+f[3])
	}
	if !slices.Equal(kinds, []string{"delete a=a", "delete b=b", "insert b=new-b", "delete c=c"}) {
		t.Fatalf("truncate changes: %v", got)
	}
	h := history(t, db, tA.ID)
	if h[0].Operation != "MERGE" && h[0].Operation != "TRUNCATE" {
		t.Fatalf("op %q", h[0].Operation)
	}
	if h[0].RowsDeleted != 3 || h[0].RowsInserted != 1 {
		t.Fatalf("truncate metrics %+v", h[0])
	}
	// Truncate of an empty table still makes a version.
	update(t, db, func(tx *Txn) error { return tx.Truncate(tA) })
	update(t, db, func(tx *Txn) error { return tx.Truncate(tA) })
	if h := history(t, db, tA.ID); h[0].Operation != "TRUNCATE" || h[0].Version != 4 || h[0].RowsDeleted != 0 {
		t.Fatalf("empty truncate: %+v", h[0])
	}
}

func TestDropTable(t *testing.T) {
	db := openMem(t)
	createTable(t, db, tA)
	other := TableInfo{ID: 2, ChangeDataFeed: true}
	createTable(t, db, other)
	update(t, db, func(tx *Txn) error {
		mustInsert(t, tx, tA, "a", "1")
		mustInsert(t, tx, other, "a", "1")
		return tx.PutMeta(k("desc/1"), k("x"))
	})
	update(t, db, func(tx *Txn) error { return tx.DropTable(tA.ID) })
	settle(db)
	tx := db.Begin()
	if v, _ := tx.TableVersion(tA.ID); v != -1 {
		t.Fatalf("dropped table version %d", v)
	}
	if got := scanAll(t, tx, tA.ID, nil, nil); len(got) != 0 {
		t.Fatalf("rows survive drop: %v", got)
	}
	if h, _ := tx.History(tA.ID); len(h) != 0 {
		t.Fatalf("history survives drop: %v", h)
	}
	if got, _ := changes(t, tx, tA.ID, 0, -1); len(got) != 0 {
		t.Fatalf("CDF survives drop: %v", got)
	}
	if got := scanAll(t, tx, other.ID, nil, nil); len(got) != 1 {
		t.Fatalf("other table hit: %v", got)
	}
	if v, ok, _ := tx.GetMeta(k("desc/1")); !ok || string(v) != "x" {
		t.Fatal("meta hit by drop")
	}
	tx.Rollback()
	// Re-create: version 0 again; drop + create in one txn.
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "b", "2"); return nil })
	update(t, db, func(tx *Txn) error {
		if err := tx.DropTable(tA.ID); err != nil {
			return err
		}
		if err := tx.CreateTable(tA, "CREATE OR REPLACE TABLE", nil); err != nil {
			return err
		}
		mustInsert(t, tx, tA, "c", "3")
		return nil
	})
	tx = db.Begin()
	defer tx.Rollback()
	if got := scanAll(t, tx, tA.ID, nil, nil); !slices.Equal(got, []string{"c=3"}) {
		t.Fatalf("after drop+create: %v", got)
	}
	h, _ := tx.History(tA.ID)
	if len(h) != 1 || h[0].Version != 0 || h[0].Operation != "CREATE OR REPLACE TABLE" || h[0].RowsInserted != 1 {
		t.Fatalf("history after drop+create: %+v", h)
	}
	if r, _ := get(t, tx, tA.ID, "c"); r.CommitVersion != 0 {
		t.Fatalf("commit version %d", r.CommitVersion)
	}
}

func TestVacuumChanges(t *testing.T) {
	clk := &testClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	db, err := Open(Options{InMemory: true, Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	createTable(t, db, tA)                                                             // v0
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "a", "1"); return nil }) // v1
	cutoff := clk.Now()
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "b", "2"); return nil }) // v2
	var kept int64
	update(t, db, func(tx *Txn) error {
		var err error
		kept, err = tx.VacuumChanges(tA.ID, cutoff)
		return err
	})
	if kept != 2 {
		t.Fatalf("kept from %d, want 2", kept)
	}
	tx := db.Begin()
	defer tx.Rollback()
	if got, err := changes(t, tx, tA.ID, 2, -1); err != nil || len(got) != 1 {
		t.Fatalf("kept changes: %v %v", got, err)
	}
	_, err = changes(t, tx, tA.ID, 1, -1)
	var cu *ChangesUnavailableError
	if !errors.As(err, &cu) || !cu.Vacuumed || cu.AvailableFrom != 2 {
		t.Fatalf("vacuumed range: %v", err)
	}
	if v, _ := tx.TableVersion(tA.ID); v != 2 {
		t.Fatalf("vacuum made a version: %d", v)
	}
}

func TestSubscribe(t *testing.T) {
	db := openMem(t)
	var got [][]CommitEvent
	var mu = make(chan struct{}, 1)
	mu <- struct{}{}
	unsub := db.Subscribe(func(ev []CommitEvent) {
		<-mu
		got = append(got, slices.Clone(ev))
		mu <- struct{}{}
	})
	b := TableInfo{ID: 2}
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error {
		mustInsert(t, tx, tA, "a", "1")
		if err := tx.CreateTable(b, "CREATE TABLE", nil); err != nil {
			return err
		}
		return nil
	})
	update(t, db, func(tx *Txn) error { return tx.PutMeta(k("x"), k("y")) }) // no versions: no event
	update(t, db, func(tx *Txn) error { return tx.DropTable(b.ID) })
	unsub()
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "b", "1"); return nil })
	<-mu
	defer func() { mu <- struct{}{} }()
	want := [][]CommitEvent{{{1, 0}}, {{1, 1}, {2, 0}}, {{2, -1}}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
}

// TestChangeFeedTurnedOnMidTxn: rows touched while the feed was off in the
// txn still get their preimage when it is on at commit.
func TestChangeFeedTurnedOnMidTxn(t *testing.T) {
	db := openMem(t)
	off, on := TableInfo{ID: 9}, TableInfo{ID: 9, ChangeDataFeed: true}
	createTable(t, db, off)
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, off, "a", "1"); mustInsert(t, tx, off, "b", "2"); return nil })
	update(t, db, func(tx *Txn) error {
		if err := tx.Update(off, k("a"), k("a"), k("1x")); err != nil {
			return err
		}
		if err := tx.Delete(off, k("b")); err != nil {
			return err
		}
		return tx.RecordVersion(on, "SET TBLPROPERTIES", nil)
	})
	tx := db.Begin()
	defer tx.Rollback()
	got, err := changes(t, tx, 9, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || !strings.Contains(got[0], "update_preimage") || !strings.HasSuffix(got[0], "a=1") ||
		!strings.HasSuffix(got[2], "b=2") {
		t.Fatalf("changes %v", got)
	}
}
