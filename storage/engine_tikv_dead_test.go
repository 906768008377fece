//go:build tikv

package storage

import (
	"fmt"
	"strings"
	"testing"
)

// smallTiKVTransactions bounds every engine transaction to limit bytes
// and every deleting one to a few keys. The background deletions of open
// stores read the bounds: each of dbs is settled before they are set and
// again before they are restored.
func smallTiKVTransactions(t *testing.T, limit uint64, dbs ...*DB) {
	for _, db := range dbs {
		settle(db)
	}
	oldLimit, oldChunk := tikvTxnSizeLimit, deadChunkKeys
	tikvTxnSizeLimit, deadChunkKeys = limit, 50
	t.Cleanup(func() {
		for _, db := range dbs {
			settle(db)
		}
		tikvTxnSizeLimit, deadChunkKeys = oldLimit, oldChunk
	})
}

func deadMarkers(t *testing.T, db *DB) int {
	t.Helper()
	return countKeys(t, db, deadPrefix, PrefixEnd(deadPrefix))
}

// rewriteRows rewrites tbl to n rows in one transaction and returns the
// key space it wrote.
func rewriteRows(t *testing.T, db *DB, tbl TableInfo, n int) TableID {
	t.Helper()
	tx := db.Begin()
	r := rewriteTo(t, tx, tbl, n)
	if err := tx.Commit(); err != nil {
		t.Fatalf("the switch to %d rows: %v", n, err)
	}
	return r.rows
}

// TestTiKVDeadKeySpacesStaySmall: with every TiKV transaction bounded
// (as a deployment's size limit does), a rewrite's switch away from a
// generation far past the bound, and a DROP of a table in such a
// generation, commit; the dead key space is deleted afterwards in bounded
// transactions.
func TestTiKVDeadKeySpacesStaySmall(t *testing.T) {
	smallRewriteBatches(t)
	smallTiKVTransactions(t, 32<<10)
	db, err := Open(Options{InMemory: true, Store: "tikvmock://"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbl := withIndex(tA, colorIndex(false))
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { return tx.BuildIndex(tA, colorIndex(false)) })
	// ~6000 keys, ~150 KB each: no single transaction may delete them.
	first := rewriteRows(t, db, tbl, 3000)
	second := rewriteRows(t, db, tbl, 3000)
	for _, prefix := range []byte{prefixRows, prefixIndex} {
		if n := keySpaceLen(t, db, prefix, first); n != 0 {
			t.Errorf("the previous generation still has %d keys under prefix %x", n, prefix)
		}
	}
	if n := deadMarkers(t, db); n != 0 {
		t.Errorf("%d dead markers left after the deletion", n)
	}
	if n := rowsOn(t, db); n != 3000 {
		t.Fatalf("%d rows after the switch, want 3000", n)
	}
	update(t, db, func(tx *Txn) error { return tx.DropTable(tA.ID) })
	for _, prefix := range []byte{prefixRows, prefixIndex} {
		if n := keySpaceLen(t, db, prefix, second); n != 0 {
			t.Errorf("the dropped table still has %d keys under prefix %x", n, prefix)
		}
	}
}

// TestTiKVDeadKeySpaceAfterClose: a dead key space whose deletion a close
// (or crash) cut short is deleted by the next open of the store.
func TestTiKVDeadKeySpaceAfterClose(t *testing.T) {
	smallRewriteBatches(t)
	a := openShared(t, t.Name())
	createTable(t, a, tA)
	first := rewriteRows(t, a, tA, 400)
	settle(a)                        // the created table's first key space is gone
	a.eng.(*tikvEngine).dead.close() // as if A died right after its next commit
	rewriteRows(t, a, tA, 5)
	if n := keySpaceLen(t, a, prefixRows, first); n != 400 {
		t.Fatalf("%d keys in the previous generation before any deletion, want 400", n)
	}
	if n := deadMarkers(t, a); n != 2 {
		t.Fatalf("%d dead markers, want the rows' and the index entries'", n)
	}
	b := openShared(t, t.Name())
	if n := keySpaceLen(t, b, prefixRows, first); n != 0 {
		t.Errorf("%d keys of the previous generation after the next open", n)
	}
	if n := deadMarkers(t, b); n != 0 {
		t.Errorf("%d dead markers after the next open", n)
	}
	if n := rowsOn(t, b); n != 5 {
		t.Errorf("%d rows, want the rewrite's 5", n)
	}
}

// TestTiKVDropStaysSmall: with every TiKV transaction bounded to 32 KB,
// a DROP of a table filled by many small commits, whose rows, index
// entries, change records and history together are far past the bound,
// commits, marking them for deletion after it. The id created again
// before that deletion (as a storage caller may) deletes the history and
// change records first, in bounded transactions, and starts empty.
func TestTiKVDropStaysSmall(t *testing.T) {
	db, _, rows := openFilledTiKV(t)
	if rows < FirstRowsID {
		t.Fatalf("the created table lives under key space %d, want one of its own", rows)
	}
	smallTiKVTransactions(t, 32<<10, db)
	spaces := map[byte]TableID{prefixRows: rows, prefixIndex: rows, prefixCDF: tA.ID, prefixHistory: tA.ID}
	for prefix, id := range spaces {
		if n := keySpaceLen(t, db, prefix, id); n < 30 {
			t.Fatalf("%d keys under prefix %x before the drop", n, prefix)
		}
	}
	db.eng.(*tikvEngine).dead.close() // the deletion after the commit waits for the CreateTable below
	update(t, db, func(tx *Txn) error { return tx.DropTable(tA.ID) })
	rd := db.Begin()
	if got := scanAll(t, rd, tA.ID, nil, nil); len(got) != 0 {
		t.Fatalf("the dropped table shows %d rows", len(got))
	}
	if h, err := rd.History(tA.ID); err != nil || len(h) != 0 {
		t.Fatalf("the dropped table shows %d history entries (%v)", len(h), err)
	}
	rd.Rollback()
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "a", "c1:a"); return nil })
	// CreateTable deleted the history and the change records (in
	// transactions within the bound); the rows and index entries of the
	// dropped key space wait for the next open.
	if n := deadMarkers(t, db); n != 2 {
		t.Errorf("%d dead markers after the CreateTable, want the rows' and the index entries'", n)
	}
	rd = db.Begin()
	defer rd.Rollback()
	if got := scanAll(t, rd, tA.ID, nil, nil); len(got) != 1 {
		t.Fatalf("the table created again has %v", got)
	}
	if h := history(t, db, tA.ID); len(h) != 2 || h[1].Operation != "CREATE TABLE" || h[1].Version != 0 {
		t.Fatalf("its history: %+v", h)
	}
	if ch, err := changes(t, rd, tA.ID, 0, -1); err != nil || len(ch) != 1 {
		t.Fatalf("its change feed: %q (%v)", ch, err)
	}
}

