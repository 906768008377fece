package storage

import (
	"errors"
	"fmt"
	"maps"
	"testing"
)

// TestProbeBounds checks that inserts past probeBoundsAfter, which answer
// from the snapshot's first and last keys, still find every duplicate (at
// the bounds, between them, in a unique index) and accept keys outside.
func TestProbeBounds(t *testing.T) {
	db := openMem(t)
	base := TableInfo{ID: 1, ChangeDataFeed: true}
	tbl := withIndex(base, colorIndex(true))
	createTable(t, db, base)
	update(t, db, func(tx *Txn) error { return tx.BuildIndex(base, colorIndex(true)) })
	update(t, db, func(tx *Txn) error {
		for _, i := range []int{10, 15, 20} {
			if _, err := tx.Insert(tbl, k(fmt.Sprintf("k%02d", i)), k(fmt.Sprintf("c%02d", i))); err != nil {
				return err
			}
		}
		return nil
	})
	tx := db.Begin()
	defer tx.Rollback()
	// Past the threshold with keys and colors outside the snapshot's range.
	for i := range probeBoundsAfter + 2 {
		mustInsert(t, tx, tbl, fmt.Sprintf("k%02d", 30+i), fmt.Sprintf("c%02d", 30+i))
	}
	var dup *DuplicateKeyError
	for _, c := range []struct{ key, color string }{
		{"k10", "x1"}, {"k15", "x2"}, {"k20", "x3"}, // rows: first, middle, last
		{"a1", "c10"}, {"a2", "c15"}, {"a3", "c20"}, // unique entries likewise
		{"k31", "x4"}, // an own write
	} {
		if _, err := tx.Insert(tbl, k(c.key), k(c.color)); !errors.As(err, &dup) {
			t.Fatalf("insert %s %s: %v, want a duplicate", c.key, c.color, err)
		}
	}
	for _, c := range []struct{ key, color string }{{"k00", "c00"}, {"k12", "c12"}, {"k99", "c99"}} {
		mustInsert(t, tx, tbl, c.key, c.color)
	}
	if !tx.tables[1].rowBounds.loaded || !tx.tables[1].idx[7].bounds.loaded {
		t.Fatal("the bounds were never read: the test misses its path")
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	verify(t, db, 1, colorIndex(true))
}

// TestProbeBoundsAfterDeletes: mvbench's DML loop inserts the keys below a
// table's first row and deletes them again, round after round, so the
// memtable holds every round's versions of those keys; the probes go
// through them upwards or downwards. The row probes are answered from the
// recently deleted keys (deleted.go), the unique index's through its
// bounds, and every answer stays exact: the re-inserted keys are absent,
// the table's rows still duplicates, in the unique index too.
func TestProbeBoundsAfterDeletes(t *testing.T) {
	db := openMem(t)
	base := TableInfo{ID: 1, ChangeDataFeed: true}
	tbl := withIndex(base, colorIndex(true))
	createTable(t, db, base)
	update(t, db, func(tx *Txn) error { return tx.BuildIndex(base, colorIndex(true)) })
	update(t, db, func(tx *Txn) error {
		for i := 100; i < 200; i++ {
			if _, err := tx.Insert(tbl, k(fmt.Sprintf("k%03d", i)), k(fmt.Sprintf("c%03d", i))); err != nil {
				return err
			}
		}
		return nil
	})
	const rounds, low = 30, 50
	var dup *DuplicateKeyError
	for round := range rounds {
		tx := db.Begin()
		for j := range low {
			i := j
			if round%2 == 1 {
				i = low - 1 - j
			}
			mustInsert(t, tx, tbl, fmt.Sprintf("k%03d", i), fmt.Sprintf("x%02d-%03d", round, i))
		}
		if rb := tx.tables[1].rowBounds; round > 0 && (rb.probes > 0 || rb.loaded) {
			// The deleted keys are known deleted (deleted.go): no
			// probe of them reaches Pebble.
			t.Fatalf("round %d: %d probes went to Pebble (bounds read %v)", round, rb.probes, rb.loaded)
		}
		// The table's rows and index entries are still found.
		for _, c := range []struct{ key, color string }{{"k100", "y1"}, {"k150", "y2"}, {"k199", "y3"}, {"a1", "c150"}, {"a2", "c100"}, {"a3", "c199"}, {"k010", "y4"}} {
			if _, err := tx.Insert(tbl, k(c.key), k(c.color)); !errors.As(err, &dup) {
				t.Fatalf("round %d: insert %s %s: %v, want a duplicate", round, c.key, c.color, err)
			}
		}
		if round == 0 && !tx.tables[1].rowBounds.loaded || !tx.tables[1].idx[7].bounds.loaded {
			t.Fatal("the bounds were never read: the test misses its path")
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		update(t, db, func(tx *Txn) error {
			for i := range low {
				if err := tx.Delete(tbl, k(fmt.Sprintf("k%03d", i))); err != nil {
					return err
				}
			}
			return nil
		})
	}
	verify(t, db, 1, colorIndex(true))
}

// TestProbeModel: random inserts (ascending, descending and scattered
// runs, past probeBoundsAfter) and deletes over many transactions; every
// insert's answer (duplicate or not) matches a model of the committed
// rows and the transaction's own writes.
func TestProbeModel(t *testing.T) {
	r := seededRand(t)
	db := openMem(t)
	tbl := TableInfo{ID: 1}
	createTable(t, db, tbl)
	committed := map[int]bool{}
	for round := range 80 {
		tx := db.Begin()
		own := maps.Clone(committed)
		start, dir := r.IntN(300), 1-2*r.IntN(2)
		scattered := r.IntN(3) == 0
		for step := range 40 {
			key := start + dir*step
			if scattered {
				key = r.IntN(300)
			}
			if key < 0 || key >= 300 {
				continue
			}
			ks := fmt.Sprintf("k%03d", key)
			if r.IntN(4) == 0 {
				err := tx.Delete(tbl, k(ks))
				if own[key] != (err == nil) || err != nil && !errors.Is(err, ErrNotFound) {
					t.Fatalf("round %d: delete %s: %v (present %v)", round, ks, err, own[key])
				}
				delete(own, key)
				continue
			}
			_, err := tx.Insert(tbl, k(ks), k("v"))
			if errors.Is(err, ErrDuplicateKey) != own[key] || err != nil && !errors.Is(err, ErrDuplicateKey) {
				t.Fatalf("round %d step %d: insert %s: %v (present %v)", round, step, ks, err, own[key])
			}
			own[key] = true
		}
		if r.IntN(4) == 0 {
			tx.Rollback()
			continue
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		committed = own
	}
}

// TestProbeBoundsQueue: a queue table, rows appended at one end and
// deleted at the other (either way round). The appends' bounds never walk
// the deleted keys (First() or Last() used to, every statement, over ever
// more of them), and the head of the queue is still found.
func TestProbeBoundsQueue(t *testing.T) {
	for _, down := range []bool{false, true} {
		t.Run(fmt.Sprintf("down=%v", down), func(t *testing.T) {
			db := openMem(t)
			tbl := TableInfo{ID: 1}
			createTable(t, db, tbl)
			key := func(i int) []byte {
				if down {
					i = 9999 - i
				}
				return k(fmt.Sprintf("k%04d", i))
			}
			next, head := 0, 0
			var dup *DuplicateKeyError
			for round := range 40 {
				tx := db.Begin()
				for range 20 {
					if _, err := tx.Insert(tbl, key(next), k("v")); err != nil {
						t.Fatal(err)
					}
					next++
				}
				if round > 0 {
					if _, err := tx.Insert(tbl, key(head), k("v")); !errors.As(err, &dup) {
						t.Fatalf("round %d: insert of the queue's head: %v, want a duplicate", round, err)
					}
					if b := tx.tables[1].rowBounds; !b.loaded || b.steps > 4 {
						t.Fatalf("round %d: bounds loaded %v, %d steps", round, b.loaded, b.steps)
					}
				}
				if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
				update(t, db, func(tx *Txn) error {
					for range 15 {
						if err := tx.Delete(tbl, key(head)); err != nil {
							return err
						}
						head++
					}
					return nil
				})
			}
		})
	}
}
