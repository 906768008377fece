package exec

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// vecTable is the differential test's table: id BIGINT (the key), k INT,
// d BIGINT, v NUMERIC(12,2), w NUMERIC(6,3), s TEXT, b BOOLEAN, with
// NULLs in every column but id.
var vecTable = &catalog.Table{ID: 77, Name: "vt", PrimaryKey: []uint32{1}, Columns: []catalog.Column{
	{ID: 1, Name: "id", Type: types.Int8},
	{ID: 2, Name: "k", Type: types.Int4},
	{ID: 3, Name: "d", Type: types.Int8},
	{ID: 4, Name: "v", Type: types.T{Kind: types.KindNumeric, Precision: 12, Scale: 2}},
	{ID: 5, Name: "w", Type: types.T{Kind: types.KindNumeric, Precision: 6, Scale: 3}},
	{ID: 6, Name: "s", Type: types.Text},
	{ID: 7, Name: "b", Type: types.Bool},
	{ID: 8, Name: "c", Type: types.T{Kind: types.KindChar, Width: 3}},
	{ID: 9, Name: "dt", Type: types.Date},
}}

func numeric(c int64, exp int32) types.Datum {
	d := new(apd.Decimal)
	d.SetFinite(c, exp)
	return types.NewNumeric(d)
}

