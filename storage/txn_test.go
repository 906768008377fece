package storage

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// testClock is a manual clock: every reading advances it by 1ms.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Millisecond)
	return c.now
}

func openMem(t testing.TB) *DB {
	t.Helper()
	clk := &testClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	db, err := Open(Options{InMemory: true, Clock: clk.Now, CacheSize: 8 << 20, Store: os.Getenv(testStoreEnv)})
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

// testStoreEnv names the engine the suite's in-memory DBs open (Options.
// Store): unset, Pebble; MVSERVER_TEST_STORE=tikvmock:// with -tags tikv,
// the mock TiKV cluster. Tests of Pebble's own speedups and of files on
// disk open Pebble whatever it says.
const testStoreEnv = "MVSERVER_TEST_STORE"

func k(s string) []byte { return []byte(s) }

// update runs fn in a txn and commits it.
func update(t testing.TB, db *DB, fn func(tx *Txn) error) {
	t.Helper()
	tx := db.Begin()
	if err := fn(tx); err != nil {
		tx.Rollback()
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func mustInsert(t testing.TB, tx *Txn, tbl TableInfo, key, val string) int64 {
	t.Helper()
	var kb []byte
	if key != "" {
		kb = k(key)
	}
	id, err := tx.Insert(tbl, kb, k(val))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// scanAll returns "key=value" of every row.
func scanAll(t testing.TB, tx *Txn, tbl TableID, start, end []byte) []string {
	t.Helper()
	var out []string
	it := tx.Scan(tbl, start, end)
	for it.Next() {
		r := it.Row()
		out = append(out, string(r.Key)+"="+string(r.Value))
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func get(t testing.TB, tx *Txn, tbl TableID, key string) (Row, bool) {
	t.Helper()
	r, ok, err := tx.Get(tbl, k(key))
	if err != nil {
		t.Fatal(err)
	}
	return r, ok
}

var tA = TableInfo{ID: 1, ChangeDataFeed: true}

func createTable(t testing.TB, db *DB, tbl TableInfo) {
	t.Helper()
	update(t, db, func(tx *Txn) error { return tx.CreateTable(tbl, "CREATE TABLE", nil) })
}

func TestSnapshotIsolation(t *testing.T) {
	db := openMem(t)
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error {
		mustInsert(t, tx, tA, "a", "1")
		mustInsert(t, tx, tA, "b", "2")
		mustInsert(t, tx, tA, "c", "3")
		return nil
	})

	reader := db.Begin()
	defer reader.Rollback()
	update(t, db, func(tx *Txn) error {
		mustInsert(t, tx, tA, "d", "4")
		return tx.Update(tA, k("a"), k("a"), k("1x"))
	})
	// The reader does not see the later commit.
	if got := scanAll(t, reader, tA.ID, nil, nil); !slices.Equal(got, []string{"a=1", "b=2", "c=3"}) {
		t.Fatalf("reader scan %v", got)
	}
	if _, ok := get(t, reader, tA.ID, "d"); ok {
		t.Fatal("reader sees d")
	}
	if v, _ := reader.TableVersion(tA.ID); v != 1 {
		t.Fatalf("reader version %d", v)
	}
	// A txn begun after the commit returned sees it.
	later := db.Begin()
	if got := scanAll(t, later, tA.ID, nil, nil); !slices.Equal(got, []string{"a=1x", "b=2", "c=3", "d=4"}) {
		t.Fatalf("later scan %v", got)
	}
	if v, _ := later.TableVersion(tA.ID); v != 2 {
		t.Fatalf("later version %d", v)
	}
	later.Rollback()

	// Own writes over snapshot rows: insert, update in place, update with key
	// change, delete.
	tx := reader
	mustInsert(t, tx, tA, "bb", "new")
	if err := tx.Update(tA, k("b"), k("b"), k("2x")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Update(tA, k("c"), k("e"), k("3moved")); err != nil {
		t.Fatal(err)
	}
	// a was updated by a commit after this txn began: deleting it fails at
	// once (first committer wins), and the txn's other writes stand.
	if err := tx.Delete(tA, k("a")); !errors.Is(err, ErrSerialization) {
		t.Fatalf("delete of a concurrently updated row: %v, want ErrSerialization", err)
	}
	want := []string{"a=1", "b=2x", "bb=new", "e=3moved"}
	if got := scanAll(t, tx, tA.ID, nil, nil); !slices.Equal(got, want) {
		t.Fatalf("own scan %v, want %v", got, want)
	}
	if got := scanAll(t, tx, tA.ID, k("b"), k("c")); !slices.Equal(got, []string{"b=2x", "bb=new"}) {
		t.Fatalf("own range scan %v", got)
	}
	if r, ok := get(t, tx, tA.ID, "e"); !ok || string(r.Value) != "3moved" || r.CommitVersion != -1 {
		t.Fatalf("get e: %+v %v", r, ok)
	}
	if r, ok := get(t, tx, tA.ID, "a"); !ok || string(r.Value) != "1" {
		t.Fatal("a changed by a failed delete")
	}
	if _, ok := get(t, tx, tA.ID, "c"); ok {
		t.Fatal("moved-away c visible")
	}
	if r, ok := get(t, tx, tA.ID, "b"); !ok || r.CommitVersion != -1 {
		t.Fatalf("get b %+v", r)
	}
	// Its remaining writes do not conflict with the commit that updated a.
	if err := tx.Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

func TestIteratorSeesWritesAtOpen(t *testing.T) {
	db := openMem(t)
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error {
		for i := 0; i < 5; i++ {
			mustInsert(t, tx, tA, fmt.Sprintf("k%d", i), "v")
		}
		return nil
	})
	tx := db.Begin()
	defer tx.Rollback()
	mustInsert(t, tx, tA, "k5", "v")
	it := tx.Scan(tA.ID, nil, nil)
	n := 0
	for it.Next() {
		r := it.Row()
		// Move every row forward: a live view would meet the moved rows again.
		newKey := append(slices.Clone(r.Key), 'x')
		if err := tx.UpdateRow(tA, r, newKey, r.Value); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if n != 6 {
		t.Fatalf("iterated %d rows, want 6", n)
	}
	got := scanAll(t, tx, tA.ID, nil, nil)
	if len(got) != 6 || got[0] != "k0x=v" {
		t.Fatalf("after moves %v", got)
	}
}

func TestInsertDuplicateAndNotFound(t *testing.T) {
	db := openMem(t)
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "a", "1"); return nil })
	tx := db.Begin()
	defer tx.Rollback()
	_, err := tx.Insert(tA, k("a"), k("x"))
	var dk *DuplicateKeyError
	if !errors.As(err, &dk) || !errors.Is(err, ErrDuplicateKey) || dk.Table != tA.ID || string(dk.Key) != "a" {
		t.Fatalf("insert existing: %v", err)
	}
	mustInsert(t, tx, tA, "b", "2")
	if _, err := tx.Insert(tA, k("b"), k("x")); !errors.Is(err, ErrDuplicateKey) {
		t.Fatalf("insert own: %v", err)
	}
	if err := tx.Update(tA, k("a"), k("b"), k("x")); !errors.Is(err, ErrDuplicateKey) {
		t.Fatalf("update onto existing: %v", err)
	}
	if err := tx.Update(tA, k("zz"), k("zz"), k("x")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("update missing: %v", err)
	}
	if err := tx.Delete(tA, k("zz")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete missing: %v", err)
	}
	if err := tx.Delete(tA, k("a")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Delete(tA, k("a")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
	// Re-insert after delete is fine and gets a new row id.
	if _, err := tx.Insert(tA, k("a"), k("again")); err != nil {
		t.Fatal(err)
	}
}

func TestRowIDsAndCommitVersions(t *testing.T) {
	db := openMem(t)
	createTable(t, db, tA)
	var idA, idB int64
	update(t, db, func(tx *Txn) error {
		idA = mustInsert(t, tx, tA, "a", "1")
		idB = mustInsert(t, tx, tA, "b", "2")
		return nil
	})
	if idA == idB || idA <= 0 {
		t.Fatalf("row ids %d %d", idA, idB)
	}
	update(t, db, func(tx *Txn) error { return tx.Update(tA, k("a"), k("z"), k("1z")) })
	tx := db.Begin()
	defer tx.Rollback()
	rz, _ := get(t, tx, tA.ID, "z")
	rb, _ := get(t, tx, tA.ID, "b")
	if rz.RowID != idA || rz.CommitVersion != 2 {
		t.Fatalf("moved row: %+v (want row id %d, version 2)", rz, idA)
	}
	if rb.RowID != idB || rb.CommitVersion != 1 {
		t.Fatalf("untouched row: %+v", rb)
	}
	// Tables without a primary key: key == nil → RowIDKey.
	noPK := TableInfo{ID: 2}
	createTable(t, db, noPK)
	var ids []int64
	update(t, db, func(tx *Txn) error {
		for i := 0; i < 3; i++ {
			ids = append(ids, mustInsert(t, tx, noPK, "", fmt.Sprint(i)))
		}
		return nil
	})
	tx2 := db.Begin()
	defer tx2.Rollback()
	it := tx2.Scan(noPK.ID, nil, nil)
	i := 0
	for it.Next() {
		r := it.Row()
		if !bytes.Equal(r.Key, RowIDKey(ids[i])) || r.RowID != ids[i] || r.CommitVersion != 1 {
			t.Fatalf("row %d: %+v", i, r)
		}
		i++
	}
	if err := it.Close(); err != nil || i != 3 {
		t.Fatalf("%d rows, %v", i, err)
	}
}

// TestOwnWritesModel drives random operations in one txn over a committed
// snapshot and compares Get and Scan with a map model.
func TestOwnWritesModel(t *testing.T) {
	r := seededRand(t)
	db := openMem(t)
	createTable(t, db, tA)
	model := map[string]string{}
	update(t, db, func(tx *Txn) error {
		for i := 0; i < 40; i++ {
			key := fmt.Sprintf("k%02d", r.IntN(60))
			if _, ok := model[key]; ok {
				continue
			}
			model[key] = "s" + key
			mustInsert(t, tx, tA, key, model[key])
		}
		return nil
	})
	tx := db.Begin()
	defer tx.Rollback()
	for step := 0; step < 400; step++ {
		key := fmt.Sprintf("k%02d", r.IntN(60))
		_, exists := model[key]
		op := r.IntN(5)
		if r.IntN(60) == 0 {
			op = 5
		}
		switch op {
		case 5:
			if err := tx.Truncate(tA); err != nil {
				t.Fatal(err)
			}
			clear(model)
		case 0:
			_, err := tx.Insert(tA, k(key), k(fmt.Sprint(step)))
			if exists != errors.Is(err, ErrDuplicateKey) || (!exists && err != nil) {
				t.Fatalf("step %d insert %s: %v (exists %v)", step, key, err, exists)
			}
			if !exists {
				model[key] = fmt.Sprint(step)
			}
		case 1:
			var err error
			if row, ok := get(t, tx, tA.ID, key); ok && r.IntN(2) == 0 {
				err = tx.DeleteRow(tA, row) // the row as read: no second lookup
			} else {
				err = tx.Delete(tA, k(key))
			}
			if exists != (err == nil) {
				t.Fatalf("step %d delete %s: %v", step, key, err)
			}
			delete(model, key)
		case 2, 3:
			nk := key
			if op == 3 {
				nk = fmt.Sprintf("k%02d", r.IntN(60))
			}
			_, nexists := model[nk]
			var err error
			if row, ok := get(t, tx, tA.ID, key); ok && r.IntN(2) == 0 {
				err = tx.UpdateRow(tA, row, k(nk), k(fmt.Sprint(step)))
			} else {
				err = tx.Update(tA, k(key), k(nk), k(fmt.Sprint(step)))
			}
			switch {
			case !exists:
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("step %d update missing: %v", step, err)
				}
			case nk != key && nexists:
				if !errors.Is(err, ErrDuplicateKey) {
					t.Fatalf("step %d update onto existing: %v", step, err)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				delete(model, key)
				model[nk] = fmt.Sprint(step)
			}
		case 4:
			lo, hi := fmt.Sprintf("k%02d", r.IntN(60)), fmt.Sprintf("k%02d", r.IntN(60))
			var want []string
			for _, mk := range slices.Sorted(maps.Keys(model)) {
				if mk >= lo && mk < hi {
					want = append(want, mk+"="+model[mk])
				}
			}
			if got := scanAll(t, tx, tA.ID, k(lo), k(hi)); !slices.Equal(got, want) {
				t.Fatalf("step %d scan [%s,%s): %v, want %v", step, lo, hi, got, want)
			}
		}
		if r, ok := get(t, tx, tA.ID, key); ok != (model[key] != "" || hasKey(model, key)) || (ok && string(r.Value) != model[key]) {
			t.Fatalf("step %d get %s: %v %q, model %q", step, key, ok, r.Value, model[key])
		}
	}
	var want []string
	for _, mk := range slices.Sorted(maps.Keys(model)) {
		want = append(want, mk+"="+model[mk])
	}
	if got := scanAll(t, tx, tA.ID, nil, nil); !slices.Equal(got, want) {
		t.Fatalf("final scan %v, want %v", got, want)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// After commit a new txn sees exactly the model, and the net change
	// records replayed over the old state give the new state.
	tx2 := db.Begin()
	defer tx2.Rollback()
	if got := scanAll(t, tx2, tA.ID, nil, nil); !slices.Equal(got, want) {
		t.Fatalf("committed scan %v, want %v", got, want)
	}
	replay := map[int64]string{} // row id → key=value
	it := tx2.Changes(tA.ID, 0, -1)
	for it.Next() {
		c := it.Change()
		switch c.Type {
		case ChangeInsert, ChangeUpdatePostimage:
			if c.Type == ChangeInsert && replay[c.RowID] != "" {
				t.Fatalf("insert of live row id %d", c.RowID)
			}
			replay[c.RowID] = string(c.Key) + "=" + string(c.Value)
		case ChangeDelete, ChangeUpdatePreimage:
			if replay[c.RowID] != string(c.Key)+"="+string(c.Value) {
				t.Fatalf("v%d %s of row id %d: image %s=%s, replayed state %q", c.Version, c.Type, c.RowID, c.Key, c.Value, replay[c.RowID])
			}
			delete(replay, c.RowID)
		}
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(maps.Values(replay))
	if !slices.Equal(got, want) {
		t.Fatalf("replayed CDF %v, want %v", got, want)
	}
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

func TestMeta(t *testing.T) {
	db := openMem(t)
	update(t, db, func(tx *Txn) error {
		for _, kv := range []string{"t/1", "t/2", "t/3", "u/1"} {
			if err := tx.PutMeta(k(kv), k("v"+kv)); err != nil {
				return err
			}
		}
		if !tx.WroteMeta() || tx.ReadOnly() {
			t.Fatal("WroteMeta/ReadOnly")
		}
		return nil
	})
	tx := db.Begin()
	defer tx.Rollback()
	if !tx.ReadOnly() || tx.WroteMeta() {
		t.Fatal("fresh txn not read-only")
	}
	if err := tx.DeleteMeta(k("t/2")); err != nil {
		t.Fatal(err)
	}
	if err := tx.PutMeta(k("t/25"), k("x")); err != nil {
		t.Fatal(err)
	}
	var got []string
	it := tx.ScanMeta(k("t/"))
	for it.Next() {
		got = append(got, string(it.Row().Key)+"="+string(it.Row().Value))
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"t/1=vt/1", "t/25=x", "t/3=vt/3"}) {
		t.Fatalf("ScanMeta %v", got)
	}
	if v, ok, _ := tx.GetMeta(k("t/2")); ok {
		t.Fatalf("deleted meta visible: %s", v)
	}
	if v, ok, _ := tx.GetMeta(k("u/1")); !ok || string(v) != "vu/1" {
		t.Fatalf("GetMeta %s %v", v, ok)
	}
}

func TestTxnEnded(t *testing.T) {
	db := openMem(t)
	tx := db.Begin()
	tx.Rollback()
	if _, err := tx.Insert(tA, k("a"), nil); !errors.Is(err, ErrTxnDone) {
		t.Fatalf("insert after rollback: %v", err)
	}
	if err := tx.Commit(); !errors.Is(err, ErrTxnDone) {
		t.Fatalf("commit after rollback: %v", err)
	}
	it := tx.Scan(tA.ID, nil, nil)
	if it.Next() || !errors.Is(it.Close(), ErrTxnDone) {
		t.Fatal("scan after rollback")
	}
	// Iterators left open are closed by the end of the txn.
	tx2 := db.Begin()
	_ = tx2.Scan(tA.ID, nil, nil)
	_ = tx2.ScanMeta(nil)
	_ = tx2.Changes(tA.ID, 0, -1)
	tx2.Rollback()
}

func TestWritesTable(t *testing.T) {
	db := openMem(t)
	createTable(t, db, tA)
	tx := db.Begin()
	defer tx.Rollback()
	if tx.WritesTable(tA.ID) {
		t.Fatal("a fresh txn writes no table")
	}
	tx.NoteOperation(tA.ID, "WRITE")
	if err := tx.RecordVersion(tA, "SET TBLPROPERTIES", nil); err != nil {
		t.Fatal(err)
	}
	if tx.WritesTable(tA.ID) {
		t.Fatal("noting an operation or recording a version changes no rows")
	}
	if _, err := tx.Insert(tA, k("a"), k("1")); err != nil {
		t.Fatal(err)
	}
	if !tx.WritesTable(tA.ID) || tx.WritesTable(2) {
		t.Fatal("WritesTable after an insert into table 1")
	}
	tx2 := db.Begin()
	defer tx2.Rollback()
	if err := tx2.Truncate(tA); err != nil {
		t.Fatal(err)
	}
	if !tx2.WritesTable(tA.ID) {
		t.Fatal("WritesTable after a truncate")
	}
}

// TestScanSkipsOldVersions: a scan of rows that were each written many
// times steps over a few internal keys per row, not over every version the
// memtable keeps (nextPebble), and sees each row once, at its last value.
func TestScanSkipsOldVersions(t *testing.T) {
	db := openPebbleMem(t) // Pebble's NextPrefix over memtable versions
	createTable(t, db, tA)
	const rows, writes = 50, 40
	update(t, db, func(tx *Txn) error {
		for i := range rows {
			mustInsert(t, tx, tA, fmt.Sprintf("k%02d", i), "v00")
		}
		return nil
	})
	for w := 1; w < writes; w++ {
		update(t, db, func(tx *Txn) error {
			for i := range rows {
				if err := tx.Update(tA, k(fmt.Sprintf("k%02d", i)), k(fmt.Sprintf("k%02d", i)), k(fmt.Sprintf("v%02d", w))); err != nil {
					return err
				}
			}
			return nil
		})
	}
	tx := db.Begin()
	defer tx.Rollback()
	it := tx.Scan(tA.ID, nil, nil)
	n := 0
	for it.Next() {
		if r := it.Row(); string(r.Key) != fmt.Sprintf("k%02d", n) || string(r.Value) != fmt.Sprintf("v%02d", writes-1) {
			t.Fatalf("row %d: %s = %s", n, r.Key, r.Value)
		}
		n++
	}
	st := it.pit.(*pebble.Iterator).Stats()
	if err := it.Close(); err != nil || n != rows {
		t.Fatalf("%d rows, %v", n, err)
	}
	if steps := st.ForwardStepCount[pebble.InternalIterCall]; steps > 10*rows {
		t.Fatalf("the scan stepped over %d internal keys for %d rows of %d versions", steps, rows, writes)
	}
}
