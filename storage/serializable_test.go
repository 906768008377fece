package storage

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// commitErr commits tx and returns the error, failing the test on an error
// that is not a serialization failure.
func commitErr(t *testing.T, tx *Txn) error {
	t.Helper()
	err := tx.Commit()
	if err != nil && !errors.Is(err, ErrSerialization) {
		t.Fatalf("commit: %v", err)
	}
	return err
}

func wantReadDependency(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrReadDependency) || !errors.Is(err, ErrSerialization) {
		t.Fatalf("want ErrReadDependency, got %v", err)
	}
}

// wantCommit commits tx and wants it to succeed (ok) or to fail with
// ErrReadDependency.
func wantCommit(t *testing.T, tx *Txn, ok bool) {
	t.Helper()
	err := commitErr(t, tx)
	if !ok {
		wantReadDependency(t, err)
	} else if err != nil {
		t.Fatal(err)
	}
}

func seedRows(t *testing.T, db *DB, tbl TableInfo, kv ...string) {
	t.Helper()
	createTable(t, db, tbl)
	update(t, db, func(tx *Txn) error {
		for i := 0; i < len(kv); i += 2 {
			mustInsert(t, tx, tbl, kv[i], kv[i+1])
		}
		return nil
	})
}

func mustUpdate(t *testing.T, tx *Txn, tbl TableInfo, key, val string) {
	t.Helper()
	if err := tx.Update(tbl, k(key), k(key), k(val)); err != nil {
		t.Fatal(err)
	}
}

// TestSerializableWriteSkew is hermitage's G2-item: two transactions read
// both rows and each updates the row the other did not. Under snapshot
// isolation both commit; serializable, the second committer fails.
func TestSerializableWriteSkew(t *testing.T) {
	for _, serializable := range []bool{false, true} {
		t.Run(fmt.Sprintf("serializable=%v", serializable), func(t *testing.T) {
			db := openMem(t)
			seedRows(t, db, tA, "1", "10", "2", "20")
			begin := db.Begin
			if serializable {
				begin = db.BeginSerializable
			}
			t1, t2 := begin(), begin()
			for _, tx := range []*Txn{t1, t2} {
				get(t, tx, tA.ID, "1")
				get(t, tx, tA.ID, "2")
			}
			mustUpdate(t, t1, tA, "1", "11")
			mustUpdate(t, t2, tA, "2", "21")
			if err := commitErr(t, t1); err != nil {
				t.Fatalf("first committer: %v", err)
			}
			err := commitErr(t, t2)
			if !serializable {
				if err != nil {
					t.Fatalf("snapshot isolation lets write skew commit: %v", err)
				}
				return
			}
			wantReadDependency(t, err)
			tx := db.Begin()
			defer tx.Rollback()
			if r, _ := get(t, tx, tA.ID, "2"); string(r.Value) != "20" {
				t.Fatalf("the failed commit wrote: %q", r.Value)
			}
		})
	}
}

// TestSerializablePhantom is hermitage's G2: a scan that found nothing is
// invalidated by a concurrent insert into its range, and only inside it.
func TestSerializablePhantom(t *testing.T) {
	for _, c := range []struct {
		name, insert string
		fails        bool
	}{
		{"inside the range", "c", true},
		{"at its start", "b", true},
		{"at its end (exclusive)", "d", false},
		{"outside it", "x", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openMem(t)
			seedRows(t, db, tA, "a", "1", "e", "5")
			t1 := db.BeginSerializable()
			if got := scanAll(t, t1, tA.ID, k("b"), k("d")); len(got) != 0 {
				t.Fatalf("scan: %v", got)
			}
			update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, c.insert, "new"); return nil })
			mustInsert(t, t1, tA, "z", "t1")
			wantCommit(t, t1, !c.fails)
		})
	}
}

// TestSerializableReadNothing: a point read that found no row conflicts
// with a concurrent insert of that key.
func TestSerializableReadNothing(t *testing.T) {
	db := openMem(t)
	seedRows(t, db, tA, "a", "1")
	t1 := db.BeginSerializable()
	if _, ok := get(t, t1, tA.ID, "m"); ok {
		t.Fatal("found m")
	}
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "m", "x"); return nil })
	mustUpdate(t, t1, tA, "a", "2")
	wantReadDependency(t, commitErr(t, t1))
}

