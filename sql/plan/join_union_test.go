package plan

import (
	"testing"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/types"
)

// TestJoinUnionOldSide: a refresh's old side of a table — the table less
// the rows changed since its checkpoint (Scan.Exclude), united with their
// old images — joined with a few touched orders becomes one index
// nested-loop join into the table and one hash join with the images (the
// join-union and index-join rules); with no small side it stays one join.
func TestJoinUnionOldSide(t *testing.T) {
	line := &catalog.Table{ID: 3, Name: "line", Columns: []catalog.Column{{ID: 1, Name: "ord_id", Type: types.Int8}, {ID: 2, Name: "n", Type: types.Int8}, {ID: 3, Name: "qty", Type: types.Int8}},
		PrimaryKey: []uint32{1, 2}}
	cols := NewScan(line).Columns()
	scan := NewScan(line)
	scan.Exclude = map[int64]struct{}{7: {}, 8: {}}
	old := &Given{Cols: cols, Rows: [][]types.Datum{{types.NewInt8(1), types.NewInt8(1), types.NewInt8(5)}}}
	oldSide := &Filter{Input: &SetOp{Kind: Union, All: true, Left: scan, Right: old, Cols: cols},
		Cond: &Binary{Op: OpGt, L: &ColRef{Idx: 2, T: types.Int8}, R: &Const{D: types.NewInt8(0), T: types.Int8}, T: types.Bool}}
	orders := func(n int) Node {
		g := &Given{Cols: []Column{{Name: "id", T: types.Int8}}}
		for i := range n {
			g.Rows = append(g.Rows, []types.Datum{types.NewInt8(int64(i))})
		}
		return g
	}
	join := func(small Node) *Join {
		return &Join{Kind: JoinInner, Left: small, Right: oldSide, LeftKeys: []Expr{&ColRef{Idx: 0, T: types.Int8}}, RightKeys: []Expr{&ColRef{Idx: 0, T: types.Int8}}}
	}
	est := NewEstimator(nil, narrowStats{rows: 600000, ndv: 150000})
	out, err := Optimize(join(orders(3)), est)
	if err != nil {
		t.Fatal(err)
	}
	// (the join order may swap the sides, a projection restoring the
	// columns' order)
	unproject := func(n Node) Node {
		for {
			p, ok := n.(*Project)
			if !ok {
				return n
			}
			n = p.Input
		}
	}
	u, ok := unproject(out).(*SetOp)
	if !ok || u.Kind != Union || !u.All {
		t.Fatalf("got %T, want the union of the branch joins", out)
	}
	a, ok := unproject(u.Left).(*Apply)
	if !ok {
		t.Fatalf("table branch: %T, want an index nested-loop join", u.Left)
	}
	f, ok := a.Right.(*Filter)
	if !ok {
		t.Fatalf("lookup side: %T", a.Right)
	}
	looked, ok := f.Input.(*Scan)
	if !ok || looked.Exclude == nil || !looked.Keyed() {
		t.Fatalf("the lookup reads %T, want the table by key without the changed rows", f.Input)
	}
	// Thousands of orders against the table: one hash join.
	if out, err := Optimize(join(orders(5000)), est); err != nil {
		t.Fatal(err)
	} else if _, ok := unproject(out).(*SetOp); ok {
		t.Fatal("a large side does not distribute the join")
	}
}
