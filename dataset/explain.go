package dataset

import (
	"fmt"
	"strings"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/settings"
	"github.com/mvserver/mvserver/sql/types"
)

// The rows of EXPLAIN REFRESH and EXPLAIN CREATE MATERIALIZED VIEW (R-I8):
// item and value, what the refresh would do or what the query allows.

// ExplainCols are the columns of EXPLAIN REFRESH and EXPLAIN CREATE.
var ExplainCols = []plan.Column{{Name: "item", T: types.Text}, {Name: "value", T: types.Text}}

func kv(k, v string) []types.Datum { return []types.Datum{types.NewText(k), types.NewText(v)} }

// ExplainRefusedRows are EXPLAIN REFRESH's rows for a view whose refresh
// would fail under REFRESH POLICY INCREMENTAL STRICT (R-I7): EXPLAIN says
// so rather than failing itself.
func ExplainRefusedRows(cat *catalog.Catalog, t *catalog.Table, pe *pgerror.Error) [][]types.Datum {
	rows := [][]types.Datum{
		kv("view", cat.QualifiedName(t)),
		kv("technique", "none: the refresh would fail"),
		kv("reason", pe.Message),
		kv("refresh policy", t.Dataset.Policy),
	}
	if pe.Hint != "" {
		rows = append(rows, kv("hint", pe.Hint))
	}
	return rows
}

// ExplainRefreshRows are EXPLAIN REFRESH's rows: the technique the next
// refresh would use and why, each source's pending versions, every
// candidate with its estimate, the change plans and the blockers.
func ExplainRefreshRows(cat *catalog.Catalog, t *catalog.Table, e *refresh.Explanation) [][]types.Datum {
	rows := [][]types.Datum{
		kv("view", cat.QualifiedName(t)),
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
			src.Kind, consumed, src.CurrentVersion, pending, settings.OnOff(src.ChangeDataFeed), settings.OnOff(src.RowTracking))))
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
	va := Locate(cat, SearchPath(t), StoredQuery(t), e.Analysis)
	for _, b := range va.Blockers {
		rows = append(rows, kv("blocker "+b.Code, va.BlockerValue(b)))
	}
	return rows
}

// ExplainCreateRows are EXPLAIN CREATE MATERIALIZED VIEW's rows for the
// bound query (its columns as "name type", its sources ids, and va its
// analysis): whether it can be refreshed incrementally, with which
// techniques, and every blocker with where it is and the fix.
func ExplainCreateRows(cat *catalog.Catalog, c *parse.CreateMaterializedView, names []string, ids []uint32, va *Analysis) [][]types.Datum {
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
		t, _ := cat.Table(id)
		rows = append(rows, kv("source "+cat.QualifiedName(t), SourceFeatures(cat, t)))
	}
	bs, _ := va.RelevantBlockers()
	for _, b := range bs {
		rows = append(rows, kv("blocker "+b.Code, va.BlockerValue(b)))
	}
	return rows
}

// SourceFeatures describes a source's table features; a plain view has none
// of its own, so the tables it reads are listed with theirs.
func SourceFeatures(cat *catalog.Catalog, t *catalog.Table) string {
	features := func(t *catalog.Table) string {
		return fmt.Sprintf("change data feed %s, row tracking %s", settings.OnOff(t.ChangeDataFeed()), settings.OnOff(t.RowTracking()))
	}
	switch {
	case catalog.IsSystem(t):
		return "system view; no change data feed"
	case t.Kind != catalog.KindView:
		return KindName(t.Kind) + "; " + features(t)
	}
	var under []string
	_ = cat.WalkSources(t.DependsOn, func(_ uint32, u *catalog.Table, _ bool) error {
		switch {
		case u == nil:
		case catalog.IsSystem(u):
			under = append(under, u.Name+" (system view, no change data feed)")
		case u.Kind != catalog.KindView:
			under = append(under, cat.QualifiedName(u)+" ("+features(u)+")")
		}
		return nil
	})
	if len(under) == 0 {
		return "view; reads no table"
	}
	return "view; reads " + strings.Join(under, ", ")
}
