package plan

import (
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// Query is a bound SELECT.
type Query struct {
	Root Node
	Cols []Column
	// With is the statement's data-modifying WITH queries (nil: none):
	// exec.RunModifyingWith runs them in the context Root then runs in.
	With *ModifyingWith
}

// BindSelect binds a SELECT statement.
func (b *Binder) BindSelect(s *pg_query.SelectStmt) (*Query, error) {
	b.setTopWith(s.WithClause)
	root, cols, err := b.bindSelect(s)
	if err != nil {
		return nil, err
	}
	if b.Optimize {
		if root, err = Optimize(root, b.estimator()); err != nil {
			return nil, err
		}
	}
	return &Query{Root: root, Cols: cols, With: b.modifyingWith()}, nil
}

func (b *Binder) bindSelect(s *pg_query.SelectStmt) (Node, []Column, error) {
	return b.bindSelectOpts(s, false)
}

// bindSelectOpts binds a SELECT, VALUES or set operation. keepUnknown
// leaves untyped literals in the output untyped, for the callers that
// resolve them from context as PostgreSQL does (set-operation branches,
// INSERT … SELECT); otherwise they become text.
func (b *Binder) bindSelectOpts(s *pg_query.SelectStmt, keepUnknown bool) (Node, []Column, error) {
	b.init()
	if len(s.LockingClause) > 0 {
		return b.bindLockedSelect(s, keepUnknown) // bind_row_locks.go
	}
	lockReq := b.lockReq // this level's locking clauses, not its subqueries'
	b.lockReq = nil
	if s.WithClause != nil {
		pop, err := b.pushWith(s.WithClause)
		if err != nil {
			return nil, nil, err
		}
		defer pop()
	}
	if s.IntoClause != nil {
		return nil, nil, b.errAt(-1, pgerror.FeatureNotSupported, "SELECT INTO is not supported")
	}
	if s.Op != pg_query.SetOperation_SETOP_NONE {
		return b.bindSetOp(s)
	}
	if hasGroupingSets(s.GroupClause) {
		return b.bindGroupingSets(s)
	}
	qualifyNode, windowDefs, err := b.splitQualify(s.WindowClause)
	if err != nil {
		return nil, nil, err
	}
	if len(s.ValuesLists) > 0 {
		node, cols, err := b.bindValues(s.ValuesLists, nil, nil)
		if err != nil {
			return nil, nil, err
		}
		return b.bindOutputOrder(s, node, cols, "")
	}
	// FROM
	var input Node
	var sc *scope
	if len(s.FromClause) == 0 {
		input = &Values{Rows: [][]Expr{{}}}
		sc = b.newScope()
	} else {
		for i, f := range s.FromClause {
			n, fsc, err := b.bindFrom(f, sc)
			if err != nil {
				return nil, nil, err
			}
			if i == 0 {
				input, sc = n, fsc
				continue
			}
			if err := b.checkRelConflicts(sc, fsc); err != nil {
				return nil, nil, err
			}
			input = crossJoinItem(input, n)
			sc = sc.add(fsc)
		}
	}
	// WHERE
	if s.WhereClause != nil {
		cond, err := b.bindExpr(s.WhereClause, &exprCtx{sc: sc, clause: "WHERE"})
		if err != nil {
			return nil, nil, err
		}
		if cond, err = b.boolArg(cond, nodeLocation(s.WhereClause), "WHERE"); err != nil {
			return nil, nil, err
		}
		input = filterWhere(input, cond, len(sc.cols), true)
	}
	// Target list: bind against the FROM scope, collecting aggregates and
	// window calls.
	aggs := &aggCollector{}
	srfs := &srfCollector{}
	wins, err := b.newWinCollector(windowDefs)
	if err != nil {
		return nil, nil, err
	}
	type target struct {
		e    Expr
		name string
		col  Column
		loc  int32
	}
	var targets []target
	for _, t := range s.TargetList {
		rt := t.GetResTarget()
		if cr := rt.Val.GetColumnRef(); cr != nil {
			if _, star := cr.Fields[len(cr.Fields)-1].Node.(*pg_query.Node_AStar); star {
				rel := ""
				if len(cr.Fields) > 1 {
					rel = strVal(cr.Fields[len(cr.Fields)-2])
					if !sc.hasRel(rel) {
						return nil, nil, b.errAt(cr.Location, pgerror.UndefinedTable, "missing FROM-clause entry for table \"%s\"", rel)
					}
				} else if len(s.FromClause) == 0 {
					return nil, nil, b.errAt(cr.Location, pgerror.SyntaxError, "SELECT * with no tables specified is not valid")
				}
				var idxs []int
				if rel == "" {
					idxs = sc.visible()
				} else {
					b.noteQualifier(sc, cr, rel)
					for i, c := range sc.cols {
						if c.rel == rel && !c.hidden && c.name != "" {
							idxs = append(idxs, i)
						}
					}
				}
				for _, i := range idxs {
					c := sc.cols[i]
					sc.markNeeded(i)
					b.noteUse(nil, c)
					targets = append(targets, target{e: &ColRef{Idx: i, T: c.t, Name: c.name}, name: c.name, col: Column{Name: c.name, T: c.t, Table: c.table, AttrNum: c.attnum}, loc: cr.Location})
				}
				continue
			}
		}
		e, err := b.bindExpr(rt.Val, &exprCtx{sc: sc, aggs: aggs, wins: wins, clause: "SELECT", srfs: srfs})
		if err != nil {
			return nil, nil, err
		}
		if err := b.checkSRFPlacement(e, rt.Location); err != nil {
			return nil, nil, err
		}
		name := rt.Name
		if name == "" {
			name = deriveName(rt.Val)
			if sq, ok := e.(*Subquery); ok && sq.Kind == SubScalar {
				// PostgreSQL names a scalar subquery after its column.
				name = sq.Plan.Columns()[0].Name
			}
			if r, ok := e.(*SRFRef); ok && r.Col >= 0 {
				// A set-returning call names its column (explode's col).
				name = srfs.calls[r.Idx].Cols[r.Col].Name
			}
		}
		col := Column{Name: name, T: e.Type()}
		if r, ok := e.(*SRFRef); ok && r.Col < 0 {
			col.Fields = srfs.calls[r.Idx].Cols
		}
		if cr, ok := e.(*ColRef); ok {
			c := sc.cols[cr.Idx]
			col.Table, col.AttrNum = c.table, c.attnum
		}
		targets = append(targets, target{e: e, name: name, col: col, loc: rt.Location})
	}
	// HAVING and ORDER BY may add aggregates too.
	var having Expr
	if s.HavingClause != nil {
		e, err := b.bindExpr(s.HavingClause, &exprCtx{sc: sc, aggs: aggs, clause: "HAVING"})
		if err != nil {
			return nil, nil, err
		}
		if e, err = b.boolArg(e, nodeLocation(s.HavingClause), "HAVING"); err != nil {
			return nil, nil, err
		}
		having = e
	}
	// ORDER BY keys: an output alias or ordinal, else an expression. The
	// DISTINCT ON expressions are bound the same way (PostgreSQL's
	// findTargetlistEntrySQL92) and lead the list until the projection
	// splits them off.
	type orderKey struct {
		key    SortKey
		outIdx int // >= 0 when it names an output column
		loc    int32
	}
	var orders []orderKey
	distinctOn := len(s.DistinctClause) > 0 && s.DistinctClause[0] != nil && s.DistinctClause[0].Node != nil
	nDistinctOn := 0
	items := s.SortClause
	if distinctOn {
		nDistinctOn = len(s.DistinctClause)
		items = make([]*pg_query.Node, 0, nDistinctOn+len(s.SortClause))
		for _, d := range s.DistinctClause {
			items = append(items, &pg_query.Node{Node: &pg_query.Node_SortBy{SortBy: &pg_query.SortBy{Node: d, Location: -1}}})
		}
		items = append(items, s.SortClause...)
	}
	for i, o := range items {
		clause := "ORDER BY"
		if i < nDistinctOn {
			clause = "DISTINCT ON"
		}
		sb := o.GetSortBy()
		if len(sb.UseOp) > 0 {
			return nil, nil, b.errAt(sb.Location, pgerror.FeatureNotSupported, "ORDER BY … USING is not supported")
		}
		k := orderKey{outIdx: -1, loc: nodeLocation(sb.Node)}
		k.key.Desc = sb.SortbyDir == pg_query.SortByDir_SORTBY_DESC
		k.key.NullsFirst = k.key.Desc
		switch sb.SortbyNulls {
		case pg_query.SortByNulls_SORTBY_NULLS_FIRST:
			k.key.NullsFirst = true
		case pg_query.SortByNulls_SORTBY_NULLS_LAST:
			k.key.NullsFirst = false
		}
		if c := sb.Node.GetAConst(); c != nil {
			if iv, ok := c.Val.(*pg_query.A_Const_Ival); ok {
				n := int(iv.Ival.Ival)
				if n < 1 || n > len(targets) {
					return nil, nil, b.errAt(c.Location, pgerror.InvalidColumnReference, "%s position %d is not in select list", clause, n)
				}
				k.outIdx = n - 1
				orders = append(orders, k)
				continue
			}
		}
		if cr := sb.Node.GetColumnRef(); cr != nil && len(cr.Fields) == 1 {
			name := strVal(cr.Fields[0])
			match := -1
			for i, t := range targets {
				if t.name == name {
					if match >= 0 && !sameExpr(targets[match].e, t.e) {
						return nil, nil, b.errAt(cr.Location, pgerror.AmbiguousColumn, "%s \"%s\" is ambiguous", clause, name)
					}
					if match < 0 {
						match = i
					}
				}
			}
			if match >= 0 {
				k.outIdx = match
				orders = append(orders, k)
				continue
			}
		}
		e, err := b.bindExpr(sb.Node, &exprCtx{sc: sc, aggs: aggs, wins: wins, clause: clause})
		if err != nil {
			return nil, nil, err
		}
		if isUnknown(e.Type()) {
			e, _ = b.coerce(e, types.Text, false, -1)
		}
		k.key.E = e
		orders = append(orders, k)
	}
	// QUALIFY (R-Q1) filters on window results; it may name an output
	// column by its alias.
	var qualify Expr
	if qualifyNode != nil {
		aliases := map[string]Expr{}
		for _, t := range targets {
			if prev, dup := aliases[t.name]; dup && !sameExpr(prev, t.e) {
				aliases[t.name] = nil // ambiguous: an input column or an error
				continue
			}
			aliases[t.name] = t.e
		}
		e, err := b.bindExpr(qualifyNode, &exprCtx{sc: sc, aggs: aggs, wins: wins, clause: "QUALIFY", aliases: aliases})
		if err != nil {
			return nil, nil, err
		}
		if qualify, err = b.boolArg(e, nodeLocation(qualifyNode), "QUALIFY"); err != nil {
			return nil, nil, err
		}
	}
	if err := b.checkUnusedWindows(wins, sc); err != nil {
		return nil, nil, err
	}
	// GROUP BY
	grouped := len(s.GroupClause) > 0 || len(aggs.calls) > 0 || having != nil
	lift := func(e Expr, loc int32) (Expr, error) { return e, nil }
	if grouped {
		var groupBy []Expr
		for _, g := range s.GroupClause {
			var e Expr
			if c := g.GetAConst(); c != nil {
				if iv, ok := c.Val.(*pg_query.A_Const_Ival); ok {
					n := int(iv.Ival.Ival)
					if n < 1 || n > len(targets) {
						return nil, nil, b.errAt(c.Location, pgerror.InvalidColumnReference, "GROUP BY position %d is not in select list", n)
					}
					e = targets[n-1].e
					if containsAgg(e) {
						return nil, nil, b.errAt(c.Location, pgerror.GroupingError, "aggregate functions are not allowed in GROUP BY")
					}
					if containsWin(e) {
						return nil, nil, b.errAt(c.Location, pgerror.WindowingError, "window functions are not allowed in GROUP BY")
					}
				}
			}
			if e == nil {
				if cr := g.GetColumnRef(); cr != nil && len(cr.Fields) == 1 {
					// An output alias that is not an input column (PostgreSQL's rule).
					name := strVal(cr.Fields[0])
					if _, err := sc.resolve([]string{name}, b, cr.Location); err != nil {
						for _, t := range targets {
							if t.name == name && !containsAgg(t.e) && !containsWin(t.e) {
								e = t.e
								break
							}
						}
					}
				}
			}
			if e == nil {
				if g.GetGroupingSet() != nil {
					return nil, nil, b.errAt(-1, pgerror.FeatureNotSupported, "GROUPING SETS, ROLLUP and CUBE are not supported yet")
				}
				var err error
				e, err = b.bindExpr(g, &exprCtx{sc: sc, clause: "GROUP BY"})
				if err != nil {
					return nil, nil, err
				}
			}
			if isUnknown(e.Type()) {
				e, _ = b.coerce(e, types.Text, false, -1)
			}
			groupBy = append(groupBy, e)
		}
		// The direct arguments of an ordered-set aggregate are evaluated
		// once per group: they may read grouped columns only.
		for _, a := range aggs.calls {
			for _, d := range a.Args[:a.Direct] {
				if _, err := b.liftOverAgg(d, groupBy, sc, -1); err != nil {
					return nil, nil, err
				}
			}
		}
		agg := &Aggregate{Input: input, GroupBy: groupBy, Aggs: aggs.calls}
		for i, g := range groupBy {
			agg.Cols = append(agg.Cols, Column{Name: fmt.Sprintf("group%d", i), T: g.Type()})
		}
		for _, a := range aggs.calls {
			agg.Cols = append(agg.Cols, Column{Name: a.Name, T: a.T})
		}
		input = agg
		// Re-express everything above the aggregation over its output.
		lift = func(e Expr, loc int32) (Expr, error) { return b.liftOverAgg(e, groupBy, sc, loc) }
		for i := range targets {
			e, err := lift(targets[i].e, targets[i].loc)
			if err != nil {
				return nil, nil, err
			}
			targets[i].e = e
			targets[i].col.Table, targets[i].col.AttrNum = 0, 0
			if cr, ok := e.(*ColRef); ok && cr.Idx < len(groupBy) {
				if orig, ok := groupBy[cr.Idx].(*ColRef); ok {
					c := sc.cols[orig.Idx]
					targets[i].col.Table, targets[i].col.AttrNum = c.table, c.attnum
				}
			}
		}
		if having != nil {
			e, err := lift(having, nodeLocation(s.HavingClause))
			if err != nil {
				return nil, nil, err
			}
			input = &Filter{Input: input, Cond: e}
		}
		for i := range orders {
			if orders[i].key.E != nil {
				e, err := lift(orders[i].key.E, orders[i].loc)
				if err != nil {
					return nil, nil, err
				}
				orders[i].key.E = e
			}
		}
		if qualify != nil {
			if qualify, err = lift(qualify, nodeLocation(qualifyNode)); err != nil {
				return nil, nil, err
			}
		}
		for _, p := range srfs.srfArgs() {
			if *p, err = lift(*p, -1); err != nil {
				return nil, nil, err
			}
		}
	}
	// Window functions, then QUALIFY, over the (grouped) rows.
	if len(wins.calls) > 0 {
		ptrs := []*Expr{&qualify}
		for i := range targets {
			ptrs = append(ptrs, &targets[i].e)
		}
		for i := range orders {
			ptrs = append(ptrs, &orders[i].key.E)
		}
		ptrs = append(ptrs, srfs.srfArgs()...)
		if input, err = b.placeWindows(input, wins, lift, ptrs...); err != nil {
			return nil, nil, err
		}
	}
	if qualify != nil {
		input = &Filter{Input: input, Cond: qualify}
	}
	// Set-returning calls of the select list, over everything above.
	if len(srfs.calls) > 0 {
		var ptrs []*Expr
		for i := range targets {
			ptrs = append(ptrs, &targets[i].e)
		}
		input = placeProjectSet(input, srfs, ptrs...)
	}
	// Projection (with hidden ORDER BY columns appended).
	proj := &Project{Input: input}
	var cols []Column
	for _, t := range targets {
		e := t.e
		if isUnknown(e.Type()) && !keepUnknown {
			e, _ = b.coerce(e, types.Text, false, -1)
		}
		proj.Exprs = append(proj.Exprs, e)
		c := t.col
		c.T = e.Type()
		proj.Cols = append(proj.Cols, c)
		cols = append(cols, c)
	}
	var node Node = proj
	distinct := len(s.DistinctClause) > 0
	// outCol is the projection column of an ORDER BY or DISTINCT ON key,
	// appended as a hidden column when the select list lacks it.
	outCol := func(o orderKey) (int, error) {
		if o.outIdx >= 0 {
			return o.outIdx, nil
		}
		for i, pe := range proj.Exprs[:len(cols)] {
			if sameExpr(pe, o.key.E) {
				return i, nil
			}
		}
		for i := len(cols); i < len(proj.Exprs); i++ {
			if sameExpr(proj.Exprs[i], o.key.E) {
				return i, nil
			}
		}
		if distinct && !distinctOn {
			return 0, b.errAt(o.loc, pgerror.InvalidColumnReference, "for SELECT DISTINCT, ORDER BY expressions must appear in select list")
		}
		proj.Exprs = append(proj.Exprs, o.key.E)
		proj.Cols = append(proj.Cols, Column{Name: "?order?", T: o.key.E.Type()})
		return len(proj.Exprs) - 1, nil
	}
	var sortKeys []SortKey
	for _, o := range orders {
		idx, err := outCol(o)
		if err != nil {
			return nil, nil, err
		}
		k := o.key
		k.E = &ColRef{Idx: idx, T: proj.Cols[idx].T}
		sortKeys = append(sortKeys, k)
	}
	if distinctOn {
		locs := make([]int32, len(orders))
		for i, o := range orders {
			locs[i] = o.loc
		}
		keys, sorted, err := b.distinctOnKeys(sortKeys[:nDistinctOn], locs[:nDistinctOn], sortKeys[nDistinctOn:])
		if err != nil {
			return nil, nil, err
		}
		sortKeys = sorted
		node = &DistinctOn{Input: &Sort{Input: node, Keys: sortKeys}, Keys: keys}
	} else {
		if distinct {
			node = &Distinct{Input: node}
		}
		if len(sortKeys) > 0 {
			node = &Sort{Input: node, Keys: sortKeys}
		}
	}
	if lockReq != nil {
		lockReq.noteLockRefusal(len(aggs.calls), len(wins.calls), len(srfs.calls))
		if lockReq.refused == "" && !distinct && len(s.GroupClause) == 0 && s.HavingClause == nil {
			node, lockReq.err = b.placeRowLocks(lockReq, s, sc, proj, node)
		}
	}
	node, err = b.bindLimit(node, s)
	if err != nil {
		return nil, nil, err
	}
	if len(proj.Exprs) > len(cols) {
		// drop the hidden ORDER BY columns
		final := &Project{Input: node}
		for i, c := range cols {
			final.Exprs = append(final.Exprs, &ColRef{Idx: i, T: c.T})
			final.Cols = append(final.Cols, c)
		}
		node = final
	}
	return node, cols, nil
}

// bindLimit puts LIMIT/OFFSET over node.
func (b *Binder) bindLimit(node Node, s *pg_query.SelectStmt) (Node, error) {
	if s.LimitCount == nil && s.LimitOffset == nil {
		return node, nil
	}
	lim := &Limit{Input: node}
	for _, x := range []struct {
		n   *pg_query.Node
		dst *Expr
		kw  string
	}{{s.LimitCount, &lim.Count, "LIMIT"}, {s.LimitOffset, &lim.Offset, "OFFSET"}} {
		if x.n == nil {
			continue
		}
		if c := x.n.GetAConst(); c != nil && c.Isnull {
			continue // LIMIT NULL / LIMIT ALL
		}
		e, err := b.bindExpr(x.n, &exprCtx{clause: x.kw})
		if err != nil {
			return nil, err
		}
		if e, err = b.coerce(e, types.Int8, false, nodeLocation(x.n)); err != nil {
			return nil, err
		}
		*x.dst = e
	}
	return lim, nil
}

// liftOverAgg rewrites an expression bound over the FROM scope into one over
// an Aggregate's output: group expressions become their output column,
// aggregates their result column; any other column reference is a grouping
// error.
func (b *Binder) liftOverAgg(e Expr, groupBy []Expr, sc *scope, loc int32) (Expr, error) {
	var err error
	inSub := 0
	var lift func(e Expr) Expr
	lift = func(e Expr) Expr {
		for i, g := range groupBy {
			if sameExpr(e, g) {
				return &ColRef{Idx: i, T: g.Type()}
			}
		}
		switch x := e.(type) {
		case *AggRef:
			return &ColRef{Idx: len(groupBy) + x.Idx, T: x.T}
		case *ColRef:
			if err == nil {
				c := sc.cols[x.Idx]
				name := c.name
				if c.rel != "" {
					name = c.rel + "." + c.name
				}
				if inSub > 0 {
					err = b.errAt(loc, pgerror.GroupingError, "subquery uses ungrouped column \"%s\" from outer query", name)
				} else {
					err = b.errAt(loc, pgerror.GroupingError, "column \"%s\" must appear in the GROUP BY clause or be used in an aggregate function", name)
				}
			}
			return e
		case *Subquery:
			c := *x
			inSub++
			c.Params = make([]Expr, len(x.Params))
			for i, p := range x.Params {
				c.Params[i] = lift(p)
			}
			inSub--
			c.Left = make([]Expr, len(x.Left))
			for i, l := range x.Left {
				c.Left[i] = lift(l)
			}
			return &c
		}
		// rebuild with lifted children
		return MapChildren(e, lift)
	}
	out := lift(e)
	return out, err
}

func containsAgg(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if _, ok := x.(*AggRef); ok {
			found = true
		}
		return !found
	})
	return found
}