// TestSerializableScanStoppedEarly: a scan records only the keys up to the
// row it stopped at, so a write beyond it is no conflict (LIMIT 1).
func TestSerializableScanStoppedEarly(t *testing.T) {
	for _, c := range []struct {
		key   string
		fails bool
	}{{"b", true}, {"a0", true}, {"c", false}} {
		t.Run(c.key, func(t *testing.T) {
			db := openMem(t)
			seedRows(t, db, tA, "a", "1", "b", "2", "c", "3")
			t1 := db.BeginSerializable()
			it := t1.Scan(tA.ID, nil, nil)
			if !it.Next() || it.Next() == false {
				t.Fatal("want two rows")
			}
			if err := it.Close(); err != nil { // stopped at b
				t.Fatal(err)
			}
			update(t, db, func(tx *Txn) error {
				if c.key == "a0" {
					mustInsert(t, tx, tA, c.key, "x")
					return nil
				}
				return tx.Update(tA, k(c.key), k(c.key), k("x"))
			})
			mustInsert(t, t1, tA, "z", "t1")
			wantCommit(t, t1, !c.fails)
		})
	}
}

// TestSerializableOpenIterator: an iterator still open at Commit counts
// what it walked so far.
func TestSerializableOpenIterator(t *testing.T) {
	db := openMem(t)
	seedRows(t, db, tA, "a", "1", "b", "2", "c", "3")
	t1 := db.BeginSerializable()
	it := t1.Scan(tA.ID, nil, nil)
	if !it.Next() {
		t.Fatal(it.Err())
	}
	update(t, db, func(tx *Txn) error { return tx.Delete(tA, k("a")) })
	mustInsert(t, t1, tA, "z", "t1")
	wantReadDependency(t, commitErr(t, t1))
}