// openFilledTiKV opens an in-memory mock TiKV store with table tA, its
// color index, and 3000 rows written in small commits; it returns the
// store, tA's TableInfo with the index and the key space of its rows.
func openFilledTiKV(t *testing.T) (*DB, TableInfo, TableID) {
	t.Helper()
	db, err := Open(Options{InMemory: true, Store: "tikvmock://"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tbl := withIndex(tA, colorIndex(false))
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { return tx.BuildIndex(tA, colorIndex(false)) })
	fillInSmallCommits(t, db, tbl)
	tx := db.Begin()
	defer tx.Rollback()
	rows, err := tx.rowsOf(tA.ID)
	if err != nil {
		t.Fatal(err)
	}
	return db, tbl, rows
}

// fillInSmallCommits writes 3000 rows k<round>-<i> → "c<i%4>:<i>" into
// tbl in 30 commits.
func fillInSmallCommits(t *testing.T, db *DB, tbl TableInfo) {
	t.Helper()
	for round := range 30 {
		update(t, db, func(tx *Txn) error {
			for i := range 100 {
				mustInsert(t, tx, tbl, fmt.Sprintf("k%02d-%03d", round, i), fmt.Sprintf("c%d:%d", i%4, i))
			}
			return nil
		})
	}
}

// TestTiKVTruncateStaysSmall: with every TiKV transaction bounded to
// 32 KB, a TRUNCATE of a 3000-row table with an index and the feed on,
// and rows written after it in the same transaction, commits; the feed
// holds a delete per row it had and the new rows' inserts, the previous
// key space goes after the commit, and a TRUNCATE rolled back leaves
// nothing behind.
func TestTiKVTruncateStaysSmall(t *testing.T) {
	smallRewriteBatches(t)
	db, tbl, before := openFilledTiKV(t)
	smallTiKVTransactions(t, 32<<10, db)

	tx := db.Begin()
	if err := tx.Truncate(tbl); err != nil {
		t.Fatal(err)
	}
	mustInsert(t, tx, tbl, "k05-050", "c1:again")
	tx.Rollback()
	if n := shadowKeys(t, db); n != 0 {
		t.Fatalf("%d shadow keys after a rolled-back TRUNCATE", n)
	}

	update(t, db, func(tx *Txn) error {
		if err := tx.Truncate(tbl); err != nil {
			return err
		}
		mustInsert(t, tx, tbl, "a", "c1:new")
		mustInsert(t, tx, tbl, "k05-050", "c2:again")
		return nil
	})
	rd := db.Begin()
	defer rd.Rollback()
	if got := scanAll(t, rd, tA.ID, nil, nil); len(got) != 2 || got[0] != "a=c1:new" || got[1] != "k05-050=c2:again" {
		t.Fatalf("after the TRUNCATE: %v", got)
	}
	if err := rd.VerifyIndex(tA.ID, colorIndex(false)); err != nil {
		t.Fatal(err)
	}
	h := history(t, db, tA.ID)
	if h[0].Operation != "TRUNCATE" || h[0].RowsDeleted != 3000 || h[0].RowsInserted != 2 || h[0].ChangesAt == 0 {
		t.Fatalf("its history entry: %+v", h[0])
	}
	ch, err := changes(t, rd, tA.ID, h[0].Version, h[0].Version)
	if err != nil {
		t.Fatal(err)
	}
	ins, del := 0, 0
	for _, c := range ch {
		switch {
		case strings.Contains(c, " insert "):
			ins++
		case strings.Contains(c, " delete "):
			del++
		}
	}
	if len(ch) != 3002 || ins != 2 || del != 3000 || !strings.Contains(ch[0], " insert ") || !strings.HasSuffix(ch[0], " a=c1:new") {
		t.Fatalf("%d change records (%d inserts, %d deletes), first %q", len(ch), ins, del, ch[:min(1, len(ch))])
	}
	for _, prefix := range []byte{prefixRows, prefixIndex} {
		if n := keySpaceLen(t, db, prefix, before); n != 0 {
			t.Errorf("the key space before the TRUNCATE keeps %d keys under prefix %x", n, prefix)
		}
	}
	if n := shadowKeys(t, db); n != 0 {
		t.Errorf("%d shadow keys after the TRUNCATE", n)
	}
}
