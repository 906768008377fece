package dataset

import (
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/types"
)

// What the web console shows of a dataset, computed by the same code as
// DESCRIBE EXTENDED, mv_insights and ENABLE INCREMENTAL, so the console
// and SQL never disagree.

// Report is a materialized view's incrementality analysis as
// mv_insights reports it (R-I8, R-I9).
type Report struct {
	*refresh.Analysis
	// Query is the text the blockers' positions point into.
	Query string
	// Relevant are the blockers that rule out a technique the query's
	// shape allows, each with its Position in Query (0: unknown).
	Relevant []refresh.Blocker
	// Where is "line L, column C" of each relevant blocker ("" if unknown).
	Where []string
}

// Analyze reports on a stored materialized view against cat.
func Analyze(cat *catalog.Catalog, v *catalog.Table) (*Report, error) {
	va, err := AnalyzeStored(cat, v, &types.Env{Loc: time.UTC})
	if err != nil {
		return nil, err
	}
	out := &Report{Analysis: va.Analysis}
	if va.Query != nil {
		out.Query = va.Query.Text
	}
	out.Relevant, _ = va.RelevantBlockers()
	for _, b := range out.Relevant {
		out.Where = append(out.Where, va.Where(b))
	}
	return out, nil
}

// FeatureChange is one source table that ALTER MATERIALIZED VIEW … ENABLE
// INCREMENTAL would change, and the properties it would set to true.
type FeatureChange struct {
	ID    uint32
	Table string // schema.name
	Kind  string // "table", "materialized view", …
	Keys  []string
}

// EnableIncrementalChanges lists what ENABLE INCREMENTAL on v would change
// now: every source of v, through plain views, that lacks the change data
// feed or row tracking, in the order the statement visits them (R-I9).
func EnableIncrementalChanges(cat *catalog.Catalog, v *catalog.Table) []FeatureChange {
	var out []FeatureChange
	for _, t := range cat.StoredSources(v.DependsOn) {
		var keys []string
		if !t.ChangeDataFeed() {
			keys = append(keys, catalog.PropChangeDataFeed)
		}
		if !t.RowTracking() {
			keys = append(keys, catalog.PropRowTracking)
		}
		if len(keys) > 0 {
			out = append(out, FeatureChange{ID: t.ID, Table: cat.QualifiedName(t), Kind: KindName(t.Kind), Keys: keys})
		}
	}
	return out
}

// KindName is a relation kind as messages and the console say it.
func KindName(k catalog.ObjectKind) string {
	switch k {
	case catalog.KindView:
		return "view"
	case catalog.KindMaterializedView:
		return "materialized view"
	case catalog.KindStreamingTable:
		return "streaming table"
	}
	return "table"
}
