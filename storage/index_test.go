package storage

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Test rows are "color:rest" values; index 7 is on the color ("~" is
// NULL), unique when made so.
func colorKey(dst, value []byte) ([]byte, bool, error) {
	c, _, _ := strings.Cut(string(value), ":")
	if c == "~" {
		return AppendNull(dst), false, nil
	}
	return AppendString(AppendNotNullMarker(dst), c), true, nil
}

func colorIndex(unique bool) IndexInfo { return IndexInfo{ID: 7, Unique: unique, Key: colorKey} }

func withIndex(tbl TableInfo, ix ...IndexInfo) TableInfo {
	tbl.Indexes = ix
	return tbl
}

// createIndexed creates tA with index ix and returns tA as writes name it.
func createIndexed(t testing.TB, db *DB, ix IndexInfo) TableInfo {
	t.Helper()
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { return tx.BuildIndex(tA, ix) })
	return withIndex(tA, ix)
}

// byColor returns the values of the rows whose color is c, through the index.
func byColor(t testing.TB, tx *Txn, tbl TableID, c string) []string {
	t.Helper()
	start := AppendString(AppendNotNullMarker(nil), c)
	it := tx.ScanIndex(tbl, 7, start, PrefixEnd(start))
	var out []string
	for it.Next() {
		out = append(out, string(it.Row().Value))
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func verify(t testing.TB, db *DB, tbl TableID, ix IndexInfo) {
	t.Helper()
	tx := db.Begin()
	defer tx.Rollback()
	if err := tx.VerifyIndex(tbl, ix); err != nil {
		t.Fatal(err)
	}
}

func TestIndexMaintained(t *testing.T) {
	db := openMem(t)
	ix := colorIndex(false)
	tbl := withIndex(tA, ix)
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error {
		mustInsert(t, tx, tA, "a", "red:1")
		mustInsert(t, tx, tA, "b", "blue:2")
		return nil
	})
	// Rows written before the index are indexed by BuildIndex, with this
	// transaction's own writes.
	update(t, db, func(tx *Txn) error {
		mustInsert(t, tx, tA, "c", "red:3")
		if err := tx.BuildIndex(tA, ix); err != nil {
			return err
		}
		if got := byColor(t, tx, tA.ID, "red"); !slices.Equal(got, []string{"red:1", "red:3"}) {
			t.Errorf("red in build txn: %v", got)
		}
		mustInsert(t, tx, tbl, "d", "red:4")
		return nil
	})
	verify(t, db, tA.ID, ix)
	tx := db.Begin()
	if got := byColor(t, tx, tA.ID, "red"); !slices.Equal(got, []string{"red:1", "red:3", "red:4"}) {
		t.Fatalf("red: %v", got)
	}
	// Update moving the color and the key, delete, in one txn: the txn
	// reads its own entries.
	if err := tx.Update(tbl, k("a"), k("z"), k("blue:5")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Delete(tbl, k("c")); err != nil {
		t.Fatal(err)
	}
	if got := byColor(t, tx, tA.ID, "red"); !slices.Equal(got, []string{"red:4"}) {
		t.Fatalf("red after update: %v", got)
	}
	if got := byColor(t, tx, tA.ID, "blue"); !slices.Equal(got, []string{"blue:2", "blue:5"}) {
		t.Fatalf("blue after update: %v", got)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	verify(t, db, tA.ID, ix)

	// Index entries are no rows: not in the change feed, not counted.
	if n := rowCount(t, db, tA.ID); n != 3 {
		t.Fatalf("row count %d", n)
	}
	tx = db.Begin()
	got, err := changes(t, tx, tA.ID, 0, -1)
	tx.Rollback()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range got {
		if strings.Contains(c, "\x00") {
			t.Fatalf("index entry in the change feed: %q", c)
		}
	}
	if len(got) != 7 { // 4 inserts, 1 update (2 records), 1 delete
		t.Fatalf("changes: %q", got)
	}

	// Truncate, then rows again; then drop the index, then the table.
	update(t, db, func(tx *Txn) error {
		if err := tx.Truncate(tbl); err != nil {
			return err
		}
		mustInsert(t, tx, tbl, "q", "red:6")
		return nil
	})
	verify(t, db, tA.ID, ix)
	tx = db.Begin()
	if got := byColor(t, tx, tA.ID, "red"); !slices.Equal(got, []string{"red:6"}) {
		t.Fatalf("red after truncate: %v", got)
	}
	tx.Rollback()
	update(t, db, func(tx *Txn) error { return tx.DropIndex(tA.ID, ix.ID) })
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "r", "red:7"); return nil })
	tx = db.Begin()
	if ids, err := tx.Indexes(tA.ID); err != nil || len(ids) != 0 {
		t.Fatalf("indexes after drop: %v %v", ids, err)
	}
	tx.Rollback()
	assertNoEntries(t, db, tA.ID)
	update(t, db, func(tx *Txn) error { return tx.BuildIndex(tA, ix) })
	update(t, db, func(tx *Txn) error { return tx.DropTable(tA.ID) })
	assertNoEntries(t, db, tA.ID)
}