// sameExpr reports whether two bound expressions are the same computation.
func sameExpr(a, b Expr) bool { return a.String() == b.String() && a.Type() == b.Type() }

// deriveName is PostgreSQL's rule for an unnamed output column.
func deriveName(n *pg_query.Node) string {
	switch x := n.Node.(type) {
	case *pg_query.Node_ColumnRef:
		f := x.ColumnRef.Fields[len(x.ColumnRef.Fields)-1]
		return strVal(f)
	case *pg_query.Node_FuncCall:
		return strVal(x.FuncCall.Funcname[len(x.FuncCall.Funcname)-1])
	case *pg_query.Node_TypeCast:
		// A named operand keeps its name; otherwise the outermost cast's
		// type names the column.
		base := x.TypeCast.Arg
		for base.GetTypeCast() != nil {
			base = base.GetTypeCast().Arg
		}
		if name := deriveName(base); name != "?column?" {
			return name
		}
		tn := x.TypeCast.TypeName
		name := strVal(tn.Names[len(tn.Names)-1])
		if t, ok := types.ParseTypeName(name, nil); ok {
			return pgTypeName(t)
		}
		return name
	case *pg_query.Node_CaseExpr:
		return "case"
	case *pg_query.Node_AArrayExpr:
		return "array"
	case *pg_query.Node_AIndirection:
		// A field's name, else the name of what is subscripted.
		ind := x.AIndirection.Indirection
		if s := ind[len(ind)-1].GetString_(); s != nil {
			return s.Sval
		}
		return deriveName(x.AIndirection.Arg)
	case *pg_query.Node_SubLink:
		switch x.SubLink.SubLinkType {
		case pg_query.SubLinkType_EXISTS_SUBLINK:
			return "exists"
		case pg_query.SubLinkType_ARRAY_SUBLINK:
			return "array"
		}
	case *pg_query.Node_CoalesceExpr:
		return "coalesce"
	case *pg_query.Node_MinMaxExpr:
		if x.MinMaxExpr.Op == pg_query.MinMaxOp_IS_LEAST {
			return "least"
		}
		return "greatest"
	case *pg_query.Node_AExpr:
		if x.AExpr.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF {
			return "nullif"
		}
	case *pg_query.Node_SqlvalueFunction:
		switch x.SqlvalueFunction.Op {
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
			return "current_date"
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
			return "current_timestamp"
		case pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
			return "localtimestamp"
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
			return "current_catalog"
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_USER:
			return "current_user"
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:
			return "current_role"
		case pg_query.SQLValueFunctionOp_SVFOP_USER:
			return "user"
		case pg_query.SQLValueFunctionOp_SVFOP_SESSION_USER:
			return "session_user"
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
			return "current_schema"
		}
	}
	return "?column?"
}

