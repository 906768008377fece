package catalog

import (
	"testing"

	"github.com/mvserver/mvserver/storage"
)

// Snapshot answers a transaction from the shared catalog without reading
// the generation when the transaction sees the same storage state as one
// that did (Txn.StateSeq). Every answer must still be the catalog of the
// transaction's own snapshot: after DDL, after commits that leave the
// catalog alone, for a transaction that began before either, and for one
// holding uncommitted DDL of its own (which must not leak into the shared
// catalog).
func TestSnapshotFollowsStorageState(t *testing.T) {
	db, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m, err := Open(db, "d")
	if err != nil {
		t.Fatal(err)
	}
	snap := func(txn *storage.Txn) *Catalog {
		t.Helper()
		c, err := m.Snapshot(txn)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	has := func(c *Catalog, schema string) bool {
		_, ok := c.Schema(schema)
		return ok
	}
	// addSchema persists a new schema in txn (uncommitted).
	addSchema := func(txn *storage.Txn, name string) {
		t.Helper()
		nc := snap(txn).Clone()
		s := &Schema{ID: nc.AllocID(), Name: name}
		nc.PutSchema(s)
		if err := m.Persist(txn, nc, []uint32{s.ID}, nil); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(txn *storage.Txn) {
		t.Helper()
		if err := txn.Commit(); err != nil {
			t.Fatal(err)
		}
	}

	old := db.Begin() // before any DDL below
	defer old.Rollback()
	c0 := snap(old)
	same := db.Begin()
	if c := snap(same); c != c0 {
		t.Fatalf("two transactions of one storage state got different catalogs (gen %d, %d)", c.Gen, c0.Gen)
	}
	same.Rollback()

	ddl := db.Begin()
	addSchema(ddl, "s1")
	if !has(snap(ddl), "s1") {
		t.Fatal("a transaction does not see its own uncommitted schema")
	}
	// Same storage state as old, uncommitted DDL elsewhere: nothing of it.
	peer := db.Begin()
	if c := snap(peer); has(c, "s1") || c.Gen != c0.Gen {
		t.Fatalf("uncommitted DDL leaked into another transaction's catalog (gen %d)", c.Gen)
	}
	peer.Rollback()
	commit(ddl)

	after := db.Begin()
	c1 := snap(after)
	if !has(c1, "s1") || c1.Gen <= c0.Gen {
		t.Fatalf("after the DDL commit: s1 %v, gen %d (before %d)", has(c1, "s1"), c1.Gen, c0.Gen)
	}
	after.Rollback()
	if c := snap(old); has(c, "s1") || c.Gen != c0.Gen {
		t.Fatalf("a transaction begun before the DDL sees its schema (gen %d)", c.Gen)
	}

	// A commit that is not DDL moves the storage state, not the catalog.
	other := db.Begin()
	if err := other.PutMeta([]byte("not-catalog"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	commit(other)
	for range 2 { // the second one reuses what the first one read
		txn := db.Begin()
		if c := snap(txn); c != c1 {
			t.Fatalf("a commit without DDL changed the catalog (gen %d, want %d)", c.Gen, c1.Gen)
		}
		txn.Rollback()
	}

	// DDL again, then the states before and after it, in both orders.
	mid := db.Begin()
	ddl = db.Begin()
	addSchema(ddl, "s2")
	commit(ddl)
	late := db.Begin()
	if c := snap(late); !has(c, "s2") {
		t.Fatal("a transaction begun after the second DDL does not see s2")
	}
	if c := snap(mid); has(c, "s2") || !has(c, "s1") {
		t.Fatalf("a transaction begun between the DDLs: s1 %v, s2 %v", has(c, "s1"), has(c, "s2"))
	}
	if c := snap(late); !has(c, "s2") {
		t.Fatal("the older transaction's snapshot replaced the newer catalog")
	}
	mid.Rollback()
	late.Rollback()
	if c := snap(old); has(c, "s1") || has(c, "s2") {
		t.Fatal("the first transaction sees later DDL")
	}
}
