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
)

// The columnar window (window_columnar.go) must give the rows the row path
// gives (RowAtATime, the reference): random partitions and order keys with
// NULLs and ties, ascending and descending, NULLS FIRST and LAST, the
// ranking functions, and a parent that reads a random subset of the
// columns. A few inputs span several blocks of kept rows (datumBlocks).
func TestColumnarWindowMatchesRowPath(t *testing.T) {
	seed := rand.Int63()
	rng := rand.New(rand.NewSource(seed))
	ranking := []string{"row_number", "rank", "dense_rank", "percent_rank", "cume_dist"}
	columnar := 0
	for iter := 0; iter < 400; iter++ {
		colTypes := []types.T{types.Int4, types.Int4, types.Int8, types.Int4}
		vals := &plan.Values{}
		for i, ct := range colTypes {
			vals.Cols = append(vals.Cols, plan.Column{Name: fmt.Sprintf("c%d", i), T: ct})
		}
		n := rng.Intn(1000)
		if iter%100 == 0 {
			n = 2*datumBlockRows + rng.Intn(1000) // kept rows across blocks
		}
		for i := 0; i < n; i++ {
			var r []plan.Expr
			for j, ct := range colTypes {
				d := types.NewInt(ct.Kind, int64(rng.Intn(1+j*3))-1)
				if j == 0 {
					d = types.NewInt(ct.Kind, int64(i))
				} else if rng.Intn(6) == 0 {
					d = types.NullDatum
				}
				r = append(r, &plan.Const{D: d, T: ct})
			}
			vals.Rows = append(vals.Rows, r)
		}
		col := func(i int) *plan.ColRef { return &plan.ColRef{Idx: i, T: colTypes[i]} }
		var part []plan.Expr
		var order []plan.SortKey
		for range rng.Intn(2) {
			part = append(part, col(1+rng.Intn(3)))
		}
		for range 1 + rng.Intn(2) {
			desc := rng.Intn(2) == 0
			order = append(order, plan.SortKey{E: col(1 + rng.Intn(3)), Desc: desc, NullsFirst: desc != (rng.Intn(3) == 0)})
		}
		w := &plan.Window{Input: vals, Cols: slices.Clone(vals.Cols)}
		for range 1 + rng.Intn(3) {
			name := ranking[rng.Intn(len(ranking))]
			f, _ := funcs.Lookup(name)
			w.Calls = append(w.Calls, plan.WindowCall{Name: name, Fn: f, PartitionBy: part, OrderBy: order, T: f.Window.Ret})
			w.Cols = append(w.Cols, plan.Column{Name: name, T: f.Window.Ret})
		}
		proj := &plan.Project{Input: w}
		for i := range w.Cols {
			if rng.Intn(2) == 0 || i >= len(vals.Cols) {
				proj.Exprs = append(proj.Exprs, &plan.ColRef{Idx: i, T: w.Cols[i].T})
				proj.Cols = append(proj.Cols, w.Cols[i])
			}
		}
		run := func(rowAtATime bool) []string {
			c := &Ctx{Context: context.Background(), Env: types.DefaultEnv, Funcs: &funcs.Ctx{Env: types.DefaultEnv}, RowAtATime: rowAtATime}
			op, err := Build(c, proj)
			if err != nil {
				t.Fatal(err)
			}
			if p, ok := op.(*projectOp); ok && !rowAtATime {
				if _, ok := p.in.(*colWindow); ok {
					columnar++
				}
			}
			var out []string
			if err := Drain(op, func(b []Row) error {
				for _, r := range b {
					out = append(out, fmt.Sprint(r))
				}
				return nil
			}); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			slices.Sort(out)
			return out
		}
		want, got := run(true), run(false)
		if !slices.Equal(want, got) {
			t.Fatalf("seed %d, iteration %d: the columnar window differs from the row path (%d rows against %d)", seed, iter, len(got), len(want))
		}
	}
	if columnar < 300 {
		t.Fatalf("seed %d: the columnar window ran in %d of 400 cases", seed, columnar)
	}
}