// loadVecTable writes n random rows; odd writes one v at scale 1 (a
// value a NUMERIC(12,2) column never holds, which the vector path must
// leave to the row path).
func loadVecTable(t *testing.T, rng *rand.Rand, n int, odd bool) *storage.DB {
	t.Helper()
	db, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	txn := db.Begin()
	ids := []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	for i := range n {
		row := []types.Datum{
			types.NewInt8(int64(i)),
			types.NewInt4(int64(rng.Intn(200) - 100)),
			types.NewInt8(rng.Int63n(1<<40) - 1<<39),
			numeric(rng.Int63n(2_000_000)-1_000_000, -2),
			numeric(rng.Int63n(200_000)-100_000, -3),
			types.NewText(fmt.Sprintf("s%d", rng.Intn(30))),
			types.NewBool(rng.Intn(2) == 0),
			// Equal CHAR values written apart ('a', 'a  ').
			{K: types.KindChar, S: []string{"a", "a  ", "b  ", "ab", "ab "}[rng.Intn(5)]},
			{K: types.KindDate, I: rng.Int63n(2000) - 1000},
		}
		for j := 1; j < len(row); j++ {
			if rng.Intn(12) == 0 {
				row[j] = types.NullDatum
			}
		}
		if odd && i == n/2 {
			row[3] = numeric(15, -1)
		}
		key, err := appendKeyDatum(nil, row[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := txn.Insert(vecTable.StorageInfo(), key, types.AppendRowValue(nil, ids, row)); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	return db
}

// vecGen builds random expressions over vecTable's columns.
type vecGen struct {
	rng *rand.Rand
	// plainBuild: joinQuery's build side is the whole dimension table
	plainBuild bool
}

func (g *vecGen) intExpr(depth int) plan.Expr {
	r := g.rng.Intn(6)
	if depth <= 0 || r < 2 {
		if g.rng.Intn(3) == 0 {
			return &plan.Const{D: types.NewInt4(int64(g.rng.Intn(21) - 10)), T: types.Int4}
		}
		return col(1, types.Int4)
	}
	if r == 5 {
		// CASE WHEN … THEN … [ELSE …] END (vexpr_in.go)
		c := &plan.Case{Whens: []plan.When{{Cond: g.boolExpr(depth - 1), Result: g.intExpr(depth - 1)}}, T: types.Int4}
		if g.rng.Intn(2) == 0 {
			c.Whens = append(c.Whens, plan.When{Cond: g.boolExpr(depth - 1), Result: g.intExpr(depth - 1)})
		}
		if g.rng.Intn(3) > 0 {
			c.Else = g.intExpr(depth - 1)
		}
		return c
	}
	ops := []plan.Op{plan.OpAdd, plan.OpSub, plan.OpMul, plan.OpMod}
	return &plan.Binary{Op: ops[g.rng.Intn(len(ops))], L: g.intExpr(depth - 1), R: g.intExpr(depth - 1), T: types.Int4}
}

// inExpr is an IN (or NOT IN) list of constants, sometimes with a NULL,
// over k, s or the CHAR(3) c (vexpr_in.go).
func (g *vecGen) inExpr() plan.Expr {
	x := &plan.In{Not: g.rng.Intn(3) == 0}
	n := 1 + g.rng.Intn(3)
	switch g.rng.Intn(3) {
	case 0:
		x.E = col(1, types.Int4)
		for range n {
			x.List = append(x.List, &plan.Const{D: types.NewInt4(int64(g.rng.Intn(41) - 20)), T: types.Int4})
		}
	case 1:
		x.E = col(5, types.Text)
		for range n {
			x.List = append(x.List, &plan.Const{D: types.NewText(fmt.Sprintf("s%d", g.rng.Intn(30))), T: types.Text})
		}
	default:
		ct := vecTable.Columns[7].Type
		x.E = col(7, ct)
		for range n {
			x.List = append(x.List, &plan.Const{D: types.Datum{K: types.KindChar, S: []string{"a", "ab ", "b", "a  ", "zz"}[g.rng.Intn(5)]}, T: ct})
		}
	}
	if g.rng.Intn(4) == 0 {
		x.List = append(x.List, &plan.Const{D: types.NullDatum, T: x.E.Type()})
	}
	return x
}

func (g *vecGen) decExpr(depth int) plan.Expr {
	r := g.rng.Intn(6)
	if depth <= 0 || r < 2 {
		switch g.rng.Intn(4) {
		case 0:
			return &plan.Const{D: numeric(int64(g.rng.Intn(2001)-1000), -int32(g.rng.Intn(3))), T: types.Numeric}
		case 1:
			return col(4, vecTable.Columns[4].Type)
		case 2:
			return &plan.Cast{E: col(1, types.Int4), T: types.Numeric}
		}
		return col(3, vecTable.Columns[3].Type)
	}
	ops := []plan.Op{plan.OpAdd, plan.OpSub, plan.OpMul}
	return &plan.Binary{Op: ops[g.rng.Intn(len(ops))], L: g.decExpr(depth - 1), R: g.decExpr(depth - 1), T: types.Numeric}
}

func (g *vecGen) boolExpr(depth int) plan.Expr {
	cmps := []plan.Op{plan.OpEq, plan.OpNe, plan.OpLt, plan.OpLe, plan.OpGt, plan.OpGe}
	switch r := g.rng.Intn(9); {
	case depth <= 0 || r < 2:
		return &plan.Binary{Op: cmps[g.rng.Intn(6)], L: g.intExpr(2), R: g.intExpr(1), T: types.Bool}
	case r < 4:
		return &plan.Binary{Op: cmps[g.rng.Intn(6)], L: g.decExpr(2), R: g.decExpr(1), T: types.Bool}
	case r == 4 && g.rng.Intn(3) == 0:
		return g.inExpr()
	case r == 4 && g.rng.Intn(2) == 0:
		// CHAR(3) = / <> a constant written with other trailing spaces
		ct := vecTable.Columns[7].Type
		c := &plan.Const{D: types.Datum{K: types.KindChar, S: []string{"a", "ab  ", "b", ""}[g.rng.Intn(4)]}, T: ct}
		return &plan.Binary{Op: cmps[g.rng.Intn(2)], L: col(7, ct), R: c, T: types.Bool}
	case r == 4 && g.rng.Intn(2) == 0:
		// [NOT] LIKE: prefix, suffix, search, exact and empty patterns,
		// _ and escapes (all the kernel's).
		pats := []string{"s1%", "%9", "%1%", "s2", "%", "", "s%2%", "s_", "_2%", "s1%%", `s\1%`, "%_1"}
		p := &plan.Const{D: types.NewText(pats[g.rng.Intn(len(pats))]), T: types.Text}
		return &plan.Binary{Op: []plan.Op{plan.OpLike, plan.OpNotLike}[g.rng.Intn(2)], L: col(5, types.Text), R: p, T: types.Bool}
	case r == 4:
		s := &plan.Const{D: types.NewText(fmt.Sprintf("s%d", g.rng.Intn(30))), T: types.Text}
		return &plan.Binary{Op: cmps[g.rng.Intn(2)], L: col(5, types.Text), R: s, T: types.Bool}
	case r == 5 && g.rng.Intn(2) == 0:
		ts := &plan.Const{D: types.Datum{K: types.KindTimestamp, I: (g.rng.Int63n(2000) - 1000) * 86400e6}, T: types.Timestamp}
		return &plan.Binary{Op: cmps[g.rng.Intn(6)], L: &plan.Cast{E: col(8, types.Date), T: types.Timestamp}, R: ts, T: types.Bool}
	case r == 5:
		return &plan.IsNull{E: []plan.Expr{col(1, types.Int4), col(5, types.Text), col(3, vecTable.Columns[3].Type), col(6, types.Bool)}[g.rng.Intn(4)], Not: g.rng.Intn(2) == 0}
	case r == 6:
		return &plan.Not{E: g.boolExpr(depth - 1)}
	case r == 7:
		return &plan.And{Args: []plan.Expr{g.boolExpr(depth - 1), g.boolExpr(depth - 1), col(6, types.Bool)}[:2+g.rng.Intn(2)]}
	}
	return &plan.Or{Args: []plan.Expr{g.boolExpr(depth - 1), g.boolExpr(depth - 1)}}
}

// aggs picks aggregate calls over vecTable.
func (g *vecGen) aggs(t *testing.T) []plan.AggCall {
	v, w := col(3, vecTable.Columns[3].Type), col(4, vecTable.Columns[4].Type)
	all := []plan.AggCall{
		aggCall(t, "count", false), aggCall(t, "count", false, col(5, types.Text)),
		aggCall(t, "sum", false, col(1, types.Int4)), aggCall(t, "sum", false, col(2, types.Int8)),
		aggCall(t, "sum", false, v), aggCall(t, "avg", false, v), aggCall(t, "avg", false, col(1, types.Int4)),
		aggCall(t, "min", false, w), aggCall(t, "max", false, col(2, types.Int8)), aggCall(t, "max", false, v),
		aggCall(t, "sum", false, g.decExpr(2)), aggCall(t, "avg", false, g.decExpr(2)), aggCall(t, "min", false, g.intExpr(2)),
		aggCall(t, "sum", false, g.mixedCase()), aggCall(t, "sum", false, g.mixedCase()),
	}
	g.rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:1+g.rng.Intn(len(all))]
}

// mixedCase is a CASE of unconstrained NUMERIC type whose branches may
// differ in scale (TPC-H Q14's THEN price * (1 - discount) ELSE 0), with
// or without an ELSE.
func (g *vecGen) mixedCase() plan.Expr {
	c := &plan.Case{T: types.Numeric}
	for range 1 + g.rng.Intn(2) {
		c.Whens = append(c.Whens, plan.When{Cond: g.boolExpr(1), Result: g.decExpr(2)})
	}
	switch g.rng.Intn(3) {
	case 0:
		c.Else = &plan.Const{D: numeric(0, 0), T: types.Numeric}
	case 1:
		c.Else = g.decExpr(1)
	}
	return c
}

func (g *vecGen) groupBy() []plan.Expr {
	switch g.rng.Intn(6) {
	case 0:
		return nil
	case 5:
		return []plan.Expr{col(7, vecTable.Columns[7].Type), col(5, types.Text)}
	case 1:
		return []plan.Expr{col(1, types.Int4)}
	case 2:
		return []plan.Expr{col(5, types.Text)}
	case 3:
		return []plan.Expr{col(5, types.Text), col(1, types.Int4)}
	}
	return []plan.Expr{&plan.Binary{Op: plan.OpMod, L: col(1, types.Int4), R: &plan.Const{D: types.NewInt4(7), T: types.Int4}, T: types.Int4}}
}

// vecQuery is Aggregate(Filter(Scan)) (sometimes with a projection
// between) over vecTable.
func (g *vecGen) query(t *testing.T) plan.Node {
	s := plan.NewScan(vecTable)
	for i := range vecTable.Columns {
		s.Needed[i] = true
	}
	var in plan.Node = &plan.Filter{Input: s, Cond: g.boolExpr(3)}
	if g.rng.Intn(3) == 0 {
		// A projection that keeps the columns in place and adds one.
		var exprs []plan.Expr
		var cols []plan.Column
		for i, c := range vecTable.Columns {
			exprs = append(exprs, col(i, c.Type))
			cols = append(cols, plan.Column{Name: c.Name, T: c.Type})
		}
		exprs = append(exprs, g.decExpr(2))
		cols = append(cols, plan.Column{Name: "x", T: types.Numeric})
		in = &plan.Project{Input: in, Exprs: exprs, Cols: cols}
		if g.rng.Intn(2) == 0 {
			in = &plan.Filter{Input: in, Cond: g.boolExpr(2)}
		}
	}
	gb := g.groupBy()
	aggs := g.aggs(t)
	return &plan.Aggregate{Input: in, GroupBy: gb, Aggs: aggs, Cols: make([]plan.Column, len(gb)+len(aggs))}
}

// runVec runs p on db, row at a time or not, under limit (0: none); it
// returns the rows (sorted), the error's SQLSTATE, and whether the
// vectorized path produced the result.
func runVec(t *testing.T, db *storage.DB, p plan.Node, rowAtATime bool, limit int64, workers int) ([]string, string, bool) {
	t.Helper()
	txn := db.Begin()
	defer txn.Rollback()
	var mem *Memory
	if limit > 0 {
		mem = &Memory{Limit: limit, Setting: "query_memory_limit", TempDir: t.TempDir()}
	}
	fc := &funcs.Ctx{Env: types.DefaultEnv, StatementTime: vecNow}
	c := &Ctx{Context: context.Background(), Txn: txn, Env: types.DefaultEnv, Funcs: fc, Mem: mem, RowAtATime: rowAtATime, Workers: workers}
	op, err := Build(c, p)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	err = Drain(op, func(b []Row) error {
		for _, r := range b {
			out = append(out, renderRow(r))
		}
		return nil
	})
	v, isVec := op.(*vaggOp)
	vectorized := isVec && v.row == nil
	if mem != nil && mem.Used() != 0 {
		t.Errorf("%d bytes still charged after close", mem.Used())
	}
	slices.Sort(out)
	if err != nil {
		return nil, pgerror.Code(err), vectorized
	}
	return out, "", vectorized
}

// TestVectorMatchesRowPath: random filters, projections, group keys and
// aggregates over random data give the same rows (kinds and numeric
// scales included) or the same error on the vectorized path as row at
// a time.
func TestVectorMatchesRowPath(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	db := loadVecTable(t, rng, 5000, false)
	g := &vecGen{rng: rng}
	vectorized, errs := 0, 0
	par := VecParallelScans()
	const n = 200
	for q := range n {
		p := g.query(t)
		want, wantErr := func() ([]string, string) { w, e, _ := runVec(t, db, p, true, 0, 0); return w, e }()
		got, gotErr, v := runVec(t, db, p, false, 0, q%3)
		if v {
			vectorized++
		}
		if wantErr != "" {
			errs++
		}
		if gotErr != wantErr || !slices.Equal(got, want) {
			t.Fatalf("seed %d query %d (workers %d, vectorized %v): got %d rows err %q, want %d rows err %q\nplan %s\ngot  %.400v\nwant %.400v", seed, q, q%3, v, len(got), gotErr, len(want), wantErr, strings.Join(plan.Explain(p, nil), "\n"), got, want)
		}
	}
	t.Logf("%d of %d queries vectorized, %d failed alike", vectorized, n, errs)
	if vectorized < n/2 {
		t.Errorf("only %d of %d queries ran vectorized", vectorized, n)
	}
	// Every third query runs with 1 worker, every third with 2.
	if d := VecParallelScans() - par; d < n/3 {
		t.Errorf("%d queries read in parallel, want %d at least", d, n/3)
	}
}

// TestVectorFallsBack: a value the vectors cannot hold, and groups past
// a budget that can spill, both give the row path's result through the
// row path.
func TestVectorFallsBack(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	db := loadVecTable(t, rng, 3000, true)
	s := plan.NewScan(vecTable)
	for i := range vecTable.Columns {
		s.Needed[i] = true
	}
	p := &plan.Aggregate{Input: s, GroupBy: []plan.Expr{col(0, types.Int8)},
		Aggs: []plan.AggCall{aggCall(t, "sum", false, col(3, vecTable.Columns[3].Type)), aggCall(t, "count", false)}, Cols: make([]plan.Column, 3)}
	want, _, _ := runVec(t, db, p, true, 0, 0)
	got, _, v := runVec(t, db, p, false, 0, 2)
	if v || !slices.Equal(got, want) {
		t.Fatalf("a v at scale 1: vectorized %v, rows equal %v", v, slices.Equal(got, want))
	}
	db2 := loadVecTable(t, rng, 20000, false)
	want, _, _ = runVec(t, db2, p, true, 0, 0)
	got, code, v := runVec(t, db2, p, false, 256<<10, 1)
	if code != "" || v || !slices.Equal(got, want) {
		t.Fatalf("20000 groups under 256kB: err %q vectorized %v, rows equal %v", code, v, slices.Equal(got, want))
	}
	got, _, v = runVec(t, db2, p, false, 0, 2)
	if !v || !slices.Equal(got, want) {
		t.Fatalf("20000 groups without a limit: vectorized %v, rows equal %v", v, slices.Equal(got, want))
	}
}

// TestVectorCharInCase: a TPC-H Q12-shaped aggregate — a CHAR IN list in
// the filter, sum(CASE WHEN CHAR = … OR CHAR = … THEN 1 ELSE 0 END) —
// runs vectorized and gives the row path's rows.
func TestVectorCharInCase(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	db := loadVecTable(t, rng, 4000, false)
	ct := vecTable.Columns[7].Type
	cc := func(s string) plan.Expr { return &plan.Const{D: types.Datum{K: types.KindChar, S: s}, T: ct} }
	eq := func(s string) plan.Expr { return &plan.Binary{Op: plan.OpEq, L: col(7, ct), R: cc(s), T: types.Bool} }
	one, zero := &plan.Const{D: types.NewInt4(1), T: types.Int4}, &plan.Const{D: types.NewInt4(0), T: types.Int4}
	hi := &plan.Case{Whens: []plan.When{{Cond: &plan.Or{Args: []plan.Expr{eq("a"), eq("b  ")}}, Result: one}}, Else: zero, T: types.Int4}
	s := plan.NewScan(vecTable)
	for i := range vecTable.Columns {
		s.Needed[i] = true
	}
	in := &plan.Filter{Input: s, Cond: &plan.In{E: col(7, ct), List: []plan.Expr{cc("a  "), cc("ab"), cc("b")}}}
	p := &plan.Aggregate{Input: in, GroupBy: []plan.Expr{col(7, ct)},
		Aggs: []plan.AggCall{aggCall(t, "sum", false, hi), aggCall(t, "count", false)}, Cols: make([]plan.Column, 3)}
	want, _, _ := runVec(t, db, p, true, 0, 0)
	got, code, v := runVec(t, db, p, false, 0, 1)
	if !v || code != "" || !slices.Equal(got, want) {
		t.Fatalf("vectorized %v, err %q, got %v, want %v", v, code, got, want)
	}
}

// TestVectorLike: a TPC-H Q14-shaped aggregate — a LIKE prefix in the
// filter, sum(CASE WHEN … NOT LIKE … THEN 1 ELSE 0 END) — runs vectorized
// and gives the row path's rows.
func TestVectorLike(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	db := loadVecTable(t, rng, 4000, false)
	like := func(op plan.Op, p string) plan.Expr {
		return &plan.Binary{Op: op, L: col(5, types.Text), R: &plan.Const{D: types.NewText(p), T: types.Text}, T: types.Bool}
	}
	one, zero := &plan.Const{D: types.NewInt4(1), T: types.Int4}, &plan.Const{D: types.NewInt4(0), T: types.Int4}
	c := &plan.Case{Whens: []plan.When{{Cond: like(plan.OpNotLike, "%9"), Result: one}}, Else: zero, T: types.Int4}
	s := plan.NewScan(vecTable)
	for i := range vecTable.Columns {
		s.Needed[i] = true
	}
	// As the binder gives a varchar's LIKE: through a cast to text.
	in := &plan.Filter{Input: s, Cond: &plan.Binary{Op: plan.OpLike, L: &plan.Cast{E: col(5, types.Text), T: types.Text},
		R: &plan.Const{D: types.NewText("s1%"), T: types.Text}, T: types.Bool}}
	p := &plan.Aggregate{Input: in, GroupBy: []plan.Expr{col(5, types.Text)},
		Aggs: []plan.AggCall{aggCall(t, "sum", false, c), aggCall(t, "count", false)}, Cols: make([]plan.Column, 3)}
	want, _, _ := runVec(t, db, p, true, 0, 0)
	got, code, v := runVec(t, db, p, false, 0, 1)
	if !v || code != "" || !slices.Equal(got, want) || len(want) != 11 {
		t.Fatalf("vectorized %v, err %q, got %v, want %v (11 groups s1, s10 … s19)", v, code, got, want)
	}
}

// TestVectorMixedScaleCase: a TPC-H Q14-shaped sum(CASE WHEN … THEN v * w
// ELSE 0 END) (scales 5 and 0) runs vectorized, and each group's sum has
// the row path's scale: 5 where a row took THEN, 0 where none did.
func TestVectorMixedScaleCase(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	db := loadVecTable(t, rng, 4000, false)
	vt, wt := vecTable.Columns[3].Type, vecTable.Columns[4].Type
	then := &plan.Binary{Op: plan.OpMul, L: col(3, vt), R: col(4, wt), T: types.Numeric}
	cond := &plan.Binary{Op: plan.OpEq, L: col(5, types.Text), R: &plan.Const{D: types.NewText("s1"), T: types.Text}, T: types.Bool}
	c := &plan.Case{Whens: []plan.When{{Cond: cond, Result: then}}, Else: &plan.Const{D: numeric(0, 0), T: types.Numeric}, T: types.Numeric}
	s := plan.NewScan(vecTable)
	for i := range vecTable.Columns {
		s.Needed[i] = true
	}
	p := &plan.Aggregate{Input: s, GroupBy: []plan.Expr{col(5, types.Text)},
		Aggs: []plan.AggCall{aggCall(t, "sum", false, c), aggCall(t, "sum", false, then)}, Cols: make([]plan.Column, 3)}
	want, _, _ := runVec(t, db, p, true, 0, 0)
	got, code, v := runVec(t, db, p, false, 0, 2)
	if !v || code != "" || !slices.Equal(got, want) {
		t.Fatalf("vectorized %v, err %q\ngot  %v\nwant %v", v, code, got, want)
	}
}
