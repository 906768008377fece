package storage

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// openStaging opens an in-memory DB that stages a table's inserts past
// stageRows rows.
func openStaging(t *testing.T, stageRows int) *DB {
	t.Helper()
	clk := &testClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	db, err := Open(Options{InMemory: true, Clock: clk.Now, CacheSize: 8 << 20, StageRows: stageRows})
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

// stagedFiles lists the stage directory.
func stagedFiles(t *testing.T, db *DB) []string {
	t.Helper()
	names, _ := db.stage.fs.List(db.stage.dir)
	return names
}

// stageKeys inserts key k<i> → "c<i%colors>:<i>" for every i of order.
func stageKeys(t *testing.T, tx *Txn, tbl TableInfo, order []int, colors int) {
	t.Helper()
	for _, i := range order {
		if _, err := tx.Insert(tbl, k(fmt.Sprintf("k%04d", i)), k(fmt.Sprintf("c%d:%d", i%colors, i))); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStagedInsertVisibleAtOnce(t *testing.T) {
	db := openStaging(t, 10)
	tbl := withIndex(tA, colorIndex(false))
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { return tx.BuildIndex(tA, colorIndex(false)) })
	update(t, db, func(tx *Txn) error {
		mustInsert(t, tx, tbl, "a-old", "c1:old")
		return nil
	})
	before := db.Begin()
	defer before.Rollback()

	tx := db.Begin()
	tx.AllowStaging()
	order := rand.New(rand.NewPCG(1, 2)).Perm(95)
	stageKeys(t, tx, tbl, order, 4)
	if got := tx.Staged(tA.ID); got < 90 {
		t.Fatalf("staged %d rows, want at least 90 of 95", got)
	}
	if _, _, err := tx.Get(tA.ID, k("k0001")); err == nil {
		t.Fatal("a read of a staged table succeeded")
	}
	if len(stagedFiles(t, db)) == 0 {
		t.Fatal("nothing in the stage directory")
	}
	during := db.Begin()
	defer during.Rollback()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if names := stagedFiles(t, db); len(names) != 0 {
		t.Fatalf("the commit left %v", names)
	}
	// Older snapshots see none of it.
	for _, old := range []*Txn{before, during} {
		if got := scanAll(t, old, tA.ID, nil, nil); len(got) != 1 {
			t.Fatalf("an older snapshot sees %d rows", len(got))
		}
	}
	rd := db.Begin()
	defer rd.Rollback()
	got := scanAll(t, rd, tA.ID, nil, nil)
	if len(got) != 96 || got[0] != "a-old=c1:old" || got[1] != "k0000=c0:0" || got[95] != "k0094=c2:94" {
		t.Fatalf("after the commit: %d rows %v…", len(got), got[:min(3, len(got))])
	}
	if err := rd.VerifyIndex(tA.ID, colorIndex(false)); err != nil {
		t.Fatal(err)
	}
	if n := len(byColor(t, rd, tA.ID, "c1")); n != 1+24 {
		t.Fatalf("index finds %d rows of c1, want 25", n)
	}
	// Row ids: distinct, none handed out again.
	ids := map[int64]bool{}
	it := rd.Scan(tA.ID, nil, nil)
	for it.Next() {
		if r := it.Row(); ids[r.RowID] || (r.CommitVersion != 2) != (string(r.Key) == "a-old") {
			t.Fatalf("row %s: id %d (seen %v), commit version %d", r.Key, r.RowID, ids[r.RowID], r.CommitVersion)
		}
		ids[it.Row().RowID] = true
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	var last HistoryEntry
	for _, e := range history(t, db, tA.ID) {
		if e.Version == 2 {
			last = e
		}
	}
	if last.Version != 2 || last.RowsInserted != 95 || !last.ChangeDataFeed || last.Operation != "WRITE" {
		t.Fatalf("history: %+v", last)
	}
	ch, err := changes(t, rd, tA.ID, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch) != 95 || !strings.HasPrefix(ch[0], "v2 insert ") || !strings.HasSuffix(ch[0], " k0000=c0:0") {
		t.Fatalf("change records: %d, first %q", len(ch), ch[:min(1, len(ch))])
	}
	next := db.Begin()
	id := mustInsert(t, next, tbl, "", "c9:x")
	if ids[id] {
		t.Fatalf("row id %d handed out again", id)
	}
	next.Rollback()
	if c, _ := rd.RowCount(tA.ID); c != 96 {
		t.Fatalf("row count %d", c)
	}
}

func TestStagedDuplicatesFailTheCommit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		unique bool
		keys   []int // inserted in this order; a repeat is the duplicate
		index  IndexID
	}{
		{name: "primary key", keys: append(seq(0, 30), 3)},
		{name: "unique index", unique: true, keys: seq(0, 30), index: 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := openStaging(t, 10)
			tbl := withIndex(tA, colorIndex(tc.unique))
			createTable(t, db, tA)
			update(t, db, func(tx *Txn) error { return tx.BuildIndex(tA, colorIndex(tc.unique)) })
			tx := db.Begin()
			tx.AllowStaging()
			for n, i := range tc.keys {
				key := fmt.Sprintf("k%04d", i)
				if n >= 30 {
					key = fmt.Sprintf("k%04d", i) // the repeat
				}
				color := fmt.Sprintf("c%d", i)
				if tc.unique && i == 25 {
					color = "c2" // the same unique key as row 2, staged in another run
				}
				if _, err := tx.Insert(tbl, k(key), k(color+":v")); err != nil {
					t.Fatalf("insert %s: %v", key, err)
				}
			}
			err := tx.Commit()
			var de *DuplicateKeyError
			if !errors.As(err, &de) || de.Index != tc.index {
				t.Fatalf("commit: %v, want a duplicate key in index %d", err, tc.index)
			}
			if names := stagedFiles(t, db); len(names) != 0 {
				t.Fatalf("the failed commit left %v", names)
			}
			rd := db.Begin()
			defer rd.Rollback()
			if got := scanAll(t, rd, tA.ID, nil, nil); len(got) != 0 {
				t.Fatalf("the failed commit wrote %d rows", len(got))
			}
			if err := rd.VerifyIndex(tA.ID, colorIndex(tc.unique)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func seq(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

func TestStagedConflicts(t *testing.T) {
	db := openStaging(t, 10)
	createTable(t, db, tA)

	// A concurrent commit to the table first: the staged commit fails.
	tx := db.Begin()
	tx.AllowStaging()
	stageKeys(t, tx, tA, seq(0, 25), 3)
	update(t, db, func(o *Txn) error {
		mustInsert(t, o, tA, "other", "x:1")
		return nil
	})
	if err := tx.Commit(); !errors.Is(err, ErrSerialization) {
		t.Fatalf("staged commit after a concurrent write: %v", err)
	}

	// The staged commit first: a concurrent writer of the table fails,
	// even on a key the staged rows do not have (they are not kept as
	// conflict keys), and so does a serializable reader that writes.
	o := db.Begin()
	ser := db.BeginSerializable()
	scanAll(t, ser, tA.ID, nil, nil)
	tx = db.Begin()
	tx.AllowStaging()
	stageKeys(t, tx, tA, seq(0, 25), 3)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	mustInsert(t, o, tA, "zz", "x:2")
	if err := o.Commit(); !errors.Is(err, ErrSerialization) {
		t.Fatalf("concurrent writer after a staged commit: %v", err)
	}
	mustInsert(t, ser, TableInfo{ID: 2}, "s", "x")
	if err := ser.Commit(); !errors.Is(err, ErrSerialization) {
		t.Fatalf("serializable reader after a staged commit: %v", err)
	}
	// A later insert of a staged key is a duplicate at once.
	update(t, db, func(tx *Txn) error {
		if _, err := tx.Insert(tA, k("k0003"), k("x")); !errors.As(err, new(*DuplicateKeyError)) {
			return fmt.Errorf("insert of a staged key: %v", err)
		}
		return nil
	})
	// An insert of a key the snapshot holds fails at once while staging.
	tx = db.Begin()
	tx.AllowStaging()
	stageKeys(t, tx, tA, seq(100, 125), 3)
	if _, err := tx.Insert(tA, k("k0004"), k("x")); !errors.As(err, new(*DuplicateKeyError)) {
		t.Fatalf("insert of a committed key while staging: %v", err)
	}
	tx.Rollback()
	if names := stagedFiles(t, db); len(names) != 0 {
		t.Fatalf("the rollback left %v", names)
	}
}

func TestStagingKeepsOtherWritesInMemory(t *testing.T) {
	db := openStaging(t, 10)
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error {
		mustInsert(t, tx, tA, "k9999", "x:0")
		return nil
	})
	// A write set with a delete in it is not staged.
	tx := db.Begin()
	tx.AllowStaging()
	if err := tx.Delete(tA, k("k9999")); err != nil {
		t.Fatal(err)
	}
	stageKeys(t, tx, tA, seq(0, 25), 3)
	if n := tx.Staged(tA.ID); n != 0 {
		t.Fatalf("staged %d rows of a table with a delete", n)
	}
	if got := scanAll(t, tx, tA.ID, nil, nil); len(got) != 25 {
		t.Fatalf("own writes: %d rows", len(got))
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// Without AllowStaging nothing is staged; two staged tables and a
	// meta key commit in one ingest.
	tB := TableInfo{ID: 2}
	tx = db.Begin()
	stageKeys(t, tx, tB, seq(0, 25), 3)
	if n := tx.Staged(tB.ID); n != 0 {
		t.Fatalf("staged %d rows without AllowStaging", n)
	}
	tx.Rollback()
	tx = db.Begin()
	tx.AllowStaging()
	stageKeys(t, tx, tB, seq(0, 25), 3)
	stageKeys(t, tx, TableInfo{ID: 3}, seq(0, 33), 3)
	if err := tx.PutMeta(k("m"), k("v")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	rd := db.Begin()
	defer rd.Rollback()
	if a, b := len(scanAll(t, rd, 2, nil, nil)), len(scanAll(t, rd, 3, nil, nil)); a != 25 || b != 33 {
		t.Fatalf("rows %d and %d", a, b)
	}
	if v, ok, err := rd.GetMeta(k("m")); err != nil || !ok || string(v) != "v" {
		t.Fatalf("meta: %q %v %v", v, ok, err)
	}
	if !slices.Equal(scanAll(t, rd, tA.ID, nil, k("k0002")), []string{"k0000=c0:0", "k0001=c1:1"}) {
		t.Fatal("table A changed")
	}
}

func TestStagedCrashReclaimsFiles(t *testing.T) {
	dir := t.TempDir()
	open := func() *DB {
		db, err := Open(Options{Dir: dir, CacheSize: 8 << 20, DiskReserve: -1, StageRows: 10})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open()
	createTable(t, db, tA)
	tx := db.Begin()
	tx.AllowStaging()
	stageKeys(t, tx, tA, seq(0, 45), 3)
	if len(stagedFiles(t, db)) == 0 {
		t.Fatal("nothing staged")
	}
	// The "crash": the transaction never cleans up after itself.
	tx.tables[tA.ID].stage = nil
	tx.Rollback()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open()
	defer db.Close()
	if names := stagedFiles(t, db); len(names) != 0 {
		t.Fatalf("start-up left %v", names)
	}
	rd := db.Begin()
	defer rd.Rollback()
	if got := scanAll(t, rd, tA.ID, nil, nil); len(got) != 0 {
		t.Fatalf("after the restart: %d rows", len(got))
	}
	tx = db.Begin()
	tx.AllowStaging()
	stageKeys(t, tx, tA, seq(0, 45), 3)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
