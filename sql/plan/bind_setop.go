package plan

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// bindSetOp binds UNION / INTERSECT / EXCEPT [ALL] (R-Q2). Each output
// column takes the common type of its two inputs (PostgreSQL's
// select_common_type, resolved pair by pair for nested operations: two
// untyped literals become text) and the first input's name; ORDER BY and
// LIMIT of the statement apply to the whole result.
func (b *Binder) bindSetOp(s *pg_query.SelectStmt) (Node, []Column, error) {
	var kind SetOpKind
	switch s.Op {
	case pg_query.SetOperation_SETOP_UNION:
		kind = Union
	case pg_query.SetOperation_SETOP_INTERSECT:
		kind = Intersect
	default:
		kind = Except
	}
	left, lcols, err := b.bindSelectOpts(s.Larg, true)
	if err != nil {
		return nil, nil, err
	}
	right, rcols, err := b.bindSelectOpts(s.Rarg, true)
	if err != nil {
		return nil, nil, err
	}
	node, cols, err := b.unifySetOp(kind.String(), left, lcols, right, rcols, nil)
	if err != nil {
		return nil, nil, err
	}
	op := &SetOp{Kind: kind, All: s.All, Left: node[0], Right: node[1], Cols: cols}
	return b.bindOutputOrder(s, op, cols, kind.String())
}

// unifySetOp casts two inputs to their common column types. With want set
// (a recursive query), the left types are imposed and any other common type
// is an error.
func (b *Binder) unifySetOp(what string, left Node, lcols []Column, right Node, rcols []Column, want func(i int, common types.T) error) ([2]Node, []Column, error) {
	if len(lcols) != len(rcols) {
		return [2]Node{}, nil, b.errAt(-1, pgerror.SyntaxError, "each %s query must have the same number of columns", what)
	}
	cols := make([]Column, len(lcols))
	var lexprs, rexprs []Expr
	lcast, rcast := false, false
	for i := range lcols {
		lt, rt := lcols[i].T, rcols[i].T
		t, ok := commonType(lt, rt)
		if !ok {
			return [2]Node{}, nil, b.errAt(-1, pgerror.DatatypeMismatch, "%s types %s and %s cannot be matched", what, lt.String(), rt.String())
		}
		if isUnknown(t) {
			t = types.Text
		}
		if want != nil {
			if err := want(i, t); err != nil {
				return [2]Node{}, nil, err
			}
			t = lt
		}
		cols[i] = Column{Name: lcols[i].Name, T: t}
		le, err := b.coerce(&ColRef{Idx: i, T: lt}, t, false, -1)
		if err != nil {
			return [2]Node{}, nil, err
		}
		re, err := b.coerce(&ColRef{Idx: i, T: rt}, t, false, -1)
		if err != nil {
			return [2]Node{}, nil, err
		}
		lcast = lcast || lt != t
		rcast = rcast || rt != t
		lexprs, rexprs = append(lexprs, le), append(rexprs, re)
	}
	wrap := func(n Node, exprs []Expr, in []Column) Node {
		p := &Project{Input: n, Exprs: exprs}
		for i, e := range exprs {
			p.Cols = append(p.Cols, Column{Name: in[i].Name, T: e.Type()})
		}
		return p
	}
	if lcast {
		left = wrap(left, lexprs, lcols)
	}
	if rcast {
		right = wrap(right, rexprs, rcols)
	}
	return [2]Node{left, right}, cols, nil
}

