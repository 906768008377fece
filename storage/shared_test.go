//go:build tikv

package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// openShared opens a DB on the named mock cluster (tikvmock://name), as
// another process on one TiKV cluster would.
func openShared(t *testing.T, name string) *DB {
	t.Helper()
	return openSharedClock(t, name, nil)
}

func openSharedClock(t *testing.T, name string, clock func() time.Time) *DB {
	t.Helper()
	db, err := Open(Options{InMemory: true, Store: "tikvmock://" + name, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return db
}

// TestSharedStoreTwoProcesses: two DBs on one mock cluster see each
// other's commits at their next Begin, take table versions after each
// other's without repeating one, hand out row ids that never collide, and
// a write both make concurrently fails the later committer.
func TestSharedStoreTwoProcesses(t *testing.T) {
	a, b := openShared(t, t.Name()), openShared(t, t.Name())
	if !a.sharedStore || a.node == b.node {
		t.Fatalf("shared %v, nodes %d and %d: want a shared store and distinct nodes", a.sharedStore, a.node, b.node)
	}

	// A catalog change on A (a meta key, and a table) is in B's next
	// transaction.
	createTable(t, a, tA)
	update(t, a, func(tx *Txn) error { return tx.PutMeta(k("catalog/t"), k("v1")) })
	tx := b.Begin()
	v, ok, err := tx.GetMeta(k("catalog/t"))
	tx.Rollback()
	if err != nil || !ok || string(v) != "v1" {
		t.Fatalf("B reads A's meta key: %q %v %v", v, ok, err)
	}

	// Writers on both take consecutive versions of the one table.
	for i := range 6 {
		db := a
		if i%2 == 1 {
			db = b
		}
		update(t, db, func(tx *Txn) error {
			mustInsert(t, tx, tA, fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i))
			return nil
		})
	}
	for name, db := range map[string]*DB{"A": a, "B": b} {
		tx := db.Begin()
		h, err := tx.History(tA.ID)
		if err != nil {
			t.Fatal(err)
		}
		rows := scanAll(t, tx, tA.ID, nil, nil)
		ids := map[int64]string{}
		it := tx.Scan(tA.ID, nil, nil)
		for it.Next() {
			r := it.Row()
			if prev, dup := ids[r.RowID]; dup {
				t.Errorf("%s: row id %d of %q and %q", name, r.RowID, prev, r.Key)
			}
			ids[r.RowID] = string(r.Key)
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		tx.Rollback()
		if len(h) != 7 || len(rows) != 6 {
			t.Fatalf("%s: %d history entries, %d rows; want 7 (create + 6 writes) and 6", name, len(h), len(rows))
		}
		for i, e := range h { // newest first
			if e.Version != int64(len(h)-1-i) {
				t.Errorf("%s: history entry %d has version %d", name, i, e.Version)
			}
		}
	}

	// Rows ids of rewrites never repeat across the two.
	seen := map[TableID]bool{}
	for i := range 6 {
		db := a
		if i%2 == 1 {
			db = b
		}
		id, err := db.allocRowsID(tA.ID)
		if err != nil {
			t.Fatal(err)
		}
		if seen[id] || id < FirstRowsID {
			t.Fatalf("rows id %d handed out twice (or below FirstRowsID)", id)
		}
		seen[id] = true
	}

	// A counter both increment concurrently (a sequence's key): the later
	// committer of two concurrent increments fails, so a retry loop on
	// each loses no increment.
	const per = 10
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, db := range []*DB{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < per; {
				tx := db.Begin()
				v, _, err := tx.GetMeta(k("seq"))
				if err == nil {
					cur := uint64(0)
					if len(v) == 8 {
						cur = binary.BigEndian.Uint64(v)
					}
					err = tx.PutMeta(k("seq"), binary.BigEndian.AppendUint64(nil, cur+1))
				}
				if err != nil {
					tx.Rollback()
					errs <- err
					return
				}
				switch err := tx.Commit(); {
				case err == nil:
					n++
				case errors.Is(err, ErrSerialization):
				default:
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	tx = a.Begin()
	v, _, err = tx.GetMeta(k("seq"))
	tx.Rollback()
	if err != nil || len(v) != 8 || binary.BigEndian.Uint64(v) != 2*per {
		t.Fatalf("counter %x (%v): want %d increments", v, err, 2*per)
	}
}

// TestSharedStoreStaleWriter: B's first write of a table A created and
// wrote, B having seen none of it in memory, takes the version after A's.
func TestSharedStoreStaleWriter(t *testing.T) {
	a := openShared(t, t.Name())
	b := openShared(t, t.Name())
	tbl := TableInfo{ID: 7}
	createTable(t, a, tbl)
	update(t, a, func(tx *Txn) error { mustInsert(t, tx, tbl, "x", "1"); return nil })
	_ = b.table(tbl.ID) // B's state: never written, version -1
	update(t, b, func(tx *Txn) error { mustInsert(t, tx, tbl, "y", "2"); return nil })
	update(t, a, func(tx *Txn) error { mustInsert(t, tx, tbl, "z", "3"); return nil })
	tx := b.Begin()
	defer tx.Rollback()
	h, err := tx.History(tbl.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 4 || h[0].Version != 3 || h[3].Version != 0 {
		t.Fatalf("history %+v: want versions 0..3", h)
	}
	if got := scanAll(t, tx, tbl.ID, nil, nil); len(got) != 3 {
		t.Fatalf("rows %v: want x, y, z", got)
	}
}

// TestSharedStoreLease: the lease rules across two DBs on one cluster (B
// takes over A's expired lease; A's commit under it fails).
func TestSharedStoreLease(t *testing.T) {
	clk := &leaseClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	a := openSharedClock(t, t.Name(), clk.Now)
	b := openSharedClock(t, t.Name(), clk.Now)
	checkLeases(t, a, b, clk)
}
