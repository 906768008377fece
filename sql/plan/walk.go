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

// inputs returns a node's input nodes.
func inputs(n Node) []Node {
	switch x := n.(type) {
	case *Filter:
		return []Node{x.Input}
	case *Project:
		return []Node{x.Input}
	case *Aggregate:
		return []Node{x.Input}
	case *Sort:
		return []Node{x.Input}
	case *Limit:
		return []Node{x.Input}
	case *Distinct:
		return []Node{x.Input}
	case *Join:
		return []Node{x.Left, x.Right}
	case *Apply:
		return []Node{x.Left}
	case *SetOp:
		return []Node{x.Left, x.Right}
	case *RecursiveUnion:
		return []Node{x.NonRec, x.Rec}
	case *CTEScan:
		return []Node{x.Input}
	case *KeyIn:
		return []Node{x.Input}
	case *Window:
		return []Node{x.Input}
	case *ProjectSet:
		return []Node{x.Input}
	}
	return nil
}

// NodeExprs returns the expressions n evaluates itself (not those of its
// inputs, nor of subquery plans).
func NodeExprs(n Node) []Expr { return ownExprs(n) }

// NodeInputs returns n's inputs at its evaluation level.
func NodeInputs(n Node) []Node { return inputs(n) }
