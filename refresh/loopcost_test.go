package refresh

import (
	"math"
	"testing"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// TestLoopCost: an index nested-loop join through a secondary index costs,
// per outer row, a key range and a fetch of each row the key matches
// (TPC-H Q21's 22 suppliers, ~600 lineitems each through lineitem_supp);
// through the primary key a key range alone, as before.
func TestLoopCost(t *testing.T) {
	const rows, ndv, outer = 600_000, 1000, 22
	s := &sizer{cache: map[uint32]int64{factID: rows}, keyCosts: map[[2]uint32]int64{}}
	fact := costTable(factID)
	fact.Name = "fact"
	cat := (&catalog.Catalog{Database: "cost"}).Clone()
	cat.PutTable(fact)
	s.est = plan.NewEstimator(cat, costStats{rows: map[uint32]int64{factID: rows}, ndv: ndv})
	lookup := func(index *catalog.Index) plan.Node {
		scan := plan.NewScan(fact)
		key := &plan.Param{N: 0, T: types.Int8}
		scan.Index = index
		scan.Start = &plan.KeyBound{Values: []plan.Expr{key}, Inclusive: true}
		scan.End = scan.Start
		cond := &plan.Binary{Op: plan.OpEq, L: &plan.ColRef{Idx: 0, T: types.Int8, Name: "k"}, R: key, T: types.Bool}
		return &plan.Apply{Kind: plan.JoinInner, Left: costGiven(outer), Right: &plan.Filter{Input: scan, Cond: cond}}
	}
	secondary := s.cost(lookup(&catalog.Index{Columns: []catalog.IndexColumn{{Col: keyCol}}}))
	want := outer + outer*(lookupRowsPerKey+indexFetchCost*rows/ndv)
	if math.Abs(float64(secondary-int64(want))) > outer {
		t.Fatalf("through a secondary index: %d units, want about %d", secondary, want)
	}
	if primary := s.cost(lookup(nil)); primary != outer+outer*lookupRowsPerKey {
		t.Fatalf("through the primary key: %d units, want %d", primary, outer+outer*lookupRowsPerKey)
	}
}