// TestSerializableRetarget: each range a retargeted iterator walked is
// recorded.
func TestSerializableRetarget(t *testing.T) {
	db := openMem(t)
	seedRows(t, db, tA, "a", "1", "m", "2", "x", "3")
	t1 := db.BeginSerializable()
	it := t1.Scan(tA.ID, k("a"), k("b"))
	for it.Next() {
	}
	if !it.Retarget(tA.ID, k("m"), k("n")) {
		t.Fatal("no retarget")
	}
	for it.Next() {
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	update(t, db, func(tx *Txn) error { return tx.Update(tA, k("a"), k("a"), k("9")) })
	mustInsert(t, t1, tA, "z", "t1")
	wantReadDependency(t, commitErr(t, t1))
}

// TestSerializableReadOnly: a serializable transaction that writes
// nothing commits whatever was written meanwhile (hermitage's G-single and
// PMP readers); its snapshot is a prefix of the serial order.
func TestSerializableReadOnly(t *testing.T) {
	db := openMem(t)
	seedRows(t, db, tA, "1", "10", "2", "20")
	t1 := db.BeginSerializable()
	get(t, t1, tA.ID, "1")
	update(t, db, func(tx *Txn) error {
		mustUpdate(t, tx, tA, "1", "12")
		mustUpdate(t, tx, tA, "2", "18")
		return nil
	})
	if r, _ := get(t, t1, tA.ID, "2"); string(r.Value) != "20" {
		t.Fatalf("read skew: %q", r.Value)
	}
	if err := commitErr(t, t1); err != nil {
		t.Fatal(err)
	}
}

// TestSerializableDisjoint: transactions whose reads and writes do not
// meet all commit, whatever the order.
func TestSerializableDisjoint(t *testing.T) {
	db := openMem(t)
	tB := TableInfo{ID: 2}
	seedRows(t, db, tA, "1", "10", "2", "20")
	seedRows(t, db, tB, "1", "10")
	t1, t2, t3 := db.BeginSerializable(), db.BeginSerializable(), db.BeginSerializable()
	get(t, t1, tA.ID, "1")
	mustUpdate(t, t1, tA, "1", "11")
	get(t, t2, tA.ID, "2")
	mustUpdate(t, t2, tA, "2", "21")
	scanAll(t, t3, tB.ID, nil, nil)
	mustInsert(t, t3, tB, "2", "new")
	for _, tx := range []*Txn{t2, t3, t1} {
		if err := commitErr(t, tx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSerializableIndexRange: a range of index entries read is checked
// against the entries concurrent commits wrote (a phantom through an
// index), and the rows the entries led to against row writes.
func TestSerializableIndexRange(t *testing.T) {
	ix := colorIndex(false)
	tbl := withIndex(tA, ix)
	for _, c := range []struct {
		name  string
		write func(tx *Txn) error
		fails bool
	}{
		{"a new red row", func(tx *Txn) error { _, err := tx.Insert(tbl, k("c"), k("red:3")); return err }, true},
		{"a row turned red", func(tx *Txn) error { return tx.Update(tbl, k("b"), k("b"), k("red:2")) }, true},
		{"the red row changed", func(tx *Txn) error { return tx.Update(tbl, k("a"), k("a"), k("red:9")) }, true},
		{"a new blue row", func(tx *Txn) error { _, err := tx.Insert(tbl, k("c"), k("blue:3")); return err }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openMem(t)
			createTable(t, db, tA)
			update(t, db, func(tx *Txn) error {
				if err := tx.BuildIndex(tA, ix); err != nil {
					return err
				}
				if _, err := tx.Insert(tbl, k("a"), k("red:1")); err != nil {
					return err
				}
				_, err := tx.Insert(tbl, k("b"), k("green:2"))
				return err
			})
			t1 := db.BeginSerializable()
			if got := byColor(t, t1, tA.ID, "red"); !slices.Equal(got, []string{"red:1"}) {
				t.Fatalf("red rows: %v", got)
			}
			update(t, db, c.write)
			if _, err := t1.Insert(tbl, k("z"), k("white:0")); err != nil {
				t.Fatal(err)
			}
			wantCommit(t, t1, !c.fails)
		})
	}
}

// TestSerializableUniqueLookup: GetUnique that found nothing conflicts
// with a concurrent insert of the entry.
func TestSerializableUniqueLookup(t *testing.T) {
	ix := colorIndex(true)
	tbl := withIndex(tA, ix)
	db := openMem(t)
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { return tx.BuildIndex(tA, ix) })
	t1 := db.BeginSerializable()
	if _, ok, err := t1.GetUnique(tA.ID, ix.ID, AppendString(AppendNotNullMarker(nil), "red")); ok || err != nil {
		t.Fatal(ok, err)
	}
	update(t, db, func(tx *Txn) error { _, err := tx.Insert(tbl, k("a"), k("red:1")); return err })
	if _, err := t1.Insert(tbl, k("z"), k("white:0")); err != nil {
		t.Fatal(err)
	}
	wantReadDependency(t, commitErr(t, t1))
}

// TestSerializableDuplicateRead: an insert that hit an existing key (ON
// CONFLICT DO NOTHING acts on it) read that key.
func TestSerializableDuplicateRead(t *testing.T) {
	db := openMem(t)
	seedRows(t, db, tA, "a", "1")
	t1 := db.BeginSerializable()
	if _, err := t1.Insert(tA, k("a"), k("2")); !errors.Is(err, ErrDuplicateKey) {
		t.Fatal(err)
	}
	update(t, db, func(tx *Txn) error { return tx.Delete(tA, k("a")) })
	mustInsert(t, t1, tA, "z", "t1")
	wantReadDependency(t, commitErr(t, t1))
}

// TestSerializableInsertedAndDeleted: a key the transaction inserted and
// deleted again is not written at commit, but its insert read "absent".
func TestSerializableInsertedAndDeleted(t *testing.T) {
	db := openMem(t)
	seedRows(t, db, tA, "a", "1")
	t1 := db.BeginSerializable()
	mustInsert(t, t1, tA, "k", "t1")
	if err := t1.Delete(tA, k("k")); err != nil {
		t.Fatal(err)
	}
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "k", "t2"); return nil })
	mustInsert(t, t1, tA, "z", "t1")
	wantReadDependency(t, commitErr(t, t1))
}

