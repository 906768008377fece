package plan

// Walking plans: the expressions each node evaluates and its inputs, at one
// evaluation level (a subquery's plan is a level of its own).

// WalkNode calls fn on every expression of n and of the nodes below it that
// run at n's evaluation level.
func WalkNode(n Node, fn func(Expr)) {
	for _, e := range ownExprs(n) {
		fn(e)
	}
	for _, c := range inputs(n) {
		WalkNode(c, fn)
	}
}

// ownExprs returns the expressions a node evaluates itself.
func ownExprs(n Node) []Expr {
	var out []Expr
	add := func(es ...Expr) {
		for _, e := range es {
			if e != nil {
				out = append(out, e)
			}
		}
	}
	switch x := n.(type) {
	case *Scan:
		add(x.Point...)
		add(x.In...)
		if x.Start != nil {
			add(x.Start.Values...)
		}
		if x.End != nil {
			add(x.End.Values...)
		}
	case *Values:
		for _, r := range x.Rows {
			add(r...)
		}
	case *Filter:
		add(x.Cond)
	case *Project:
		add(x.Exprs...)
	case *Aggregate:
		add(x.GroupBy...)
		for _, a := range x.Aggs {
			add(a.Args...)
			add(a.Filter)
			for _, k := range a.Order {
				add(k.E)
			}
		}
	case *Sort:
		for _, k := range x.Keys {
			add(k.E)
		}
	case *Limit:
		add(x.Count, x.Offset)
	case *DistinctOn:
		add(x.Keys...)
	case *Join:
		add(x.LeftKeys...)
		add(x.RightKeys...)
		add(x.Residual)
	case *Apply:
		add(x.Params...)
		add(x.Residual)
	case *KeyIn:
		add(x.Keys...)
	case *ProjectSet:
		for _, c := range x.Calls {
			add(c.Args...)
		}
	case *Window:
		for _, c := range x.Calls {
			add(c.Args...)
			add(c.PartitionBy...)
			for _, k := range c.OrderBy {
				add(k.E)
			}
			add(c.Filter, c.Frame.Start.Offset, c.Frame.End.Offset)
		}
	}
	return out
}

// ReadsTable reports whether the plan reads table id anywhere: in its
// nodes, in subqueries of its expressions, in LATERAL items.
func ReadsTable(n Node, id uint32) bool {
	found := false
	var node func(n Node)
	var expr func(e Expr)
	expr = func(e Expr) {
		Walk(e, func(x Expr) bool {
			if sq, ok := x.(*Subquery); ok && !found {
				node(sq.Plan)
			}
			return !found
		})
	}
	node = func(n Node) {
		if found || n == nil {
			return
		}
		switch x := n.(type) {
		case *Scan:
			found = x.Table.ID == id
		case *TableChanges:
			found = x.Table.ID == id
		case *Apply:
			node(x.Right)
		case *WorkTableScan:
			return
		}
		for _, e := range ownExprs(n) {
			expr(e)
		}
		for _, c := range inputs(n) {
			node(c)
		}
	}
	node(n)
	return found
}

// inputs returns a node's input nodes at its own evaluation level: its
// children, less an Apply's Right (a level down).
func inputs(n Node) []Node {
	if a, ok := n.(*Apply); ok {
		return []Node{a.Left}
	}
	return n.Children()
}

// NodeExprs returns the expressions n evaluates itself (not those of its
// inputs, nor of subquery plans).
func NodeExprs(n Node) []Expr { return ownExprs(n) }

// NodeInputs returns n's inputs at its evaluation level.
func NodeInputs(n Node) []Node { return inputs(n) }

// MapNodeExprs returns n with each expression NodeExprs lists replaced by
// fn's value for it: a copy when one changed, n itself (never modified)
// otherwise.
func MapNodeExprs(n Node, fn func(Expr) Expr) (Node, error) {
	out, _, err := mapOwnExprs(n, func(e Expr) (Expr, error) { return fn(e), nil })
	return out, err
}

