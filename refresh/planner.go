package refresh

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/storage"
)

// Candidate is one technique the planner weighed for a refresh: the event
// log's planning_information and EXPLAIN REFRESH list them (R-I6, R-O1).
type Candidate struct {
	Technique TechniqueName `json:"technique"`
	Chosen    bool          `json:"chosen"`
	Cost      float64       `json:"estimated_cost,omitempty"`
	// EstimatedSeconds is Cost in seconds at the rate the view's earlier
	// refreshes of this kind ran at (costmodel.go; 0: no rate learned).
	EstimatedSeconds float64 `json:"estimated_seconds,omitempty"`
	// ActualSeconds is how long the chosen technique took (planning,
	// change and writes; the commit aside), set after the run.
	ActualSeconds float64 `json:"actual_seconds,omitempty"`
	Reason        string  `json:"reason"`
}

// refreshPlan is what the planner decided, with the incremental work it
// prepared.
type refreshPlan struct {
	technique  TechniqueName
	reason     string
	candidates []Candidate
	analysis   *Analysis
	// incremental: the view's change as plans (plus − minus), the group
	// states being maintained, the change rows read.
	plus, minus plan.Node
	ga          *groupAggRun
	changed     int64
	incrCost    float64
	fullCost    float64
	// incrSeconds, fullSeconds are the estimates in seconds (costmodel.go)
	// when the view has a learned rate (timed).
	incrSeconds, fullSeconds float64
	timed                    bool
	// writes is the incremental's estimate of the view rows it writes.
	writes float64
	// actual is how long the run took (set after it; 0 for EXPLAIN).
	actual time.Duration
	// priced: the cost model sent the refresh full (its estimate of an
	// incremental technique was higher); spent: the technique that ran
	// its change plans and then refused (TOP_K), so the full recompute
	// came on top of them (costmodel.go learns from both).
	priced bool
	spent  TechniqueName
	// kept says why the estimates may not send this refresh full.
	kept       string
	partitions int // PARTITION_OVERWRITE: partitions recomputed
	// scalars are the MIN/MAX scalar states the change computed for the
	// new checkpoint (scalar_state.go).
	scalars []ScalarState
	// inner are the inner aggregates whose states match the new
	// snapshot (inner_state.go).
	inner []int
}

// errStrict is the failure of an INCREMENTAL STRICT refresh that cannot be
// incremental (R-I7).
func errStrict(v *catalog.Table, why string) error {
	return pgerror.New(pgerror.FeatureNotSupported, "materialized view \"%s\" has REFRESH POLICY INCREMENTAL STRICT and cannot be refreshed incrementally now: %s", v.Name, why).
		WithHint("Fix the cause, or run REFRESH MATERIALIZED VIEW … FULL, or ALTER MATERIALIZED VIEW … SET REFRESH POLICY INCREMENTAL to allow a fallback.")
}

