package plan

import "math"

// A threshold on an aggregate (HAVING sum(x) > c, a filter over a grouped
// subquery): without it the estimate is the default inequality's third of
// the groups, however far c lies from what a group sums to. TPC-H Q18's
// HAVING sum(l_quantity) > 300, over orders of four lineitems of 25
// pieces on average, keeps 74 of 1.5M orders; estimated at 500k, their
// join with lineitem hashed all six million lineitems instead of looking
// the few orders up (PostgreSQL, with the same third, estimates fewer
// groups and looks them up).
//
// From the column's statistics (its MCVs and histogram: mean μ and
// variance σ² of its values) and the rows per group n, a group's sum is
// taken as a sum of a Poisson number of values of mean n — mean nμ,
// variance n(σ² + μ²) — and its average as the mean of n values — mean μ,
// variance σ²/n — each approximately normal; the selectivity is the
// normal tail beyond c, and at least one group.

// aggThresholdSelectivity estimates the share of in's groups that b — an
// inequality between one of in's sum or avg columns and a constant —
// keeps; ok is false for any other condition or without statistics.
func (e *Estimator) aggThresholdSelectivity(b *Binary, in Node) (float64, bool) {
	agg, ok := in.(*Aggregate)
	if !ok || len(agg.GroupBy) == 0 {
		return 0, false
	}
	col, kv, op := b.L, b.R, b.Op
	if _, isCol := col.(*ColRef); !isCol {
		col, kv, op = b.R, b.L, flipOp(b.Op)
	}
	c, isCol := col.(*ColRef)
	k, isConst := constValue(kv)
	if !isCol || !isConst || k.IsNull() || c.Idx < len(agg.GroupBy) || c.Idx-len(agg.GroupBy) >= len(agg.Aggs) {
		return 0, false
	}
	threshold, ok := numericPos(k)
	if !ok {
		return 0, false
	}
	call := agg.Aggs[c.Idx-len(agg.GroupBy)]
	if call.Name != "sum" && call.Name != "avg" || call.Distinct || call.Filter != nil || len(call.Args) != 1 {
		return 0, false
	}
	mean, variance, ok := e.columnMoments(call.Args[0], agg.Input)
	if !ok {
		return 0, false
	}
	groups := e.Rows(agg)
	n := math.Max(1, e.Rows(agg.Input)/groups)
	m, v := n*mean, n*(variance+mean*mean)
	if call.Name == "avg" {
		m, v = mean, variance/n
	}
	var above float64 // P(value > threshold)
	switch sd := math.Sqrt(v); {
	case sd == 0 && m > threshold:
		above = 1
	case sd == 0:
		above = 0
	default:
		above = 0.5 * math.Erfc((threshold-m)/(sd*math.Sqrt2))
	}
	sel := above
	if op == OpLt || op == OpLe {
		sel = 1 - above
	}
	return math.Max(sel, 1/groups), true
}

// columnMoments returns the mean and variance of x's non-NULL values, a
// numeric column of in with statistics: its most common values at their
// frequencies and the rest spread over the histogram's buckets (each
// bucket's values at its midpoint).
func (e *Estimator) columnMoments(x Expr, in Node) (mean, variance float64, ok bool) {
	cs := e.columnStats(x, in)
	if cs == nil || len(cs.MCV) == 0 && len(cs.Histogram) < 2 {
		return 0, 0, false
	}
	var w, s, s2 float64
	add := func(v, weight float64) {
		w += weight
		s += weight * v
		s2 += weight * v * v
	}
	sumMCF := 0.0
	for i, d := range cs.MCV {
		v, ok := numericPos(d)
		if !ok || i >= len(cs.MCF) {
			return 0, 0, false
		}
		add(v, cs.MCF[i])
		sumMCF += cs.MCF[i]
	}
	if h := cs.Histogram; len(h) >= 2 {
		rest := math.Max(0, 1-cs.NullFrac-sumMCF) / float64(len(h)-1)
		for i := 1; i < len(h); i++ {
			lo, ok1 := numericPos(h[i-1])
			hi, ok2 := numericPos(h[i])
			if !ok1 || !ok2 {
				return 0, 0, false
			}
			add((lo+hi)/2, rest)
		}
	}
	if w <= 0 {
		return 0, 0, false
	}
	mean = s / w
	return mean, math.Max(0, s2/w-mean*mean), true
}
