package dataset

import (
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/types"
)

// What blocks a materialized view's incremental refresh, located in its
// query as the user wrote it (R-I8, R-I9). One analysis serves the REFRESH
// POLICY INCREMENTAL check of CREATE and ALTER (R-I7), ENABLE INCREMENTAL,
// EXPLAIN CREATE and EXPLAIN REFRESH, the NOTICEs of CREATE and REFRESH,
// the mv_insights system view and the web console.

// Analysis is refresh.Analyze's verdict with every blocker's Position
// filled in: the 1-based character position in query.Text.
type Analysis struct {
	*refresh.Analysis
	// Query is the view's query as written (nil when it cannot be parsed
	// again, and then no blocker has a position).
	Query *parse.Statement
	// Locs are the blockers' pg_query locations in query (-1: unknown),
	// for an error cursor in the client's statement.
	Locs []int32
}

// Locate fills in the positions of an's blockers in q; searchPath is the
// one q's names were resolved with.
func Locate(cat *catalog.Catalog, searchPath []string, q *parse.Statement, an *refresh.Analysis) *Analysis {
	va := &Analysis{Analysis: an, Query: q}
	for i := range an.Blockers {
		loc := int32(-1)
		if q != nil && q.AST != nil {
			loc = blockerLocation(cat, searchPath, q, an.Blockers[i])
			an.Blockers[i].Position = q.TextPosition(loc)
		}
		va.Locs = append(va.Locs, loc)
	}
	return va
}

// AnalyzeStored analyses a materialized view as stored: its query bound
// against cat, located in the text its CREATE gave.
func AnalyzeStored(cat *catalog.Catalog, v *catalog.Table, env *types.Env) (*Analysis, error) {
	root, _, err := refresh.BindQuery(cat, v, env)
	if err != nil {
		return nil, err
	}
	an := refresh.Analyze(cat, v, root, v.DependsOn)
	return Locate(cat, SearchPath(v), StoredQuery(v), an), nil
}

// StoredQuery parses a view's query as its CREATE wrote it (the
// canonical text when that is not kept); nil when neither parses.
func StoredQuery(v *catalog.Table) *parse.Statement {
	text := v.Query
	if v.Dataset != nil && v.Dataset.QueryText != "" {
		text = v.Dataset.QueryText
	}
	q, err := parse.ParseOne(text)
	if err != nil || q == nil || q.AST == nil {
		return nil
	}
	return q
}

// SearchPath is the search path a dataset's query was resolved with.
func SearchPath(v *catalog.Table) []string {
	if v.Dataset != nil {
		return v.Dataset.SearchPath
	}
	return nil
}

// blockerLocation finds the construct a blocker is about (R-I8): the call
// of its function, the WITH RECURSIVE clause, the LIMIT, the subquery, the
// column, or — for a source's missing feature — the reference to the
// source, or to the plain view it is read through.
func blockerLocation(cat *catalog.Catalog, searchPath []string, q *parse.Statement, b refresh.Blocker) int32 {
	switch {
	case b.Func != "":
		return parse.FuncLocation(q.AST, b.Func)
	case b.Code == refresh.ReasonRecursiveCTE:
		return parse.RecursiveWithLocation(q.AST, b.Object)
	case b.Code == refresh.ReasonLimit:
		return q.LimitLocation()
	case b.Code == refresh.ReasonSubquery:
		return parse.SubLinkLocation(q.AST)
	case b.Code == refresh.ReasonRowMetadata:
		return parse.ColumnLocation(q.AST, b.Object)
	case b.Code == refresh.ReasonSystemSource:
		if l := parse.FuncLocation(q.AST, b.Object); l >= 0 {
			return l
		}
		return parse.RelationLocation(q.AST, func(rv *pg_query.RangeVar) bool { return rv.Relname == b.Object })
	}
	ctes := parse.CTENames(q.AST)
	return parse.RelationLocation(q.AST, func(rv *pg_query.RangeVar) bool {
		if rv.Schemaname == "" && rv.Catalogname == "" && ctes[rv.Relname] {
			return false
		}
		t, err := cat.Resolve(parse.RangeVarParts(rv), searchPath)
		return err == nil && readsRelation(cat, t, b.Object, map[uint32]bool{})
	})
}

