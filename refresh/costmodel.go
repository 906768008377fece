package refresh

import (
	"math"
	"time"

	"github.com/mvserver/mvserver/sql/plan"
)

// The cost model of a refresh (R-I6). Estimates are in scanned-row units
// (a row read by a full table scan costs 1), made from the row counts and
// the planner's statistics (plan.Estimator: ANALYZE's distinct counts,
// MCVs, histograms):
//
//   - a full recompute runs the view's optimized plan (its scans and
//     lookups, plus a unit per row each join, aggregate, sort or DISTINCT
//     takes in), sorts and compares its result with the stored rows, and
//     writes the rows that differ;
//   - an incremental refresh reads the change rows, runs the change plans
//     the same way and writes the view's change; GROUP_AGGREGATE folds the
//     change into the touched groups' states (estimated from the view's
//     groups and the change rows) and rewrites those groups' view rows.
//
// An incremental technique's estimate counts the plans the
// differentiation ran to build its change (budget.go: each priced before
// it runs, the refresh sent full once they pass a full recompute's
// estimate) and the change plans it runs, as the optimizer plans them
// (inputWork): for a view over joins, or with an
// aggregate under GROUP_AGGREGATE or TOP_K, differentiating the input is
// most of the work, not the change rows themselves. The estimates decide
// for any change size (planner.go); only tiny sources and STRICT keep the
// incremental technique whatever they say.
//
// The model checks itself: each refresh records, in its checkpoint, the
// seconds one unit of its estimate took (CostRates, per kind: full or
// incremental, smoothed over runs), and the next refresh compares the
// candidates in estimated seconds. A constant that is off for a view's
// shape (a wide row, a slow key) is corrected by its own history, and
// planning_information shows each candidate's estimate, its estimated
// seconds and, for the one that ran, the actual seconds.
//
// One bad run is enough: an incremental run that took longer than a full
// recompute is estimated to (at the full rate), or a technique that ran its
// change plans and then refused (TOP_K, paying for both), sets the
// incremental rate to that run's own, unsmoothed, so the next refresh of a
// change of that size goes full. It comes back: a smaller change is
// estimated cheaper at that rate, and each refresh the cost model sends
// full lowers the incremental rate by comeBackDecay, so a view whose bad run
// was a passing slowness is tried incrementally again.
const (
	// changeRowCost: a change row read from a source's change feed
	// (first old and last new image per row id: decode, hash, compare).
	changeRowCost = 5
	// viewWriteCost: a view row written or deleted (its key, the change
	// record, the commit).
	viewWriteCost = 3
	// groupStateCost: a GROUP_AGGREGATE state read, updated and written
	// back.
	groupStateCost = 4
	// resultRowCost: a row of a full recompute's result, sorted by key and
	// compared with the stored row of the same key.
	resultRowCost = 2
	// minSourceRows: sources smaller than this are refreshed either way in
	// milliseconds; the estimate alone never sends them to a full
	// recompute (the incremental path keeps its state warm).
	minSourceRows = 10000
	// minRateUnits: estimates below this many units are mostly fixed
	// overhead (the plan, the commit); their runs do not teach a rate.
	minRateUnits = 5000
	// minRateTime: a run this long teaches a rate whatever its estimate
	// (a small estimate that took long is the estimate being wrong).
	minRateTime = 20 * time.Millisecond
	// rateWeight is the weight of the latest run in a learned rate.
	rateWeight = 0.5
	// comeBackDecay scales the incremental rate down at each refresh the
	// cost model sent full, so that incremental is tried again.
	comeBackDecay = 0.7
)

// CostRates are the seconds one estimated cost unit took in a view's
// earlier refreshes, per kind (0: not learned yet).
type CostRates struct {
	Full        float64 `json:"full,omitempty"`
	Incremental float64 `json:"incremental,omitempty"`
}

// observe returns r with a run of the given kind and estimate that took
// took folded in (a smoothed average). Small estimates teach nothing.
func (r CostRates) observe(incremental bool, units float64, took time.Duration) CostRates {
	if units <= 0 || took <= 0 || units < minRateUnits && took < minRateTime {
		return r
	}
	rate := took.Seconds() / units
	at := &r.Full
	if incremental {
		at = &r.Incremental
	}
	if *at <= 0 {
		*at = rate
	} else {
		*at = (1-rateWeight)*(*at) + rateWeight*rate
	}
	return r
}

// observeSlow returns r with an incremental run that was slower than a
// full recompute folded in: its rate replaces the learned one (one bad run
// is enough to send the next refresh of that size full).
func (r CostRates) observeSlow(units float64, took time.Duration) CostRates {
	if units <= 0 || took <= 0 {
		return r
	}
	r.Incremental = math.Max(r.Incremental, took.Seconds()/units)
	return r
}

