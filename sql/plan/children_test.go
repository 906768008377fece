package plan

import (
	"reflect"
	"testing"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/types"
)

// sampleNodes returns one node of every kind, each with distinct
// expressions in every expression field.
func sampleNodes() []Node {
	tbl := &catalog.Table{ID: 1, Name: "t", Columns: []catalog.Column{{ID: 1, Name: "a", Type: types.Int4}, {ID: 2, Name: "b", Type: types.Int4}}, PrimaryKey: []uint32{1}}
	c := func(i int64) Expr { return &Const{D: types.NewInt8(i), T: types.Int8} }
	col := func(i int) Expr { return &ColRef{Idx: i, T: types.Int4} }
	scan := NewScan(tbl)
	scan.Point = []Expr{c(1)}
	rangeScan := NewScan(tbl)
	prefix := []Expr{c(2)}
	rangeScan.Start, rangeScan.End = &KeyBound{Values: prefix, Inclusive: true}, &KeyBound{Values: prefix, Inclusive: true}
	vals := &Values{Rows: [][]Expr{{c(3)}}, Cols: []Column{{Name: "v", T: types.Int8}}}
	other := NewScan(tbl)
	wt := &WorkTable{Name: "r", Cols: []Column{{Name: "x", T: types.Int8}}}
	return []Node{
		scan, rangeScan, vals, other,
		&Given{Cols: vals.Cols},
		&Rows{Cols: vals.Cols, Gen: "g"},
		&WorkTableScan{Work: wt},
		&Filter{Input: other, Cond: &Binary{Op: OpEq, L: col(0), R: c(4), T: types.Bool}},
		&Project{Input: other, Exprs: []Expr{col(1), c(5)}, Cols: []Column{{Name: "b"}, {Name: "k"}}},
		&Aggregate{Input: other, GroupBy: []Expr{col(0)}, Aggs: []AggCall{{Name: "sum", Args: []Expr{col(1)}, Filter: c(6), Order: []SortKey{{E: c(7)}}}}, Cols: []Column{{Name: "a"}, {Name: "sum"}}},
		&Sort{Input: other, Keys: []SortKey{{E: col(1), Desc: true}}},
		&Limit{Input: other, Count: c(8), Offset: c(9)},
		&LockRows{Input: other, Targets: []LockTarget{{Table: tbl, Key: []int{0}, Strength: LockForShare, Wait: LockSkipLocked}}},
		&Distinct{Input: other},
		&KeyIn{Input: other, Keys: []Expr{col(0)}, Set: map[string]struct{}{}},
		&Window{Input: other, Calls: []WindowCall{{Name: "w", Args: []Expr{c(10)}, PartitionBy: []Expr{col(0)}, OrderBy: []SortKey{{E: col(1)}},
			Filter: c(11), Frame: WindowFrame{Start: FrameBound{Kind: OffsetPreceding, Offset: c(12)}, End: FrameBound{Kind: OffsetFollowing, Offset: c(13)}}}}, Cols: []Column{{Name: "a"}, {Name: "b"}, {Name: "w"}}},
		&ProjectSet{Input: other, Calls: []SRFCall{{Name: "f", Args: []Expr{c(14)}, Cols: []Column{{Name: "f"}}}}},
		&CTEScan{CTE: &CTE{Name: "q"}, Input: other},
		&Join{Kind: JoinInner, Left: other, Right: vals, LeftKeys: []Expr{col(0)}, RightKeys: []Expr{&ColRef{Idx: 0, T: types.Int8}}, Residual: c(15)},
		&Apply{Kind: JoinLeft, Left: other, Right: vals, Params: []Expr{col(1)}, Residual: c(16)},
		&SetOp{Kind: Union, All: true, Left: vals, Right: vals, Cols: vals.Cols},
		&RecursiveUnion{Work: wt, NonRec: vals, Rec: &WorkTableScan{Work: wt}},
	}
}

// WithChildren returns a copy over the new children with every other
// field kept, leaves the node as it was, and refuses a wrong number of
// children.
func TestWithChildren(t *testing.T) {
	repl := &Values{Rows: [][]Expr{{}}}
	for _, n := range sampleNodes() {
		name := nodeName(n)
		ch := n.Children()
		before := reflect.ValueOf(n).Elem().Interface()
		newCh := make([]Node, len(ch))
		for i := range newCh {
			newCh[i] = repl
		}
		out, err := n.WithChildren(newCh...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(reflect.ValueOf(n).Elem().Interface(), before) {
			t.Errorf("%s: WithChildren modified the node", name)
		}
		if got := out.Children(); !reflect.DeepEqual(got, newCh) && len(ch) > 0 {
			t.Errorf("%s: children %v, want %v", name, got, newCh)
		}
		if len(ch) > 0 && out == n {
			t.Errorf("%s: WithChildren returned the node itself", name)
		}
		// Every field but the children (and cached columns) is kept.
		back, err := out.WithChildren(ch...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(ownExprs(back), ownExprs(n)) || reflect.TypeOf(back) != reflect.TypeOf(n) {
			t.Errorf("%s: fields lost through WithChildren", name)
		}
		if _, err := n.WithChildren(append(newCh, repl)...); err == nil {
			t.Errorf("%s: WithChildren took %d children", name, len(newCh)+1)
		}
	}
}

// mapOwnExprs replaces exactly the expressions ownExprs lists, in its
// order, copying the node.
func TestMapOwnExprs(t *testing.T) {
	for _, n := range sampleNodes() {
		name := nodeName(n)
		own := ownExprs(n)
		marked := map[Expr]bool{}
		out, changed, err := mapOwnExprs(n, func(e Expr) (Expr, error) {
			m := &Not{E: e}
			marked[m] = true
			return m, nil
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if changed != (len(own) > 0) {
			t.Errorf("%s: changed %v with %d expressions", name, changed, len(own))
		}
		got := ownExprs(out)
		if len(got) != len(own) {
			t.Fatalf("%s: %d expressions after, %d before", name, len(got), len(own))
		}
		for i, e := range got {
			if !marked[e] || e.(*Not).E != own[i] {
				t.Errorf("%s: expression %d not mapped in place", name, i)
			}
		}
		if len(own) > 0 && (out == n || !reflect.DeepEqual(ownExprs(n), own)) {
			t.Errorf("%s: mapOwnExprs modified the node", name)
		}
		if s, ok := out.(*Scan); ok && s.Start != nil && !s.Keyed() {
			t.Errorf("%s: an equality prefix lost its shared bounds", name)
		}
	}
}
