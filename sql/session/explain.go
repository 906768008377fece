package session

import (
	"fmt"
	"strings"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/dataset"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

var explainCols = []plan.Column{{Name: "item", T: types.Text}, {Name: "value", T: types.Text}}

func kv(k, v string) []types.Datum { return []types.Datum{types.NewText(k), types.NewText(v)} }

// explainRefresh answers EXPLAIN REFRESH MATERIALIZED VIEW: what the next
// refresh would do now, without doing it (R-I8).
func (s *Session) explainRefresh(r *parse.RefreshDataset) (plan.Node, error) {
	t, err := s.resolve(r.Name)
	if err != nil {
		return nil, err
	}
	if t.Kind != catalog.KindMaterializedView {
		return nil, pgerror.New(pgerror.WrongObjectType, "\"%s\" is not a materialized view", t.Name).WithPosition(r.Name.Pos)
	}
	// EXPLAIN of a statement needs what the statement needs (PostgreSQL's
	// rule): REFRESH (MAINTAIN).
	if err := s.require(t, catalog.PrivMaintain); err != nil {
		return nil, err
	}
	e, err := refresh.Explain(s.txn, s.cat, t.ID, s.refreshOptions(r.Full, "MANUAL"))
	if err != nil {
		// INCREMENTAL STRICT: a refresh that cannot be incremental now
		// fails (R-I7); EXPLAIN says so rather than failing itself.
		if pe := pgerror.Convert(err); pe.Code == pgerror.FeatureNotSupported && t.Dataset.Policy == string(parse.PolicyIncrementalStrict) {
			rows := [][]types.Datum{
				kv("view", s.cat.QualifiedName(t)),
				kv("technique", "none: the refresh would fail"),
				kv("reason", pe.Message),
				kv("refresh policy", t.Dataset.Policy),
			}
			if pe.Hint != "" {
				rows = append(rows, kv("hint", pe.Hint))
			}
			return constRows(explainCols, rows), nil
		}
		return nil, err
	}
	rows := [][]types.Datum{
		kv("view", s.cat.QualifiedName(t)),
		kv("technique", string(e.Technique)),
		kv("reason", e.Reason),
		kv("refresh policy", t.Dataset.Policy),
	}
	for _, src := range e.Sources {
		consumed := "never"
		if src.CheckpointVersion >= 0 {
			consumed = fmt.Sprintf("version %d", src.CheckpointVersion)
		}
		pending := "no pending changes"
		if src.CheckpointVersion != src.CurrentVersion {
			pending = fmt.Sprintf("pending versions %d..%d", src.CheckpointVersion+1, src.CurrentVersion)
		}
		rows = append(rows, kv("source "+src.Name, fmt.Sprintf("%s; consumed %s, now version %d; %s; change data feed %s, row tracking %s",
			src.Kind, consumed, src.CurrentVersion, pending, onOff(src.ChangeDataFeed), onOff(src.RowTracking))))
	}
	rows = append(rows, kv("changed source rows", fmt.Sprint(e.ChangedRows)))
	for _, c := range e.Candidates {
		v := c.Reason
		if c.Cost > 0 {
			v = fmt.Sprintf("estimated cost %.0f; %s", c.Cost, v)
		}
		if c.Chosen {
			v = "chosen: " + v
		}
		rows = append(rows, kv("candidate "+string(c.Technique), v))
	}
	for _, p := range e.Plans {
		for _, l := range p.Lines {
			rows = append(rows, kv(p.Name, l))
		}
	}
	va := dataset.Locate(s.cat, dataset.SearchPath(t), dataset.StoredQuery(t), e.Analysis)
	for _, b := range va.Blockers {
		rows = append(rows, kv("blocker "+b.Code, va.BlockerValue(b)))
	}
	return constRows(explainCols, rows), nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// explainCreate answers EXPLAIN CREATE MATERIALIZED VIEW: the query is bound
// (errors as CREATE would give them) and analysed; nothing is created
// (R-I8). It says whether the query can be refreshed incrementally, with
// which techniques, and where each blocker is (line and column in the
// query), why, and the fix.
func (s *Session) explainCreate(c *parse.CreateMaterializedView) (plan.Node, error) {
	ids, err := s.references(c.Query)
	if err != nil {
		return nil, err
	}
	b := s.binder(c.Query, nil)
	q, err := b.BindSelect(c.Query.AST.GetSelectStmt())
	if err != nil {
		return nil, err
	}
	var names []string
	for _, col := range q.Cols {
		names = append(names, col.Name+" "+col.T.SparkName())
	}
	// The expectations and NOT NULL columns matter to the analysis (R-I2).
	v := &catalog.Table{Name: c.Name.String(), Kind: catalog.KindMaterializedView, Dataset: &catalog.Dataset{}}
	for i, col := range q.Cols {
		cc := catalog.Column{Name: col.Name, Type: col.T}
		if i < len(c.Columns) {
			cc.Name, cc.NotNull = c.Columns[i].Name, c.Columns[i].NotNull
		}
		v.Columns = append(v.Columns, cc)
	}
	for _, e := range c.Expectations {
		v.Dataset.Expectations = append(v.Dataset.Expectations, catalog.Expectation{Name: e.Name, Expr: e.Expr, Action: e.Action})
	}
	va := s.analyzeNew(v, c.Query, q.Root, ids)
	policy := string(parse.PolicyAuto)
	if c.Clauses.Policy != "" {
		policy = string(c.Clauses.Policy)
	}
	verdict := "yes"
	switch {
	case va.Permanent():
		verdict = "no: the query can never be refreshed incrementally; every refresh that finds changed sources recomputes it in full"
		if policy == string(parse.PolicyIncremental) || policy == string(parse.PolicyIncrementalStrict) {
			verdict += "; CREATE with REFRESH POLICY " + policy + " fails"
		}
	case !va.Incremental():
		verdict = "not yet: the sources lack table features (see the blockers); until they are on, refreshes recompute in full"
		if policy == string(parse.PolicyIncrementalStrict) {
			verdict += "; under REFRESH POLICY INCREMENTAL STRICT they fail"
		}
	}
	available := "none (NO_OP and FULL_RECOMPUTE only)"
	if len(va.Techniques) > 0 {
		available = refresh.JoinNames(va.Techniques, ", ")
	}
	rows := [][]types.Datum{
		kv("view", c.Name.String()),
		kv("columns", strings.Join(names, ", ")),
		kv("refresh policy", policy),
		kv("incrementalizable", verdict),
		kv("query shape allows", refresh.JoinNames(va.Shape, ", ")),
		kv("techniques available", available),
	}
	for _, id := range ids {
		t, _ := s.cat.Table(id)
		rows = append(rows, kv("source "+s.cat.QualifiedName(t), s.sourceFeatures(t)))
	}
	bs, _ := va.RelevantBlockers()
	for _, b := range bs {
		rows = append(rows, kv("blocker "+b.Code, va.BlockerValue(b)))
	}
	return constRows(explainCols, rows), nil
}

// sourceFeatures describes a source's table features; a plain view has none
// of its own, so the tables it reads are listed with theirs.
func (s *Session) sourceFeatures(t *catalog.Table) string {
	features := func(t *catalog.Table) string {
		return fmt.Sprintf("change data feed %s, row tracking %s", onOff(t.ChangeDataFeed()), onOff(t.RowTracking()))
	}
	switch {
	case catalog.IsSystem(t):
		return "system view; no change data feed"
	case t.Kind != catalog.KindView:
		return dataset.KindName(t.Kind) + "; " + features(t)
	}
	var under []string
	seen := map[uint32]bool{}
	var walk func(ids []uint32)
	walk = func(ids []uint32) {
		for _, id := range ids {
			u, ok := s.cat.Table(id)
			if !ok || seen[id] {
				continue
			}
			seen[id] = true
			switch {
			case catalog.IsSystem(u):
				under = append(under, u.Name+" (system view, no change data feed)")
			case u.Kind == catalog.KindView:
				walk(u.DependsOn)
			default:
				under = append(under, s.cat.QualifiedName(u)+" ("+features(u)+")")
			}
		}
	}
	walk(t.DependsOn)
	if len(under) == 0 {
		return "view; reads no table"
	}
	return "view; reads " + strings.Join(under, ", ")
}
