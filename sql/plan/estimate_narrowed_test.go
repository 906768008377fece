package plan

import (
	"math"
	"testing"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/types"
)

// narrowStats: one table of rows rows whose column 0 holds ndv values.
type narrowStats struct{ rows, ndv float64 }

func (s narrowStats) TableRows(*catalog.Table) (float64, bool) { return s.rows, true }
func (s narrowStats) ColumnDistinct(_ *catalog.Table, col int) (float64, bool) {
	return s.ndv, col == 0
}
func (narrowStats) Column(*catalog.Table, int) *catalog.ColumnStats { return nil }

// TestNarrowedScanRows: a scan an incremental refresh narrowed to a
// change's keys (Scan.Narrowed) is estimated at the rows of those keys,
// so the plans over it are costed and joined for what they read (TPC-H
// Q20's partsupp rows of one supplier: 80, not the table's 80000); an IN
// scan the planner chose keeps the table's rows (the Filter above it
// repeats the IN list and counts it).
func TestNarrowedScanRows(t *testing.T) {
	tbl := &catalog.Table{ID: 7, Columns: []catalog.Column{{ID: 1, Name: "k", Type: types.Int8}, {ID: 2, Name: "v", Type: types.Int8}}}
	ix := &catalog.Index{Columns: []catalog.IndexColumn{{Col: 1}}}
	in := []Expr{&Const{D: types.NewInt8(1), T: types.Int8}, &Const{D: types.NewInt8(2), T: types.Int8}}
	est := NewEstimator(nil, narrowStats{rows: 80000, ndv: 1000})
	narrowed := &Scan{Table: tbl, Index: ix, In: in, Narrowed: true}
	if got := est.Rows(narrowed); math.Abs(got-160) > 1e-9 {
		t.Fatalf("narrowed scan of 2 keys: %v rows, want 160", got)
	}
	planned := &Scan{Table: tbl, Index: ix, In: in}
	if got := est.Rows(planned); got != 80000 {
		t.Fatalf("planner's IN scan: %v rows, want the table's 80000", got)
	}
	// An index nested-loop join driven by the narrowed scan follows it.
	apply := &Apply{Kind: JoinLeft, Left: narrowed, Right: &Given{Rows: make([][]types.Datum, 1)}}
	if got := est.Rows(apply); math.Abs(got-160) > 1e-9 {
		t.Fatalf("apply over the narrowed scan: %v rows, want 160", got)
	}
	cleared := *narrowed
	cleared.ClearKeyBounds()
	if cleared.Narrowed || NewEstimator(nil, narrowStats{rows: 80000, ndv: 1000}).Rows(&cleared) != 80000 {
		t.Fatal("a scan whose key bounds are cleared reads the whole table")
	}
	// More keys than distinct values: the whole table.
	many := &Scan{Table: tbl, Index: ix, In: in, Narrowed: true}
	if got := NewEstimator(nil, narrowStats{rows: 50, ndv: 1}).Rows(many); got != 50 {
		t.Fatalf("more keys than values: %v rows, want 50", got)
	}
}
