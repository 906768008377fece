package storage

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// smallRewriteBatches makes every rewrite apply a batch every few rows.
func smallRewriteBatches(t *testing.T) {
	old := rewriteBatchBytes
	rewriteBatchBytes = 256
	t.Cleanup(func() { rewriteBatchBytes = old })
}

// countKeys counts the engine's keys in [lower, upper).
func countKeys(t *testing.T, db *DB, lower, upper []byte) int {
	t.Helper()
	it, err := db.eng.newIter(lower, upper)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}

// keySpaceLen counts the keys of one key space of rows id id, once the
// engine's deletions after commits are done.
func keySpaceLen(t *testing.T, db *DB, prefix byte, id TableID) int {
	t.Helper()
	settle(db)
	s, e := tableSpan(prefix, id)
	return countKeys(t, db, s, e)
}

func shadowKeys(t *testing.T, db *DB) int {
	t.Helper()
	return countKeys(t, db, shadowPrefix, PrefixEnd(shadowPrefix))
}

// rewriteTo writes rows key i → "c<i>:new" for i in [0, n) as tbl's new content.
func rewriteTo(t *testing.T, tx *Txn, tbl TableInfo, n int) *Rewrite {
	t.Helper()
	r, err := tx.RewriteRows(tbl)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := r.Insert(k(fmt.Sprintf("k%03d", i)), k(fmt.Sprintf("c%d:new", i))); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func TestRewriteSwitchesAtomically(t *testing.T) {
	smallRewriteBatches(t)
	db := openMem(t)
	tbl := withIndex(tA, colorIndex(true))
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { return tx.BuildIndex(tA, colorIndex(true)) })
	update(t, db, func(tx *Txn) error {
		for i := 0; i < 5; i++ {
			mustInsert(t, tx, tbl, fmt.Sprintf("k%03d", i), fmt.Sprintf("c%d:old", i))
		}
		return nil
	})
	before := db.Begin()
	defer before.Rollback()
	oldRows := scanAll(t, before, tA.ID, nil, nil)

	tx := db.Begin()
	r := rewriteTo(t, tx, tbl, 100)
	if r.chunks < 5 {
		t.Fatalf("%d batches applied while writing; want several", r.chunks)
	}
	// Neither the writer (whose snapshot rows are gone for it) nor anyone
	// else sees the half-written content.
	if it := tx.Scan(tA.ID, nil, nil); it.Next() || it.Close() == nil {
		t.Fatal("the rewriting txn reads the table")
	}
	if _, _, err := tx.Get(tA.ID, k("k001")); err == nil {
		t.Fatal("the rewriting txn gets a row of the table")
	}
	mid := db.Begin()
	if got := scanAll(t, mid, tA.ID, nil, nil); !slices.Equal(got, oldRows) {
		t.Fatalf("a reader during the rewrite sees %v, want %v", got, oldRows)
	}
	mid.Rollback()
	if _, err := tx.Insert(tbl, k("x"), k("y:z")); err == nil {
		t.Fatal("a row write beside the rewrite succeeded")
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	after := db.Begin()
	defer after.Rollback()
	got := scanAll(t, after, tA.ID, nil, nil)
	if len(got) != 100 || got[0] != "k000=c0:new" || got[99] != "k099=c99:new" {
		t.Fatalf("after the switch: %d rows %v", len(got), got[:min(3, len(got))])
	}
	if row, ok := get(t, after, tA.ID, "k042"); !ok || string(row.Value) != "c42:new" || row.CommitVersion != r.version {
		t.Fatalf("Get after the switch: %+v %v", row, ok)
	}
	if vals := byColor(t, after, tA.ID, "c7"); !slices.Equal(vals, []string{"c7:new"}) {
		t.Fatalf("index after the switch: %v", vals)
	}
	if row, ok, err := after.GetUnique(tA.ID, 7, AppendString(AppendNotNullMarker(nil), "c8")); err != nil || !ok || string(row.Value) != "c8:new" {
		t.Fatalf("GetUnique after the switch: %+v %v %v", row, ok, err)
	}
	if n, _ := after.RowCount(tA.ID); n != 100 {
		t.Fatalf("RowCount %d", n)
	}
	// The old snapshot still reads the old content.
	if got := scanAll(t, before, tA.ID, nil, nil); !slices.Equal(got, oldRows) {
		t.Fatalf("an older snapshot sees %v, want %v", got, oldRows)
	}
	if vals := byColor(t, before, tA.ID, "c3"); !slices.Equal(vals, []string{"c3:old"}) {
		t.Fatalf("an older snapshot's index: %v", vals)
	}
	// History: the switch's version keeps no changes and says why.
	h, err := after.History(tA.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !h[0].Rewritten || h[0].ChangeDataFeed || h[0].RowsInserted != 100 || h[0].RowsDeleted != 5 {
		t.Fatalf("history of the switch: %+v", h[0])
	}
	it := after.Changes(tA.ID, h[0].Version, -1)
	for it.Next() {
	}
	var cu *ChangesUnavailableError
	if !errors.As(it.Err(), &cu) || cu.AvailableFrom != -1 {
		t.Fatalf("changes across the switch: %v", it.Err())
	}
	it.Close()
	if shadowKeys(t, db) != 0 {
		t.Fatal("the switch left its shadow key")
	}
	if n := keySpaceLen(t, db, prefixRows, tA.ID); n != 0 {
		t.Fatalf("the old key space keeps %d rows", n)
	}

	// Row writes after the switch go to the new key space and see its rows.
	tx = db.Begin()
	if _, err := tx.Insert(tbl, k("k001"), k("zz:1")); !errors.As(err, new(*DuplicateKeyError)) {
		t.Fatalf("insert of a key the new content has: %v", err)
	}
	if _, err := tx.Insert(tbl, k("k500"), k("c3:dup")); !errors.As(err, new(*DuplicateKeyError)) {
		t.Fatalf("insert of a unique color the new content has: %v", err)
	}
	mustInsert(t, tx, tbl, "k500", "c500:x")
	if err := tx.Delete(tbl, k("k000")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	check := db.Begin()
	defer check.Rollback()
	if err := check.VerifyIndex(tA.ID, colorIndex(true)); err != nil {
		t.Fatal(err)
	}
	if got := scanAll(t, check, tA.ID, nil, nil); len(got) != 100 || got[0] != "k001=c1:new" || got[99] != "k500=c500:x" {
		t.Fatalf("after writes on the new content: %v…", got[:2])
	}
	// Changes after the switch are recorded again.
	it = check.Changes(tA.ID, h[0].Version+1, -1)
	var n int
	for it.Next() {
		n++
	}
	if err := it.Close(); err != nil || n != 2 {
		t.Fatalf("changes after the switch: %d, %v", n, err)
	}
}

func TestRewriteRollbackAndFailureDeleteTheShadow(t *testing.T) {
	smallRewriteBatches(t)
	db := openMem(t)
	tbl := withIndex(tA, colorIndex(true))
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { return tx.BuildIndex(tA, colorIndex(true)) })
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tbl, "a", "red:1"); return nil })

	tx := db.Begin()
	r := rewriteTo(t, tx, tbl, 50)
	if keySpaceLen(t, db, prefixRows, r.rows) == 0 || shadowKeys(t, db) != 1 {
		t.Fatal("the rewrite wrote nothing")
	}
	tx.Rollback()
	if n := keySpaceLen(t, db, prefixRows, r.rows) + keySpaceLen(t, db, prefixIndex, r.rows); n != 0 || shadowKeys(t, db) != 0 {
		t.Fatalf("rollback left %d keys of the shadow", n)
	}

	// Two new rows of one unique color: the commit fails, nothing changes.
	tx = db.Begin()
	r, err := tx.RewriteRows(tbl)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range []string{"blue:1", "green:2", "blue:3"} {
		if err := r.Insert(k(fmt.Sprint(i)), k(v)); err != nil {
			t.Fatal(err)
		}
	}
	var dup *DuplicateKeyError
	if err := tx.Commit(); !errors.As(err, &dup) || dup.Index != 7 {
		t.Fatalf("commit of a rewrite repeating a unique key: %v", err)
	}
	if n := keySpaceLen(t, db, prefixRows, r.rows); n != 0 || shadowKeys(t, db) != 0 {
		t.Fatalf("a failed commit left %d rows of the shadow", n)
	}

	// First committer wins: a row written after the rewrite began.
	tx = db.Begin()
	r = rewriteTo(t, tx, tbl, 10)
	update(t, db, func(o *Txn) error { mustInsert(t, o, tbl, "b", "pink:2"); return nil })
	if err := tx.Commit(); !errors.Is(err, ErrSerialization) {
		t.Fatalf("rewrite after a concurrent write: %v", err)
	}
	if n := keySpaceLen(t, db, prefixRows, r.rows); n != 0 {
		t.Fatalf("a conflicting commit left %d rows of the shadow", n)
	}
	// And a writer begun before a switch fails after it.
	w := db.Begin()
	if _, err := w.Insert(tbl, k("c"), k("gray:3")); err != nil {
		t.Fatal(err)
	}
	ser := db.BeginSerializable()
	scanAll(t, ser, tA.ID, nil, nil)
	if _, err := ser.Insert(TableInfo{ID: 2}, k("x"), k("y")); err != nil {
		t.Fatal(err)
	}
	tx = db.Begin()
	rewriteTo(t, tx, tbl, 10)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); !errors.Is(err, ErrSerialization) {
		t.Fatalf("a write begun before the switch: %v", err)
	}
	if err := ser.Commit(); !errors.Is(err, ErrSerialization) {
		t.Fatalf("a serializable reader of the rewritten table: %v", err)
	}
	view := db.Begin()
	defer view.Rollback()
	if got := scanAll(t, view, tA.ID, nil, nil); len(got) != 10 {
		t.Fatalf("%d rows", len(got))
	}
}