// assertNoEntries checks the index key space of tbl is empty on disk.
func assertNoEntries(t *testing.T, db *DB, tbl TableID) {
	t.Helper()
	settle(db)
	s, e := tableSpan(prefixIndex, tbl)
	it, err := db.eng.newIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if it.SeekGE(s) && string(it.Key()) < string(e) {
		t.Fatalf("entry %x left on disk", it.Key())
	}
}

func TestUniqueIndex(t *testing.T) {
	db := openMem(t)
	ix := colorIndex(true)
	tbl := createIndexed(t, db, ix)
	update(t, db, func(tx *Txn) error {
		mustInsert(t, tx, tbl, "a", "red:1")
		mustInsert(t, tx, tbl, "b", "~:2")
		mustInsert(t, tx, tbl, "c", "~:3") // NULLs are distinct
		return nil
	})
	dup := func(err error) {
		t.Helper()
		var de *DuplicateKeyError
		if !errors.As(err, &de) || de.Index != ix.ID {
			t.Fatalf("want a duplicate in index 7, got %v", err)
		}
		if string(de.Key) != string(AppendString(AppendNotNullMarker(nil), "red")) {
			t.Fatalf("duplicate key %x", de.Key)
		}
	}
	tx := db.Begin()
	_, err := tx.Insert(tbl, k("d"), k("red:4"))
	dup(err)
	// The failed insert left nothing: the row is not there.
	if _, ok := get(t, tx, tA.ID, "d"); ok {
		t.Fatal("row of a failed insert is there")
	}
	dup(tx.Update(tbl, k("b"), k("b"), k("red:5")))
	// The same row may keep its key, and move it to a new row key.
	if err := tx.Update(tbl, k("a"), k("e"), k("red:6")); err != nil {
		t.Fatal(err)
	}
	// Delete then insert the value in one txn.
	if err := tx.Delete(tbl, k("e")); err != nil {
		t.Fatal(err)
	}
	mustInsert(t, tx, tbl, "f", "red:7")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	verify(t, db, tA.ID, ix)

	// A unique index cannot be built over repeated keys.
	update(t, db, func(tx *Txn) error { return tx.DropIndex(tA.ID, ix.ID) })
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "g", "red:8"); return nil })
	tx = db.Begin()
	dup(tx.BuildIndex(tA, ix))
	tx.Rollback()
}

