package plan

// Decorrelation of EXISTS / NOT EXISTS (R-Q2). A WHERE conjunct
//
//	[NOT] EXISTS (SELECT … FROM r WHERE inner = outer AND p(r) AND q(r, outer))
//
// whose subquery reads the enclosing row only in its top WHERE becomes a
// semi (anti) join of the enclosing FROM with Filter(r, p): the equalities
// are hash keys, q the residual. The subquery then runs once instead of
// once per row. Anything else (a correlated subquery whose outer
// references sit deeper, an aggregate, LIMIT, a volatile function) keeps
// the per-row evaluation, which is always correct; a correlation on the
// subquery table's primary key is deliberately left to it too, since it
// becomes a point lookup per row.

// filterWhere places a bound WHERE condition over input: EXISTS conjuncts
// that can be decorrelated become semi/anti joins above the rest.
func filterWhere(input Node, cond Expr, nLeft int) Node {
	var rest []Expr
	var joins []*Join
	for _, c := range conjuncts(cond) {
		if j := decorrelateExists(c, nLeft); j != nil {
			joins = append(joins, j)
			continue
		}
		rest = append(rest, c)
	}
	switch len(rest) {
	case 0:
	case 1:
		input = pushFilter(input, rest[0])
	default:
		input = pushFilter(input, &And{Args: rest})
	}
	for _, j := range joins {
		j.Left = input
		input = j
	}
	return input
}

// decorrelateExists returns the semi/anti join (without its left input)
// equivalent to the WHERE conjunct c, or nil.
func decorrelateExists(c Expr, nLeft int) *Join {
	kind := JoinSemi
	if n, ok := c.(*Not); ok {
		c, kind = n.E, JoinAnti
	}
	sq, ok := c.(*Subquery)
	if !ok || sq.Kind != SubExists || len(sq.Params) == 0 || sq.Volatile {
		return nil
	}
	// Above the subquery's WHERE only operators that cannot change whether
	// a row exists may sit.
	n := sq.Plan
	for {
		switch x := n.(type) {
		case *Project:
			n = x.Input
			continue
		case *Sort:
			n = x.Input
			continue
		case *Distinct:
			n = x.Input
			continue
		}
		break
	}
	f, ok := n.(*Filter)
	if !ok {
		return nil
	}
	input := f.Input
	if scan, ok := input.(*Scan); ok && nodeReadsOuter(scan) {
		// Key bounds taken from the enclosing row: a point or key-prefix
		// lookup per row is as good as a hash join, keep it; a range is
		// not, so drop it (the Filter still checks the condition).
		if scan.Keyed() {
			return nil
		}
		cp := *scan
		cp.ClearKeyBounds()
		input = &cp
	}
	if nodeReadsOuter(input) {
		return nil
	}
	// outer turns an expression over the subquery's row into one over the
	// combined row (left = the enclosing row, right = the subquery's).
	outer := func(e Expr, shiftBy int) Expr {
		return Rewrite(e, func(x Expr) Expr {
			switch r := x.(type) {
			case *OuterRef:
				return sq.Params[r.Idx]
			case *ColRef:
				return &ColRef{Idx: r.Idx + shiftBy, T: r.T, Name: r.Name}
			}
			return x
		})
	}
	j := &Join{Kind: kind}
	var local, residual []Expr
	for _, p := range conjuncts(f.Cond) {
		if !readsOuter(p) {
			local = append(local, p)
			continue
		}
		if bin, ok := p.(*Binary); ok && bin.Op == OpEq {
			l, r := bin.L, bin.R
			if hasColRef(l) && !readsOuter(l) && readsOuter(r) && !hasColRef(r) {
				l, r = r, l
			}
			if hasColRef(r) && !readsOuter(r) && readsOuter(l) && !hasColRef(l) {
				j.LeftKeys = append(j.LeftKeys, outer(l, 0))
				j.RightKeys = append(j.RightKeys, r)
				continue
			}
		}
		residual = append(residual, outer(p, nLeft))
	}
	right := input
	switch len(local) {
	case 0:
	case 1:
		right = pushFilter(right, local[0])
	default:
		right = pushFilter(right, &And{Args: local})
	}
	j.Right = right
	switch len(residual) {
	case 0:
	case 1:
		j.Residual = residual[0]
	default:
		j.Residual = &And{Args: residual}
	}
	return j
}

// readsOuter reports whether e reads a value of the enclosing level.
func readsOuter(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if _, ok := x.(*OuterRef); ok {
			found = true
		}
		return !found
	})
	return found
}

func hasColRef(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if _, ok := x.(*ColRef); ok {
			found = true
		}
		return !found
	})
	return found
}

// nodeReadsOuter reports whether any expression of n's level (not inside
// nested subqueries' plans, whose OuterRefs are their own) reads the
// enclosing level.
func nodeReadsOuter(n Node) bool {
	found := false
	WalkNode(n, func(e Expr) {
		if !found && readsOuter(e) {
			found = true
		}
	})
	return found
}
