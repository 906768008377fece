package plan

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/types"
)

// GROUP BY GROUPING SETS / ROLLUP / CUBE (issue 22) is bound as the
// UNION ALL of one grouped SELECT per grouping set, as its definition
// reads: in the branch of a set, a grouping expression the set leaves out
// reads NULL outside aggregate arguments, and GROUPING(e, …) is the
// constant bit mask of the arguments the set leaves out (the last
// argument the lowest bit). ORDER BY, LIMIT and OFFSET apply to the union
// and so name its output columns; SELECT DISTINCT makes it a UNION.

// hasGroupingSets reports whether a GROUP BY list holds a grouping set
// (GROUP BY () included).
func hasGroupingSets(group []*pg_query.Node) bool {
	for _, g := range group {
		if g.GetGroupingSet() != nil {
			return true
		}
	}
	return false
}

// bindGroupingSets binds s, whose GROUP BY has grouping sets, as the
// union of its sets' branches.
func (b *Binder) bindGroupingSets(s *pg_query.SelectStmt) (Node, []Column, error) {
	sets := [][]*pg_query.Node{nil}
	for _, g := range s.GroupClause {
		item, err := b.expandGroupItem(g, true)
		if err != nil {
			return nil, nil, err
		}
		var next [][]*pg_query.Node
		for _, have := range sets {
			for _, more := range item {
				next = append(next, append(append([]*pg_query.Node(nil), have...), more...))
			}
		}
		sets = next
	}
	if len(sets) > 4096 {
		return nil, nil, b.errAt(-1, pgerror.StatementTooComplex, "too many grouping sets present (maximum 4096)")
	}
	var all []*pg_query.Node
	for _, set := range sets {
		for _, e := range set {
			if indexOfExpr(all, e) < 0 {
				all = append(all, e)
			}
		}
	}
	var nodes []Node
	var colSets [][]Column
	var err error
	for _, set := range sets {
		br := proto.Clone(s).(*pg_query.SelectStmt)
		br.WithClause, br.SortClause, br.LimitCount, br.LimitOffset = nil, nil, nil, nil
		br.LimitOption = pg_query.LimitOption_LIMIT_OPTION_DEFAULT
		if len(sets) > 1 {
			br.DistinctClause = nil
		}
		br.GroupClause = nil
		for _, e := range set {
			br.GroupClause = append(br.GroupClause, proto.Clone(e).(*pg_query.Node))
		}
		var absent []*pg_query.Node
		for _, e := range all {
			if indexOfExpr(set, e) < 0 {
				absent = append(absent, e)
			}
		}
		for _, t := range br.TargetList {
			rt := t.GetResTarget()
			if rt == nil || rt.Val == nil {
				continue
			}
			if rt.Name == "" && !isStar(rt.Val) {
				rt.Name = deriveName(rt.Val) // the name survives a NULL in its place
			}
			if rt.Val, err = b.groupingRewrite(rt.Val, set, absent, all, false); err != nil {
				return nil, nil, err
			}
		}
		if br.HavingClause != nil {
			if br.HavingClause, err = b.groupingRewrite(br.HavingClause, set, absent, all, false); err != nil {
				return nil, nil, err
			}
		} else if len(set) == 0 {
			// An empty set is still one group, with or without aggregates.
			br.HavingClause = &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Val: &pg_query.A_Const_Boolval{Boolval: &pg_query.Boolean{Boolval: true}}, Location: -1}}}
		}
		n, cols, err := b.bindSelectOpts(br, true)
		if err != nil {
			return nil, nil, err
		}
		if len(colSets) > 0 && len(cols) != len(colSets[0]) {
			return nil, nil, b.errAt(-1, pgerror.InternalError, "grouping set branches differ in width")
		}
		nodes, colSets = append(nodes, n), append(colSets, cols)
	}
	// Each output column takes the type common to every branch (a NULL in
	// place of a key takes the key's type), as one UNION of them all would.
	cols := append([]Column(nil), colSets[0]...)
	for i := range cols {
		t := colSets[0][i].T
		for _, cs := range colSets[1:] {
			if isUnknown(cs[i].T) {
				continue // commonType would settle two unknowns as text
			}
			c, ok := commonType(t, cs[i].T)
			if !ok {
				return nil, nil, b.errAt(-1, pgerror.DatatypeMismatch, "GROUPING SETS types %s and %s cannot be matched", t.String(), cs[i].T.String())
			}
			t = c
		}
		if isUnknown(t) {
			t = types.Text
		}
		cols[i].T = t
	}
	var out Node
	for k, n := range nodes {
		cast := false
		exprs := make([]Expr, len(cols))
		for i, c := range colSets[k] {
			if exprs[i], err = b.coerce(&ColRef{Idx: i, T: c.T}, cols[i].T, false, -1); err != nil {
				return nil, nil, err
			}
			cast = cast || c.T != cols[i].T
		}
		if cast {
			p := &Project{Input: n, Exprs: exprs}
			for i, e := range exprs {
				p.Cols = append(p.Cols, Column{Name: cols[i].Name, T: e.Type()})
			}
			n = p
		}
		if out == nil {
			out = n
			continue
		}
		out = &SetOp{Kind: Union, All: len(s.DistinctClause) == 0, Left: out, Right: n, Cols: cols}
	}
	return b.bindOutputOrder(s, out, cols, "GROUPING SETS")
}

