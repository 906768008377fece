package exec

import (
	"math/rand"
	"testing"

	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// The hashed IN path must give exactly the three-valued answer of comparing
// with every row (R-Q2: NOT IN with NULLs), for one column and for rows.
func TestQuantifiedHashMatchesLinear(t *testing.T) {
	seed := rand.Int63()
	rng := rand.New(rand.NewSource(seed))
	val := func() types.Datum {
		if rng.Intn(4) == 0 {
			return types.NullDatum
		}
		return types.NewInt4(int64(rng.Intn(4)))
	}
	for iter := 0; iter < 2000; iter++ {
		width := 1 + rng.Intn(2)
		var rows []Row
		for n := rng.Intn(5); n > 0; n-- {
			r := make(Row, width)
			for i := range r {
				r[i] = val()
			}
			rows = append(rows, r)
		}
		lv := make([]types.Datum, width)
		for i := range lv {
			lv[i] = val()
		}
		x := &plan.Subquery{Kind: plan.SubAny, Op: plan.OpEq}
		// linear: no hash set
		linear := (&subResult{rows: rows}).quantified(x, lv)
		// hashed, built as uncorrelated() builds it
		r := &subResult{rows: rows, set: map[string]struct{}{}}
		for _, row := range rows {
			var k []byte
			null := false
			for _, d := range row {
				null = null || d.IsNull()
				k = types.HashKey(k, d)
			}
			if null {
				r.hasNull = true
			} else {
				r.set[string(k)] = struct{}{}
			}
		}
		hashed := r.quantified(x, lv)
		if !types.Equal(linear, hashed) {
			t.Fatalf("seed %d: %v IN %v: linear %v, hashed %v", seed, lv, rows, linear, hashed)
		}
	}
}

func TestQuantifiedNulls(t *testing.T) {
	n, one, two := types.NullDatum, types.NewInt4(1), types.NewInt4(2)
	null, tru, fal := types.NullDatum, types.NewBool(true), types.NewBool(false)
	for _, c := range []struct {
		kind plan.SubqueryKind
		op   plan.Op
		left types.Datum
		rows []types.Datum
		want types.Datum
	}{
		{plan.SubAny, plan.OpEq, one, []types.Datum{one, n}, tru},
		{plan.SubAny, plan.OpEq, two, []types.Datum{one, n}, null},
		{plan.SubAny, plan.OpEq, two, []types.Datum{one}, fal},
		{plan.SubAny, plan.OpEq, n, nil, fal},
		{plan.SubAny, plan.OpEq, n, []types.Datum{one}, null},
		{plan.SubAll, plan.OpLt, one, []types.Datum{two}, tru},
		{plan.SubAll, plan.OpLt, one, []types.Datum{two, n}, null},
		{plan.SubAll, plan.OpLt, two, []types.Datum{one, n}, fal},
		{plan.SubAll, plan.OpLt, n, nil, tru},
	} {
		var rows []Row
		for _, d := range c.rows {
			rows = append(rows, Row{d})
		}
		got := (&subResult{rows: rows}).quantified(&plan.Subquery{Kind: c.kind, Op: c.op}, []types.Datum{c.left})
		if !types.Equal(got, c.want) {
			t.Errorf("%v %v %v (%v): got %v want %v", c.left, c.op, c.kind, c.rows, got, c.want)
		}
	}
}
