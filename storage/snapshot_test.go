package storage

import (
	"fmt"
	"sync"
	"testing"
)

func openSnapshots(db *DB) int { return db.pdb.Metrics().Snapshots.Count }

// Transactions that begin with no commit between them share one Pebble
// snapshot; a commit makes the next Begin take a new one, the old one
// still serves the transactions that began before and is closed with the
// last of them, and the one snapshot an idle DB keeps open is that of
// its last commit (taken after its sync, durable.go).
func TestSharedSnapshots(t *testing.T) {
	db := openPebbleMem(t) // counts Pebble snapshots
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "a", "1"); return nil })
	idle := func() {
		t.Helper()
		if n := openSnapshots(db); n != 1 || db.curSnap == nil || db.curSnap.seq != db.seq {
			t.Fatalf("%d snapshots open on an idle DB after a commit, want 1 of its last commit", n)
		}
	}
	idle()

	r1, r2 := db.Begin(), db.Begin()
	if r1.shared != r2.shared || r1.snap != r2.snap {
		t.Fatal("two transactions of one commit sequence took two snapshots")
	}
	if n := openSnapshots(db); n != 1 {
		t.Fatalf("%d snapshots open, want 1", n)
	}
	r2.Rollback()
	if n := openSnapshots(db); n != 1 { // r1 still reads it (and the DB keeps it)
		t.Fatalf("%d snapshots open after one of two readers ended, want 1", n)
	}

	update(t, db, func(tx *Txn) error { return tx.Update(tA, k("a"), k("a"), k("2")) })
	r3 := db.Begin()
	if r3.shared == r1.shared {
		t.Fatal("a transaction begun after a commit shares the snapshot from before it")
	}
	if r, ok := get(t, r1, tA.ID, "a"); !ok || string(r.Value) != "1" {
		t.Fatalf("the older reader sees a=%q, want 1", r.Value)
	}
	if r, ok := get(t, r3, tA.ID, "a"); !ok || string(r.Value) != "2" {
		t.Fatalf("the newer reader sees a=%q, want 2", r.Value)
	}
	if n := openSnapshots(db); n != 2 {
		t.Fatalf("%d snapshots open, want 2 (before and after the commit)", n)
	}
	r1.Rollback()
	if n := openSnapshots(db); n != 1 {
		t.Fatalf("%d snapshots open after the last reader of the old one ended, want 1", n)
	}
	r3.Rollback()
	update(t, db, func(tx *Txn) error { return tx.Delete(tA, k("a")) })
	idle()
}

// Readers that begin and end while commits run see, each in its own
// snapshot, the state of one commit: two rows every commit changes
// together always agree. Run with -race for the sharing's bookkeeping.
func TestSharedSnapshotsConcurrent(t *testing.T) {
	db := openPebbleMem(t) // counts Pebble snapshots
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error {
		mustInsert(t, tx, tA, "x", "0")
		mustInsert(t, tx, tA, "y", "0")
		return nil
	})
	const commits, readers = 200, 4
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				tx := db.Begin()
				x, ok1, err1 := tx.Get(tA.ID, k("x"))
				xv := string(x.Value)
				y, ok2, err2 := tx.Get(tA.ID, k("y"))
				tx.Rollback()
				if err1 != nil || err2 != nil || !ok1 || !ok2 {
					errs <- fmt.Errorf("read: %v %v %v %v", ok1, ok2, err1, err2)
					return
				}
				if xv != string(y.Value) {
					errs <- fmt.Errorf("one snapshot shows x=%s, y=%s", xv, y.Value)
					return
				}
			}
		}()
	}
	for i := 1; i <= commits; i++ {
		v := k(fmt.Sprint(i))
		update(t, db, func(tx *Txn) error {
			if err := tx.Update(tA, k("x"), k("x"), v); err != nil {
				return err
			}
			return tx.Update(tA, k("y"), k("y"), v)
		})
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// At most the current sequence's snapshot stays (the DB's reference),
	// if a reader began after the last commit: it pins nothing.
	db.snapMu.Lock()
	cur := db.curSnap
	db.snapMu.Unlock()
	want := 0
	if cur != nil {
		want = 1
		if cur.seq != db.seq || cur.refs != 1 {
			t.Fatalf("the DB keeps the snapshot of sequence %d (%d references) at sequence %d", cur.seq, cur.refs, db.seq)
		}
	}
	if n := openSnapshots(db); n != want {
		t.Fatalf("%d snapshots open once every reader ended, want %d", n, want)
	}
}
