package refresh

import (
	"context"
	"errors"
	"fmt"
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
	Reason    string        `json:"reason"`
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
	partitions  int // PARTITION_OVERWRITE: partitions recomputed
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
	full := func(reason string) (*refreshPlan, error) {
		p.technique, p.reason = FullRecompute, reason
		p.plus, p.minus, p.ga = nil, nil, nil
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
	sizes := &sizer{txn: in.Txn, est: in.estimator(), cache: map[uint32]int64{}}
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
	// The techniques in the table's order: the first that applies and
	// does not refuse builds the change.
	run := &techRun{in: in, an: an, deltas: deltas, insertOnly: insertOnly, dryRun: dryRun, changed: p.changed,
		df: &differ{ctx: in.Exec, est: in.estimator(), deltas: deltas, then: ckpt.At}}
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
	// Cost model (R-I6), in rows-scanned units: a change row costs about
	// five scanned rows (decode, hash, lookups by key); a written view row
	// about three (its delete or insert, the change record, the commit).
	viewRows := sizes.rows(v.ID)
	p.incrCost = chosen.Estimate(sizes, run, &change{plus: p.plus, minus: p.minus})
	p.fullCost = float64(sizes.cost(in.Query) + 3*viewRows)
	var sourceRows int64
	for id := range versions {
		sourceRows += sizes.rows(id)
	}
	p.candidates = append(p.candidates, Candidate{Technique: tech, Cost: p.incrCost})
	mine := &p.candidates[len(p.candidates)-1]
	// A small change never goes full on the estimate alone: only when the
	// change is a tenth of the sources or more (R-I6), and the sources are
	// not tiny (below a thousand rows either way is instant: the
	// incremental path keeps its state warm).
	if policy != "INCREMENTAL STRICT" && p.incrCost > p.fullCost && p.changed*10 >= sourceRows && p.fullCost >= 1000 {
		mine.Reason = fmt.Sprintf("estimated cost %.0f is above a full recompute's %.0f for %d changed rows", p.incrCost, p.fullCost, p.changed)
		return full(fmt.Sprintf("%d changed source rows: a full recompute is estimated cheaper (%.0f against %.0f for %s)", p.changed, p.fullCost, p.incrCost, tech))
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

func has[T comparable](list []T, s T) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// changeCost is the cost of applying a change (R-I6), in rows-scanned
// units: a change row costs about five scanned rows (decode, hash, lookups
// by key) on top of the rows its plans read.
func changeCost(s *sizer, c *change, changed int64) float64 {
	return float64(s.cost(c.plus) + s.cost(c.minus) + 5*changed)
}

// sizer estimates the rows a plan reads.
type sizer struct {
	txn   *storage.Txn
	est   *plan.Estimator // rows driving an index nested-loop join
	cache map[uint32]int64
	err   error // the first read error (its count reads as 0)
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
				per = indexKeyCost(s.txn, x.Table, x.Table.Columns[i], s.rows(x.Table.ID))
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
		if s.est != nil {
			return s.cost(x.Left) + int64(s.est.Rows(x.Left))*lookupRowsPerKey
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
		if c.Chosen {
			c.Reason = p.reason
		} else if c.Reason == "" {
			c.Reason = "not chosen: " + p.reason
		}
		out = append(out, c)
	}
	fc := Candidate{Technique: FullRecompute, Chosen: p.technique == FullRecompute, Cost: p.fullCost, Reason: p.reason}
	if !fc.Chosen {
		switch {
		case p.technique == NoOp:
			fc.Reason = "not needed: nothing changed"
		case p.incrCost > p.fullCost:
			fc.Reason = fmt.Sprintf("not chosen: %d changed rows are a small change, so %s is kept although its estimate is higher", p.changed, p.technique)
		default:
			fc.Reason = "not chosen: " + string(p.technique) + " is estimated cheaper"
		}
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
