package web

import (
	"sort"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/dataset"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/parse"
)

// insight is one materialized view that could refresh incrementally but
// for a source's missing change data feed or row tracking (R-I9): what
// the banner offers to enable, and exactly which tables that changes.
type insight struct {
	View     string // schema.name
	URL      string
	Action   string // the enable-incremental POST target
	Problems []insightProblem
	Changes  []dataset.FeatureChange
	Stmt     string // the statement the button runs
}

type insightProblem struct {
	Code   string
	Source string
	Fix    string
}

// featureBlocker reports whether a blocker is a table feature that ENABLE
// INCREMENTAL turns on.
func featureBlocker(b refresh.Blocker) bool {
	return b.Code == refresh.ReasonCDFOff || b.Code == refresh.ReasonRowTrackingOff
}

// insightsFor lists the insights of the given materialized views (all when
// only is nil). A view whose policy is FULL asked for full refreshes and
// is not listed; nor is one whose query can never be incremental (enabling
// features would not help it).
func insightsFor(cat *catalog.Catalog, only *catalog.Table, canSee func(*catalog.Table) bool) []insight {
	var out []insight
	for _, v := range cat.Tables() {
		if v.Kind != catalog.KindMaterializedView || (only != nil && v.ID != only.ID) || !canSee(v) {
			continue
		}
		if v.Dataset != nil && v.Dataset.Policy == string(parse.PolicyFull) {
			continue
		}
		an, err := dataset.Analyze(cat, v)
		if err != nil || an.Permanent() {
			continue
		}
		var probs []insightProblem
		for _, b := range an.Relevant {
			if featureBlocker(b) {
				probs = append(probs, insightProblem{Code: b.Code, Source: b.Object, Fix: b.Fix})
			}
		}
		if len(probs) == 0 {
			continue
		}
		changes := dataset.EnableIncrementalChanges(cat, v)
		if len(changes) == 0 {
			continue
		}
		u := datasetURL(cat, v)
		out = append(out, insight{View: cat.QualifiedName(v), URL: u, Action: u + "/enable-incremental", Problems: probs, Changes: changes,
			Stmt: enableIncrementalSQL(cat, v)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].View < out[j].View })
	return out
}

func schemaName(cat *catalog.Catalog, t *catalog.Table) string {
	if s, ok := cat.SchemaByID(t.SchemaID); ok {
		return s.Name
	}
	return ""
}

func enableIncrementalSQL(cat *catalog.Catalog, v *catalog.Table) string {
	return "ALTER MATERIALIZED VIEW " + qualified(schemaName(cat, v), v.Name) + " ENABLE INCREMENTAL"
}