// planRefresh picks the technique of a refresh (R-I1, R-I6, R-I7). With
// dryRun nothing is written (EXPLAIN REFRESH): group states are not
// folded, the aggregate's input change is only estimated.
func planRefresh(ctx context.Context, in *Input, an *Analysis, opt Options, dryRun bool) (*refreshPlan, error) {
	v, ckpt, versions := in.View, in.Checkpoint, in.Versions
	p := &refreshPlan{analysis: an}
	policy := "AUTO"
	if v.Dataset != nil && v.Dataset.Policy != "" {
		policy = v.Dataset.Policy
	}
	sizes := &sizer{txn: in.Txn, est: in.estimator(), cache: map[uint32]int64{}}
	full := func(reason string) (*refreshPlan, error) {
		p.technique, p.reason = FullRecompute, reason
		p.plus, p.minus, p.ga, p.scalars, p.inner = nil, nil, nil, nil, nil
		if p.fullCost == 0 {
			p.estimateFull(in, sizes)
		}
		return p, nil
	}
	// fallback is full for a passing reason, or the STRICT failure.
	fallback := func(why string) (*refreshPlan, error) {
		if policy == "INCREMENTAL STRICT" {
			return nil, errStrict(v, why)
		}
		return full(why)
	}
	switch {
	case opt.Full:
		return full("a full refresh was requested")
	case opt.OptimalRefreshOff:
		return full("optimal_refresh is off")
	case ckpt == nil:
		return full("the view has not been computed yet")
	case ckpt.Definition != Fingerprint(in.Catalog, v):
		return full("the definition of the view, or of something it reads, changed")
	case len(ckpt.OwnWrites) > 0:
		return full("the last refresh ran in the transaction that changed " + tableNames(in.Catalog, ckpt.OwnWrites))
	case len(in.OwnWrites) > 0:
		return full("this transaction changed " + tableNames(in.Catalog, in.OwnWrites) + "; its own writes are not in the change feed before the commit")
	case sameVersions(ckpt.Sources, versions) && !an.TimeDependent && !an.NonTableSource:
		p.technique, p.reason = NoOp, "no source has changed since the last refresh"
		return p, nil
	case policy == "FULL":
		return full("REFRESH POLICY FULL; sources changed: " + changedSources(in.Catalog, ckpt.Sources, versions))
	}
	if !an.Incremental() {
		return fallback("the query cannot be maintained incrementally: " + an.Summary())
	}
	// A change that is most of the sources is not even read: a full
	// recompute is cheaper, and the change could be larger than memory.
	if policy != "INCREMENTAL STRICT" {
		var estimate, sourceRows int64
		for id, ver := range versions {
			if sourceRows += sizes.rows(id); sizes.err != nil {
				return nil, sizes.err
			}
			if from, ok := ckpt.Sources[id]; ok && from != ver {
				c, err := in.Txn.ChangedRows(storage.TableID(id), from, ver)
				if err != nil {
					return nil, err
				}
				estimate += c
			}
		}
		if estimate > 1000 && estimate*2 > sourceRows {
			p.changed = estimate
			return full(fmt.Sprintf("about %d changed source rows (from the tables' history) against %d source rows: a full recompute is cheaper", estimate, sourceRows))
		}
	}
	// The change of every source since the checkpoint.
	deltas := map[uint32]*sourceDelta{}
	insertOnly := true
	for id, ver := range versions {
		from, ok := ckpt.Sources[id]
		if !ok {
			return full("a source was not read by the last refresh")
		}
		if from == ver {
			continue
		}
		t, _ := in.Catalog.Table(id)
		d, err := readDelta(in.Txn, t, from, ver)
		if err != nil {
			var cu *storage.ChangesUnavailableError
			if errors.As(err, &cu) {
				return fallback(feedGap(in.Catalog.QualifiedName(t), from, cu))
			}
			return nil, err
		}
		deltas[id] = d
		p.changed += int64(len(d.ins) + len(d.del))
		if len(d.del) > 0 {
			insertOnly = false
		}
	}
	// The estimates decide for any change size (costmodel.go): each
	// technique counts the change plans it runs — the joins and
	// aggregates under it — so a small change that is costly to
	// differentiate goes full. Never under STRICT, and never for tiny
	// sources (minSourceRows).
	var sourceRows int64
	for id := range versions {
		sourceRows += sizes.rows(id)
	}
	mayGoFull := policy != "INCREMENTAL STRICT" && sourceRows >= minSourceRows
	switch {
	case policy == "INCREMENTAL STRICT":
		p.kept = "REFRESH POLICY INCREMENTAL STRICT never recomputes in full"
	case !mayGoFull:
		p.kept = fmt.Sprintf("the sources have %d rows, under %d: too few for the estimate to decide", sourceRows, minSourceRows)
	}
	// The techniques in the table's order: the first that applies and
	// does not refuse builds the change.
	run := &techRun{in: in, an: an, deltas: deltas, insertOnly: insertOnly, dryRun: dryRun, changed: p.changed,
		df: &differ{ctx: in.Exec, est: in.estimator(), deltas: deltas, then: ckpt.At, scalarsBefore: ckpt.scalarsByID()}, viewRows: sizes.rows(v.ID), sizes: sizes}
	// The plans the differentiation runs are priced as they go, and stop
	// at a full recompute's estimate (budget.go).
	run.df.budget.sizes = sizes
	run.df.inner = newInnerRun(in, dryRun)
	if mayGoFull {
		p.estimateFull(in, sizes)
		run.df.budget.limit = fullLimit(ckpt, p.fullCost)
	}
	// A technique whose Run is the work (GROUP_AGGREGATE folds the
	// change as it runs) weighs itself against a full recompute first.
	run.weigh = func(tech TechniqueName, units, writes float64) *refusal {
		p.incrCost, p.writes = units+run.df.budget.spent, writes
		p.estimateFull(in, sizes)
		if why, ok := p.weigh(ckpt, tech, mayGoFull); ok {
			return &refusal{why: why, full: true}
		}
		return nil
	}
	var chosen Technique
	var refused []string
	for _, t := range techniqueTable {
		if ok, _ := t.Applies(an); !ok {
			continue
		}
		c, err := t.Run(ctx, run)
		var rf *refusal
		var be *blockedError
		switch {
		case errors.As(err, &rf) && rf.full:
			if rf.spent {
				p.spent = t.Name()
			}
			if run.df.budget.over {
				// Priced, not run: as when the estimates send it full.
				p.priced, p.incrCost = true, run.df.budget.spent
				p.candidates = append(p.candidates, Candidate{Technique: t.Name(), Cost: p.incrCost, Reason: rf.why})
			}
			return full(rf.why)
		case errors.As(err, &rf) && rf.next:
			p.candidates = append(p.candidates, Candidate{Technique: t.Name(), Reason: rf.why})
			refused = append(refused, string(t.Name())+": "+rf.why)
			continue
		case errors.As(err, &rf):
			return fallback(rf.why)
		case errors.As(err, &be):
			return fallback(be.b.Code + ": " + be.b.Message)
		case err != nil:
			return nil, err
		}
		chosen = t
		p.plus, p.minus, p.ga, p.partitions = c.plus, c.minus, c.ga, c.partitions
		p.scalars = run.df.scalarsAfter
		p.inner = run.df.inner.kept(deltas)
		break
	}
	if chosen == nil {
		why := "no incremental technique applies"
		if len(refused) > 0 {
			why += " (" + strings.Join(refused, "; ") + ")"
		}
		if s := an.Summary(); s != "" {
			why += ": " + s
		}
		return fallback(why)
	}
	tech := chosen.Name()
	// The change plans run as a SELECT's plans do (evalplan.go): each
	// term joins outward from its change set, through keys where the
	// other sources have them.
	var err error
	if p.plus, err = in.optimized(p.plus); err != nil {
		return nil, err
	}
	if p.minus, err = in.optimized(p.minus); err != nil {
		return nil, err
	}
	// Cost model (R-I6, costmodel.go).
	if !run.weighed {
		ch := &change{plus: p.plus, minus: p.minus}
		p.incrCost = chosen.Estimate(sizes, run, ch) + run.df.budget.spent
		p.writes = sizes.rowsOf(p.plus) + sizes.rowsOf(p.minus)
		p.estimateFull(in, sizes)
	}
	p.candidates = append(p.candidates, Candidate{Technique: tech, Cost: p.incrCost})
	if !run.weighed {
		if why, ok := p.weigh(ckpt, tech, mayGoFull); ok {
			return full(why)
		}
	}
	p.technique = tech
	p.reason = fmt.Sprintf("%d changed source rows in %s", p.changed, changedSources(in.Catalog, ckpt.Sources, versions))
	if p.changed == 0 {
		p.reason = "no source changed"
	}
	if tech == PartitionOverwrite {
		p.reason += fmt.Sprintf("; %d partitions recomputed", p.partitions)
	}
	if an.TimeDependent {
		p.reason += fmt.Sprintf("; rows aging in or out of the time filter since %s", ckpt.At.UTC().Format(time.RFC3339))
	}
	return p, nil
}