// expandGroupItem returns the grouping sets one GROUP BY item stands for,
// each a list of expressions. top: the item is directly in GROUP BY,
// where GROUPING SETS may nest ROLLUP and CUBE.
func (b *Binder) expandGroupItem(g *pg_query.Node, top bool) ([][]*pg_query.Node, error) {
	gs := g.GetGroupingSet()
	if gs == nil {
		if r := g.GetRowExpr(); r != nil && !top {
			return [][]*pg_query.Node{r.Args}, nil
		}
		return [][]*pg_query.Node{{g}}, nil
	}
	switch gs.Kind {
	case pg_query.GroupingSetKind_GROUPING_SET_EMPTY:
		return [][]*pg_query.Node{nil}, nil
	case pg_query.GroupingSetKind_GROUPING_SET_SIMPLE:
		return [][]*pg_query.Node{gs.Content}, nil
	case pg_query.GroupingSetKind_GROUPING_SET_ROLLUP, pg_query.GroupingSetKind_GROUPING_SET_CUBE:
		var units [][]*pg_query.Node
		for _, c := range gs.Content {
			u, err := b.expandGroupItem(c, false)
			if err != nil {
				return nil, err
			}
			units = append(units, u[0])
		}
		var out [][]*pg_query.Node
		if gs.Kind == pg_query.GroupingSetKind_GROUPING_SET_ROLLUP {
			for n := len(units); n >= 0; n-- {
				var set []*pg_query.Node
				for _, u := range units[:n] {
					set = append(set, u...)
				}
				out = append(out, set)
			}
			return out, nil
		}
		// CUBE: every subset, the fullest first, in PostgreSQL's order.
		for mask := 0; mask < 1<<len(units); mask++ {
			var set []*pg_query.Node
			for i, u := range units {
				if mask&(1<<(len(units)-1-i)) == 0 {
					set = append(set, u...)
				}
			}
			out = append(out, set)
		}
		return out, nil
	case pg_query.GroupingSetKind_GROUPING_SET_SETS:
		var out [][]*pg_query.Node
		for _, c := range gs.Content {
			u, err := b.expandGroupItem(c, false)
			if err != nil {
				return nil, err
			}
			out = append(out, u...)
		}
		return out, nil
	}
	return nil, b.errAt(gs.Location, pgerror.FeatureNotSupported, "this grouping set is not supported")
}

