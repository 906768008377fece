package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

func TestWriteWriteConflict(t *testing.T) {
	db := abDB(t)
	cases := []struct {
		name        string
		first, then func(tx *Txn) error
	}{
		{"update/update",
			func(tx *Txn) error { return tx.Update(tA, k("a"), k("a"), k("x")) },
			func(tx *Txn) error { return tx.Update(tA, k("a"), k("a"), k("y")) }},
		{"delete/update",
			func(tx *Txn) error { return tx.Delete(tA, k("a")) },
			func(tx *Txn) error { return tx.Update(tA, k("a"), k("a"), k("y")) }},
		{"update/delete",
			func(tx *Txn) error { return tx.Update(tA, k("a"), k("a"), k("x")) },
			func(tx *Txn) error { return tx.Delete(tA, k("a")) }},
		{"meta/meta",
			func(tx *Txn) error { return tx.PutMeta(k("m"), k("1")) },
			func(tx *Txn) error { return tx.PutMeta(k("m"), k("2")) }},
		{"truncate/update",
			func(tx *Txn) error { return tx.Truncate(tA) },
			func(tx *Txn) error { return tx.Update(tA, k("b"), k("b"), k("y")) }},
		{"insert/truncate",
			func(tx *Txn) error { _, err := tx.Insert(tA, k("new"), k("1")); return err },
			func(tx *Txn) error { return tx.Truncate(tA) }},
		{"drop/insert",
			func(tx *Txn) error { return tx.DropTable(tA.ID) },
			func(tx *Txn) error { _, err := tx.Insert(tA, nil, k("1")); return err }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := abDB(t)
			t1, t2 := db.Begin(), db.Begin()
			if err := c.first(t1); err != nil {
				t.Fatal(err)
			}
			if err := c.then(t2); err != nil {
				t.Fatal(err)
			}
			if err := t1.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := t2.Commit(); !errors.Is(err, ErrSerialization) {
				t.Fatalf("second commit: %v, want ErrSerialization", err)
			}
		})
	}
	// Disjoint keys of one table do not conflict; neither do versions.
	t1, t2 := db.Begin(), db.Begin()
	if err := t1.Update(tA, k("a"), k("a"), k("x")); err != nil {
		t.Fatal(err)
	}
	if err := t2.Update(tA, k("b"), k("b"), k("y")); err != nil {
		t.Fatal(err)
	}
	if err := t1.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := t2.Commit(); err != nil {
		t.Fatalf("disjoint writers: %v", err)
	}
	v1, v2 := t1.CommittedVersions()[tA.ID], t2.CommittedVersions()[tA.ID]
	if v1 != 2 || v2 != 3 {
		t.Fatalf("versions %d %d, want 2 3", v1, v2)
	}
	tx := db.Begin()
	defer tx.Rollback()
	ra, _ := get(t, tx, tA.ID, "a")
	rb, _ := get(t, tx, tA.ID, "b")
	if ra.CommitVersion != 2 || rb.CommitVersion != 3 {
		t.Fatalf("commit versions %d %d (the re-encode after a version race must stamp 3)", ra.CommitVersion, rb.CommitVersion)
	}
}

func TestConcurrentDuplicateInsert(t *testing.T) {
	db := openMem(t)
	createTable(t, db, tA)
	t1, t2 := db.Begin(), db.Begin()
	mustInsert(t, t1, tA, "k", "1")
	mustInsert(t, t2, tA, "k", "2") // not visible to t2 yet
	if err := t1.Commit(); err != nil {
		t.Fatal(err)
	}
	err := t2.Commit()
	var dk *DuplicateKeyError
	if !errors.As(err, &dk) || string(dk.Key) != "k" || dk.Table != tA.ID {
		t.Fatalf("second insert: %v, want DuplicateKeyError", err)
	}
	// A concurrently inserted and then deleted key does not block an insert.
	t3 := db.Begin()
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "z", "1"); return nil })
	update(t, db, func(tx *Txn) error { return tx.Delete(tA, k("z")) })
	mustInsert(t, t3, tA, "z", "3")
	if err := t3.Commit(); err != nil {
		t.Fatalf("insert after concurrent insert+delete: %v", err)
	}
}

