package plan

// pushFilter places a WHERE condition over input, its ORs factored first
// (or_factor.go). Over a table scan, equality
// on every primary-key column becomes a point lookup and comparisons on the
// first key column become a range scan; the condition is still checked by a
// Filter above (cheap, and exact whatever the key encoding). Over a join,
// each conjunct goes as far down as it can (pushIntoJoin).
func pushFilter(input Node, cond Expr) Node {
	cond = factorOrs(cond)
	if j, ok := input.(*Join); ok {
		var rest []Expr
		input, rest = pushIntoJoin(j, conjuncts(cond))
		if len(rest) == 0 {
			return input
		}
		cond = andOf(rest)
	}
	if ps, ok := input.(*ProjectSet); ok {
		var rest []Expr
		input, rest = pushBelowProjectSet(ps, conjuncts(cond))
		if len(rest) == 0 {
			return input
		}
		cond = andOf(rest)
	}
	if scan, ok := input.(*Scan); ok && len(scan.Table.PrimaryKey) > 0 {
		usePrimaryKey(scan, conjuncts(cond))
	}
	return &Filter{Input: input, Cond: cond}
}

// pushIntoJoin moves WHERE conjuncts into a join tree (R-Q2 comma joins must
// not become cartesian products): a conjunct reading one side only goes to
// that side when the join keeps that side's rows as they are (either side
// of an inner join, the preserved side of an outer, semi or anti join); one
// reading both sides of an inner join becomes its hash key or residual.
// It returns the new join and the conjuncts that stay above it.
func pushIntoJoin(j *Join, conds []Expr) (Node, []Expr) {
	nl := len(j.Left.Columns())
	var left, right, here, rest []Expr
	inner := j.Kind == JoinInner || j.Kind == JoinCross
	for _, c := range conds {
		if readsOuter(c) {
			// A correlation stays on top, where decorrelation looks for it.
			rest = append(rest, c)
			continue
		}
		switch s := sides(c, nl); {
		case s == 1 && j.Kind != JoinRight && j.Kind != JoinFull:
			left = append(left, c)
		case s == 2 && (inner || j.Kind == JoinRight):
			right = append(right, shift(c, nl))
		case s == 3 && inner:
			here = append(here, c)
		default:
			rest = append(rest, c)
		}
	}
	if len(left) == 0 && len(right) == 0 && len(here) == 0 {
		return j, conds
	}
	nj := *j
	nj.cols = nil
	if len(left) > 0 {
		nj.Left = pushFilter(j.Left, andOf(left))
	}
	if len(right) > 0 {
		nj.Right = pushFilter(j.Right, andOf(right))
	}
	if len(here) > 0 {
		if nj.Kind == JoinCross {
			nj.Kind = JoinInner
		}
		nj.LeftKeys = append([]Expr(nil), j.LeftKeys...)
		nj.RightKeys = append([]Expr(nil), j.RightKeys...)
		var residual []Expr
		if j.Residual != nil {
			residual = append(residual, j.Residual)
		}
		nj.Residual = nil
		splitJoinCond(&nj, andOf(here), nl)
		if nj.Residual != nil {
			residual = append(residual, nj.Residual)
		}
		nj.Residual = nil
		if len(residual) > 0 {
			nj.Residual = andOf(residual)
		}
	}
	return &nj, rest
}

// pushBelowProjectSet moves the conjuncts that read only the input row of
// a ProjectSet (a FROM item left of a set-returning function) below it, so
// they filter before the calls run and can reach a scan's key.
func pushBelowProjectSet(ps *ProjectSet, conds []Expr) (Node, []Expr) {
	nIn := len(ps.Input.Columns())
	var below, rest []Expr
	for _, c := range conds {
		if readsOuter(c) || sides(c, nIn)&2 != 0 {
			rest = append(rest, c)
			continue
		}
		below = append(below, c)
	}
	if len(below) == 0 {
		return ps, conds
	}
	return ps.WithInput(pushFilter(ps.Input, andOf(below))), rest
}

func andOf(es []Expr) Expr {
	if len(es) == 1 {
		return es[0]
	}
	return &And{Args: es}
}

// constant reports whether e has no column references (its value is fixed
// for the statement).
func constant(e Expr) bool {
	ok := true
	Walk(e, func(x Expr) bool {
		switch x.(type) {
		case *ColRef, *AggRef:
			ok = false
		case *Func:
			if !x.(*Func).Fn.Deterministic && x.(*Func).Name != "now" {
				ok = false
			}
		}
		return ok
	})
	return ok
}

func usePrimaryKey(scan *Scan, conds []Expr) {
	t := scan.Table
	point := make([]Expr, len(t.PrimaryKey))
	found := 0
	first := t.ColumnByID(t.PrimaryKey[0])
	for _, c := range conds {
		bin, ok := c.(*Binary)
		if !ok || !bin.Op.IsComparison() || bin.Op == OpNe {
			continue
		}
		col, val, op := bin.L, bin.R, bin.Op
		if _, isCol := col.(*ColRef); !isCol {
			col, val, op = bin.R, bin.L, flip(bin.Op)
		}
		cr, isCol := col.(*ColRef)
		if !isCol || !constant(val) || cr.Idx >= len(t.Columns) {
			continue
		}
		if cr.T.Kind != t.Columns[cr.Idx].Type.Kind {
			continue
		}
		for k, id := range t.PrimaryKey {
			if t.ColumnByID(id) != cr.Idx {
				continue
			}
			if op == OpEq && point[k] == nil {
				point[k] = val
				found++
			}
		}
		if cr.Idx == first && op != OpEq {
			switch op {
			case OpGt, OpGe:
				if scan.Start == nil {
					scan.Start = &KeyBound{Values: []Expr{val}, Inclusive: op == OpGe}
				}
			case OpLt, OpLe:
				if scan.End == nil {
					scan.End = &KeyBound{Values: []Expr{val}, Inclusive: op == OpLe}
				}
			}
		}
	}
	if found == len(point) {
		scan.Point = point
		scan.Start, scan.End = nil, nil
		return
	}
	// Equality on a leading part of a composite key: scan that prefix.
	n := 0
	for n < len(point) && point[n] != nil {
		n++
	}
	if n > 0 {
		prefix := point[:n]
		scan.Start = &KeyBound{Values: prefix, Inclusive: true}
		scan.End = &KeyBound{Values: prefix, Inclusive: true}
	}
}

func flip(op Op) Op {
	switch op {
	case OpLt:
		return OpGt
	case OpLe:
		return OpGe
	case OpGt:
		return OpLt
	case OpGe:
		return OpLe
	}
	return op
}
