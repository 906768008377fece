package storage

import (
	"errors"
	"fmt"
	"maps"
	"testing"
)

// TestDeletedKeysSnapshots: a probe answers from the recently deleted keys
// only for snapshots that see the delete and no later write.
func TestDeletedKeysSnapshots(t *testing.T) {
	db := openMem(t)
	tbl := TableInfo{ID: 1}
	createTable(t, db, tbl)
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tbl, "k", "v1"); return nil })

	before := db.Begin() // sees k
	defer before.Rollback()
	update(t, db, func(tx *Txn) error { return tx.Delete(tbl, k("k")) })
	var dup *DuplicateKeyError
	if _, err := before.Insert(tbl, k("k"), k("x")); !errors.As(err, &dup) {
		t.Fatalf("a snapshot from before the delete: %v, want a duplicate", err)
	}

	after := db.Begin() // sees k deleted
	defer after.Rollback()
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tbl, "k", "v2"); return nil })
	if _, err := after.Insert(tbl, k("k"), k("x")); err != nil {
		t.Fatalf("a snapshot from between the delete and the insert: %v", err)
	}
	if err := after.Commit(); !errors.As(err, &dup) {
		t.Fatalf("its commit: %v, want a duplicate (the concurrent insert won)", err)
	}
	latest := db.Begin()
	defer latest.Rollback()
	if _, err := latest.Insert(tbl, k("k"), k("x")); !errors.As(err, &dup) {
		t.Fatalf("a snapshot after the re-insert: %v, want a duplicate", err)
	}
}

// TestDeletedKeysModel: random inserts, updates (moving rows to other
// keys) and deletes by up to three overlapping transactions, TRUNCATE now
// and then; every insert's answer matches a model of its snapshot and own
// writes, and every commit's outcome the first-committer-wins rule.
func TestDeletedKeysModel(t *testing.T) {
	r := seededRand(t)
	db := openMem(t)
	tbl := TableInfo{ID: 1}
	createTable(t, db, tbl)
	type open struct {
		tx      *Txn
		begin   map[int]bool // the snapshot
		view    map[int]bool // the snapshot with own writes
		touched map[int]bool
		trunc   bool
	}
	committed := map[int]bool{}
	commits, known := 0, 0 // known: inserts answered from the deleted keys
	var txns []*open
	key := func(i int) []byte { return k(fmt.Sprintf("k%02d", i)) }
	for step := range 5000 {
		if len(txns) < 3 && r.IntN(8) == 0 || len(txns) == 0 {
			txns = append(txns, &open{tx: db.Begin(), begin: maps.Clone(committed), view: maps.Clone(committed), touched: map[int]bool{}})
			continue
		}
		i := r.IntN(len(txns))
		o := txns[i]
		switch op := r.IntN(20); {
		case op < 2: // end it
			txns = append(txns[:i], txns[i+1:]...)
			if op == 0 {
				o.tx.Rollback()
				continue
			}
			err := o.tx.Commit()
			var dup *DuplicateKeyError
			if errors.Is(err, ErrSerialization) || errors.As(err, &dup) {
				continue // a concurrent commit won: nothing written
			}
			if err != nil {
				t.Fatalf("step %d: commit: %v", step, err)
			}
			commits++
			if o.trunc {
				clear(committed)
			}
			for key := range o.touched {
				if !o.trunc && !o.begin[key] && !o.view[key] {
					// Inserted and deleted again: the transaction
					// wrote nothing there, and a concurrent insert
					// committed meanwhile stands (as in PostgreSQL,
					// where it waits for this one and then succeeds).
					continue
				}
				committed[key] = o.view[key]
			}
		case op < 11:
			n := r.IntN(50)
			if db.deleted.absent(rowKey(nil, tbl.ID, key(n)), o.tx.beginSeq) {
				known++
			}
			_, err := o.tx.Insert(tbl, key(n), k("v"))
			var dup *DuplicateKeyError
			if errors.As(err, &dup) != o.view[n] || err != nil && !errors.As(err, &dup) {
				t.Fatalf("step %d: insert k%02d: %v (present %v)", step, n, err, o.view[n])
			}
			if err == nil {
				o.view[n], o.touched[n] = true, true
			}
		case op < 15:
			n := r.IntN(50)
			err := o.tx.Delete(tbl, key(n))
			if errors.Is(err, ErrSerialization) {
				o.tx.Rollback()
				txns = append(txns[:i], txns[i+1:]...)
				continue
			}
			if (err == nil) != o.view[n] {
				t.Fatalf("step %d: delete k%02d: %v (present %v)", step, n, err, o.view[n])
			}
			if err == nil {
				o.view[n], o.touched[n] = false, true
			}
		case op < 19:
			a, b := r.IntN(50), r.IntN(50)
			err := o.tx.Update(tbl, key(a), key(b), k("u"))
			var dup *DuplicateKeyError
			switch {
			case errors.Is(err, ErrSerialization):
				o.tx.Rollback()
				txns = append(txns[:i], txns[i+1:]...)
				continue
			case !o.view[a]:
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("step %d: update k%02d: %v, want not found", step, a, err)
				}
			case a != b && o.view[b]:
				if !errors.As(err, &dup) {
					t.Fatalf("step %d: update k%02d → k%02d: %v, want a duplicate", step, a, b, err)
				}
			case err != nil:
				t.Fatalf("step %d: update k%02d → k%02d: %v", step, a, b, err)
			default:
				o.view[a], o.view[b] = false, true
				o.touched[a], o.touched[b] = true, true
			}
		default:
			if err := o.tx.Truncate(tbl); err != nil {
				o.tx.Rollback()
				txns = append(txns[:i], txns[i+1:]...)
				continue
			}
			clear(o.view)
			o.trunc = true
		}
	}
	for _, o := range txns {
		o.tx.Rollback()
	}
	if commits < 50 || known < 20 {
		t.Fatalf("%d commits, %d inserts answered from the deleted keys: the test misses its path", commits, known)
	}
	// The committed state is the model's.
	tx := db.Begin()
	defer tx.Rollback()
	for n := range 50 {
		_, ok := get(t, tx, tbl.ID, fmt.Sprintf("k%02d", n))
		if ok != committed[n] {
			t.Fatalf("k%02d: present %v, model %v", n, ok, committed[n])
		}
	}
}
