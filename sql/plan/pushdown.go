package plan

// pushFilter places a WHERE condition over input. Over a table scan, equality
// on every primary-key column becomes a point lookup and comparisons on the
// first key column become a range scan; the condition is still checked by a
// Filter above (cheap, and exact whatever the key encoding).
func pushFilter(input Node, cond Expr) Node {
	if scan, ok := input.(*Scan); ok && len(scan.Table.PrimaryKey) > 0 {
		usePrimaryKey(scan, conjuncts(cond))
	}
	return &Filter{Input: input, Cond: cond}
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