func TestConcurrentUniqueInsert(t *testing.T) {
	db := openMem(t)
	ix := colorIndex(true)
	tbl := withIndex(tA, ix)
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { return tx.BuildIndex(tA, ix) })
	t1, t2 := db.Begin(), db.Begin()
	mustInsert(t, t1, tbl, "a", "red:1")
	mustInsert(t, t2, tbl, "b", "red:2") // its snapshot has no red
	if err := t1.Commit(); err != nil {
		t.Fatal(err)
	}
	var de *DuplicateKeyError
	if err := t2.Commit(); !errors.As(err, &de) || de.Index != ix.ID {
		t.Fatalf("second committer: %v", err)
	}
	verify(t, db, tA.ID, ix)

	// Moving a unique key concurrently: one moves red away, the other
	// takes red on another row. Both may commit (PostgreSQL would too,
	// after waiting), and the index stays exact.
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tbl, "c", "blue:3"); return nil })
	t1, t2 = db.Begin(), db.Begin()
	if err := t1.Update(tbl, k("a"), k("a"), k("green:4")); err != nil {
		t.Fatal(err)
	}
	if _, err := t2.Insert(tbl, k("d"), k("red:5")); !errors.As(err, &de) {
		t.Fatalf("insert of a value the snapshot holds: %v", err)
	}
	t2.Rollback()
	if err := t1.Commit(); err != nil {
		t.Fatal(err)
	}
	verify(t, db, tA.ID, ix)
}

func TestIndexDDLConflicts(t *testing.T) {
	db := openMem(t)
	ix := colorIndex(false)
	createTable(t, db, tA)
	// A build and a concurrent row write: whoever commits second fails.
	t1, t2 := db.Begin(), db.Begin()
	if err := t1.BuildIndex(tA, ix); err != nil {
		t.Fatal(err)
	}
	mustInsert(t, t2, tA, "a", "red:1") // t2 knows no index
	if err := t2.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := t1.Commit(); !errors.Is(err, ErrSerialization) {
		t.Fatalf("build after a concurrent write: %v", err)
	}
	t1, t2 = db.Begin(), db.Begin()
	if err := t1.BuildIndex(tA, ix); err != nil {
		t.Fatal(err)
	}
	mustInsert(t, t2, tA, "b", "red:2")
	if err := t1.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := t2.Commit(); !errors.Is(err, ErrSerialization) {
		t.Fatalf("write after a concurrent build: %v", err)
	}
	verify(t, db, tA.ID, ix)

	// A write must name the table's indexes.
	tx := db.Begin()
	defer tx.Rollback()
	if _, err := tx.Insert(tA, k("c"), k("red:3")); !errors.Is(err, ErrIndexMismatch) {
		t.Fatalf("write without the index: %v", err)
	}
	if _, err := tx.Insert(withIndex(tA, ix, IndexInfo{ID: 8, Key: colorKey}), k("c"), k("red:3")); !errors.Is(err, ErrIndexMismatch) {
		t.Fatalf("write with an unknown index: %v", err)
	}
}

// TestIndexModel runs random writes in random transactions (some rolled
// back, some truncating, the index dropped and rebuilt now and then) and
// checks after each commit that the entries are exactly what the rows call
// for.
func TestIndexModel(t *testing.T) { indexModel(t, openMem(t)) }

// TestIndexModelIngest runs the model with a stage threshold of 4, so
// that almost every BuildIndex commits its entries as an ingested
// SSTable (index_ingest.go), after the transaction's other writes.
func TestIndexModelIngest(t *testing.T) { indexModel(t, openStaging(t, 4)) }

