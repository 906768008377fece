package exec

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// TestApplyRebindMatchesFreshBuild: an index nested-loop join whose inner
// side is built once and rebound per outer row (rebind.go) gives, for
// every join kind, the rows of building that side afresh for each outer
// row: key ranges from the outer values (NULL bounds among them, ranges
// long enough to read ahead), a condition reading them, semi and anti
// joins that stop at the first match, an aggregate over the side (which
// closes its input at its end) and an index join inside it.
func TestApplyRebindMatchesFreshBuild(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	db := loadVecTable(t, rng, 6000, false)
	i8 := func(v int64) plan.Expr { return &plan.Const{D: types.NewInt8(v), T: types.Int8} }
	null := &plan.Const{D: types.NullDatum, T: types.Int8}
	for q := range 40 {
		// Outer rows (lo, hi, kmin): the inner side reads ids [lo, hi)
		// with k > kmin.
		var rows [][]plan.Expr
		for range 2 + rng.Intn(12) {
			lo := int64(rng.Intn(6100))
			hi := lo + int64(rng.Intn(20))
			if rng.Intn(6) == 0 {
				hi = lo + 5000 // past readaheadAfter full batches
			}
			r := []plan.Expr{i8(lo), i8(hi), i8(int64(rng.Intn(200) - 100))}
			if rng.Intn(8) == 0 {
				r[rng.Intn(3)] = null
			}
			rows = append(rows, r)
		}
		left := &plan.Values{Rows: rows, Cols: []plan.Column{{Name: "lo", T: types.Int8}, {Name: "hi", T: types.Int8}, {Name: "kmin", T: types.Int8}}}
		s := scanAll()
		s.Start = &plan.KeyBound{Values: []plan.Expr{&plan.OuterRef{Idx: 0, T: types.Int8}}, Inclusive: true}
		s.End = &plan.KeyBound{Values: []plan.Expr{&plan.OuterRef{Idx: 1, T: types.Int8}}}
		kGt := &plan.Binary{Op: plan.OpGt, L: &plan.Cast{E: col(1, types.Int4), T: types.Int8}, R: &plan.OuterRef{Idx: 2, T: types.Int8}, T: types.Bool}
		var right plan.Node = &plan.Filter{Input: s, Cond: kGt}
		kind := []plan.JoinKind{plan.JoinInner, plan.JoinLeft, plan.JoinSemi, plan.JoinAnti}[q%4]
		if q%5 == 4 {
			right = &plan.Aggregate{Input: right, GroupBy: []plan.Expr{col(7, vecTable.Columns[7].Type)},
				Aggs: []plan.AggCall{aggCall(t, "sum", false, col(3, vecTable.Columns[3].Type)), aggCall(t, "count", false)}, Cols: make([]plan.Column, 3)}
		}
		if q%5 == 3 {
			// A nested index join: each found row looks itself up by
			// its primary key, with its own correlation value.
			p := scanAll()
			p.Point = []plan.Expr{&plan.OuterRef{Idx: 0, T: types.Int8}}
			right = &plan.Apply{Kind: plan.JoinInner, Left: right, Right: p, Params: []plan.Expr{col(0, types.Int8)}}
		}
		params := []plan.Expr{col(0, types.Int8), col(1, types.Int8), col(2, types.Int8)}
		a := &plan.Apply{Kind: kind, Left: left, Right: right, Params: params}
		for _, rowAtATime := range []bool{false, true} {
			got, op := runApply(t, db, a, rowAtATime)
			if op.fresh {
				t.Fatalf("seed %d, query %d: the inner side was built afresh per row", seed, q)
			}
			want := freshApply(t, db, a, rowAtATime)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d, query %d (%v, row at a time %v): rebound\n%v\nbuilt per row\n%v", seed, q, kind, rowAtATime, got, want)
			}
		}
	}
}

func testCtx(txn *storage.Txn, rowAtATime bool) *Ctx {
	return &Ctx{Context: context.Background(), Txn: txn, Env: types.DefaultEnv, Funcs: &funcs.Ctx{Env: types.DefaultEnv}, RowAtATime: rowAtATime}
}

