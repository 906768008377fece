package plan

import (
	"math"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/types"
)

// Join selectivities of equality keys, as PostgreSQL's eqjoinsel
// (src/backend/utils/adt/selfuncs.c) computes them.
//
// An inner (or outer) join key l = r keeps, of the pairs of rows, the
// share (1 − nullfrac₁)(1 − nullfrac₂) / max(nd₁, nd₂) — unless both
// columns have most-common-value lists. Then the lists are matched value
// by value (eqjoinsel_inner): matched pairs join with the product of
// their frequencies, and the values of one side's list that found no
// partner in the other's, and the values in no list, are spread over the
// other side's remaining distinct values. A skewed key joined to a
// skewed key is estimated from the values both hold, not from the
// distinct counts alone.
//
// A semi join keeps the share of its outer rows that have a partner
// (eqjoinsel_semi): the outer MCVs found in the inner list surely do; of
// the rest, nd₂/nd₁ (all when nd₁ ≤ nd₂), nd₂ clamped to the inner side's
// rows — an inner side filtered to few rows holds few distinct keys. An
// anti join keeps the others.

// eqJoinSel is the selectivity of the join key l = r, l over left's rows
// and r over right's.
func (e *Estimator) eqJoinSel(l Expr, left Node, r Expr, right Node) float64 {
	cs1, cs2 := e.columnStats(l, left), e.columnStats(r, right)
	if cs1 != nil && cs2 != nil && len(cs1.MCV) > 0 && len(cs2.MCV) > 0 {
		nd1, ok1 := e.baseNDV(l, left, cs1)
		nd2, ok2 := e.baseNDV(r, right, cs2)
		if ok1 && ok2 {
			return mcvInnerSel(cs1, cs2, nd1, nd2)
		}
	}
	// The distinct counts are the base tables', not clamped to the
	// filtered sides' rows: PostgreSQL's eqjoinsel clamps only for a semi
	// join. Clamped, TPC-H-derived Q3's 3k BUILDING customers counted 3k
	// custkeys against orders' 10k, and the join was estimated at 23k
	// rows instead of 14.5k (PostgreSQL: 14.7k), too many for lookups.
	nd1, _ := e.ndvKnown(l, left, false)
	nd2, _ := e.ndvKnown(r, right, false)
	sel := 1 / math.Max(nd1, nd2)
	// NULL keys join nothing (eqjoinsel's (1 − nullfrac) factors).
	if cs1 != nil {
		sel *= 1 - cs1.NullFrac
	}
	if cs2 != nil {
		sel *= 1 - cs2.NullFrac
	}
	return sel
}

// baseNDV is the distinct values of column x of in's rows in its base
// table (ok false: not a base column with a known count).
func (e *Estimator) baseNDV(x Expr, in Node, cs *catalog.ColumnStats) (float64, bool) {
	nd := cs.Distinct(e.baseRows(x, in))
	return math.Max(nd, 1), nd > 0
}

// mvcMatches matches two MCV lists (the first n2 of the second): which
// values of each found their equal in the other, and the summed products
// of the matched pairs' frequencies.
func mcvMatches(a, b *catalog.ColumnStats, n2 int) (ma, mb []bool, prod float64, n int) {
	ma, mb = make([]bool, len(a.MCV)), make([]bool, n2)
	for i, v := range a.MCV {
		for j := 0; j < n2; j++ {
			w := b.MCV[j]
			if mb[j] || !comparableKinds(v.K, w.K) || types.Compare(v, w) != 0 {
				continue
			}
			ma[i], mb[j] = true, true
			prod += a.MCF[i] * b.MCF[j]
			n++
			break
		}
	}
	return ma, mb, prod, n
}