// readsRelation reports whether t is the relation called name (qualified)
// or a plain view that reads it.
func readsRelation(cat *catalog.Catalog, t *catalog.Table, name string, seen map[uint32]bool) bool {
	if seen[t.ID] {
		return false
	}
	seen[t.ID] = true
	if cat.QualifiedName(t) == name {
		return true
	}
	if t.Kind != catalog.KindView {
		return false
	}
	for _, id := range t.DependsOn {
		if d, ok := cat.Table(id); ok && readsRelation(cat, d, name, seen) {
			return true
		}
	}
	return false
}

// Relevant reports whether b rules out a technique the query's shape
// allows: row tracking, say, does not matter to an aggregate maintained by
// GROUP_AGGREGATE.
func (va *Analysis) Relevant(b refresh.Blocker) bool {
	if len(b.Techniques) == 0 {
		return true
	}
	for _, t := range b.Techniques {
		for _, s := range va.Shape {
			if s == t {
				return true
			}
		}
	}
	return false
}

// RelevantBlockers lists the relevant blockers with their locations.
func (va *Analysis) RelevantBlockers() ([]refresh.Blocker, []int32) {
	var bs []refresh.Blocker
	var locs []int32
	for i, b := range va.Blockers {
		if va.Relevant(b) {
			bs = append(bs, b)
			locs = append(locs, va.Locs[i])
		}
	}
	return bs, locs
}

// Where is "line L, column C" of the blocker in the query, "" if unknown.
func (va *Analysis) Where(b refresh.Blocker) string {
	if va.Query == nil {
		return ""
	}
	line, col, ok := parse.LineColumn(va.Query.Text, b.Position)
	if !ok {
		return ""
	}
	return fmt.Sprintf("line %d, column %d", line, col)
}

// Describe is one blocker as a phrase: code, where, what, and why.
func (va *Analysis) Describe(b refresh.Blocker) string {
	s := b.Code
	if w := va.Where(b); w != "" {
		s += " at " + w
	}
	if b.Object != "" {
		s += " (" + b.Object + ")"
	}
	return s + ": " + b.Message
}

// NeverIncremental is the error of REFRESH POLICY INCREMENTAL [STRICT] and
// ENABLE INCREMENTAL on a query that can never be maintained incrementally
// (R-I7): every permanent blocker with where it is and its fix, the cursor
// on the first when the query is in the statement (q).
func (va *Analysis) NeverIncremental(view, why string, q *parse.Statement) *pgerror.Error {
	var parts []string
	pos := int32(0)
	bs, locs := va.RelevantBlockers()
	for i, b := range bs {
		if !b.Permanent {
			continue
		}
		p := va.Describe(b)
		if b.Fix != "" {
			p += " (fix: " + b.Fix + ")"
		}
		parts = append(parts, p)
		if pos == 0 && q != nil && locs[i] >= 0 {
			pos = q.Position(locs[i])
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "no incremental technique applies to this query")
	}
	return pgerror.New(pgerror.FeatureNotSupported, "materialized view \"%s\" can never be refreshed incrementally, which %s requires: %s", view, why, strings.Join(parts, "; ")).
		WithHint("Change the query as the fixes say, or use REFRESH POLICY AUTO or FULL (a full recompute at each refresh that finds changed sources).").
		WithPosition(pos)
}

// CheckIncrementalPolicy rejects REFRESH POLICY INCREMENTAL [STRICT] for a
// query that can never be incremental (R-I7); a missing table feature is
// accepted (the refreshes fall back to full, or fail under STRICT, until it
// is turned on) and said in a NOTICE by the caller.
func CheckIncrementalPolicy(view, policy string, va *Analysis, q *parse.Statement) error {
	if policy != string(parse.PolicyIncremental) && policy != string(parse.PolicyIncrementalStrict) {
		return nil
	}
	if va.Permanent() {
		return va.NeverIncremental(view, "REFRESH POLICY "+policy, q)
	}
	return nil
}

// BlockerValue is a blocker as EXPLAIN shows it: where, what, why and the
// fix.
func (va *Analysis) BlockerValue(b refresh.Blocker) string {
	var parts []string
	if w := va.Where(b); w != "" {
		parts = append(parts, "at "+w)
	}
	if b.Object != "" {
		parts = append(parts, b.Object)
	}
	parts = append(parts, b.Message)
	v := strings.Join(parts, ": ")
	if b.Fix != "" {
		v += "; fix: " + b.Fix
	}
	return v
}
