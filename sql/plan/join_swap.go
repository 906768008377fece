package plan

// Swapping a join's sides. A join of left (nl columns) and right (nr)
// whose sides are exchanged makes rows right ++ left: swappedRefs moves
// the column references of an expression over left ++ right to them, and
// unswapped puts the swapped join's columns back in the original order.

// swappedRefs rewrites e (nil: nil), over left ++ right, to read right ++
// left.
func swappedRefs(e Expr, nl, nr int) Expr {
	if e == nil {
		return nil
	}
	return Rewrite(e, func(x Expr) Expr {
		if c, ok := x.(*ColRef); ok {
			if c.Idx < nl {
				return &ColRef{Idx: c.Idx + nr, T: c.T, Name: c.Name}
			}
			return &ColRef{Idx: c.Idx - nl, T: c.T, Name: c.Name}
		}
		return x
	})
}

// unswapped projects swapped (rows right ++ left) to cols, the columns
// of the join before the swap (left ++ right).
func unswapped(swapped Node, cols []Column, nl, nr int) Node {
	exprs := make([]Expr, len(cols))
	for i, c := range cols {
		src := i + nr // a left column, after the right ones
		if i >= nl {
			src = i - nl
		}
		exprs[i] = &ColRef{Idx: src, T: c.T, Name: c.Name}
	}
	return &Project{Input: swapped, Exprs: exprs, Cols: cols}
}
