package plan

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// bindSubLink binds a subquery in an expression (R-Q2): EXISTS, a scalar
// subquery, IN / op ANY / op ALL. The subquery is bound one evaluation level
// down, seeing the current scope as its outer scope; the column references
// it makes to enclosing queries become the Subquery's Params.
func (b *Binder) bindSubLink(sl *pg_query.SubLink, ec *exprCtx) (Expr, error) {
	loc := sl.Location
	sel := sl.Subselect.GetSelectStmt()
	if sel == nil {
		return nil, b.errAt(loc, pgerror.FeatureNotSupported, "this kind of subquery is not supported yet")
	}
	switch sl.SubLinkType {
	case pg_query.SubLinkType_EXISTS_SUBLINK, pg_query.SubLinkType_EXPR_SUBLINK,
		pg_query.SubLinkType_ANY_SUBLINK, pg_query.SubLinkType_ALL_SUBLINK, pg_query.SubLinkType_ARRAY_SUBLINK:
	default:
		return nil, b.errAt(loc, pgerror.FeatureNotSupported, "this kind of subquery is not supported yet")
	}
	sc := ec.sc
	if sc == nil {
		sc = b.newScope()
	}
	saveOuter, saveLvl := b.outer, b.lvl
	lvl := &level{parent: sc.lvl, aggs: ec.aggs, aggClause: ec.clause}
	if lvl.aggClause == "" {
		lvl.aggClause = "this context"
	}
	b.outer, b.lvl = sc, lvl
	vol := b.volatile
	node, cols, err := b.bindSelect(sel)
	b.outer, b.lvl = saveOuter, saveLvl
	if err != nil {
		return nil, err
	}
	pruneParams(node, lvl)
	b.subqueries++
	sq := &Subquery{Plan: node, Params: lvl.params, ID: b.subqueries, Volatile: b.volatile > vol}
	switch sl.SubLinkType {
	case pg_query.SubLinkType_EXISTS_SUBLINK:
		sq.Kind, sq.T = SubExists, types.Bool
		return sq, nil
	case pg_query.SubLinkType_EXPR_SUBLINK:
		if len(cols) != 1 {
			return nil, b.errAt(loc, pgerror.SyntaxError, "subquery must return only one column")
		}
		sq.Kind, sq.T = SubScalar, cols[0].T
		return sq, nil
	case pg_query.SubLinkType_ARRAY_SUBLINK:
		if len(cols) != 1 {
			return nil, b.errAt(loc, pgerror.SyntaxError, "subquery must return only one column")
		}
		et := cols[0].T
		if isUnknown(et) {
			et = types.Text
		}
		if et.IsArray() {
			return nil, b.errMultiDim(loc)
		}
		sq.Kind, sq.T = SubArray, types.ArrayOf(et)
		return sq, nil
	}
	return b.bindQuantified(sl, sq, cols, ec)
}

// bindQuantified finishes x IN (…), x op ANY (…), x op ALL (…) and their
// row forms (a, b) IN (SELECT x, y …).
func (b *Binder) bindQuantified(sl *pg_query.SubLink, sq *Subquery, cols []Column, ec *exprCtx) (Expr, error) {
	loc := sl.Location
	op := "="
	if len(sl.OperName) > 0 {
		op = opName(sl.OperName)
	}
	cop, ok := compareOps[op]
	if !ok {
		return nil, b.errAt(loc, pgerror.FeatureNotSupported, "%s ANY/ALL (subquery) is not supported yet; only comparison operators are", op)
	}
	lefts := []*pg_query.Node{sl.Testexpr}
	if row := sl.Testexpr.GetRowExpr(); row != nil {
		lefts = row.Args
	}
	switch {
	case len(lefts) < len(cols):
		return nil, b.errAt(loc, pgerror.SyntaxError, "subquery has too many columns")
	case len(lefts) > len(cols):
		return nil, b.errAt(loc, pgerror.SyntaxError, "subquery has too few columns")
	}
	if len(lefts) > 1 && cop != OpEq && cop != OpNe {
		return nil, b.errAt(loc, pgerror.FeatureNotSupported, "row comparison with %s ANY/ALL (subquery) is not supported yet", op)
	}
	var rights []Expr
	cast := false
	for i, ln := range lefts {
		l, err := b.bindExpr(ln, ec)
		if err != nil {
			return nil, err
		}
		col := &ColRef{Idx: i, T: cols[i].T, Name: cols[i].Name}
		e, err := b.binaryOp(op, l, col, loc)
		if err != nil {
			return nil, err
		}
		bin := e.(*Binary)
		sq.Left = append(sq.Left, bin.L)
		rights = append(rights, bin.R)
		if bin.R != Expr(col) {
			cast = true
		}
	}
	if cast {
		// Compare in the common type: cast the subquery's columns.
		proj := &Project{Input: sq.Plan, Exprs: rights}
		for i, r := range rights {
			proj.Cols = append(proj.Cols, Column{Name: cols[i].Name, T: r.Type()})
		}
		sq.Plan = proj
	}
	sq.T = types.Bool
	sq.Kind, sq.Op = SubAny, cop
	if sl.SubLinkType == pg_query.SubLinkType_ALL_SUBLINK {
		if cop == OpNe {
			// x <> ALL (S) is NOT (x = ANY (S)) in three-valued logic too;
			// the ANY form has the hashed fast path (NOT IN is this).
			sq.Op = OpEq
			return &Not{E: sq}, nil
		}
		sq.Kind = SubAll
	}
	return sq, nil
}

// pruneParams replaces the params of lvl that nothing in its plan reads any
// more (an aggregate moved out to the enclosing query took its outer
// columns with it) by NULLs, so the enclosing query does not read them.
func pruneParams(n Node, lvl *level) {
	used := make([]bool, len(lvl.params))
	WalkNode(n, func(e Expr) {
		Walk(e, func(x Expr) bool {
			if r, ok := x.(*OuterRef); ok && r.Idx < len(used) {
				used[r.Idx] = true
			}
			return true
		})
	})
	for i, u := range used {
		if !u {
			lvl.params[i] = &Const{D: types.NullDatum, T: lvl.params[i].Type()}
		}
	}
}
