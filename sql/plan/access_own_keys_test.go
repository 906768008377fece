package plan

import (
	"testing"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/types"
)

// keyStats: every table has rows rows; column 0 has keyNDV values, the
// others otherNDV.
type keyStats struct{ rows, keyNDV, otherNDV float64 }

func (s keyStats) TableRows(*catalog.Table) (float64, bool) { return s.rows, true }
func (s keyStats) ColumnDistinct(_ *catalog.Table, col int) (float64, bool) {
	if col == 0 {
		return s.keyNDV, true
	}
	return s.otherNDV, true
}
func (keyStats) Column(*catalog.Table, int) *catalog.ColumnStats { return nil }

// TestOwnKeysBeatLookups: a few suppliers joined with a lineitem-like
// table narrowed to a few orders (an incremental refresh's change keys,
// TPC-H Q21) read those orders' rows by key and hash-join them, rather
// than looking each supplier's 600 rows up through the supplier index;
// the same scan without its own key bounds is still looked up.
func TestOwnKeysBeatLookups(t *testing.T) {
	line := &catalog.Table{ID: 3, Name: "line", Columns: []catalog.Column{
		{ID: 1, Name: "ord", Type: types.Int8}, {ID: 2, Name: "n", Type: types.Int8}, {ID: 3, Name: "supp", Type: types.Int8}},
		PrimaryKey: []uint32{1, 2},
		Indexes:    []catalog.Index{{Name: "line_supp", Columns: []catalog.IndexColumn{{Col: 3}}}}}
	supp := &Given{Cols: []Column{{Name: "id", T: types.Int8}}}
	for i := range 40 {
		supp.Rows = append(supp.Rows, []types.Datum{types.NewInt8(int64(i))})
	}
	var orders []Expr
	for i := range 150 {
		orders = append(orders, &Const{D: types.NewInt8(int64(1000 + i)), T: types.Int8})
	}
	join := func(right Node) *Join {
		return &Join{Kind: JoinInner, Left: supp, Right: right,
			LeftKeys: []Expr{&ColRef{Idx: 0, T: types.Int8}}, RightKeys: []Expr{&ColRef{Idx: 2, T: types.Int8}}}
	}
	// 600k rows, 150k orders, 1000 suppliers.
	cat := (&catalog.Catalog{Database: "keys"}).Clone()
	cat.PutTable(line)
	est := NewEstimator(cat, keyStats{rows: 600000, keyNDV: 150000, otherNDV: 1000})
	narrowed := NewScan(line)
	narrowed.In, narrowed.Narrowed = orders, true
	if ownKeysCheaper(supp, narrowed, []Expr{&ColRef{Idx: 2, T: types.Int8}}, est) != true {
		t.Fatal("150 orders' rows by key cost more than 40 suppliers' lookups of 600 rows each")
	}
	if indexJoin(join(narrowed), est) != nil {
		t.Fatal("the narrowed side was looked up through the supplier index")
	}
	if indexJoin(join(NewScan(line)), est) == nil {
		t.Fatal("without key bounds of its own the table is looked up")
	}
	// Looking up by the same keys the scan is narrowed to costs what the
	// scan does: the lookups stay.
	byOrder := &Join{Kind: JoinInner, Left: supp, Right: narrowed,
		LeftKeys: []Expr{&ColRef{Idx: 0, T: types.Int8}}, RightKeys: []Expr{&ColRef{Idx: 0, T: types.Int8}}}
	if indexJoin(byOrder, est) == nil {
		t.Fatal("40 order keys looked up in the table by its key prefix: want lookups")
	}
}
