package plan

// The join-filter pushdown rule. An outer join's ON condition may test
// its nullable side alone — TPC-H Q13's `customer LEFT JOIN orders ON
// c_custkey = o_custkey AND o_comment NOT LIKE '%special%requests%'`.
// Such a conjunct is a residual of the join, checked on each matching
// pair after the hash table holds every row of that side. A row of the
// nullable side that fails it matches nothing, so filtering that side
// first gives the same join: the kept side's rows still come out, padded
// with NULLs when nothing passes. The rule moves those conjuncts into a
// filter on the nullable input of left and right joins, and on the right
// input of semi and anti joins (a right row failing them is no partner).
// Not for a full join (both sides are kept), a null-aware anti join
// (NOT IN's NULL rules look at every right row) or a volatile conjunct.

func pushJoinFilters(_ *Optimizer, n Node) (Node, bool, error) {
	return transformUp(n, func(x Node) (Node, bool, error) {
		j, ok := x.(*Join)
		if !ok || j.Residual == nil {
			return x, false, nil
		}
		nl := len(j.Left.Columns())
		var toRight bool
		switch j.Kind {
		case JoinLeft, JoinSemi, JoinAnti:
			toRight = true
		case JoinRight:
		default:
			return x, false, nil
		}
		var keep, moved []Expr
		for _, c := range conjuncts(j.Residual) {
			s := sides(c, nl)
			if volatileExpr(c) || toRight && s != 2 || !toRight && s != 1 {
				keep = append(keep, c)
				continue
			}
			if toRight {
				c = shift(c, nl)
			}
			moved = append(moved, c)
		}
		if len(moved) == 0 {
			return x, false, nil
		}
		cp := *j
		cp.cols = nil
		cp.Residual = nil
		if len(keep) > 0 {
			cp.Residual = andOf(keep)
		}
		if toRight {
			cp.Right = filterWith(j.Right, moved)
		} else {
			cp.Left = filterWith(j.Left, moved)
		}
		return &cp, true, nil
	})
}

// filterWith returns n filtered by conds too, one Filter over n's input
// when n is a Filter (a filtered scan stays one, for its key access).
func filterWith(n Node, conds []Expr) Node {
	if f, ok := n.(*Filter); ok {
		return &Filter{Input: f.Input, Cond: andOf(append(conjuncts(f.Cond), conds...))}
	}
	return &Filter{Input: n, Cond: andOf(conds)}
}
