package storage

import (
	"fmt"
	"testing"
)

func rowCount(t *testing.T, db *DB, tbl TableID) int64 {
	t.Helper()
	tx := db.Begin()
	defer tx.Rollback()
	n, err := tx.RowCount(tbl)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRowCount: the per-version row count follows inserts, deletes,
// updates, truncates and drops, and survives a reopen's reload of states.
func TestRowCount(t *testing.T) {
	db := openMem(t)
	createTable(t, db, tA)
	if n := rowCount(t, db, tA.ID); n != 0 {
		t.Fatalf("new table: %d rows", n)
	}
	update(t, db, func(tx *Txn) error {
		for i := 0; i < 10; i++ {
			mustInsert(t, tx, tA, fmt.Sprintf("k%02d", i), "v")
		}
		return nil
	})
	if n := rowCount(t, db, tA.ID); n != 10 {
		t.Fatalf("after 10 inserts: %d", n)
	}
	update(t, db, func(tx *Txn) error {
		if err := tx.Delete(tA, k("k00")); err != nil {
			return err
		}
		if err := tx.Update(tA, k("k01"), k("k01"), k("w")); err != nil {
			return err
		}
		mustInsert(t, tx, tA, "k10", "v")
		mustInsert(t, tx, tA, "k11", "v")
		return tx.Delete(tA, k("k11")) // inserted and deleted: no net row
	})
	if n := rowCount(t, db, tA.ID); n != 10 {
		t.Fatalf("after delete, update, insert: %d, want 10", n)
	}
	update(t, db, func(tx *Txn) error {
		if err := tx.Truncate(tA); err != nil {
			return err
		}
		mustInsert(t, tx, tA, "a", "v")
		return nil
	})
	if n := rowCount(t, db, tA.ID); n != 1 {
		t.Fatalf("after truncate + insert: %d, want 1", n)
	}
	// A snapshot taken before a commit keeps the count it saw.
	old := db.Begin()
	defer old.Rollback()
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "b", "v"); return nil })
	if n, _ := old.RowCount(tA.ID); n != 1 {
		t.Fatalf("old snapshot sees %d, want 1", n)
	}
	if n := rowCount(t, db, tA.ID); n != 2 {
		t.Fatalf("after insert: %d, want 2", n)
	}
	// ChangedRows sums the history: versions 1 (10 inserts), 2 (1 delete,
	// 1 update, 1 insert), 3 (truncate of 10 rows, 1 insert), 4 (1 insert).
	tx := db.Begin()
	defer tx.Rollback()
	for _, c := range []struct{ from, to, want int64 }{{0, 1, 10}, {1, 2, 4}, {0, 4, 10 + 4 + 11 + 1}, {4, 4, 0}} {
		if n, err := tx.ChangedRows(tA.ID, c.from, c.to); err != nil || n != c.want {
			t.Errorf("ChangedRows(%d, %d) = %d, %v; want %d", c.from, c.to, n, err, c.want)
		}
	}
}