// slow says whether an incremental run of units that took took was slower
// than the full recompute, estimated at fullUnits, would have been at the
// learned full rate (false without one).
func (r CostRates) slow(fullUnits float64, took time.Duration) bool {
	return r.Full > 0 && fullUnits > 0 && took.Seconds() > fullUnits*r.Full
}

// seconds converts the two estimates to seconds with the learned rates; a
// kind with no rate yet takes the other's (the units are meant to be
// comparable), and with neither the units are returned as they are
// (known is false).
func (r CostRates) seconds(incr, full float64) (incrS, fullS float64, known bool) {
	ri, rf := r.Incremental, r.Full
	switch {
	case ri <= 0 && rf <= 0:
		return incr, full, false
	case ri <= 0:
		ri = rf
	case rf <= 0:
		rf = ri
	}
	return incr * ri, full * rf, true
}

// expectedGroups is how many of groups distinct groups rows uniformly
// spread rows touch: groups·(1−(1−1/groups)^rows).
func expectedGroups(groups, rows float64) float64 {
	if groups <= 1 || rows <= 0 {
		return math.Min(math.Max(groups, 1), math.Max(rows, 0))
	}
	return groups * -math.Expm1(rows*math.Log1p(-1/groups))
}

// work is what running n costs: its scans and lookups (sizer.cost) plus a
// unit per input row of each operator that hashes, sorts or folds rows,
// from the planner's estimates (at most the rows that input reads).
func (s *sizer) work(n plan.Node) float64 {
	if n == nil {
		return 0
	}
	total := float64(s.cost(n))
	if s.est == nil {
		return total
	}
	var walk func(plan.Node)
	walk = func(n plan.Node) {
		switch n.(type) {
		case *plan.Join, *plan.Aggregate, *plan.Sort, *plan.Distinct, *plan.SetOp, *plan.Window:
			for _, c := range plan.NodeInputs(n) {
				// The estimator counts a scan narrowed to keys as the
				// whole table; what the subtree reads bounds it then.
				total += math.Min(s.est.Rows(c), float64(s.cost(c)))
			}
		}
		for _, c := range plan.NodeInputs(n) {
			walk(c)
		}
	}
	walk(n)
	return total
}

// rowsOf is the estimated row count of n (0 for nil), at most what n
// reads (see work).
func (s *sizer) rowsOf(n plan.Node) float64 {
	if n == nil {
		return 0
	}
	if g, ok := n.(*plan.Given); ok {
		return float64(len(g.Rows))
	}
	if s.est == nil {
		return 0
	}
	return math.Min(s.est.Rows(n), float64(max(s.cost(n), 1)))
}

// inputWork is the work of running d's change plans (plus and minus) as
// the optimizer plans them.
func (r *techRun) inputWork(d *diffResult) float64 {
	if d == nil || r.sizes == nil {
		return 0
	}
	var total float64
	for _, n := range []plan.Node{d.plus, d.minus} {
		if n == nil {
			continue
		}
		if o, err := r.in.optimized(n); err == nil {
			n = o
		}
		total += r.sizes.work(n)
	}
	return total
}

// groupAggCost is GROUP_AGGREGATE's estimate for changed input change rows
// into a view of viewRows groups, and the view rows it writes.
func groupAggCost(changed, viewRows int64) (units, writes float64) {
	touched := expectedGroups(float64(max(viewRows, 1)), float64(changed))
	writes = 2 * touched // each touched group's old row out, new row in
	return float64(changeRowCost*changed) + float64(changed) + touched*groupStateCost + writes*viewWriteCost, writes
}

// fullCost is a full recompute's estimate: query is the optimized query,
// viewRows the stored rows and writes the rows expected to differ.
func (s *sizer) fullCost(query plan.Node, viewRows int64, writes float64) float64 {
	result := s.rowsOf(query)
	if result <= 0 {
		result = float64(viewRows)
	}
	return s.work(query) + resultRowCost*result + viewWriteCost*math.Min(writes, result+float64(viewRows))
}

// learn returns the rates of the checkpoint after this run: ckpt's (nil
// for none) with the run's estimate and actual time folded in.
func (p *refreshPlan) learn(ckpt *Checkpoint) *CostRates {
	var r CostRates
	if ckpt != nil && ckpt.Rates != nil {
		r = *ckpt.Rates
	}
	switch p.technique {
	case NoOp:
	case FullRecompute:
		switch {
		case p.spent != "":
			// The technique's change plans ran, then the full recompute:
			// all of it is what trying incremental cost.
			r = r.observeSlow(p.incrCost, p.actual)
		default:
			r = r.observe(false, p.fullCost, p.actual)
			if p.priced && r.Incremental > 0 {
				r.Incremental *= comeBackDecay
			}
		}
	default:
		if r.slow(p.fullCost, p.actual) {
			r = r.observeSlow(p.incrCost, p.actual)
		} else {
			r = r.observe(true, p.incrCost, p.actual)
		}
	}
	if r == (CostRates{}) {
		return nil
	}
	return &r
}