// groupingRewrite returns n for the branch of grouping set set: each
// expression of absent (grouped by other sets only) reads NULL outside
// aggregate arguments, and GROUPING(…) becomes its bit mask.
func (b *Binder) groupingRewrite(n *pg_query.Node, set, absent, all []*pg_query.Node, inAgg bool) (*pg_query.Node, error) {
	if n == nil {
		return nil, nil
	}
	if gf := n.GetGroupingFunc(); gf != nil {
		if inAgg {
			return nil, b.errAt(gf.Location, pgerror.GroupingError, "aggregate function calls cannot contain grouping operations")
		}
		if len(gf.Args) > 31 {
			return nil, b.errAt(gf.Location, pgerror.TooManyArguments, "GROUPING must have fewer than 32 arguments")
		}
		mask := int64(0)
		for _, a := range gf.Args {
			if indexOfExpr(all, a) < 0 {
				return nil, b.errAt(nodeLocation(a), pgerror.GroupingError, "arguments to GROUPING must be grouping expressions of the associated query level")
			}
			mask <<= 1
			if indexOfExpr(set, a) < 0 {
				mask |= 1
			}
		}
		return pg_query.MakeAConstIntNode(mask, gf.Location), nil
	}
	if !inAgg && indexOfExpr(absent, n) >= 0 {
		return &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: nodeLocation(n)}}}, nil
	}
	if fc := n.GetFuncCall(); fc != nil && fc.Over == nil && isAggregateCall(fc) {
		inAgg = true
	}
	if n.GetSubLink() != nil {
		return n, nil // a subquery's own columns are not the grouped ones
	}
	out := proto.Clone(n).(*pg_query.Node)
	var err error
	rewriteChildren(out.ProtoReflect(), func(c *pg_query.Node) *pg_query.Node {
		r, e := b.groupingRewrite(c, set, absent, all, inAgg)
		if e != nil {
			err = e
			return c
		}
		return r
	})
	return out, err
}

// rewriteChildren replaces every Node directly below m (through the
// messages that are not Nodes) by f's answer.
func rewriteChildren(m protoreflect.Message, f func(*pg_query.Node) *pg_query.Node) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind {
			return true
		}
		one := func(x protoreflect.Message) protoreflect.Message {
			if n, ok := x.Interface().(*pg_query.Node); ok {
				return f(n).ProtoReflect()
			}
			rewriteChildren(x, f)
			return x
		}
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				l.Set(i, protoreflect.ValueOfMessage(one(l.Get(i).Message())))
			}
		case fd.IsMap():
		default:
			m.Set(fd, protoreflect.ValueOfMessage(one(v.Message())))
		}
		return true
	})
}

// isStar reports whether a target is * or rel.*.
func isStar(n *pg_query.Node) bool {
	cr := n.GetColumnRef()
	if cr == nil || len(cr.Fields) == 0 {
		return false
	}
	_, star := cr.Fields[len(cr.Fields)-1].Node.(*pg_query.Node_AStar)
	return star
}

// isAggregateCall reports whether fc calls an aggregate.
func isAggregateCall(fc *pg_query.FuncCall) bool {
	if len(fc.Funcname) == 0 {
		return false
	}
	f, ok := funcs.Lookup(strVal(fc.Funcname[len(fc.Funcname)-1]))
	return ok && f.Agg != nil
}

// indexOfExpr is the index of the expression in list spelled as e (its
// locations aside), or -1.
func indexOfExpr(list []*pg_query.Node, e *pg_query.Node) int {
	k := exprKey(e)
	for i, x := range list {
		if exprKey(x) == k {
			return i
		}
	}
	return -1
}

// exprKey is e's encoding with its locations zeroed.
func exprKey(e *pg_query.Node) string {
	c := proto.Clone(e)
	zeroLocations(c.ProtoReflect())
	out, _ := proto.MarshalOptions{Deterministic: true}.Marshal(c)
	return string(out)
}

func zeroLocations(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Name() == "location" && fd.Kind() == protoreflect.Int32Kind:
			m.Clear(fd)
		case fd.Kind() == protoreflect.MessageKind && fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				zeroLocations(l.Get(i).Message())
			}
		case fd.Kind() == protoreflect.MessageKind && !fd.IsMap():
			zeroLocations(v.Message())
		}
		return true
	})
}
