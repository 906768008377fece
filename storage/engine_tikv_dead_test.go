//go:build tikv

package storage

import (
	"testing"
)

// smallTiKVTransactions bounds every engine transaction to limit bytes
// and every deleting one to a few keys.
func smallTiKVTransactions(t *testing.T, limit uint64) {
	oldLimit, oldChunk := tikvTxnSizeLimit, deadChunkKeys
	tikvTxnSizeLimit, deadChunkKeys = limit, 50
	t.Cleanup(func() { tikvTxnSizeLimit, deadChunkKeys = oldLimit, oldChunk })
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
