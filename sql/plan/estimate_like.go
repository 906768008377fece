package plan

import "github.com/mvserver/mvserver/sql/types"

// Pattern matches (LIKE, ILIKE, regular expressions and their negations)
// estimated from ANALYZE's statistics, as PostgreSQL's patternsel does:
// the most common values that match the pattern count with their
// frequencies, and the share of the histogram's bounds that match stands
// for the other values — `p_name LIKE '%green%'` keeps the share of
// part names with that word, where the default (0.005) knows nothing
// of it (TPC-H Q9: 1,090 parts of 20,000, estimated at 100). A histogram
// of fewer than 100 bounds is blended with the default by its size, and
// no estimate is below 0.0001 or above 0.9999. The values are matched by
// the executor's own operator (the constant folder, estimate_fold.go).

// minPatternHist is the fewest histogram bounds patternsel uses, and
// fullPatternHist the number from which it trusts them alone.
const (
	minPatternHist  = 10
	fullPatternHist = 100
)

// statsPatternSelectivity is b, a pattern match of a column with a
// constant pattern, from the column's statistics; ok is false when they
// cannot tell.
func (e *Estimator) statsPatternSelectivity(b *Binary, in Node) (float64, bool) {
	if constFolder == nil || !foldable(b.R) {
		return 0, false
	}
	col, ok := patternColumn(b.L)
	if !ok {
		return 0, false
	}
	sel := defaultMatchSel
	if isNegatedPattern(b.Op) {
		sel = 1 - defaultMatchSel
	}
	return e.sampledSelectivity(&Binary{Op: b.Op, L: b.L, R: b.R, T: types.Bool}, col, in, sel)
}

// sampledSelectivity is the share of in's rows for which cond, which
// reads column col alone, is true, from the column's statistics: the
// most common values for which it holds count with their frequencies,
// and the share of the histogram's bounds for which it holds stands for
// the other values (blended with dflt below fullPatternHist bounds; dflt
// alone without a histogram). ok is false when the statistics cannot
// tell or the executor cannot evaluate cond on a value.
func (e *Estimator) sampledSelectivity(cond Expr, col *ColRef, in Node, dflt float64) (float64, bool) {
	if constFolder == nil {
		return 0, false
	}
	cs := e.columnStats(col, in)
	if cs == nil || len(cs.MCV) == 0 && len(cs.Histogram) < minPatternHist {
		return 0, false
	}
	// holds evaluates cond with the column's value v.
	holds := func(v types.Datum) (bool, bool) {
		c := Rewrite(cond, func(x Expr) Expr {
			if _, isCol := x.(*ColRef); isCol {
				return &Const{D: v, T: col.T}
			}
			return x
		})
		d, ok := constFolder(c)
		return ok && !d.IsNull() && d.Bool(), ok
	}
	mcvSel, sumMCF := 0.0, 0.0
	for i, v := range cs.MCV {
		m, ok := holds(v)
		if !ok {
			return 0, false
		}
		if m {
			mcvSel += cs.MCF[i]
		}
		sumMCF += cs.MCF[i]
	}
	sel := dflt
	if n := len(cs.Histogram); n >= minPatternHist {
		hit := 0
		for _, v := range cs.Histogram {
			m, ok := holds(v)
			if !ok {
				return 0, false
			}
			if m {
				hit++
			}
		}
		hs := float64(hit) / float64(n)
		if n < fullPatternHist {
			w := float64(n) / fullPatternHist
			hs = hs*w + dflt*(1-w)
		}
		sel = hs
	}
	sel = sel*clampSel(1-cs.NullFrac-sumMCF) + mcvSel
	return min(max(sel, 0.0001), 0.9999), true
}

// patternColumn returns the column a pattern match's left side reads:
// the column, or a cast of it (a varchar matched as text).
func patternColumn(x Expr) (*ColRef, bool) {
	switch c := x.(type) {
	case *ColRef:
		return c, true
	case *Cast:
		if col, ok := c.E.(*ColRef); ok {
			return col, true
		}
	}
	return nil, false
}

func isNegatedPattern(op Op) bool {
	switch op {
	case OpNotLike, OpNotILike, OpNotRegex, OpNotIRegex:
		return true
	}
	return false
}
