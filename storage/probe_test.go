package storage

import (
	"errors"
	"fmt"
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