// estimateFull sets p.fullCost: the optimized query's estimate
// (costmodel.go). A query the optimizer cannot plan keeps 0 (the refresh
// reports that error itself).
func (p *refreshPlan) estimateFull(in *Input, s *sizer) {
	q, err := in.evalQuery()
	if err != nil {
		return
	}
	viewRows := s.rows(in.View.ID)
	writes := p.writes
	if viewRows == 0 || in.Checkpoint == nil {
		writes = s.rowsOf(q) // an empty view: every row is written
	}
	p.fullCost = s.fullCost(q, viewRows, writes)
}

// fullLimit is a full recompute's estimate fullCost in the incremental
// kind's units, at the view's learned rates (costmodel.go): the most the
// plans of a change may cost before the refresh goes full (budget.go).
func fullLimit(ckpt *Checkpoint, fullCost float64) float64 {
	if fullCost <= 0 {
		return 0
	}
	var r CostRates
	if ckpt != nil && ckpt.Rates != nil {
		r = *ckpt.Rates
	}
	if r.Incremental > 0 && r.Full > 0 {
		return fullCost * r.Full / r.Incremental
	}
	return fullCost
}

// weigh compares the incremental estimate of tech with the full one, in
// seconds at the view's learned rates (costmodel.go), and says whether to
// go full, and why. mayGoFull: the change is large enough to consider it.
func (p *refreshPlan) weigh(ckpt *Checkpoint, tech TechniqueName, mayGoFull bool) (string, bool) {
	var r CostRates
	if ckpt != nil && ckpt.Rates != nil {
		r = *ckpt.Rates
	}
	p.incrSeconds, p.fullSeconds, p.timed = r.seconds(p.incrCost, p.fullCost)
	if !mayGoFull || p.incrSeconds <= p.fullSeconds {
		return "", false
	}
	p.priced = true
	if n := len(p.candidates); n > 0 && p.candidates[n-1].Technique == tech {
		p.candidates = p.candidates[:n-1]
	}
	p.candidates = append(p.candidates, Candidate{Technique: tech, Cost: p.incrCost,
		Reason: fmt.Sprintf("estimated cost %s is above a full recompute's %s for %d changed rows", p.estimate(p.incrCost, p.incrSeconds), p.estimate(p.fullCost, p.fullSeconds), p.changed)})
	return fmt.Sprintf("%d changed source rows: a full recompute is estimated cheaper (%s against %s for %s)", p.changed, p.estimate(p.fullCost, p.fullSeconds), p.estimate(p.incrCost, p.incrSeconds), tech), true
}

