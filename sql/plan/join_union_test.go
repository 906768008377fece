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

// TestSemiAntiJoinUnionOldSide: EXISTS and NOT EXISTS of a few touched
// orders against a table's old side (the table less its changed rows,
// united with their old images) take the branches one after the other,
// the table's branch looked up: an anti join becomes an anti join with
// the images under a lookup of the table, a semi join the union of a semi
// join with the images and a lookup of the rest.
func TestSemiAntiJoinUnionOldSide(t *testing.T) {
	line := &catalog.Table{ID: 3, Name: "line", Columns: []catalog.Column{{ID: 1, Name: "ord_id", Type: types.Int8}, {ID: 2, Name: "n", Type: types.Int8}},
		PrimaryKey: []uint32{1, 2}}
	cols := NewScan(line).Columns()
	scan := NewScan(line)
	scan.Exclude = map[int64]struct{}{7: {}}
	old := &Given{Cols: cols, Rows: [][]types.Datum{{types.NewInt8(1), types.NewInt8(1)}}}
	oldSide := &SetOp{Kind: Union, All: true, Left: scan, Right: old, Cols: cols}
	orders := &Given{Cols: []Column{{Name: "id", T: types.Int8}}, Rows: [][]types.Datum{{types.NewInt8(1)}, {types.NewInt8(2)}}}
	join := func(kind JoinKind) *Join {
		return &Join{Kind: kind, Left: orders, Right: oldSide, LeftKeys: []Expr{&ColRef{Idx: 0, T: types.Int8}}, RightKeys: []Expr{&ColRef{Idx: 0, T: types.Int8}}}
	}
	est := NewEstimator(nil, narrowStats{rows: 600000, ndv: 150000})
	looksUp := func(n Node) bool {
		a, ok := n.(*Apply)
		if !ok {
			return false
		}
		f, ok := a.Right.(*Filter)
		if !ok {
			return false
		}
		s, ok := f.Input.(*Scan)
		return ok && s.Exclude != nil && s.Keyed()
	}
	out, err := Optimize(join(JoinAnti), est)
	if err != nil {
		t.Fatal(err)
	}
	if !looksUp(out) || out.(*Apply).Kind != JoinAnti {
		t.Fatalf("NOT EXISTS: %T, want an anti lookup of the table", out)
	}
	if inner, ok := out.(*Apply).Left.(*Join); !ok || inner.Kind != JoinAnti {
		t.Fatalf("NOT EXISTS: lookups driven by %T, want the anti join with the old images", out.(*Apply).Left)
	}
	out, err = Optimize(join(JoinSemi), est)
	if err != nil {
		t.Fatal(err)
	}
	u, ok := out.(*SetOp)
	if !ok || u.Kind != Union || !u.All || !looksUp(u.Right) || out.Columns()[0].Name != "id" || len(out.Columns()) != 1 {
		t.Fatalf("EXISTS: %T, want the union of a semi join with the images and a lookup of the table", out)
	}
}