func indexModel(t *testing.T, db *DB) {
	r := seededRand(t)
	ix := colorIndex(r.IntN(2) == 0)
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { return tx.BuildIndex(tA, ix) })
	indexed := true
	colors := []string{"red", "blue", "green", "~"}
	for round := 0; round < 60; round++ {
		tx := db.Begin()
		info := tA
		if indexed {
			info = withIndex(tA, ix)
		}
		for step := 0; step < 30; step++ {
			key := fmt.Sprintf("k%02d", r.IntN(40))
			val := fmt.Sprintf("%s:%d", colors[r.IntN(len(colors))], step)
			var err error
			op := r.IntN(10)
			switch op {
			case 0, 1, 2:
				_, err = tx.Insert(info, k(key), k(val))
			case 3:
				_, err = tx.Insert(info, nil, k(val))
			case 4, 5:
				err = tx.Update(info, k(key), k(fmt.Sprintf("k%02d", r.IntN(40))), k(val))
			case 6:
				if row, ok := get(t, tx, tA.ID, key); ok {
					err = tx.UpdateRow(info, row, row.Key, k(val))
				}
			case 7, 8:
				err = tx.Delete(info, k(key))
			case 9:
				if r.IntN(8) == 0 {
					err = tx.Truncate(info)
				}
			}
			if err != nil && !errors.Is(err, ErrDuplicateKey) && !errors.Is(err, ErrNotFound) {
				t.Fatalf("round %d step %d: %v", round, step, err)
			}
			if indexed {
				if err := tx.VerifyIndex(tA.ID, ix); err != nil {
					t.Fatalf("round %d step %d (own writes): %v", round, step, err)
				}
			}
		}
		before := indexed
		if r.IntN(10) == 0 {
			var err error
			if indexed {
				err = tx.DropIndex(tA.ID, ix.ID)
			} else {
				err = tx.BuildIndex(tA, ix)
			}
			if err != nil && !errors.Is(err, ErrDuplicateKey) {
				t.Fatal(err)
			}
			if err == nil {
				indexed = !indexed
			}
		}
		if r.IntN(5) == 0 {
			tx.Rollback()
			indexed = before
			continue
		}
		if err := tx.Commit(); err != nil {
			t.Fatalf("round %d commit: %v", round, err)
		}
		if indexed {
			verify(t, db, tA.ID, ix)
		} else {
			assertNoEntries(t, db, tA.ID)
		}
	}
}

func TestIndexesPersist(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ix := colorIndex(true)
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error {
		mustInsert(t, tx, tA, "a", "red:1")
		return tx.BuildIndex(tA, ix)
	})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx := db.Begin()
	defer tx.Rollback()
	if ids, err := tx.Indexes(tA.ID); err != nil || !slices.Equal(ids, []IndexID{7}) {
		t.Fatalf("indexes after reopen: %v %v", ids, err)
	}
	if _, err := tx.Insert(withIndex(tA, ix), k("b"), k("red:2")); !errors.Is(err, ErrDuplicateKey) {
		t.Fatalf("unique after reopen: %v", err)
	}
	if err := tx.VerifyIndex(tA.ID, ix); err != nil {
		t.Fatal(err)
	}
}

func TestGetUnique(t *testing.T) {
	db := openMem(t)
	ix := colorIndex(true)
	tbl := withIndex(tA, ix)
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { return tx.BuildIndex(tA, ix) })
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tbl, "a", "red:1"); return nil })
	red := AppendString(AppendNotNullMarker(nil), "red")
	blue := AppendString(AppendNotNullMarker(nil), "blue")
	lookup := func(tx *Txn, key []byte) string {
		t.Helper()
		r, ok, err := tx.GetUnique(tA.ID, ix.ID, key)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return ""
		}
		return string(r.Key) + "=" + string(r.Value)
	}
	tx := db.Begin()
	defer tx.Rollback()
	if got := lookup(tx, red); got != "a=red:1" {
		t.Fatalf("snapshot: %q", got)
	}
	if err := tx.Update(tbl, k("a"), k("b"), k("blue:2")); err != nil {
		t.Fatal(err)
	}
	if got := lookup(tx, red); got != "" {
		t.Fatalf("moved away: %q", got)
	}
	if got := lookup(tx, blue); got != "b=blue:2" {
		t.Fatalf("own write: %q", got)
	}
	if err := tx.Truncate(tbl); err != nil {
		t.Fatal(err)
	}
	if got := lookup(tx, blue); got != "" {
		t.Fatalf("after truncate: %q", got)
	}
}