// mcvInnerSel is eqjoinsel_inner with both MCV lists.
func mcvInnerSel(a, b *catalog.ColumnStats, nd1, nd2 float64) float64 {
	ma, mb, prod, nmatch := mcvMatches(a, b, len(b.MCV))
	prod = clampSel(prod)
	sums := func(cs *catalog.ColumnStats, m []bool) (matched, unmatched float64) {
		for i, f := range cs.MCF {
			if m[i] {
				matched += f
			} else {
				unmatched += f
			}
		}
		return matched, unmatched
	}
	match1, unmatch1 := sums(a, ma)
	match2, unmatch2 := sums(b, mb)
	other1 := clampSel(1 - a.NullFrac - match1 - unmatch1)
	other2 := clampSel(1 - b.NullFrac - match2 - unmatch2)
	n1, n2, k := float64(len(a.MCV)), float64(len(b.MCV)), float64(nmatch)
	// Each side's view: its unmatched MCVs and its other values meet
	// the other side's values outside the matches, spread evenly.
	sel1, sel2 := prod, prod
	if nd2 > n2 {
		sel1 += unmatch1 * other2 / (nd2 - n2)
	}
	if nd2 > k {
		sel1 += other1 * (other2 + unmatch2) / (nd2 - k)
	}
	if nd1 > n1 {
		sel2 += unmatch2 * other1 / (nd1 - n1)
	}
	if nd1 > k {
		sel2 += other2 * (other1 + unmatch1) / (nd1 - k)
	}
	return clampSel(math.Min(sel1, sel2))
}

// semiJoinSel is the share of left's rows a semi join on l = r finds a
// partner for in right (eqjoinsel_semi).
func (e *Estimator) semiJoinSel(l Expr, left Node, r Expr, right Node) float64 {
	cs1, cs2 := e.columnStats(l, left), e.columnStats(r, right)
	nf1 := 0.0
	if cs1 != nil {
		nf1 = cs1.NullFrac
	}
	nd1, ok1 := e.ndvKnown(l, left, false)
	nd2, ok2 := e.ndvKnown(r, right, true)
	if cs1 != nil && cs2 != nil && len(cs1.MCV) > 0 && len(cs2.MCV) > 0 {
		// The inner side holds at most nd2 of its MCVs.
		n2 := min(len(cs2.MCV), int(nd2))
		ma, _, _, nmatch := mcvMatches(cs1, cs2, n2)
		match1 := 0.0
		for i, m := range ma {
			if m {
				match1 += cs1.MCF[i]
			}
		}
		uncertainFrac := 0.5
		if ok1 && ok2 {
			d1, d2 := nd1-float64(nmatch), nd2-float64(nmatch)
			uncertainFrac = 1
			if d1 > d2 {
				uncertainFrac = math.Max(d2, 0) / d1
			}
		}
		return clampSel(match1 + uncertainFrac*clampSel(1-match1-nf1))
	}
	if !ok1 || !ok2 {
		return 0.5 * (1 - nf1)
	}
	if nd1 <= nd2 {
		return 1 - nf1
	}
	return nd2 / nd1 * (1 - nf1)
}

// ndvKnown is the distinct values of x over in's rows and whether
// statistics or a unique key tell them (not the default). clamp bounds
// them by in's estimated rows; otherwise the base table's count stands,
// as PostgreSQL takes the outer side's.
func (e *Estimator) ndvKnown(x Expr, in Node, clamp bool) (float64, bool) {
	rows := e.Rows(in)
	c, ok := x.(*ColRef)
	if !ok || c.Idx >= len(in.Columns()) {
		return math.Max(1, math.Min(defaultNDV, rows)), false
	}
	if groupKey(in, c.Idx) {
		return rows, true // one row per value
	}
	t, pos := e.baseColumn(in.Columns()[c.Idx])
	if t == nil {
		return math.Max(1, math.Min(defaultNDV, rows)), false
	}
	n, known := 0.0, false
	if e.Stats != nil {
		n, known = e.Stats.ColumnDistinct(t, pos)
	}
	if !known && uniqueColumn(t, pos) {
		n, known = e.tableRows(t), true
	}
	if !known {
		return math.Max(1, math.Min(defaultNDV, rows)), false
	}
	if clamp {
		n = math.Min(n, rows)
	}
	return math.Max(1, n), true
}

// groupKey reports whether column i of n's rows is the one GROUP BY key
// of an aggregate, under filters and sorts: its values are distinct.
func groupKey(n Node, i int) bool {
	for {
		switch x := n.(type) {
		case *Filter:
			n = x.Input
		case *Sort:
			n = x.Input
		case *Aggregate:
			return len(x.GroupBy) == 1 && i == 0
		default:
			return false
		}
	}
}
