package sequence

import (
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/storage"
)

func openDB(t *testing.T) *storage.DB {
	t.Helper()
	db, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func seqTable(id uint32, sq catalog.Sequence) *catalog.Table {
	return &catalog.Table{ID: id, Name: "s", Kind: catalog.KindSequence, Sequence: &sq}
}

// TestStoreHandsOutInOrder: values come in order by the increment across
// reserved blocks, a second store (another process after a restart) starts
// past everything the first reserved, and the bound ends it with 2200H.
func TestStoreHandsOutInOrder(t *testing.T) {
	db := openDB(t)
	tbl := seqTable(7, catalog.Sequence{Type: "bigint", Start: 5, Increment: 3, Min: 1, Max: 5 + 3*99, Cache: 1, Epoch: 1})
	var m Store
	want := int64(5)
	for i := 0; i < 40; i++ {
		v, err := m.Next(db, tbl)
		if err != nil || v != want {
			t.Fatalf("value %d: got %d, %v; want %d", i, v, err, want)
		}
		want += 3
	}
	last, ahead, called, err := m.Current(db, tbl)
	if err != nil || last != want-3 || !called || ahead <= 0 {
		t.Fatalf("Current = %d, %d, %v, %v; want last %d, called, some ahead", last, ahead, called, err, want-3)
	}
	// A fresh store sees only what was persisted: the end of the reserved
	// block, so it skips (a gap) but never repeats.
	var m2 Store
	v, err := m2.Next(db, tbl)
	if err != nil || v <= want-3 {
		t.Fatalf("second store's first value %d, %v: repeats a handed-out value (last %d)", v, err, want-3)
	}
	for {
		if v, err = m2.Next(db, tbl); err != nil {
			break
		}
		if v > tbl.Sequence.Max {
			t.Fatalf("value %d past the maximum %d", v, tbl.Sequence.Max)
		}
	}
	if pgerror.Code(err) != pgerror.SequenceGeneratorLimitExceeded {
		t.Fatalf("past the maximum: %v, want 2200H", err)
	}
}

// TestStoreSetAndCycle: Set (setval, RESTART) drops the reserved block,
// and a cycling sequence wraps to its minimum.
func TestStoreSetAndCycle(t *testing.T) {
	db := openDB(t)
	tbl := seqTable(9, catalog.Sequence{Type: "integer", Start: 1, Increment: 1, Min: 1, Max: 4, Cache: 1, Cycle: true, Epoch: 2})
	var m Store
	var got []int64
	for i := 0; i < 6; i++ {
		v, err := m.Next(db, tbl)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if want := []int64{1, 2, 3, 4, 1, 2}; !equal(got, want) {
		t.Fatalf("cycling values %v, want %v", got, want)
	}
	if err := m.Set(db, tbl, State{Last: 3, Called: false}); err != nil {
		t.Fatal(err)
	}
	if v, err := m.Next(db, tbl); err != nil || v != 3 {
		t.Fatalf("after setval(3, false): %d, %v; want 3", v, err)
	}
	if err := m.Set(db, tbl, State{Last: 3, Called: true}); err != nil {
		t.Fatal(err)
	}
	if v, err := m.Next(db, tbl); err != nil || v != 4 {
		t.Fatalf("after setval(3, true): %d, %v; want 4", v, err)
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestApplyOptions: CREATE's defaults follow the type and the sign of the
// increment, as PostgreSQL's do, and bad bounds are 22023.
func TestApplyOptions(t *testing.T) {
	parse := func(sql string) []*pg_query.Node {
		t.Helper()
		tree, err := pg_query.Parse(sql)
		if err != nil {
			t.Fatal(err)
		}
		return tree.Stmts[0].Stmt.GetCreateSeqStmt().Options
	}
	sq := &catalog.Sequence{Type: "bigint", Increment: 1, Cache: 1}
	if _, _, err := ApplyOptions(sq, parse("CREATE SEQUENCE s AS smallint INCREMENT -2"), true); err != nil {
		t.Fatal(err)
	}
	if sq.Min != -32768 || sq.Max != -1 || sq.Start != -1 || sq.Increment != -2 {
		t.Fatalf("descending smallint: min %d max %d start %d inc %d; want -32768, -1, -1, -2", sq.Min, sq.Max, sq.Start, sq.Increment)
	}
	sq = &catalog.Sequence{Type: "bigint", Increment: 1, Cache: 1}
	_, _, err := ApplyOptions(sq, parse("CREATE SEQUENCE s MINVALUE 10 MAXVALUE 5"), true)
	if pgerror.Code(err) != pgerror.InvalidParameterValue {
		t.Fatalf("MINVALUE above MAXVALUE: %v, want 22023", err)
	}
	sq = &catalog.Sequence{Type: "bigint", Increment: 1, Cache: 1}
	_, _, err = ApplyOptions(sq, parse("CREATE SEQUENCE s RESTART 3"), true)
	if pgerror.Code(err) != pgerror.SyntaxError {
		t.Fatalf("RESTART in CREATE: %v, want 42601", err)
	}
}
