package session

import (
	"fmt"
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// What blocks a materialized view's incremental refresh, located in its
// query as the user wrote it (R-I8, R-I9). One analysis serves the REFRESH
// POLICY INCREMENTAL check of CREATE and ALTER (R-I7), ENABLE INCREMENTAL,
// EXPLAIN CREATE and EXPLAIN REFRESH, the NOTICEs of CREATE and REFRESH,
// and the mv_insights system view.

// viewAnalysis is refresh.Analyze's verdict with every blocker's Position
// filled in: the 1-based character position in query.Text.
type viewAnalysis struct {
	*refresh.Analysis
	// query is the view's query as written (nil when it cannot be parsed
	// again, and then no blocker has a position).
	query *parse.Statement
	// locs are the blockers' pg_query locations in query (-1: unknown),
	// for an error cursor in the client's statement.
	locs []int32
}

// locate fills in the positions of an's blockers in q; searchPath is the
// one q's names were resolved with.
func locate(cat *catalog.Catalog, searchPath []string, q *parse.Statement, an *refresh.Analysis) *viewAnalysis {
	va := &viewAnalysis{Analysis: an, query: q}
	for i := range an.Blockers {
		loc := int32(-1)
		if q != nil && q.AST != nil {
			loc = blockerLocation(cat, searchPath, q, an.Blockers[i])
			an.Blockers[i].Position = q.TextPosition(loc)
		}
		va.locs = append(va.locs, loc)
	}
	return va
}

// analyzeStored analyses a materialized view as stored: its query bound
// against cat, located in the text its CREATE gave.
func analyzeStored(cat *catalog.Catalog, v *catalog.Table, env *types.Env) (*viewAnalysis, error) {
	root, _, err := refresh.BindQuery(cat, v, env)
	if err != nil {
		return nil, err
	}
	an := refresh.Analyze(cat, v, root, v.DependsOn)
	return locate(cat, datasetSearchPath(v), storedQuery(v), an), nil
}

// storedQuery parses a view's query as its CREATE wrote it (the
// canonical text when that is not kept); nil when neither parses.
func storedQuery(v *catalog.Table) *parse.Statement {
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

func datasetSearchPath(v *catalog.Table) []string {
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
		t, err := cat.Resolve(rangeVarParts(rv), searchPath)
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

// relevant reports whether b rules out a technique the query's shape
// allows: row tracking, say, does not matter to an aggregate maintained by
// GROUP_AGGREGATE.
func (va *viewAnalysis) relevant(b refresh.Blocker) bool {
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

// relevantBlockers lists the relevant blockers with their locations.
func (va *viewAnalysis) relevantBlockers() ([]refresh.Blocker, []int32) {
	var bs []refresh.Blocker
	var locs []int32
	for i, b := range va.Blockers {
		if va.relevant(b) {
			bs = append(bs, b)
			locs = append(locs, va.locs[i])
		}
	}
	return bs, locs
}

// where is "line L, column C" of the blocker in the query, "" if unknown.
func (va *viewAnalysis) where(b refresh.Blocker) string {
	if va.query == nil {
		return ""
	}
	line, col, ok := parse.LineColumn(va.query.Text, b.Position)
	if !ok {
		return ""
	}
	return fmt.Sprintf("line %d, column %d", line, col)
}

// describe is one blocker as a phrase: code, where, what, and why.
func (va *viewAnalysis) describe(b refresh.Blocker) string {
	s := b.Code
	if w := va.where(b); w != "" {
		s += " at " + w
	}
	if b.Object != "" {
		s += " (" + b.Object + ")"
	}
	return s + ": " + b.Message
}

// neverIncremental is the error of REFRESH POLICY INCREMENTAL [STRICT] and
// ENABLE INCREMENTAL on a query that can never be maintained incrementally
// (R-I7): every permanent blocker with where it is and its fix, the cursor
// on the first when the query is in the statement (q).
func (va *viewAnalysis) neverIncremental(view, why string, q *parse.Statement) *pgerror.Error {
	var parts []string
	pos := int32(0)
	bs, locs := va.relevantBlockers()
	for i, b := range bs {
		if !b.Permanent {
			continue
		}
		p := va.describe(b)
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

// blockerNotices sends one NOTICE per relevant blocker: the reason, where
// it is, and the fix as the hint (R-I9). A view with REFRESH POLICY FULL
// asked for full refreshes and is told nothing.
func (s *Session) blockerNotices(view string, policy string, va *viewAnalysis) {
	if policy == string(parse.PolicyFull) {
		return
	}
	bs, _ := va.relevantBlockers()
	for _, b := range bs {
		lead := fmt.Sprintf("materialized view \"%s\" cannot be refreshed incrementally until this is fixed", view)
		if b.Permanent {
			lead = fmt.Sprintf("materialized view \"%s\" can never be refreshed incrementally", view)
		}
		n := pgerror.Notice("%s: %s", lead, va.describe(b))
		n.Hint = b.Fix
		s.notices = append(s.notices, n)
	}
}

// storedNotices sends the blocker NOTICEs of a stored view (after a
// refresh); a view that no longer binds is reported by the refresh itself.
func (s *Session) storedNotices(v *catalog.Table) {
	va, err := analyzeStored(s.cat, v, s.env)
	if err != nil {
		return
	}
	s.blockerNotices(v.Name, v.Dataset.Policy, va)
}

// checkIncrementalPolicy rejects REFRESH POLICY INCREMENTAL [STRICT] for a
// query that can never be incremental (R-I7); a missing table feature is
// accepted (the refreshes fall back to full, or fail under STRICT, until it
// is turned on) and said in a NOTICE by the caller.
func checkIncrementalPolicy(view, policy string, va *viewAnalysis, q *parse.Statement) error {
	if policy != string(parse.PolicyIncremental) && policy != string(parse.PolicyIncrementalStrict) {
		return nil
	}
	if va.Permanent() {
		return va.neverIncremental(view, "REFRESH POLICY "+policy, q)
	}
	return nil
}

// The mv_insights system view (R-I9): one row per materialized view and
// relevant blocker, computed from the catalog snapshot the statement reads.
func init() {
	exec.RegisterRowSource(plan.GenMVInsights, func(_ *exec.Ctx, arg any) ([]exec.Row, error) {
		rows := insightRows(arg.(*catalog.Catalog))
		out := make([]exec.Row, len(rows))
		for i, r := range rows {
			out[i] = r
		}
		return out, nil
	})
}

// ReasonInvalidDefinition is mv_insights' problem for a view whose query
// no longer binds (a source column dropped, R-M8).
const ReasonInvalidDefinition = "INVALID_DEFINITION"

func insightRows(c *catalog.Catalog) [][]types.Datum {
	env := &types.Env{Loc: time.UTC}
	text := func(s string) types.Datum {
		if s == "" {
			return types.NullDatum
		}
		return types.NewText(s)
	}
	var rows [][]types.Datum
	for _, v := range c.Tables() {
		if v.Kind != catalog.KindMaterializedView {
			continue
		}
		name := c.QualifiedName(v)
		va, err := analyzeStored(c, v, env)
		if err != nil {
			rows = append(rows, []types.Datum{text(name), types.NullDatum, types.NullDatum, text(ReasonInvalidDefinition), types.NullDatum,
				text(pgerror.Convert(err).Message), text("CREATE OR REPLACE the materialized view with a query that reads existing columns"), types.NewBool(false)})
			continue
		}
		bs, _ := va.relevantBlockers()
		for _, b := range bs {
			var source string
			switch b.Code {
			case refresh.ReasonCDFOff, refresh.ReasonRowTrackingOff, refresh.ReasonExpectationsView:
				source = b.Object
			}
			rows = append(rows, []types.Datum{text(name), text(source), text(b.Object), text(b.Code), text(va.where(b)),
				text(b.Message), text(b.Fix), types.NewBool(b.Permanent)})
		}
	}
	return rows
}

// analyzeNew analyses the query of a view being created (v is its
// descriptor, not yet in cat).
func (s *Session) analyzeNew(v *catalog.Table, q *parse.Statement, root plan.Node, sources []uint32) *viewAnalysis {
	return locate(s.cat, s.resolvePath(), q, refresh.Analyze(s.cat, v, root, sources))
}