// mapOwnExprs returns n with each expression ownExprs lists replaced by
// fn's value for it, as a copy when any changed (n itself is never
// modified); changed says whether one did. A scan's equality prefix keeps
// one Values slice for both bounds (Scan.Keyed relies on it).
func mapOwnExprs(n Node, fn func(Expr) (Expr, error)) (Node, bool, error) {
	changed := false
	var err error
	one := func(e Expr) Expr {
		if e == nil || err != nil {
			return e
		}
		var out Expr
		if out, err = fn(e); err != nil {
			return e
		}
		if out != e {
			changed = true
		}
		return out
	}
	all := func(es []Expr) []Expr {
		if es == nil {
			return nil
		}
		out := make([]Expr, len(es))
		for i, e := range es {
			out[i] = one(e)
		}
		return out
	}
	keys := func(ks []SortKey) []SortKey {
		if ks == nil {
			return nil
		}
		out := append([]SortKey(nil), ks...)
		for i := range out {
			out[i].E = one(out[i].E)
		}
		return out
	}
	var cp Node
	switch x := n.(type) {
	case *Scan:
		c := *x
		c.Point, c.In = all(x.Point), all(x.In)
		shared := x.Start != nil && x.End != nil && len(x.Start.Values) > 0 && len(x.End.Values) > 0 &&
			&x.Start.Values[0] == &x.End.Values[0]
		if x.Start != nil {
			c.Start = &KeyBound{Values: all(x.Start.Values), Inclusive: x.Start.Inclusive}
		}
		if x.End != nil {
			if shared && len(x.End.Values) == len(x.Start.Values) {
				c.End = &KeyBound{Values: c.Start.Values, Inclusive: x.End.Inclusive}
			} else {
				c.End = &KeyBound{Values: all(x.End.Values), Inclusive: x.End.Inclusive}
			}
		}
		cp = &c
	case *Values:
		c := *x
		c.Rows = make([][]Expr, len(x.Rows))
		for i, r := range x.Rows {
			c.Rows[i] = all(r)
		}
		cp = &c
	case *Filter:
		c := *x
		c.Cond = one(x.Cond)
		cp = &c
	case *Project:
		c := *x
		c.Exprs = all(x.Exprs)
		cp = &c
	case *Aggregate:
		c := *x
		c.GroupBy = all(x.GroupBy)
		c.Aggs = append([]AggCall(nil), x.Aggs...)
		for i := range c.Aggs {
			a := &c.Aggs[i]
			a.Args, a.Filter, a.Order = all(a.Args), one(a.Filter), keys(a.Order)
		}
		cp = &c
	case *Sort:
		c := *x
		c.Keys = keys(x.Keys)
		cp = &c
	case *Limit:
		c := *x
		c.Count, c.Offset = one(x.Count), one(x.Offset)
		cp = &c
	case *DistinctOn:
		c := *x
		c.Keys = all(x.Keys)
		cp = &c
	case *Join:
		c := *x
		c.LeftKeys, c.RightKeys, c.Residual = all(x.LeftKeys), all(x.RightKeys), one(x.Residual)
		cp = &c
	case *Apply:
		c := *x
		c.Params, c.Residual = all(x.Params), one(x.Residual)
		cp = &c
	case *KeyIn:
		c := *x
		c.Keys = all(x.Keys)
		cp = &c
	case *ProjectSet:
		c := *x
		c.Calls = append([]SRFCall(nil), x.Calls...)
		for i := range c.Calls {
			c.Calls[i].Args = all(c.Calls[i].Args)
		}
		cp = &c
	case *Window:
		c := *x
		c.Calls = append([]WindowCall(nil), x.Calls...)
		for i := range c.Calls {
			w := &c.Calls[i]
			w.Args, w.PartitionBy, w.OrderBy = all(w.Args), all(w.PartitionBy), keys(w.OrderBy)
			w.Filter, w.Frame.Start.Offset, w.Frame.End.Offset = one(w.Filter), one(w.Frame.Start.Offset), one(w.Frame.End.Offset)
		}
		cp = &c
	default:
		if len(ownExprs(n)) > 0 {
			return nil, false, errInternal("mapOwnExprs does not know %s", nodeName(n))
		}
		return n, false, nil
	}
	if err != nil || !changed {
		return n, false, err
	}
	return cp, true, nil
}