// TestSerializableTruncated: a table truncated (or dropped) by a
// concurrent commit was written whole, and so was one written by a
// commit too big for the history to list.
func TestSerializableTruncated(t *testing.T) {
	tB := TableInfo{ID: 2}
	for _, c := range []struct {
		name  string
		write func(tx *Txn) error
	}{
		{"truncate", func(tx *Txn) error { return tx.Truncate(tA) }},
		{"drop", func(tx *Txn) error { return tx.DropTable(tA.ID) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openMem(t)
			seedRows(t, db, tA, "a", "1")
			createTable(t, db, tB)
			t1 := db.BeginSerializable()
			get(t, t1, tA.ID, "zz") // absent
			update(t, db, c.write)
			mustInsert(t, t1, tB, "b", "t1")
			wantReadDependency(t, commitErr(t, t1))
		})
	}
}

// TestSerializableChanges: an open-ended read of a change feed is a read
// of the whole table; one of versions already committed is not.
func TestSerializableChanges(t *testing.T) {
	tB := TableInfo{ID: 2}
	for _, c := range []struct {
		name  string
		end   int64
		fails bool
	}{{"to the latest", -1, true}, {"to version 1", 1, false}} {
		t.Run(c.name, func(t *testing.T) {
			db := openMem(t)
			seedRows(t, db, tA, "a", "1")
			createTable(t, db, tB)
			t1 := db.BeginSerializable()
			if _, err := changes(t, t1, tA.ID, 0, c.end); err != nil {
				t.Fatal(err)
			}
			update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "b", "2"); return nil })
			mustInsert(t, t1, tB, "b", "t1")
			wantCommit(t, t1, !c.fails)
		})
	}
}

// TestSerializableHistory: reading a table's history reads the whole
// table (a commit would add a version).
func TestSerializableHistory(t *testing.T) {
	tB := TableInfo{ID: 2}
	db := openMem(t)
	seedRows(t, db, tA, "a", "1")
	createTable(t, db, tB)
	t1 := db.BeginSerializable()
	if _, err := t1.History(tA.ID); err != nil {
		t.Fatal(err)
	}
	update(t, db, func(tx *Txn) error { return tx.Delete(tA, k("a")) })
	mustInsert(t, t1, tB, "b", "t1")
	wantReadDependency(t, commitErr(t, t1))
}

// TestSerializableEscalation: past maxReadSpans reads of a table, the
// table counts as read whole.
func TestSerializableEscalation(t *testing.T) {
	defer func(n int) { maxReadSpans = n }(maxReadSpans)
	maxReadSpans = 3
	db := openMem(t)
	seedRows(t, db, tA, "a", "1", "b", "2", "c", "3", "d", "4", "q", "5")
	t1 := db.BeginSerializable()
	for _, key := range []string{"a", "b", "c", "d"} {
		get(t, t1, tA.ID, key)
	}
	if tr := t1.reads.tables[tA.ID]; !tr.whole || tr.spans != nil {
		t.Fatalf("not escalated: %+v", tr)
	}
	update(t, db, func(tx *Txn) error { return tx.Delete(tA, k("q")) }) // not read
	mustInsert(t, t1, tA, "z", "t1")
	wantReadDependency(t, commitErr(t, t1))
}

// TestSerializableModel runs seeded random interleavings of serializable
// and snapshot-isolation transactions over a few keys and checks the claim
// of doc.go's invariant 11: every serializable transaction that committed
// a write read exactly what the state just before its commit holds (so
// running it alone there gives the same reads), and every transaction
// reads its snapshot.
func TestSerializableModel(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { serializableModel(t, seed) })
	}
}

type modelTxn struct {
	tx      *Txn
	ser     bool
	snap    map[string]string // the committed state at Begin
	written map[string]bool
	// reads: key → value seen ("" absent), for keys not written before by
	// the transaction; a scan reads every key of its range.
	reads map[string]string
	wrote bool
}