// runApply runs a through its operator and returns its rows, in order.
func runApply(t *testing.T, db *storage.DB, a *plan.Apply, rowAtATime bool) ([]string, *applyOp) {
	t.Helper()
	txn := db.Begin()
	defer txn.Rollback()
	op, err := Build(testCtx(txn, rowAtATime), a)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ap := op.(*applyOp)
	err = Drain(op, func(b []Row) error {
		for _, r := range b {
			out = append(out, renderRow(r))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, ap
}

// freshApply is a's rows with its right side built afresh per left row.
func freshApply(t *testing.T, db *storage.DB, a *plan.Apply, rowAtATime bool) []string {
	t.Helper()
	txn := db.Begin()
	defer txn.Rollback()
	c := testCtx(txn, rowAtATime)
	left, err := Build(c, a.Left)
	if err != nil {
		t.Fatal(err)
	}
	var lrows []Row
	if err := Drain(left, func(b []Row) error { lrows = append(lrows, b...); return nil }); err != nil {
		t.Fatal(err)
	}
	params, err := compileAll(a.Params, c)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range lrows {
		vals := make([]types.Datum, len(params))
		for i, f := range params {
			if vals[i], err = f(l); err != nil {
				t.Fatal(err)
			}
		}
		r, err := Build(c.child(vals), a.Right)
		if err != nil {
			t.Fatal(err)
		}
		var rrows []Row
		if err := Drain(r, func(b []Row) error {
			for _, row := range b {
				rrows = append(rrows, slices.Clone(row))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		switch {
		case a.Kind == plan.JoinSemi && len(rrows) > 0, a.Kind == plan.JoinAnti && len(rrows) == 0:
			out = append(out, renderRow(l))
		case a.Kind == plan.JoinLeft && len(rrows) == 0:
			out = append(out, renderRow(append(slices.Clone(l), make(Row, len(a.Right.Columns()))...)))
		case a.Kind == plan.JoinInner, a.Kind == plan.JoinLeft:
			for _, r := range rrows {
				out = append(out, renderRow(append(slices.Clone(l), r...)))
			}
		}
	}
	return out
}

// TestRebindKeepsIterator: a primary-key range scan rebound per outer row
// (an index nested loop's inner side) reads every probe through the one
// storage iterator it opened for the first, pointed at each new range,
// and reads each probe's rows.
func TestRebindKeepsIterator(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	db := loadVecTable(t, rng, 2000, false)
	txn := db.Begin()
	defer txn.Rollback()
	s := scanAll()
	s.Start = &plan.KeyBound{Values: []plan.Expr{&plan.OuterRef{Idx: 0, T: types.Int8}}, Inclusive: true}
	s.End = &plan.KeyBound{Values: []plan.Expr{&plan.OuterRef{Idx: 1, T: types.Int8}}}
	probes := []int64{10, 40, 41, 700, 1500}
	outer := []types.Datum{types.NewInt8(probes[0]), types.NewInt8(probes[0] + 3)}
	op, err := Build(testCtx(txn, false).child(outer), s)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	sc := op.(*scanOp)
	var first rowIter
	for probe, lo := range probes {
		if probe > 0 {
			outer[0], outer[1] = types.NewInt8(lo), types.NewInt8(lo+3)
			if ok, err := rebind(op); !ok || err != nil {
				t.Fatalf("rebind: %v %v", ok, err)
			}
		}
		var ids []string
		// Read to the end without closing, as the join does (done1).
		for {
			b, err := op.Next()
			if err != nil {
				t.Fatal(err)
			}
			if b == nil {
				break
			}
			for _, r := range b {
				ids = append(ids, r[0].String())
			}
		}
		want := []string{fmt.Sprint(lo), fmt.Sprint(lo + 1), fmt.Sprint(lo + 2)}
		if !slices.Equal(ids, want) {
			t.Fatalf("probe [%d, %d): %v, want %v", lo, lo+3, ids, want)
		}
		if sc.spare == nil {
			t.Fatalf("probe %d: no iterator kept for the next probe", probe)
		}
		if first == nil {
			first = sc.spare
		} else if sc.spare != first {
			t.Fatalf("probe %d opened a new iterator", probe)
		}
	}
}
