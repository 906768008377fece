//go:build tikv

package storage

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// openTiKVStaging is an in-memory mock TiKV store that stages a table's
// inserts past stageRows rows.
func openTiKVStaging(t *testing.T, stageRows int) *DB {
	t.Helper()
	clk := &testClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	db, err := Open(Options{InMemory: true, Store: "tikvmock://", Clock: clk.Now, StageRows: stageRows})
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

// stagedLoad inserts key k<i> → "c<i%4>:<i>" for i in [from, to), in a
// random order, in one staging transaction, and commits it.
func stagedLoad(t *testing.T, db *DB, tbl TableInfo, from, to int) error {
	t.Helper()
	tx := db.Begin()
	tx.AllowStaging()
	order := rand.New(rand.NewPCG(uint64(from), 2)).Perm(to - from)
	for i := range order {
		order[i] += from
	}
	stageKeys(t, tx, tbl, order, 4)
	if got := tx.Staged(tbl.ID); got < int64(to-from)*9/10 {
		t.Fatalf("staged %d rows of %d", got, to-from)
	}
	if len(stagedFiles(t, db)) == 0 {
		t.Fatal("nothing in the stage directory")
	}
	return tx.Commit()
}

// TestTiKVStagedInsertsStaySmall: with every TiKV transaction bounded to
// 32 KB (as a deployment's size limit bounds it), a load of 3000 rows
// with an index commits (as one transaction it fails with "txn too
// large"), atomically; a second one into the table that now has rows
// keeps the rows it had as they were, and the previous generation goes.
func TestTiKVStagedInsertsStaySmall(t *testing.T) {
	smallRewriteBatches(t)
	smallTiKVTransactions(t, 32<<10)
	db := openTiKVStaging(t, 100)
	tbl := withIndex(tA, colorIndex(false))
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { return tx.BuildIndex(tA, colorIndex(false)) })
	update(t, db, func(tx *Txn) error {
		mustInsert(t, tx, tbl, "a-old", "c1:old")
		return nil
	})
	rowOf := func(tx *Txn, key string) Row {
		t.Helper()
		it := tx.Scan(tA.ID, k(key), PrefixEnd(k(key)))
		defer it.Close()
		if !it.Next() {
			t.Fatalf("no row %s", key)
		}
		return it.Row()
	}
	tx := db.Begin()
	old := rowOf(tx, "a-old")
	tx.Rollback()

	before := db.Begin()
	defer before.Rollback()
	if err := stagedLoad(t, db, tbl, 0, 3000); err != nil {
		t.Fatalf("the staged load: %v", err)
	}
	if names := stagedFiles(t, db); len(names) != 0 {
		t.Fatalf("the commit left %v", names)
	}
	if got := scanAll(t, before, tA.ID, nil, nil); len(got) != 1 {
		t.Fatalf("an older snapshot sees %d rows", len(got))
	}
	check := func(n int) TableID {
		t.Helper()
		rd := db.Begin()
		defer rd.Rollback()
		got := scanAll(t, rd, tA.ID, nil, nil)
		if len(got) != n+1 || got[0] != "a-old=c1:old" || got[1] != "k0000=c0:0" || got[n] != fmt.Sprintf("k%04d=c%d:%d", n-1, (n-1)%4, n-1) {
			t.Fatalf("%d rows %v…", len(got), got[:min(3, len(got))])
		}
		if err := rd.VerifyIndex(tA.ID, colorIndex(false)); err != nil {
			t.Fatal(err)
		}
		if got := len(byColor(t, rd, tA.ID, "c1")); got != 1+n/4 {
			t.Fatalf("the index finds %d rows of c1, want %d", got, 1+n/4)
		}
		if r := rowOf(rd, "a-old"); r.RowID != old.RowID || r.CommitVersion != old.CommitVersion {
			t.Fatalf("the row the table had: id %d version %d, was %d %d", r.RowID, r.CommitVersion, old.RowID, old.CommitVersion)
		}
		ids := map[int64]bool{}
		it := rd.Scan(tA.ID, nil, nil)
		for it.Next() {
			if ids[it.Row().RowID] {
				t.Fatalf("row id %d twice", it.Row().RowID)
			}
			ids[it.Row().RowID] = true
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if c, _ := rd.RowCount(tA.ID); c != int64(n+1) {
			t.Fatalf("row count %d, want %d", c, n+1)
		}
		rows, err := rd.rowsOf(tA.ID)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	first := check(3000)
	h := history(t, db, tA.ID) // newest first
	last := h[0]
	if last.RowsInserted != 3000 || last.RowsDeleted != 0 || last.Operation != "WRITE" || last.Rewritten || !last.ChangeDataFeed || last.ChangesAt == 0 {
		t.Fatalf("history: %+v", last)
	}
	if n := shadowKeys(t, db); n != 0 {
		t.Fatalf("%d shadow keys after the commit", n)
	}
	firstLoad := last.Version
	update(t, db, func(tx *Txn) error { return tx.Update(tbl, k("a-old"), k("a-old"), k("c1:changed")) })
	update(t, db, func(tx *Txn) error { return tx.Update(tbl, k("a-old"), k("a-old"), k("c1:old")) })
	old.CommitVersion = firstLoad + 2

	if err := stagedLoad(t, db, tbl, 3000, 6000); err != nil {
		t.Fatalf("the second staged load: %v", err)
	}
	if second := check(6000); second == first {
		t.Fatal("the second load wrote into the first one's key space")
	}
	for _, prefix := range []byte{prefixRows, prefixIndex} {
		if n := keySpaceLen(t, db, prefix, first); n != 0 {
			t.Errorf("the previous generation still has %d keys under prefix %x", n, prefix)
		}
	}
	h = history(t, db, tA.ID)
	if last := h[0]; last.RowsInserted != 3000 || last.RowsDeleted != 0 || last.ChangesAt == 0 {
		t.Fatalf("history of the second load: %+v", last)
	}
	secondLoad := h[0].Version

	// The change feed: both loads' inserts at their versions, in key
	// order, around the updates' records.
	rd := db.Begin()
	ch, err := changes(t, rd, tA.ID, firstLoad, secondLoad)
	rd.Rollback()
	if err != nil {
		t.Fatal(err)
	}
	is := func(n, i int, version int64) bool {
		return strings.HasPrefix(ch[n], fmt.Sprintf("v%d insert #", version)) && strings.HasSuffix(ch[n], fmt.Sprintf(" k%04d=c%d:%d", i, i%4, i))
	}
	if len(ch) != 6004 || !is(0, 0, firstLoad) || !is(2999, 2999, firstLoad) ||
		!strings.HasPrefix(ch[3000], fmt.Sprintf("v%d update_preimage #%d a-old", firstLoad+1, old.RowID)) ||
		!is(3004, 3000, secondLoad) || !is(6003, 5999, secondLoad) {
		t.Fatalf("%d change records: %q … %q … %q", len(ch), ch[:min(2, len(ch))], ch[min(2999, len(ch)):min(3005, len(ch))], ch[max(0, len(ch)-1):])
	}
	// A vacuum of every version before the second load takes the first
	// load's slot with them.
	slotKeys := func() int {
		t.Helper()
		settle(db)
		return countKeys(t, db, cdfKey(nil, tA.ID, 1<<62, 0), cdfKey(nil, tA.ID, 1<<63-1, 0))
	}
	if n := slotKeys(); n != 6000 {
		t.Fatalf("%d keys in change slots, want 6000", n)
	}
	update(t, db, func(tx *Txn) error {
		_, err := tx.VacuumChanges(tA.ID, h[0].Timestamp)
		return err
	})
	if n := slotKeys(); n != 3000 {
		t.Fatalf("%d keys in change slots after the vacuum, want the second load's 3000", n)
	}
	rd = db.Begin()
	defer rd.Rollback()
	if ch, err := changes(t, rd, tA.ID, secondLoad, secondLoad); err != nil || len(ch) != 3000 {
		t.Fatalf("after the vacuum: %d records, %v", len(ch), err)
	}
}

// TestTiKVStagedDuplicatesFailTheCommit: a key two staged rows share (the
// primary key, or a unique index's) fails the commit with a duplicate key
// naming it, and leaves neither rows, runs nor a shadow behind.
func TestTiKVStagedDuplicatesFailTheCommit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		unique bool
		index  IndexID
	}{
		{name: "primary key"},
		{name: "unique index", unique: true, index: 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := openTiKVStaging(t, 10)
			tbl := withIndex(tA, colorIndex(tc.unique))
			createTable(t, db, tA)
			update(t, db, func(tx *Txn) error { return tx.BuildIndex(tA, colorIndex(tc.unique)) })
			tx := db.Begin()
			tx.AllowStaging()
			for i := range 30 {
				key, color := fmt.Sprintf("k%04d", i), fmt.Sprintf("c%d", i)
				if !tc.unique && i == 25 {
					key = "k0003" // staged in an earlier run
				}
				if tc.unique && i == 25 {
					color = "c2"
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
			if n := shadowKeys(t, db); n != 0 {
				t.Fatalf("%d shadow keys after the failed commit", n)
			}
			settle(db)
			s, e := tableSpan(prefixCDF, tA.ID)
			if n := countKeys(t, db, s, e); n != 0 {
				t.Fatalf("%d change records after the failed commit", n)
			}
			rd := db.Begin()
			defer rd.Rollback()
			if got := scanAll(t, rd, tA.ID, nil, nil); len(got) != 0 {
				t.Fatalf("the failed commit wrote %d rows", len(got))
			}
		})
	}
}

// TestTiKVBigWritesStaySmall: with every TiKV transaction bounded to
// 32 KB, one transaction that updates 1000 rows of a 3000-row table (ten
// of them to new keys), deletes 500 and inserts 5 commits as a new
// generation: the rows, their ids and the index are what the writes call
// for, and the feed and the history entry hold the same changes as the
// commit would have written in place.
func TestTiKVBigWritesStaySmall(t *testing.T) {
	smallRewriteBatches(t)
	db := openTiKVStaging(t, 100)
	tbl := withIndex(tA, colorIndex(false))
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { return tx.BuildIndex(tA, colorIndex(false)) })
	fillInSmallCommits(t, db, tbl)
	ids := map[string]int64{}
	want := map[string]string{}
	tx := db.Begin()
	it := tx.Scan(tA.ID, nil, nil)
	for it.Next() {
		ids[string(it.Row().Key)] = it.Row().RowID
		want[string(it.Row().Key)] = string(it.Row().Value)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	smallTiKVTransactions(t, 32<<10, db)

	update(t, db, func(tx *Txn) error {
		for round := range 10 {
			for i := range 100 {
				key := fmt.Sprintf("k%02d-%03d", round, i)
				val := fmt.Sprintf("c%d:upd", (i+1)%4)
				newKey := key
				if i == 7 {
					newKey = "moved-" + key
					ids[newKey] = ids[key]
					delete(want, key)
				}
				if err := tx.Update(tbl, k(key), k(newKey), k(val)); err != nil {
					return err
				}
				want[newKey] = val
			}
		}
		for round := 10; round < 15; round++ {
			for i := range 100 {
				key := fmt.Sprintf("k%02d-%03d", round, i)
				if err := tx.Delete(tbl, k(key)); err != nil {
					return err
				}
				delete(want, key)
			}
		}
		for i := range 5 {
			key := fmt.Sprintf("new-%d", i)
			mustInsert(t, tx, tbl, key, "c3:new")
			want[key] = "c3:new"
		}
		return nil
	})
	rd := db.Begin()
	defer rd.Rollback()
	got := map[string]string{}
	it = rd.Scan(tA.ID, nil, nil)
	for it.Next() {
		r := it.Row()
		got[string(r.Key)] = string(r.Value)
		if id, ok := ids[string(r.Key)]; ok && id != r.RowID {
			t.Fatalf("row %s: id %d, was %d", r.Key, r.RowID, id)
		}
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("row %s = %q, want %q", k, got[k], v)
		}
	}
	if err := rd.VerifyIndex(tA.ID, colorIndex(false)); err != nil {
		t.Fatal(err)
	}
	h := history(t, db, tA.ID)
	if h[0].RowsUpdated != 1000 || h[0].RowsDeleted != 500 || h[0].RowsInserted != 5 || h[0].ChangesAt == 0 || !h[0].ChangeDataFeed {
		t.Fatalf("its history entry: %+v", h[0])
	}
	ch, err := changes(t, rd, tA.ID, h[0].Version, h[0].Version)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, c := range ch {
		kinds[strings.Fields(c)[1]]++
	}
	if kinds["update_preimage"] != 1000 || kinds["update_postimage"] != 1000 || kinds["delete"] != 500 || kinds["insert"] != 5 || len(ch) != 2505 {
		t.Fatalf("change records: %v", kinds)
	}
	if n := shadowKeys(t, db); n != 0 {
		t.Fatalf("%d shadow keys after the commit", n)
	}
}