func TestCheckUnchanged(t *testing.T) {
	db := openMem(t)
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { return tx.PutMeta(k("desc/1"), k("v1")) })
	dml := db.Begin()
	dml.CheckUnchanged(k("desc/1"))
	mustInsert(t, dml, tA, "a", "1")
	update(t, db, func(tx *Txn) error { return tx.PutMeta(k("desc/1"), k("v2")) }) // concurrent DDL
	if err := dml.Commit(); !errors.Is(err, ErrSerialization) {
		t.Fatalf("commit after concurrent DDL: %v", err)
	}
	// Unchanged: fine. A write before Begin does not count.
	dml2 := db.Begin()
	dml2.CheckUnchanged(k("desc/1"))
	mustInsert(t, dml2, tA, "a", "1")
	if err := dml2.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestConflictBookkeepingPruned(t *testing.T) {
	db := openMem(t)
	createTable(t, db, tA)
	old := db.Begin() // holds back pruning
	for i := 0; i < 50; i++ {
		update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, fmt.Sprint(i), "v"); return nil })
	}
	db.commitMu.Lock()
	n := db.conflicts.size()
	db.commitMu.Unlock()
	if n != 50 {
		t.Fatalf("tracked %d keys while an old txn is open, want 50", n)
	}
	old.Rollback()
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "last", "v"); return nil })
	db.commitMu.Lock()
	n = db.conflicts.size()
	db.commitMu.Unlock()
	if n != 0 {
		t.Fatalf("tracked %d keys with no open txn, want 0", n)
	}
}

// TestConcurrentCommits: 16 goroutines increment shared counters (retrying on
// ErrSerialization) and insert rows of their own. Run with -race.
func TestConcurrentCommits(t *testing.T) {
	db := openMem(t)
	createTable(t, db, tA)
	const counters = 4
	update(t, db, func(tx *Txn) error {
		for c := 0; c < counters; c++ {
			if _, err := tx.Insert(tA, k(fmt.Sprintf("ctr%d", c)), binary.AppendUvarint(nil, 0)); err != nil {
				return err
			}
		}
		return nil
	})
	var events atomic.Int64
	var lastVersion atomic.Int64
	unsub := db.Subscribe(func(evs []CommitEvent) {
		for _, ev := range evs {
			if ev.Table == tA.ID {
				if prev := lastVersion.Swap(ev.Version); prev >= ev.Version {
					t.Errorf("event version %d after %d", ev.Version, prev)
				}
				events.Add(1)
			}
		}
	})
	defer unsub()
	const workers, perWorker = 16, 40
	var wg sync.WaitGroup
	var commits, conflicts atomic.Int64
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				ctr := k(fmt.Sprintf("ctr%d", (w+i)%counters))
				for {
					tx := db.Begin()
					r, ok, err := tx.Get(tA.ID, ctr)
					if err != nil || !ok {
						t.Error(err, ok)
						return
					}
					n, _ := binary.Uvarint(r.Value)
					if err := tx.Update(tA, ctr, ctr, binary.AppendUvarint(nil, n+1)); err != nil {
						if errors.Is(err, ErrSerialization) {
							// written by a commit after our Begin: fails at once
							tx.Rollback()
							conflicts.Add(1)
							continue
						}
						t.Error(err)
						return
					}
					if _, err := tx.Insert(tA, k(fmt.Sprintf("w%02d-%03d", w, i)), k("x")); err != nil {
						t.Error(err)
						return
					}
					err = tx.Commit()
					if errors.Is(err, ErrSerialization) {
						conflicts.Add(1)
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					commits.Add(1)
					break
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d commits, %d serialization retries", commits.Load(), conflicts.Load())
	tx := db.Begin()
	defer tx.Rollback()
	var sum uint64
	for c := 0; c < counters; c++ {
		r, _ := get(t, tx, tA.ID, fmt.Sprintf("ctr%d", c))
		n, _ := binary.Uvarint(r.Value)
		sum += n
	}
	if sum != workers*perWorker {
		t.Fatalf("counters sum to %d, want %d (lost update)", sum, workers*perWorker)
	}
	if rows := len(scanAll(t, tx, tA.ID, k("w"), k("x"))); rows != workers*perWorker {
		t.Fatalf("%d worker rows", rows)
	}
	v, _ := tx.TableVersion(tA.ID)
	if v != 1+workers*perWorker {
		t.Fatalf("version %d, want %d", v, 1+workers*perWorker)
	}
	hist, err := tx.History(tA.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range hist {
		if h.Version != v-int64(i) {
			t.Fatalf("history[%d] is version %d", i, h.Version)
		}
		if i > 0 && !h.Timestamp.Before(hist[i-1].Timestamp) {
			t.Fatalf("timestamps not increasing at version %d", h.Version)
		}
	}
	// Subscribers hear of a commit after Commit returned, possibly from
	// another goroutine: wait for the last one with a deadline.
	waitFor(t, func() bool { return events.Load() == workers*perWorker })
}

func TestCheckUnchangedReadOnly(t *testing.T) {
	db := openMem(t)
	tx := db.Begin()
	tx.CheckUnchanged(k("desc/1"))
	update(t, db, func(tx *Txn) error { return tx.PutMeta(k("desc/1"), k("v2")) })
	if !tx.ReadOnly() {
		t.Fatal("not read-only")
	}
	if err := tx.Commit(); !errors.Is(err, ErrSerialization) {
		t.Fatalf("read-only commit with a changed checked key: %v", err)
	}
}