func TestRewriteTwiceAndDrop(t *testing.T) {
	db := openMem(t)
	createTable(t, db, tA)
	var ids []TableID
	for round := 0; round < 3; round++ {
		tx := db.Begin()
		r := rewriteTo(t, tx, tA, 20+round)
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.rows)
	}
	tx := db.Begin()
	if got := scanAll(t, tx, tA.ID, nil, nil); len(got) != 22 {
		t.Fatalf("%d rows", len(got))
	}
	tx.Rollback()
	for _, id := range ids[:2] {
		if n := keySpaceLen(t, db, prefixRows, id); n != 0 {
			t.Fatalf("an old generation keeps %d rows", n)
		}
	}
	update(t, db, func(tx *Txn) error { return tx.DropTable(tA.ID) })
	if n := keySpaceLen(t, db, prefixRows, ids[2]); n != 0 {
		t.Fatalf("DROP left %d rows of the current generation", n)
	}
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "a", "b"); return nil })
	tx = db.Begin()
	defer tx.Rollback()
	if got := scanAll(t, tx, tA.ID, nil, nil); !slices.Equal(got, []string{"a=b"}) {
		t.Fatalf("the table made anew: %v", got)
	}
}

// TestRewriteCrashReclaimsShadow: a store closed in the middle of a
// rewrite (nothing cleaned up, as after a crash) reopens with the previous
// content, the shadow deleted; a completed rewrite survives a reopen.
func TestRewriteCrashReclaimsShadow(t *testing.T) {
	smallRewriteBatches(t)
	dir := t.TempDir()
	open := func() *DB {
		db, err := Open(Options{Dir: dir, CacheSize: 8 << 20, DiskReserve: -1})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	tbl := withIndex(tA, colorIndex(false))
	db := open()
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { return tx.BuildIndex(tA, colorIndex(false)) })
	tx := db.Begin()
	rewriteTo(t, tx, tbl, 30)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	tx = db.Begin()
	r := rewriteTo(t, tx, tbl, 70)
	shadow := r.rows
	// The "crash": the rewrite never cleans up after itself.
	r.done = true
	tx.Rollback()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open()
	defer db.Close()
	if n := keySpaceLen(t, db, prefixRows, shadow) + keySpaceLen(t, db, prefixIndex, shadow); n != 0 || shadowKeys(t, db) != 0 {
		t.Fatalf("start-up left %d keys of the shadow", n)
	}
	rd := db.Begin()
	defer rd.Rollback()
	if got := scanAll(t, rd, tA.ID, nil, nil); len(got) != 30 || got[0] != "k000=c0:new" {
		t.Fatalf("after the restart: %d rows", len(got))
	}
	if err := rd.VerifyIndex(tA.ID, colorIndex(false)); err != nil {
		t.Fatal(err)
	}
	// The next rewrite gets a new id.
	tx = db.Begin()
	r = rewriteTo(t, tx, tbl, 3)
	if r.rows <= shadow {
		t.Fatalf("rows id %d handed out again after %d", r.rows, shadow)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestRecreatedTableStartsEmpty: a table dropped and created again in
// one transaction (CREATE OR REPLACE) after a rewrite holds only the rows
// written after its creation, found through its index too, once the
// engine has deleted the previous generation (on TiKV after the commit:
// the new rows must not be in the key space it deletes).
func TestRecreatedTableStartsEmpty(t *testing.T) {
	db := openMem(t)
	tbl := withIndex(tA, colorIndex(false))
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { return tx.BuildIndex(tA, colorIndex(false)) })
	tx := db.Begin()
	r := rewriteTo(t, tx, tbl, 20)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	update(t, db, func(tx *Txn) error {
		if err := tx.DropTable(tA.ID); err != nil {
			return err
		}
		if err := tx.CreateTable(tA, "CREATE OR REPLACE TABLE", nil); err != nil {
			return err
		}
		if err := tx.BuildIndex(tA, colorIndex(false)); err != nil {
			return err
		}
		mustInsert(t, tx, tbl, "a", "c1:b")
		return nil
	})
	for _, prefix := range []byte{prefixRows, prefixIndex} {
		if n := keySpaceLen(t, db, prefix, r.rows); n != 0 {
			t.Errorf("the dropped generation keeps %d keys under prefix %x", n, prefix)
		}
	}
	tx = db.Begin()
	defer tx.Rollback()
	if got := scanAll(t, tx, tA.ID, nil, nil); !slices.Equal(got, []string{"a=c1:b"}) {
		t.Fatalf("the table made anew: %v", got)
	}
	if got := byColor(t, tx, tA.ID, "c1"); len(got) != 1 {
		t.Fatalf("its index finds %v", got)
	}
	if err := tx.VerifyIndex(tA.ID, colorIndex(false)); err != nil {
		t.Fatal(err)
	}
}