// pgTypeName is the internal type name PostgreSQL shows for a cast column.
func pgTypeName(t types.T) string {
	switch t.Kind {
	case types.KindArray:
		// PostgreSQL names a column cast to an array after its element
		// type ('{1}'::int[] is "int4").
		return pgTypeName(t.ElemType())
	case types.KindBool:
		return "bool"
	case types.KindInt2:
		return "int2"
	case types.KindInt4:
		return "int4"
	case types.KindInt8:
		return "int8"
	case types.KindFloat4:
		return "float4"
	case types.KindFloat8:
		return "float8"
	case types.KindNumeric:
		return "numeric"
	case types.KindVarchar:
		return "varchar"
	case types.KindChar:
		return "bpchar"
	case types.KindTimestampTZ:
		return "timestamptz"
	}
	return strings.Fields(t.String())[0]
}

// bindValues binds a VALUES list; targetTypes (optional) coerces columns.
func (b *Binder) bindValues(lists []*pg_query.Node, targetTypes []types.T, targetNames []string) (Node, []Column, error) {
	v := &Values{Rows: make([][]Expr, 0, len(lists))}
	width := -1
	for _, l := range lists {
		items := l.GetList().Items
		if width >= 0 && len(items) != width {
			return nil, nil, b.errAt(nodeLocation(items[0]), pgerror.SyntaxError, "VALUES lists must all be the same length")
		}
		width = len(items)
		row := make([]Expr, 0, len(items))
		for _, it := range items {
			if _, ok := it.Node.(*pg_query.Node_SetToDefault); ok {
				if targetTypes == nil {
					// only INSERT … VALUES has column defaults to take
					return nil, nil, b.errAt(nodeLocation(it), pgerror.SyntaxError, "DEFAULT is not allowed in this context")
				}
				row = append(row, &defaultMarker{})
				continue
			}
			e, err := b.bindExpr(it, &exprCtx{clause: "VALUES"})
			if err != nil {
				return nil, nil, err
			}
			row = append(row, e)
		}
		v.Rows = append(v.Rows, row)
	}
	// column types: common type per column
	for c := 0; c < width; c++ {
		t := types.Null
		for _, row := range v.Rows {
			if _, ok := row[c].(*defaultMarker); ok {
				continue
			}
			if isUnknown(row[c].Type()) {
				// untyped literals and NULLs take the others' type
				continue
			}
			ct, ok := commonType(t, row[c].Type())
			if !ok {
				return nil, nil, b.errAt(-1, pgerror.DatatypeMismatch, "VALUES types %s and %s cannot be matched", t.String(), row[c].Type().String())
			}
			t = ct
		}
		if targetTypes != nil && c < len(targetTypes) {
			t = targetTypes[c]
		} else if isUnknown(t) {
			t = types.Text
		}
		if targetNames != nil && c < len(targetNames) {
			b.assignTo = targetNames[c]
		}
		for _, row := range v.Rows {
			if _, ok := row[c].(*defaultMarker); ok {
				continue
			}
			e, err := b.coerce(row[c], t, targetTypes != nil, -1)
			if err != nil {
				return nil, nil, err
			}
			row[c] = e
		}
		b.assignTo = ""
		v.Cols = append(v.Cols, Column{Name: fmt.Sprintf("column%d", c+1), T: t})
	}
	return v, v.Cols, nil
}

// defaultMarker stands for DEFAULT in an INSERT … VALUES row.
type defaultMarker struct{}

func (*defaultMarker) Type() types.T  { return types.Null }
func (*defaultMarker) String() string { return "DEFAULT" }

// crossJoinItem joins the next FROM item n to input: a set-returning
// function that reads input's columns (a pending Apply) is applied to it,
// anything else is a cross join the optimizer reorders.
func crossJoinItem(input, n Node) Node {
	if ap, ok := pendingApply(n); ok {
		ap.Left = input
		return flattenSRFApply(ap)
	}
	return &Join{Kind: JoinCross, Left: input, Right: n}
}