// estimate prints an estimate: its units, and its seconds when a rate is
// learned.
func (p *refreshPlan) estimate(units, seconds float64) string {
	if !p.timed {
		return fmt.Sprintf("%.0f", units)
	}
	return fmt.Sprintf("%.0f (%.3f s)", units, seconds)
}

func has[T comparable](list []T, s T) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// changeCost is the cost of applying a change (R-I6, costmodel.go), in
// rows-scanned units: reading the change rows, running the change plans,
// writing the view rows they produce.
func changeCost(s *sizer, c *change, changed int64) float64 {
	return s.work(c.plus) + s.work(c.minus) + float64(changeRowCost*changed) + viewWriteCost*(s.rowsOf(c.plus)+s.rowsOf(c.minus))
}

// sizer estimates the rows a plan reads.
type sizer struct {
	txn   *storage.Txn
	est   *plan.Estimator // rows driving an index nested-loop join
	cache map[uint32]int64
	// keyCosts caches indexKeyCost per table and column (the statistics
	// are read once per refresh, not once per plan priced).
	keyCosts map[[2]uint32]int64
	err      error // the first read error (its count reads as 0)
}

// keyCost is indexKeyCost of col of t at the sizer's snapshot (cached).
func (s *sizer) keyCost(t *catalog.Table, col catalog.Column) int64 {
	k := [2]uint32{t.ID, col.ID}
	if c, ok := s.keyCosts[k]; ok {
		return c
	}
	c := indexKeyCost(s.txn, t, col, s.rows(t.ID))
	if s.keyCosts == nil {
		s.keyCosts = map[[2]uint32]int64{}
	}
	s.keyCosts[k] = c
	return c
}

func (s *sizer) rows(id uint32) int64 {
	if n, ok := s.cache[id]; ok {
		return n
	}
	n, err := s.txn.RowCount(storage.TableID(id))
	if err != nil {
		n = 0
		if s.err == nil {
			s.err = err
		}
	}
	s.cache[id] = n
	return n
}

func (s *sizer) cost(n plan.Node) int64 {
	if n == nil {
		return 0
	}
	var total int64
	switch x := n.(type) {
	case *plan.Scan:
		if x.Point != nil {
			return 1
		}
		if x.In != nil && x.Index != nil && len(x.Index.Columns) > 0 {
			per := int64(indexRowsPerKey)
			if i := x.Table.ColumnByID(x.Index.Columns[0].Col); i >= 0 {
				per = s.keyCost(x.Table, x.Table.Columns[i])
			}
			return int64(len(x.In)) * per
		}
		if x.In != nil {
			return int64(len(x.In)) * lookupRowsPerKey
		}
		if x.Keyed() {
			return lookupRowsPerKey
		}
		return s.rows(x.Table.ID)
	case *plan.Apply:
		// An index nested-loop join (the index-join rule): a lookup per
		// row of its outer side.
		// The estimator counts a scan narrowed to keys as the whole
		// table: the outer side's rows are at most what it reads.
		if s.est != nil {
			left := s.cost(x.Left)
			return left + int64(math.Min(s.est.Rows(x.Left), float64(left))*s.loopCost(x.Right))
		}
	case *plan.Given:
		return int64(len(x.Rows))
	}
	for _, c := range plan.NodeInputs(n) {
		total += s.cost(c)
	}
	return total
}

