package plan

import (
	"fmt"

	"github.com/mvserver/mvserver/sql/types"
)

// Decorrelation of scalar aggregate subqueries in WHERE (decorrelate.go).
// A conjunct reading
//
//	(SELECT f(agg(…)) FROM r WHERE r.k = outer.k AND p(r))
//
// whose correlation is equalities in the subquery's top WHERE reads
// instead a column of a left join of the enclosing FROM with
//
//	SELECT r.k, agg(…) FROM r WHERE p(r) GROUP BY r.k
//
// on outer.k = r.k, so the subquery's input is read once, not once per
// outer row. An aggregate without a GROUP BY returns one row even over
// no rows; the grouped form has no row for a key without matches, which
// the left join pads with NULLs. That is each aggregate's value over no
// rows except count's, 0 (the "count bug"), which is why only the
// aggregates whose empty value is known here are decorrelated: count
// reads COALESCE(count, 0), sum, avg, min and max their NULL. f then sees
// the same values as before. Whether the per-row form (a lookup of r.k
// for each outer row) would be cheaper is the index-join rule's choice
// (access.go), which turns a left join with such a grouped side back into
// per-row lookups when the outer side is small.

// emptyAggs are the aggregates decorrelated, with their value over no
// rows (nil: NULL).
var emptyAggs = map[string]func(t types.T) Expr{
	"count": func(t types.T) Expr { return &Const{D: types.NewInt(t.Kind, 0), T: t} },
	"sum":   nil,
	"avg":   nil,
	"min":   nil,
	"max":   nil,
}

// scalarAgg is a scalar subquery split for decorrelation: its value is
// value over the output of agg (its aggregates' columns), agg reads
// corr's rows.
type scalarAgg struct {
	value Expr // over agg's output; nil: its one column
	agg   *Aggregate
	corr  *correlation
}

// splitScalarAgg splits sq, evaluated on rows of nLeft columns, for
// decorrelation; nil when it cannot be.
func splitScalarAgg(sq *Subquery, nLeft int) *scalarAgg {
	if sq.Kind != SubScalar || len(sq.Params) == 0 || sq.Volatile {
		return nil
	}
	s := &scalarAgg{}
	n := sq.Plan
	if p, ok := n.(*Project); ok {
		if len(p.Exprs) != 1 || readsOuter(p.Exprs[0]) {
			return nil
		}
		s.value, n = p.Exprs[0], p.Input
	}
	agg, ok := n.(*Aggregate)
	if !ok || len(agg.GroupBy) > 0 || len(agg.Aggs) == 0 {
		return nil
	}
	for _, a := range agg.Aggs {
		if _, known := emptyAggs[a.Name]; !known {
			return nil
		}
	}
	for _, e := range ownExprs(agg) {
		if readsOuter(e) {
			return nil
		}
	}
	corr, ok := splitCorrelation(agg.Input, sq.Params, nLeft)
	if !ok || len(corr.residual) > 0 || len(corr.leftKeys) == 0 {
		return nil
	}
	s.agg, s.corr = agg, corr
	return s
}

// scalarSubqueries returns the scalar subqueries of e (at its level).
func scalarSubqueries(e Expr) []*Subquery {
	var out []*Subquery
	Walk(e, func(x Expr) bool {
		if sq, ok := x.(*Subquery); ok && sq.Kind == SubScalar {
			out = append(out, sq)
		}
		return true
	})
	return out
}

// hasScalarToDecorrelate reports whether c reads a scalar subquery
// splitScalarAgg can decorrelate.
func hasScalarToDecorrelate(c Expr, nLeft int) bool {
	for _, sq := range scalarSubqueries(c) {
		if splitScalarAgg(sq, nLeft) != nil {
			return true
		}
	}
	return false
}

// decorrelateScalars returns the rows of input (nLeft columns) for which
// the conjuncts conds hold, their decorrelatable scalar subqueries read
// from left joins with the grouped subqueries.
func decorrelateScalars(input Node, conds []Expr, nLeft int) Node {
	cols := input.Columns()
	values := map[int]Expr{}
	for _, c := range conds {
		for _, sq := range scalarSubqueries(c) {
			if _, done := values[sq.ID]; done {
				continue
			}
			s := splitScalarAgg(sq, nLeft)
			if s == nil {
				continue
			}
			base := len(input.Columns())
			nk := len(s.corr.rightKeys)
			g := &Aggregate{Input: s.corr.right, GroupBy: s.corr.rightKeys, Aggs: s.agg.Aggs}
			rkeys := make([]Expr, nk)
			for i, k := range s.corr.rightKeys {
				g.Cols = append(g.Cols, Column{Name: fmt.Sprintf("group%d", i), T: k.Type()})
				rkeys[i] = &ColRef{Idx: i, T: k.Type(), Name: g.Cols[i].Name}
			}
			g.Cols = append(g.Cols, s.agg.Cols...)
			input = &Join{Kind: JoinLeft, Left: input, Right: g, LeftKeys: s.corr.leftKeys, RightKeys: rkeys}
			// An aggregate's column in the joined row, its value over no
			// rows where the left join found none.
			aggCol := func(i int) Expr {
				a := s.agg.Aggs[i]
				var e Expr = &ColRef{Idx: base + nk + i, T: a.T, Name: a.Name}
				if empty := emptyAggs[a.Name]; empty != nil {
					e = &Coalesce{Args: []Expr{e, empty(a.T)}, T: a.T}
				}
				return e
			}
			v := aggCol(0)
			if s.value != nil {
				v = Rewrite(s.value, func(x Expr) Expr {
					if r, ok := x.(*ColRef); ok {
						return aggCol(r.Idx)
					}
					return x
				})
			}
			values[sq.ID] = v
		}
	}
	var rewritten []Expr
	for _, c := range conds {
		rewritten = append(rewritten, Rewrite(c, func(x Expr) Expr {
			if sq, ok := x.(*Subquery); ok {
				if v, ok := values[sq.ID]; ok {
					return v
				}
			}
			return x
		}))
	}
	out := &Project{Input: &Filter{Input: input, Cond: andOf(rewritten)}, Cols: cols}
	for i, c := range cols {
		out.Exprs = append(out.Exprs, &ColRef{Idx: i, T: c.T, Name: c.Name})
	}
	return out
}
