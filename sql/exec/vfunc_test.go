package exec

import (
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// vecNow is now() in runVec's statements.
var vecNow = time.Date(1971, 6, 1, 12, 0, 0, 0, time.UTC)

// funcCall is a call of the overload of name whose parameters are the
// arguments' kinds.
func funcCall(t *testing.T, name string, args ...plan.Expr) *plan.Func {
	t.Helper()
	f, ok := funcs.Lookup(name)
	if !ok {
		t.Fatalf("no function %s", name)
	}
	var ats []types.T
	for _, a := range args {
		ats = append(ats, a.Type())
	}
	for _, o := range f.Overloads {
		if len(o.Params) != len(args) {
			continue
		}
		match := true
		for i, p := range o.Params {
			match = match && p.Kind == ats[i].Kind
		}
		if match {
			return &plan.Func{Name: name, Fn: f, Overload: o, Args: args, T: o.Ret(ats)}
		}
	}
	t.Fatalf("%s does not take %v", name, ats)
	return nil
}

// TestVectorFunctions: a W4-shaped aggregate — GROUP BY date_trunc of a
// timestamp, filtered against now() - INTERVAL — and a group key of a
// two-column function with NULLs (gcd(k, k + 1), NULL-strict) run
// vectorized, with the row path's rows, on one part and on two.
func TestVectorFunctions(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	db := loadVecTable(t, rng, 4000, false)
	ts := &plan.Cast{E: col(8, types.Date), T: types.Timestamp}
	text := func(s string) plan.Expr { return &plan.Const{D: types.NewText(s), T: types.Text} }
	since := &plan.Binary{Op: plan.OpSub, L: &plan.Cast{E: funcCall(t, "now"), T: types.Timestamp},
		R: &plan.Const{D: types.NewInterval(0, 400, 0), T: types.Interval}, T: types.Timestamp}
	kPlus1 := &plan.Binary{Op: plan.OpAdd, L: col(1, types.Int4), R: &plan.Const{D: types.NewInt4(1), T: types.Int4}, T: types.Int4}
	queries := map[string]*plan.Aggregate{}
	for name, key := range map[string]plan.Expr{
		"date_trunc": funcCall(t, "date_trunc", text("month"), ts),
		"gcd":        funcCall(t, "gcd", col(1, types.Int4), kPlus1),
	} {
		s := plan.NewScan(vecTable)
		for i := range vecTable.Columns {
			s.Needed[i] = true
		}
		in := &plan.Filter{Input: s, Cond: &plan.Binary{Op: plan.OpGt, L: ts, R: since, T: types.Bool}}
		queries[name] = &plan.Aggregate{Input: in, GroupBy: []plan.Expr{key},
			Aggs: []plan.AggCall{aggCall(t, "count", false), aggCall(t, "sum", false, col(3, vecTable.Columns[3].Type))}, Cols: make([]plan.Column, 3)}
	}
	for name, p := range queries {
		want, _, _ := runVec(t, db, p, true, 0, 0)
		if len(want) < 2 {
			t.Fatalf("%s: %d groups, the test wants several", name, len(want))
		}
		for _, workers := range []int{0, 1} {
			got, code, v := runVec(t, db, p, false, 0, workers)
			if !v || code != "" || !slices.Equal(got, want) {
				t.Fatalf("%s, %d workers: vectorized %v, err %q\ngot  %v\nwant %v", name, workers, v, code, got, want)
			}
		}
	}
}

// TestStatementConst: a column anywhere, before or after a function
// that alone would qualify, makes an expression no statement constant
// (TestIVMProperty found ts::timestamptz < now() folded as one).
func TestStatementConst(t *testing.T) {
	now := funcCall(t, "now")
	ts := &plan.Cast{E: col(8, types.Date), T: types.TimestampTZ}
	day := &plan.Const{D: types.NewInterval(0, 1, 0), T: types.Interval}
	for _, c := range []struct {
		e    plan.Expr
		want bool
	}{
		{now, true},
		{&plan.Binary{Op: plan.OpSub, L: now, R: day, T: types.TimestampTZ}, true},
		{&plan.Binary{Op: plan.OpLt, L: ts, R: now, T: types.Bool}, false},
		{&plan.Binary{Op: plan.OpLt, L: now, R: ts, T: types.Bool}, false},
		{&plan.Binary{Op: plan.OpLt, L: ts, R: &plan.Binary{Op: plan.OpSub, L: now, R: day, T: types.TimestampTZ}, T: types.Bool}, false},
		{funcCall(t, "random"), false},
	} {
		if got := statementConst(c.e); got != c.want {
			t.Errorf("statementConst(%T %v) = %v, want %v", c.e, c.e, got, c.want)
		}
	}
}