func serializableModel(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, seed))
	db := openMem(t)
	createTable(t, db, tA)
	keys := []string{"a", "b", "c", "d", "e", "f"}
	state := map[string]string{} // committed state
	var open []*modelTxn
	commits, failures := 0, 0
	read := func(m *modelTxn, key, val string) {
		if m.written[key] {
			return
		}
		if m.snap[key] != val {
			t.Fatalf("seed %d: read %s=%q, the snapshot holds %q", seed, key, val, m.snap[key])
		}
		m.reads[key] = val
	}
	for step := 0; step < 3000; step++ {
		if len(open) < 2 || r.IntN(6) == 0 {
			m := &modelTxn{ser: r.IntN(3) > 0, written: map[string]bool{}, reads: map[string]string{}}
			if m.ser {
				m.tx = db.BeginSerializable()
			} else {
				m.tx = db.Begin()
			}
			m.snap = maps.Clone(state)
			open = append(open, m)
			continue
		}
		i := r.IntN(len(open))
		m := open[i]
		switch op := r.IntN(10); {
		case op < 3: // point read
			key := keys[r.IntN(len(keys))]
			row, ok, err := m.tx.Get(tA.ID, k(key))
			if err != nil {
				t.Fatal(err)
			}
			v := ""
			if ok {
				v = string(row.Value)
			}
			read(m, key, v)
		case op < 5: // range scan, sometimes stopped after one row
			lo := r.IntN(len(keys))
			hi := lo + 1 + r.IntN(len(keys)-lo)
			it := m.tx.Scan(tA.ID, k(keys[lo]), k(keys[hi-1]+"~"))
			seen := map[string]string{}
			last := keys[hi-1]
			stopEarly := r.IntN(3) == 0
			for it.Next() {
				row := it.Row()
				seen[string(row.Key)] = string(row.Value)
				if stopEarly {
					last = string(row.Key)
					break
				}
			}
			if err := it.Close(); err != nil {
				t.Fatal(err)
			}
			for _, key := range keys[lo:hi] {
				if key <= last {
					read(m, key, seen[key])
				}
			}
		case op < 8: // write: upsert or delete
			key := keys[r.IntN(len(keys))]
			val := fmt.Sprintf("%d", step)
			row, ok, err := m.tx.Get(tA.ID, k(key))
			if err != nil {
				t.Fatal(err)
			}
			cur := ""
			if ok {
				cur = string(row.Value)
			}
			read(m, key, cur)
			switch {
			case ok && r.IntN(3) == 0:
				err = m.tx.Delete(tA, k(key))
			case ok:
				err = m.tx.Update(tA, k(key), k(key), k(val))
			default:
				_, err = m.tx.Insert(tA, k(key), k(val))
			}
			if errors.Is(err, ErrSerialization) {
				m.tx.Rollback()
				open = slices.Delete(open, i, i+1)
				failures++
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			m.written[key], m.wrote = true, true
		default: // commit (or, sometimes, roll back)
			open = slices.Delete(open, i, i+1)
			if r.IntN(8) == 0 {
				m.tx.Rollback()
				continue
			}
			writes := m.writes(t)
			before := maps.Clone(state)
			err := m.tx.Commit()
			if err != nil {
				if !errors.Is(err, ErrSerialization) && !errors.Is(err, ErrDuplicateKey) {
					t.Fatal(err)
				}
				failures++
				continue
			}
			commits++
			if m.ser && m.wrote {
				for key, v := range m.reads {
					if before[key] != v {
						t.Fatalf("seed %d step %d: a serializable writer read %s=%q, but the state it committed over holds %q", seed, step, key, v, before[key])
					}
				}
			}
			for key, v := range writes {
				if v == "" {
					delete(state, key)
				} else {
					state[key] = v
				}
			}
		}
	}
	for _, m := range open {
		m.tx.Rollback()
	}
	if commits == 0 || failures == 0 {
		t.Fatalf("seed %d: %d commits, %d failures: the run tested nothing", seed, commits, failures)
	}
}

// writes reads the transaction's final values of the keys it wrote
// ("" deleted). A key absent from its snapshot that it inserted and
// deleted again is not written at commit (doc.go invariant 5 lets a
// concurrent insert of it stand).
func (m *modelTxn) writes(t *testing.T) map[string]string {
	out := map[string]string{}
	for key := range m.written {
		row, ok, err := m.tx.Get(tA.ID, k(key))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case ok:
			out[key] = string(row.Value)
		case m.snap[key] != "":
			out[key] = ""
		}
	}
	return out
}
