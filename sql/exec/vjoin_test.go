package exec

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// vdTable is the join test's build side: rid BIGINT (the key), id INT
// (duplicates and NULLs), w INT, label TEXT, c CHAR(3), m NUMERIC(6,2).
// Joined to vecTable its columns follow the scan's (rc below).
var vdTable = &catalog.Table{ID: 78, Name: "vd", PrimaryKey: []uint32{1}, Columns: []catalog.Column{
	{ID: 1, Name: "rid", Type: types.Int8},
	{ID: 2, Name: "id", Type: types.Int4},
	{ID: 3, Name: "w", Type: types.Int4},
	{ID: 4, Name: "label", Type: types.Text},
	{ID: 5, Name: "c", Type: types.T{Kind: types.KindChar, Width: 3}},
	{ID: 6, Name: "m", Type: types.T{Kind: types.KindNumeric, Precision: 6, Scale: 2}},
}}

// loadVecDim writes n random rows of vdTable into db; odd writes one m
// at scale 1 (which the vectors cannot hold).
func loadVecDim(t *testing.T, db *storage.DB, rng *rand.Rand, n int, odd bool) {
	t.Helper()
	txn := db.Begin()
	ids := []uint32{1, 2, 3, 4, 5, 6}
	for i := range n {
		row := []types.Datum{
			types.NewInt8(int64(i)),
			types.NewInt4(int64(rng.Intn(150) - 75)),
			types.NewInt4(int64(rng.Intn(20) - 5)),
			types.NewText(fmt.Sprintf("s%d", rng.Intn(40))),
			{K: types.KindChar, S: []string{"a", "a  ", "b  ", "ab", "ab "}[rng.Intn(5)]},
			numeric(rng.Int63n(20000)-10000, -2),
		}
		for j := 1; j < len(row); j++ {
			if rng.Intn(15) == 0 {
				row[j] = types.NullDatum
			}
		}
		if odd && i == n/2 {
			row[5] = numeric(15, -1)
		}
		key, err := appendKeyDatum(nil, row[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := txn.Insert(vdTable.StorageInfo(), key, types.AppendRowValue(nil, ids, row)); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
}

// joinQuery is Aggregate([Filter|Project](Join(Filter?(Scan vt), Scan vd)))
// on random keys, with a residual sometimes.
func (g *vecGen) joinQuery(t *testing.T) plan.Node {
	s := plan.NewScan(vecTable)
	for i := range vecTable.Columns {
		s.Needed[i] = true
	}
	var left plan.Node = s
	if g.rng.Intn(2) == 0 {
		left = &plan.Filter{Input: s, Cond: g.boolExpr(2)}
	}
	d := plan.NewScan(vdTable)
	for i := range vdTable.Columns {
		d.Needed[i] = true
	}
	var right plan.Node = d
	if g.rng.Intn(3) > 0 && !g.plainBuild {
		// read by kernels in parallel parts when it has them (vscan_rows.go)
		right = &plan.Filter{Input: d, Cond: g.dimCond(2)}
	}
	ch := vecTable.Columns[7].Type
	// rc is right column i's index in the joined row.
	lw := len(left.Columns())
	rc := func(i int) int { return lw + i }
	j := &plan.Join{Kind: plan.JoinInner, Left: left, Right: right}
	switch g.rng.Intn(5) {
	case 0, 1: // k = id
		j.LeftKeys, j.RightKeys = []plan.Expr{col(1, types.Int4)}, []plan.Expr{col(1, types.Int4)}
	case 2: // s = label
		j.LeftKeys, j.RightKeys = []plan.Expr{col(5, types.Text)}, []plan.Expr{col(3, types.Text)}
	case 3: // (c, k % 5) = (c, w)
		mod := &plan.Binary{Op: plan.OpMod, L: col(1, types.Int4), R: &plan.Const{D: types.NewInt4(5), T: types.Int4}, T: types.Int4}
		j.LeftKeys, j.RightKeys = []plan.Expr{col(7, ch), mod}, []plan.Expr{col(4, ch), col(2, types.Int4)}
	default: // b = (w > 3): bool keys
		j.LeftKeys = []plan.Expr{col(6, types.Bool)}
		j.RightKeys = []plan.Expr{&plan.Binary{Op: plan.OpGt, L: col(2, types.Int4), R: &plan.Const{D: types.NewInt4(3), T: types.Int4}, T: types.Bool}}
	}
	if g.rng.Intn(3) == 0 {
		// k < w + 40 over the joined row.
		j.Residual = &plan.Binary{Op: plan.OpLt, L: col(1, types.Int4), R: &plan.Binary{Op: plan.OpAdd, L: col(rc(2), types.Int4), R: &plan.Const{D: types.NewInt4(40), T: types.Int4}, T: types.Int4}, T: types.Bool}
	}
	var in plan.Node = j
	m := col(rc(5), vdTable.Columns[5].Type)
	if g.rng.Intn(2) == 0 {
		in = &plan.Filter{Input: in, Cond: &plan.Binary{Op: plan.OpNe, L: col(rc(3), types.Text), R: &plan.Const{D: types.NewText("s3"), T: types.Text}, T: types.Bool}}
	}
	gbs := [][]plan.Expr{nil, {col(rc(3), types.Text)}, {col(rc(1), types.Int4)}, {col(5, types.Text), col(rc(4), vdTable.Columns[4].Type)}, g.groupBy()}
	gb := gbs[g.rng.Intn(len(gbs))]
	aggs := g.aggs(t)
	aggs = append(aggs, aggCall(t, "count", false), aggCall(t, "sum", false, col(rc(2), types.Int4)), aggCall(t, "sum", false, m),
		aggCall(t, "sum", false, &plan.Binary{Op: plan.OpMul, L: col(3, vecTable.Columns[3].Type), R: &plan.Cast{E: col(rc(2), types.Int4), T: types.Numeric}, T: types.Numeric}),
		aggCall(t, "count", false, col(rc(3), types.Text)), aggCall(t, "max", false, col(rc(0), types.Int8)))
	return &plan.Aggregate{Input: in, GroupBy: gb, Aggs: aggs, Cols: make([]plan.Column, len(gb)+len(aggs))}
}

// TestVectorJoinMatchesRowPath: random inner hash joins (integer, text,
// CHAR and bool keys, several keys, residuals, duplicate and NULL keys on
// both sides) under an aggregation give the row path's rows, with 0, 1
// and 2 workers; a build-side value the vectors cannot hold falls back.
func TestVectorJoinMatchesRowPath(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	db := loadVecTable(t, rng, 4000, false)
	loadVecDim(t, db, rng, 300, false)
	g := &vecGen{rng: rng}
	vectorized := 0
	const n = 120
	for q := range n {
		p := g.joinQuery(t)
		want, wantErr, _ := runVec(t, db, p, true, 0, 0)
		got, gotErr, v := runVec(t, db, p, false, 0, q%3)
		if v {
			vectorized++
		}
		if gotErr != wantErr || !slices.Equal(got, want) {
			t.Fatalf("seed %d query %d (workers %d, vectorized %v): got %d rows err %q, want %d rows err %q\nplan %s\ngot  %.400v\nwant %.400v", seed, q, q%3, v, len(got), gotErr, len(want), wantErr, strings.Join(plan.Explain(p, nil), "\n"), got, want)
		}
	}
	t.Logf("%d of %d join queries vectorized", vectorized, n)
	if vectorized < n/2 {
		t.Errorf("only %d of %d join queries ran vectorized", vectorized, n)
	}

	db2 := loadVecTable(t, rng, 2000, false)
	loadVecDim(t, db2, rng, 200, true)
	g.plainBuild = true // the row at scale 1 reaches the build
	p := g.joinQuery(t)
	want, _, _ := runVec(t, db2, p, true, 0, 0)
	got, _, v := runVec(t, db2, p, false, 0, 2)
	if v || !slices.Equal(got, want) {
		t.Fatalf("an m at scale 1 on the build side: vectorized %v, rows equal %v", v, slices.Equal(got, want))
	}
}

// dimCond is a random condition over vdTable's columns: integer, CHAR,
// text and decimal comparisons, IN lists, IS NULL, AND, OR and NOT.
func (g *vecGen) dimCond(depth int) plan.Expr {
	ch, mt := vdTable.Columns[4].Type, vdTable.Columns[5].Type
	i4 := func(v int) plan.Expr { return &plan.Const{D: types.NewInt4(int64(v)), T: types.Int4} }
	cmps := []plan.Op{plan.OpEq, plan.OpNe, plan.OpLt, plan.OpLe, plan.OpGt, plan.OpGe}
	switch r := g.rng.Intn(8); {
	case depth <= 0 || r == 0:
		return &plan.Binary{Op: cmps[g.rng.Intn(6)], L: col(2, types.Int4), R: i4(g.rng.Intn(20) - 5), T: types.Bool}
	case r == 1:
		c := &plan.Const{D: types.Datum{K: types.KindChar, S: []string{"a", "ab ", "b"}[g.rng.Intn(3)]}, T: ch}
		return &plan.Binary{Op: cmps[g.rng.Intn(2)], L: col(4, ch), R: c, T: types.Bool}
	case r == 2:
		x := &plan.In{E: col(1, types.Int4), Not: g.rng.Intn(2) == 0}
		for range 3 {
			x.List = append(x.List, i4(g.rng.Intn(150)-75))
		}
		return x
	case r == 3:
		return &plan.Binary{Op: cmps[g.rng.Intn(6)], L: col(5, mt), R: &plan.Const{D: numeric(int64(g.rng.Intn(200)-100), -1), T: types.Numeric}, T: types.Bool}
	case r == 4:
		return &plan.IsNull{E: []plan.Expr{col(3, types.Text), col(5, mt)}[g.rng.Intn(2)], Not: g.rng.Intn(2) == 0}
	case r == 5:
		return &plan.Not{E: g.dimCond(depth - 1)}
	case r == 6:
		return &plan.And{Args: []plan.Expr{g.dimCond(depth - 1), g.dimCond(depth - 1)}}
	}
	return &plan.Or{Args: []plan.Expr{g.dimCond(depth - 1), g.dimCond(depth - 1)}}
}