// bindOutputOrder puts the statement's ORDER BY and LIMIT over the result
// of a set operation or VALUES. A set operation may be ordered by output
// column names and positions only (PostgreSQL's rule); VALUES by any
// expression over its columns. what names the set operation ("" = VALUES).
func (b *Binder) bindOutputOrder(s *pg_query.SelectStmt, node Node, cols []Column, what string) (Node, []Column, error) {
	var keys []SortKey
	var extra []Expr
	var outSc *scope
	for _, o := range s.SortClause {
		sb := o.GetSortBy()
		if len(sb.UseOp) > 0 {
			return nil, nil, b.errAt(sb.Location, pgerror.FeatureNotSupported, "ORDER BY … USING is not supported")
		}
		k := SortKey{Desc: sb.SortbyDir == pg_query.SortByDir_SORTBY_DESC}
		k.NullsFirst = k.Desc
		switch sb.SortbyNulls {
		case pg_query.SortByNulls_SORTBY_NULLS_FIRST:
			k.NullsFirst = true
		case pg_query.SortByNulls_SORTBY_NULLS_LAST:
			k.NullsFirst = false
		}
		loc := nodeLocation(sb.Node)
		idx := -1
		if c := sb.Node.GetAConst(); c != nil {
			if iv, ok := c.Val.(*pg_query.A_Const_Ival); ok {
				n := int(iv.Ival.Ival)
				if n < 1 || n > len(cols) {
					return nil, nil, b.errAt(c.Location, pgerror.InvalidColumnReference, "ORDER BY position %d is not in select list", n)
				}
				idx = n - 1
			}
		}
		if cr := sb.Node.GetColumnRef(); idx < 0 && cr != nil && len(cr.Fields) == 1 && what != "" {
			name := strVal(cr.Fields[0])
			for i, c := range cols {
				if c.Name == name {
					if idx >= 0 {
						return nil, nil, b.errAt(cr.Location, pgerror.AmbiguousColumn, "ORDER BY \"%s\" is ambiguous", name)
					}
					idx = i
				}
			}
			if idx < 0 {
				return nil, nil, b.errAt(cr.Location, pgerror.UndefinedColumn, "column \"%s\" does not exist", name)
			}
		}
		if idx >= 0 {
			k.E = &ColRef{Idx: idx, T: cols[idx].T}
			keys = append(keys, k)
			continue
		}
		if what != "" {
			if cr := sb.Node.GetColumnRef(); cr != nil && len(cr.Fields) > 1 {
				return nil, nil, b.errAt(cr.Location, pgerror.UndefinedTable, "missing FROM-clause entry for table \"%s\"", strVal(cr.Fields[0]))
			}
			return nil, nil, b.errAt(loc, pgerror.FeatureNotSupported, "invalid UNION/INTERSECT/EXCEPT ORDER BY clause").
				WithDetail("Only result column names can be used, not expressions or functions.").
				WithHint("Add the expression/function to every SELECT, or move the UNION into a FROM clause.")
		}
		if outSc == nil {
			var err error
			if outSc, err = b.derivedScope(cols, nil, "*VALUES*", -1); err != nil {
				return nil, nil, err
			}
		}
		e, err := b.bindExpr(sb.Node, &exprCtx{sc: outSc, clause: "ORDER BY"})
		if err != nil {
			return nil, nil, err
		}
		if isUnknown(e.Type()) {
			e, _ = b.coerce(e, types.Text, false, -1)
		}
		extra = append(extra, e)
		k.E = &ColRef{Idx: len(cols) + len(extra) - 1, T: e.Type()}
		keys = append(keys, k)
	}
	if len(extra) > 0 {
		// VALUES ordered by expressions: compute them as hidden columns.
		p := &Project{Input: node}
		for i, c := range cols {
			p.Exprs = append(p.Exprs, &ColRef{Idx: i, T: c.T})
			p.Cols = append(p.Cols, c)
		}
		for _, e := range extra {
			p.Exprs = append(p.Exprs, e)
			p.Cols = append(p.Cols, Column{Name: "?order?", T: e.Type()})
		}
		node = p
	}
	if len(keys) > 0 {
		node = &Sort{Input: node, Keys: keys}
	}
	node, err := b.bindLimit(node, s)
	if err != nil {
		return nil, nil, err
	}
	if len(extra) > 0 {
		final := &Project{Input: node}
		for i, c := range cols {
			final.Exprs = append(final.Exprs, &ColRef{Idx: i, T: c.T})
			final.Cols = append(final.Cols, c)
		}
		node = final
	}
	return node, cols, nil
}
