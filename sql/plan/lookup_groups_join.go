package plan

// Grouped lookups through joins. A decorrelated scalar subquery
// (decorrelate_scalar.go) is a left join with the subquery grouped by its
// correlation columns. When the subquery reads one table, lookupGroups
// (access.go) looks each outer row's group up by key. When it joins
// several (TPC-H Q2: the minimum cost of a part over the suppliers of one
// region, partsupp ⋈ supplier ⋈ nation ⋈ region), the whole grouping is
// computed for every part (16k partsupp rows at SF 0.1 for 61 outer
// rows) unless the lookup goes down the joins to the table the group
// columns come from: each outer row then reads its own few rows of that
// table by key and joins only those (PostgreSQL's correlated subplan).
//
// The rule index-join-groups runs after the join order and before the
// index-join rule, while the joins under the grouping are still joins
// (not yet lookups it could not go through). lookupGroupsJoined builds
// the Apply, its inner side optimized on its own (the join order sees
// the keyed table as the few rows it now is), and keeps it when the
// optimizer's cost model (explain_cost.go) finds it cheaper than the
// hash join with the whole grouping, optimized on its own too.

func indexJoinGroups(o *Optimizer, n Node) (Node, bool, error) {
	return transformUp(n, func(x Node) (Node, bool, error) {
		j, ok := x.(*Join)
		if !ok {
			return x, false, nil
		}
		a, err := lookupGroupsJoined(o, j)
		if err != nil || a == nil {
			return x, false, err
		}
		return a, true, nil
	})
}

// lookupGroupsJoined returns the index nested-loop join that looks j's
// grouped right side up through the joins under its aggregation, or nil
// when j is no such join, the group columns come from no one table with
// a key on them, or the lookups cost more.
func lookupGroupsJoined(o *Optimizer, j *Join) (Node, error) {
	agg, ok := j.Right.(*Aggregate)
	if !ok || j.Kind != JoinLeft || len(agg.GroupBy) == 0 || o.est == nil || o.est.Stats == nil {
		return nil, nil
	}
	if _, isJoin := stripFilters(agg.Input).(*Join); !isJoin {
		return nil, nil // one table: lookupGroups
	}
	cols := make([]int, len(j.RightKeys))
	for i, k := range j.RightKeys {
		c, ok := k.(*ColRef)
		if !ok || c.Idx >= len(agg.GroupBy) {
			return nil, nil
		}
		g, ok := agg.GroupBy[c.Idx].(*ColRef)
		if !ok {
			return nil, nil
		}
		cols[i] = g.Idx
	}
	input, ok := keyLeaf(agg.Input, cols, func(leaf Node, keys []Expr) Node {
		a, ok := lookupJoin(JoinLeft, j.Left, leaf, j.LeftKeys, keys, nil).(*Apply)
		if !ok {
			return nil
		}
		return a.Right
	})
	if !ok {
		return nil, nil
	}
	grouped, err := agg.WithChildren(input)
	if err != nil {
		return nil, nil
	}
	right, err := optimizeWith(o, grouped, o.rules)
	if err != nil {
		return nil, err
	}
	cand := &Apply{Kind: JoinLeft, Left: j.Left, Right: right, Params: j.LeftKeys, Residual: j.Residual}
	whole, err := optimizeWith(o, agg, o.rules)
	if err != nil {
		return nil, err
	}
	hashed, err := j.WithChildren(j.Left, whole)
	if err != nil {
		return nil, nil
	}
	c := newCoster(o.est)
	if c.of(cand).total >= c.of(hashed).total {
		return nil, nil
	}
	return cand, nil
}

// stripFilters returns n without the filters over it.
func stripFilters(n Node) Node {
	for {
		f, ok := n.(*Filter)
		if !ok {
			return n
		}
		n = f.Input
	}
}

// keyLeaf rebuilds n, a tree of inner joins, filters and projections of
// plain columns, with the leaf (a Scan, or a Filter over one) that
// produces n's columns cols replaced by at(leaf, those columns as
// ColRefs of the leaf); ok is false when no one leaf produces them all,
// or at returns nil.
func keyLeaf(n Node, cols []int, at func(leaf Node, keys []Expr) Node) (Node, bool) {
	// over rebuilds n over its one input with the leaf replaced in it.
	over := func(input Node, cols []int) (Node, bool) {
		in, ok := keyLeaf(input, cols, at)
		if !ok {
			return nil, false
		}
		out, err := n.WithChildren(in)
		return out, err == nil
	}
	switch x := n.(type) {
	case *Scan:
		return leafKeys(n, cols, at)
	case *Filter:
		if _, isScan := x.Input.(*Scan); isScan {
			return leafKeys(n, cols, at)
		}
		if volatileExpr(x.Cond) {
			return nil, false
		}
		return over(x.Input, cols)
	case *Project:
		if !plainColumns(x) {
			return nil, false
		}
		inner := make([]int, len(cols))
		for i, c := range cols {
			inner[i] = x.Exprs[c].(*ColRef).Idx
		}
		return over(x.Input, inner)
	case *Join:
		if x.Kind != JoinInner && x.Kind != JoinCross {
			return nil, false
		}
		nl := len(x.Left.Columns())
		left, right := true, true
		shifted := make([]int, len(cols))
		for i, c := range cols {
			left = left && c < nl
			right = right && c >= nl
			shifted[i] = c - nl
		}
		ch := []Node{x.Left, x.Right}
		side, sideCols := 0, cols
		switch {
		case right:
			side, sideCols = 1, shifted
		case !left:
			return nil, false
		}
		in, ok := keyLeaf(ch[side], sideCols, at)
		if !ok {
			return nil, false
		}
		ch[side] = in
		out, err := x.WithChildren(ch...)
		return out, err == nil
	}
	return nil, false
}

func leafKeys(leaf Node, cols []int, at func(Node, []Expr) Node) (Node, bool) {
	lc := leaf.Columns()
	keys := make([]Expr, len(cols))
	for i, c := range cols {
		keys[i] = &ColRef{Idx: c, T: lc[c].T, Name: lc[c].Name}
	}
	out := at(leaf, keys)
	return out, out != nil
}
