package plan

// Decorrelation of IN, = ANY and NOT IN (subquery) in WHERE (decorrelate.go).
//
//	x IN (SELECT y FROM r WHERE …)      → r semi join on x = y (and the
//	                                      subquery's correlation keys)
//	x NOT IN (SELECT y FROM r WHERE …)  → null-aware anti join
//
// In WHERE, a NULL and a false IN both drop the row, so IN is exactly a
// semi join whose hash keys never match NULL. NOT IN is not an anti join:
// it is true only when every row of the subquery compares unequal, so a
// NULL in the subquery (or a NULL x against a non-empty subquery) makes it
// never true. The null-aware anti join (JoinAntiNullAware) keeps a left
// row when no right row shares its correlation keys, or when its NOT IN
// key is not NULL, no such right row has a NULL one and none equals it.
// It is built for one NOT IN column whose correlation (if any) is
// equalities only; the rest stays per row.

// decorrelateIn returns the join (without its left input) equivalent to
// the WHERE conjunct c, an IN / = ANY (semi join) or NOT IN (null-aware
// anti join) over a subquery, or nil.
func decorrelateIn(c Expr, nLeft int) *Join {
	anti := false
	if n, ok := c.(*Not); ok {
		c, anti = n.E, true
	}
	sq, ok := c.(*Subquery)
	if !ok || sq.Kind != SubAny || sq.Op != OpEq || sq.Volatile || len(sq.Left) == 0 {
		return nil
	}
	if anti && len(sq.Left) != 1 {
		return nil
	}
	// The subquery's columns as expressions over the input of its top
	// projections; a sort or DISTINCT there changes no match.
	n := sq.Plan
	cols := make([]Expr, len(n.Columns()))
	for i, col := range n.Columns() {
		cols[i] = &ColRef{Idx: i, T: col.T, Name: col.Name}
	}
	for done := false; !done; {
		switch x := n.(type) {
		case *Project:
			for _, e := range x.Exprs {
				if readsOuter(e) {
					return nil
				}
			}
			for i, e := range cols {
				cols[i] = Rewrite(e, func(y Expr) Expr {
					if r, ok := y.(*ColRef); ok {
						return x.Exprs[r.Idx]
					}
					return y
				})
			}
			n = x.Input
		case *Sort:
			n = x.Input
		case *Distinct:
			n = x.Input
		default:
			done = true
		}
	}
	corr, ok := splitCorrelation(n, sq.Params, nLeft)
	if !ok {
		return nil
	}
	kind := JoinSemi
	if anti {
		if len(corr.residual) > 0 {
			return nil
		}
		kind = JoinAntiNullAware
	}
	j := corr.join(kind)
	// The IN comparison is the last key (the null-aware one for NOT IN).
	j.LeftKeys = append(append([]Expr(nil), j.LeftKeys...), sq.Left...)
	j.RightKeys = append(append([]Expr(nil), j.RightKeys...), cols...)
	return j
}