// candidates completes the planning record: every technique of R-I1 with
// why it was or was not chosen.
func (p *refreshPlan) allCandidates() []Candidate {
	out := []Candidate{{Technique: NoOp, Chosen: p.technique == NoOp, Reason: "sources changed"}}
	if p.technique == NoOp {
		out[0].Reason = p.reason
	}
	byTech := map[TechniqueName]Candidate{}
	for _, c := range p.candidates {
		byTech[c.Technique] = c
	}
	for _, t := range IncrementalTechniques {
		if t == TopK && (p.analysis == nil || !has(p.analysis.Shape, TopK)) {
			continue
		}
		c, ok := byTech[t]
		if !ok {
			c = Candidate{Technique: t, Reason: p.whyNot(t)}
		}
		c.Chosen = p.technique == t
		if c.Cost > 0 && p.timed {
			c.EstimatedSeconds = p.incrSeconds
		}
		if c.Chosen {
			c.Reason = p.reason
		} else if c.Reason == "" {
			c.Reason = "not chosen: " + p.reason
		}
		out = append(out, c)
	}
	fc := Candidate{Technique: FullRecompute, Chosen: p.technique == FullRecompute, Cost: p.fullCost, Reason: p.reason}
	if p.timed && fc.Cost > 0 {
		fc.EstimatedSeconds = p.fullSeconds
	}
	if !fc.Chosen {
		switch {
		case p.technique == NoOp:
			fc.Reason = "not needed: nothing changed"
			fc.Cost = 0
		case p.kept != "" && p.incrCost > p.fullCost:
			// Kept whatever the estimates say: the units shown decide
			// the wording (the seconds follow learned rates and load).
			fc.Reason = fmt.Sprintf("not chosen: %s, so %s is kept although its estimate is higher", p.kept, p.technique)
		case p.incrSeconds > p.fullSeconds:
			fc.Reason = fmt.Sprintf("not chosen: %s, so %s is kept although its estimate is higher", p.kept, p.technique)
		default:
			fc.Reason = "not chosen: " + string(p.technique) + " is estimated cheaper"
		}
	}
	for i := range out {
		if out[i].Chosen {
			out[i].ActualSeconds = p.actual.Seconds()
		}
	}
	if fc.Chosen {
		fc.ActualSeconds = p.actual.Seconds()
	}
	return append(out, fc)
}

func (p *refreshPlan) whyNot(t TechniqueName) string {
	an := p.analysis
	if an == nil {
		return "not analysed"
	}
	tech := techniqueByName(t)
	if ok, why := tech.Applies(an); !ok {
		return why
	}
	switch {
	case t == p.technique:
	case t == AppendOnly:
		return "the changes are not inserts only"
	case t == GenericAggregate && has(an.Techniques, GroupAggregate):
		return "GROUP_AGGREGATE maintains this aggregate more cheaply"
	}
	return ""
}

// feedGap explains a source whose change feed does not cover the versions
// since the checkpoint (R-I3, R-T9).
func feedGap(name string, from int64, cu *storage.ChangesUnavailableError) string {
	switch {
	case !cu.Vacuumed && cu.Rewritten >= 0:
		return fmt.Sprintf("%s: version %d of %s rewrote it whole (a full refresh written as a new generation) without recording row changes", ReasonSourceRewritten, cu.Rewritten, name)
	case cu.Vacuumed && cu.AvailableFrom < 0:
		return fmt.Sprintf("%s: the change feed of %s was vacuumed past version %d, the last one this view consumed (no versions are kept)", ReasonFeedVacuumed, name, from)
	case cu.Vacuumed:
		return fmt.Sprintf("%s: the change feed of %s was vacuumed past version %d, the last one this view consumed (it is kept from version %d)", ReasonFeedVacuumed, name, from, cu.AvailableFrom)
	case cu.AvailableFrom < 0:
		return fmt.Sprintf("%s: %s recorded no change feed for its latest version", ReasonCDFOff, name)
	}
	return fmt.Sprintf("%s: %s recorded no change feed for some versions after %d (it has one from version %d)", ReasonCDFOff, name, from, cu.AvailableFrom)
}
