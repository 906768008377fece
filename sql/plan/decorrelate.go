package plan

// Decorrelation of WHERE-level subqueries (R-Q2). A WHERE conjunct
//
//	[NOT] EXISTS (SELECT … FROM r WHERE inner = outer AND p(r) AND q(r, outer))
//
// whose subquery reads the enclosing row only in its top WHERE becomes a
// semi (anti) join of the enclosing FROM with Filter(r, p): the equalities
// are hash keys, q the residual. The subquery then runs once instead of
// once per row. `x IN (SELECT y …)` (= ANY) is the same semi join with
// x = y as one more key; `x NOT IN (SELECT y …)` a null-aware anti join
// (decorrelate_in.go); a correlated scalar subquery over an aggregate a
// left join with the subquery grouped by its correlation
// (decorrelate_scalar.go). Anything else (outer references deeper in the
// subquery, LIMIT, a volatile function) keeps the per-row evaluation,
// which is always correct.
//
// A correlation on the subquery table's key is decorrelated too: whether
// looking the key up once per outer row beats the hash join is the
// index-join rule's choice (access.go), which turns the join back into
// per-row lookups when the outer side is small.

// filterWhere places a bound WHERE condition over input: EXISTS and IN
// conjuncts that can be decorrelated become semi/anti joins above the
// rest, and, with scalars, correlated scalar aggregate subqueries left
// joins below the conjuncts that read them.
func filterWhere(input Node, cond Expr, nLeft int, scalars bool) Node {
	var rest, scalarConds []Expr
	var joins []*Join
	for _, c := range conjuncts(cond) {
		if j := decorrelateExists(c, nLeft); j != nil {
			joins = append(joins, j)
			continue
		}
		if j := decorrelateIn(c, nLeft); j != nil {
			joins = append(joins, j)
			continue
		}
		if scalars && hasScalarToDecorrelate(c, nLeft) {
			scalarConds = append(scalarConds, c)
			continue
		}
		rest = append(rest, c)
	}
	if len(rest) > 0 {
		input = pushFilter(input, andOf(rest))
	}
	for _, j := range joins {
		j.Left = input
		input = j
	}
	if len(scalarConds) > 0 {
		input = decorrelateScalars(input, scalarConds, nLeft)
	}
	return input
}

// correlation is a subquery's input split at its top WHERE: the rows it
// reads without the enclosing row (right), the equalities between the
// enclosing row and them (leftKeys over the enclosing row, rightKeys over
// right's), and the other conditions reading the enclosing row (residual,
// over the enclosing row followed by right's).
type correlation struct {
	right               Node
	leftKeys, rightKeys []Expr
	residual            []Expr
}

// splitCorrelation splits n, the input of a subquery with the given
// params evaluated on rows of nLeft columns, into a correlation; ok is
// false when the subquery reads the enclosing row anywhere but in the
// conjuncts of a Filter at n (and in key bounds that Filter's own
// conditions gave the scan under it).
func splitCorrelation(n Node, params []Expr, nLeft int) (*correlation, bool) {
	f, ok := n.(*Filter)
	if !ok {
		if nodeReadsOuter(n) {
			return nil, false
		}
		return &correlation{right: n}, true
	}
	input := f.Input
	if scan, ok := input.(*Scan); ok && nodeReadsOuter(scan) {
		// Key bounds taken from the enclosing row: the Filter above still
		// checks their conditions, so the scan may read the whole table.
		cp := *scan
		cp.ClearKeyBounds()
		input = &cp
	}
	if nodeReadsOuter(input) {
		return nil, false
	}
	// outer turns an expression over the subquery's row into one over the
	// combined row (left = the enclosing row, right = the subquery's).
	outer := func(e Expr, shiftBy int) Expr {
		return Rewrite(e, func(x Expr) Expr {
			switch r := x.(type) {
			case *OuterRef:
				return params[r.Idx]
			case *ColRef:
				return &ColRef{Idx: r.Idx + shiftBy, T: r.T, Name: r.Name}
			}
			return x
		})
	}
	c := &correlation{}
	var local []Expr
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
				c.leftKeys = append(c.leftKeys, outer(l, 0))
				c.rightKeys = append(c.rightKeys, r)
				continue
			}
		}
		c.residual = append(c.residual, outer(p, nLeft))
	}
	c.right = input
	if len(local) > 0 {
		c.right = pushFilter(input, andOf(local))
	}
	return c, true
}

// join returns the join of kind (semi or anti, its left input unset) the
// correlation makes.
func (c *correlation) join(kind JoinKind) *Join {
	j := &Join{Kind: kind, Right: c.right, LeftKeys: c.leftKeys, RightKeys: c.rightKeys}
	if len(c.residual) > 0 {
		j.Residual = andOf(c.residual)
	}
	return j
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
	if _, ok := n.(*Filter); !ok {
		return nil
	}
	corr, ok := splitCorrelation(n, sq.Params, nLeft)
	if !ok {
		return nil
	}
	return corr.join(kind)
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
