package refresh

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// Reason codes of blockers (R-I3): stable, documented, shown by EXPLAIN,
// NOTICEs, mv_insights and the event log.
const (
	ReasonCDFOff            = "CHANGE_DATA_FEED_NOT_ENABLED"
	ReasonRowTrackingOff    = "ROW_TRACKING_NOT_ENABLED"
	ReasonNonDeterministic  = "NON_DETERMINISTIC_EXPRESSION"
	ReasonFloatAggregate    = "FLOAT_AGGREGATE"
	ReasonOrderDependent    = "ORDER_DEPENDENT_AGGREGATE"
	ReasonRecursiveCTE      = "RECURSIVE_CTE"
	ReasonLimit             = "LIMIT"
	ReasonSubquery          = "SUBQUERY_EXPRESSION"
	ReasonLateral           = "LATERAL_JOIN"
	ReasonSystemSource      = "NON_TABLE_SOURCE"
	ReasonRowMetadata       = "ROW_COMMIT_VERSION_COLUMN"
	ReasonExpectationsView  = "EXPECTATIONS_IN_SOURCE_VIEW"
	ReasonDropRowNotNull    = "DROP_ROW_WITH_NOT_NULL"
	ReasonFeedVacuumed      = "CHANGE_FEED_VACUUMED"
	ReasonSourceRewritten   = "SOURCE_REWRITTEN"
	ReasonUnsupported       = "UNSUPPORTED_OPERATOR"
	ReasonWindowNoPartition = "WINDOW_WITHOUT_PARTITION_BY"
	ReasonDistinctOn        = "DISTINCT_ON"
)

// Blocker is one reason a view cannot be refreshed incrementally.
type Blocker struct {
	Code    string
	Message string
	// Object is the source table, function or construct concerned.
	Object string
	// Func is the SQL name of the function concerned, when it is one
	// (for locating it in the query text).
	Func string
	// Fix is what to change: an exact statement where one exists.
	Fix string
	// Techniques lists the techniques this blocks; empty = all of them.
	Techniques []TechniqueName
	// Permanent: the query itself can never be incremental (as opposed
	// to a table feature that can be turned on).
	Permanent bool
	// Position is the 1-based character position in the query text of
	// the construct, 0 when unknown (the session fills it in).
	Position int
}

// Analysis says whether and how a view's query can refresh incrementally
// (R-I2, R-I3, R-I8).
type Analysis struct {
	// Shape lists the incremental techniques the query's shape allows, in
	// order of preference.
	Shape []TechniqueName
	// Techniques lists those of Shape that no blocker rules out.
	Techniques []TechniqueName
	Blockers   []Blocker
	// groupAgg is set when the top of the query is an aggregate that
	// GROUP_AGGREGATE maintains.
	groupAgg *groupAggShape
	// groupAggWhyNot says why GROUP_AGGREGATE cannot maintain a query
	// that ends in an aggregate (EXPLAIN REFRESH's candidate line).
	groupAggWhyNot string
	// partition is set when the view's partition columns trace to one
	// source (PARTITION_OVERWRITE).
	partition *partitionShape
	// topK is set when the query ends in ORDER BY … LIMIT k (TOP_K).
	topK *topKShape
	// partitioned: the view has PARTITIONED BY columns.
	partitioned bool
	// TimeDependent: a WHERE compares with now()/current_timestamp/
	// current_date, so the result changes with time alone (R-I5).
	TimeDependent bool
	// NonTableSource: the query reads a system relation or a change
	// feed, whose rows change without a source version moving: every
	// refresh recomputes it (never NO_OP).
	NonTableSource bool
}

// Incremental reports whether some incremental technique is possible now.
func (a *Analysis) Incremental() bool { return len(a.Techniques) > 0 }

// Permanent reports whether the query can never be incremental: every
// technique its shape allows has a permanent blocker.
func (a *Analysis) Permanent() bool {
	for _, t := range a.Shape {
		blocked := false
		for _, b := range a.Blockers {
			if b.Permanent && (len(b.Techniques) == 0 || has(b.Techniques, t)) {
				blocked = true
				break
			}
		}
		if !blocked {
			return false
		}
	}
	return true
}

// Summary is the blockers as one line, for messages.
func (a *Analysis) Summary() string {
	var parts []string
	for _, b := range a.Blockers {
		s := b.Code + ": " + b.Message
		if b.Fix != "" {
			s += " (fix: " + b.Fix + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// Analyze examines a view's bound query and its sources. v may be nil (EXPLAIN
// CREATE); sources are the objects the query names (catalog DependsOn).
func Analyze(cat *catalog.Catalog, v *catalog.Table, q plan.Node, sources []uint32) *Analysis {
	a := &Analysis{partitioned: v != nil && len(v.PartitionBy) > 0}
	var structural []Blocker
	seen := map[string]bool{}
	addB := func(b *Blocker) {
		if b == nil {
			return
		}
		k := b.Code + "\x00" + b.Object
		if seen[k] {
			return
		}
		seen[k] = true
		structural = append(structural, *b)
	}
	hasAgg, hasWindow, monotone := false, false, true
	inScalar := 0 // walking the plan of a scalar subquery: blockers only
	var walk func(n plan.Node)
	walk = func(n plan.Node) {
		if f, ok := n.(*plan.Filter); ok {
			for _, s := range scalarSubqueries(f.Cond) {
				monotone = false // rows leave when the scalar moves
				inScalar++
				walk(s.Plan)
				inScalar--
			}
		}
		switch x := n.(type) {
		case *plan.Aggregate, *plan.Distinct:
			hasAgg = hasAgg || inScalar == 0
		case *plan.Window:
			hasWindow = hasWindow || inScalar == 0
		case *plan.SetOp:
			if !(x.Kind == plan.Union && x.All) {
				hasAgg = hasAgg || inScalar == 0
			}
		case *plan.Join:
			if x.Kind != plan.JoinInner && x.Kind != plan.JoinCross {
				monotone = false
			}
		case *plan.Rows, *plan.TableChanges:
			a.NonTableSource = true
		case *plan.Scan:
			if len(x.Needed) > len(x.Table.Columns)+1 && x.Needed[len(x.Table.Columns)+1] {
				addB(&Blocker{Code: ReasonRowMetadata, Message: fmt.Sprintf("the query reads %s of %s, which a refresh cannot know for rows as of the last refresh", plan.HiddenCommitVersion, cat.QualifiedName(x.Table)), Object: plan.HiddenCommitVersion, Permanent: true})
			}
		}
		for _, b := range localBlockers(n) {
			addB(b)
		}
		if sc, ok := n.(*plan.Scan); ok && scanReadsTime(sc) {
			// A time filter on a primary-key column became key bounds.
			a.TimeDependent = true
		} else if f, ok := n.(*plan.Filter); ok {
			a.TimeDependent = a.TimeDependent || readsTime(f.Cond)
		}
		for _, c := range plan.NodeInputs(n) {
			walk(c)
		}
	}
	if a.topK = findTopK(q); a.topK != nil {
		// The LIMIT is TOP_K's; what is below it is analysed.
		walk(a.topK.sort)
	} else {
		walk(q)
	}
	a.groupAgg, a.groupAggWhyNot = findGroupAgg(q)
	switch {
	case a.topK != nil:
		a.Shape = []TechniqueName{TopK}
	case hasWindow:
		a.Shape = []TechniqueName{WindowFunction}
	case a.groupAgg != nil:
		a.Shape = []TechniqueName{GroupAggregate, GenericAggregate}
	case hasAgg:
		a.Shape = []TechniqueName{GenericAggregate}
	case monotone:
		a.Shape = []TechniqueName{AppendOnly, RowBased}
	default:
		a.Shape = []TechniqueName{RowBased}
	}
	// PARTITION_OVERWRITE recomputes partitions a change touches; rows that
	// age out of a time filter touch none.
	if a.partition = findPartition(v, q); a.partition != nil && !a.TimeDependent && a.topK == nil {
		a.Shape = append(a.Shape, PartitionOverwrite)
	} else {
		a.partition = nil
	}
	a.Blockers = append(a.Blockers, structural...)
	a.Blockers = append(a.Blockers, featureBlockers(cat, v, sources)...)
	blocked := map[TechniqueName]bool{}
	for _, b := range a.Blockers {
		if len(b.Techniques) == 0 {
			for _, t := range a.Shape {
				blocked[t] = true
			}
		}
		for _, t := range b.Techniques {
			blocked[t] = true
		}
	}
	for _, t := range a.Shape {
		if !blocked[t] {
			a.Techniques = append(a.Techniques, t)
		}
	}
	return a
}

// featureBlockers checks the table features every source needs (R-I3) and
// the sources' own definitions (R-I2).
func featureBlockers(cat *catalog.Catalog, v *catalog.Table, sources []uint32) []Blocker {
	var out []Blocker
	stored := cat.StoredSources(sources)
	sort.Slice(stored, func(i, j int) bool { return stored[i].ID < stored[j].ID })
	for _, t := range stored {
		name := cat.QualifiedName(t)
		kind := "TABLE"
		if t.Kind == catalog.KindMaterializedView {
			kind = "MATERIALIZED VIEW"
			if t.Dataset != nil && len(t.Dataset.Expectations) > 0 {
				out = append(out, Blocker{Code: ReasonExpectationsView, Object: name,
					Message: fmt.Sprintf("source %s has expectations, so its content is not a function of its query alone", name),
					Fix:     "read the source's own sources instead, or move the expectations to this view", Permanent: true})
			}
		}
		if !t.ChangeDataFeed() {
			out = append(out, Blocker{Code: ReasonCDFOff, Object: name,
				Message: fmt.Sprintf("source %s does not record a change data feed", name),
				Fix:     fmt.Sprintf("ALTER %s %s SET TBLPROPERTIES (delta.enableChangeDataFeed = true)", kind, name)})
		}
		if !t.RowTracking() {
			out = append(out, Blocker{Code: ReasonRowTrackingOff, Object: name,
				Message:    fmt.Sprintf("source %s does not track row ids, which row-based maintenance needs", name),
				Fix:        fmt.Sprintf("ALTER %s %s SET TBLPROPERTIES (delta.enableRowTracking = true)", kind, name),
				Techniques: []TechniqueName{RowBased, AppendOnly}})
		}
	}
	if v != nil && v.Dataset != nil {
		hasNotNull := false
		for _, c := range v.Columns {
			hasNotNull = hasNotNull || c.NotNull
		}
		for _, e := range v.Dataset.Expectations {
			if e.Action == "DROP ROW" && hasNotNull {
				out = append(out, Blocker{Code: ReasonDropRowNotNull, Object: e.Name,
					Message: fmt.Sprintf("expectation %s drops rows while the view has NOT NULL columns", e.Name),
					Fix:     "drop the NOT NULL constraints or use ON VIOLATION FAIL UPDATE", Permanent: true})
				break
			}
		}
	}
	return out
}

// isTimeFunc: now(), which current_timestamp, current_date and
// localtimestamp bind to.
func isTimeFunc(x plan.Expr) bool {
	f, ok := x.(*plan.Func)
	return ok && f.Name == "now"
}

// readsTime reports whether e calls a time function.
func readsTime(e plan.Expr) bool {
	found := false
	plan.Walk(e, func(x plan.Expr) bool {
		found = found || isTimeFunc(x)
		return !found
	})
	return found
}

// exprBlocker finds what in an expression stops differentiation; with
// allowTime, time functions are allowed (a WHERE condition, R-I5).
func exprBlocker(e plan.Expr, allowTime bool) *Blocker {
	var b *Blocker
	plan.Walk(e, func(x plan.Expr) bool {
		if b != nil {
			return false
		}
		switch y := x.(type) {
		case *plan.Subquery:
			if allowTime && uncorrelatedScalar(y) {
				// A filter against a scalar over a whole input
				// (scalarfilter.go); its plan is analysed as a query.
				return false
			}
			b = &Blocker{Code: ReasonSubquery, Object: "subquery",
				Message: "a subquery inside an expression (other than EXISTS/IN decorrelated into a join) is recomputed in full",
				Fix:     "rewrite the subquery as a JOIN", Permanent: true}
			return false
		case *plan.Func:
			if y.Fn != nil && !y.Fn.Deterministic && !(allowTime && isTimeFunc(y)) {
				name := strings.ToLower(y.Name)
				b = &Blocker{Code: ReasonNonDeterministic, Object: name + "()", Func: name,
					Message: fmt.Sprintf("%s() returns a different value at each evaluation", name),
					Fix:     "remove the call or compute the value in a source table", Permanent: true}
				return false
			}
		}
		return true
	})
	return b
}

// projectSetBlocker finds a call of a ProjectSet that is not a function of
// its input row alone: a non-deterministic function in FROM or in a select
// list.
func projectSetBlocker(ps *plan.ProjectSet) *Blocker {
	for _, c := range ps.Calls {
		if c.Fn != nil && !c.Fn.Deterministic {
			name := strings.ToLower(c.Name)
			return &Blocker{Code: ReasonNonDeterministic, Object: name + "()", Func: name,
				Message: fmt.Sprintf("%s() returns a different value at each evaluation", name),
				Fix:     "remove the call or compute the value in a source table", Permanent: true}
		}
	}
	return nil
}

// localBlockers is the one answer to "what stops this node itself (its
// inputs aside) from being maintained incrementally": Analyze collects them
// over the whole query for EXPLAIN and the planner, and the differentiator
// (delta.go) stops at the first of a node it is asked to differentiate.
func localBlockers(n plan.Node) []*Blocker {
	var out []*Blocker
	add := func(b *Blocker) {
		if b != nil {
			out = append(out, b)
		}
	}
	switch x := n.(type) {
	case *plan.Aggregate:
		for _, c := range x.Aggs {
			add(aggBlocker(c))
		}
	case *plan.Window:
		add(windowBlocker(x))
	case *plan.Join:
		if x.Kind == plan.JoinAntiNullAware && notInCorrelated(x) {
			add(&Blocker{Code: ReasonUnsupported, Object: "NOT IN", Message: "a NOT IN (subquery) correlated with the outer query cannot be maintained incrementally yet",
				Fix: "write NOT EXISTS (SELECT … WHERE col = outer_col), which differs only when NULLs occur", Permanent: true})
		}
	case *plan.ProjectSet:
		add(projectSetBlocker(x))
	}
	add(nodeBlocker(n))
	switch x := n.(type) {
	case *plan.Scan:
		if !scanReadsTime(x) {
			for _, e := range plan.NodeExprs(n) {
				add(exprBlocker(e, false))
			}
		}
	case *plan.Filter:
		// Time functions are allowed in WHERE (R-I2, R-I5).
		add(exprBlocker(x.Cond, true))
	default:
		for _, e := range plan.NodeExprs(n) {
			add(exprBlocker(e, false))
		}
	}
	return out
}

// nodeBlocker names the plan nodes that are never differentiated.
func nodeBlocker(n plan.Node) *Blocker {
	switch x := n.(type) {
	case *plan.RecursiveUnion:
		return &Blocker{Code: ReasonRecursiveCTE, Object: x.Work.Name, Message: fmt.Sprintf("WITH RECURSIVE %s is recomputed in full", x.Work.Name),
			Fix: "compute the recursion into a table and read the table, or accept full refreshes (REFRESH POLICY FULL)", Permanent: true}
	case *plan.Apply:
		return &Blocker{Code: ReasonLateral, Object: "LATERAL", Message: "a LATERAL subquery is recomputed in full", Fix: "rewrite the LATERAL item as a join", Permanent: true}
	case *plan.Rows:
		return &Blocker{Code: ReasonSystemSource, Object: x.Gen, Message: fmt.Sprintf("%s is not a table of this server with a change feed", x.Gen),
			Fix: "copy what the view needs into a table (INSERT … SELECT) and read that table", Permanent: true}
	case *plan.TableChanges:
		return &Blocker{Code: ReasonSystemSource, Object: "table_changes", Message: "table_changes() is not a table with a change feed",
			Fix: "read the table itself: its change feed is what incremental refresh reads", Permanent: true}
	case *plan.Limit:
		return &Blocker{Code: ReasonLimit, Object: "LIMIT", Message: "LIMIT/OFFSET depends on the whole input", Fix: "drop the LIMIT, or apply it when reading the view", Permanent: true}
	case *plan.DistinctOn:
		// The row a group keeps depends on every row of the group in
		// ORDER BY order; no delta rule here keeps it.
		return &Blocker{Code: ReasonDistinctOn, Object: "DISTINCT ON", Message: "DISTINCT ON keeps the first row of each group in ORDER BY order, which is recomputed in full",
			Fix: "compute the row with an aggregate (min/max) or a window function PARTITION BY the DISTINCT ON columns, or accept full refreshes (REFRESH POLICY FULL)", Permanent: true}
	}
	return nil
}

// rowAndAggregateTechniques are the techniques that compute a group from
// rows in another order than a full recompute does (PARTITION_OVERWRITE
// recomputes whole partitions in the same order).
var rowAndAggregateTechniques = []TechniqueName{RowBased, AppendOnly, GroupAggregate, GenericAggregate, WindowFunction, TopK}

// aggregates whose result does not depend on the order of their input.
var orderFree = map[string]bool{
	"count": true, "sum": true, "avg": true, "min": true, "max": true,
	"bool_and": true, "bool_or": true, "every": true, "count_if": true,
	"stddev": true, "stddev_samp": true, "stddev_pop": true, "variance": true, "var_samp": true, "var_pop": true,
	"std": true, "bit_and": true, "bit_or": true, "bit_xor": true,
}

// aggBlocker finds aggregates that would make a recomputed group differ
// from the stored one: floating-point sums depend on the order of addition.
func aggBlocker(c plan.AggCall) *Blocker {
	name := strings.ToLower(c.Name)
	if !orderFree[name] && !sortedByArgs(c) && !orderedSetFree(c) {
		return &Blocker{Code: ReasonOrderDependent, Object: name + "()", Func: name,
			Message:    fmt.Sprintf("%s() depends on the order of its input", name),
			Fix:        "use an order-independent aggregate (count, sum, avg, min, max, bool_and/or), or PARTITIONED BY a grouping column",
			Techniques: rowAndAggregateTechniques, Permanent: true}
	}
	if name == "min" || name == "max" || name == "count" || name == "bool_and" || name == "bool_or" || name == "every" || name == "count_if" {
		return nil
	}
	for _, a := range c.Args {
		if k := a.Type().Kind; k == types.KindFloat4 || k == types.KindFloat8 {
			return &Blocker{Code: ReasonFloatAggregate, Object: name + "()", Func: name,
				Message:    fmt.Sprintf("%s() over a floating-point value depends on the order of addition", name),
				Fix:        fmt.Sprintf("%s(CAST(x AS DECIMAL(p,s))), or PARTITIONED BY a grouping column", name),
				Techniques: rowAndAggregateTechniques, Permanent: true}
		}
	}
	return nil
}

// orderedSetFree reports whether an ordered-set aggregate's result does
// not depend on the order its group's rows arrive in: it sorts them
// itself. percentile_cont (and Databricks' median and percentile)
// interpolate numbers, which equal keys give equally; percentile_disc
// and mode return one of the values, which for numbers may be 1.5 or
// an equal 1.50, so only keys of other types are free.
func orderedSetFree(c plan.AggCall) bool {
	switch strings.ToLower(c.Name) {
	case "percentile_cont", "median", "percentile":
		return true
	case "percentile_disc", "mode":
		if len(c.Args) == 0 {
			return false
		}
		switch c.Args[len(c.Args)-1].Type().Kind {
		case types.KindNumeric, types.KindFloat4, types.KindFloat8:
			return false
		}
		return true
	}
	return false
}

// sortedByArgs reports whether an order-dependent aggregate takes its
// values sorted by all of its arguments (array_agg(DISTINCT x),
// collect_set(x), array_agg(x ORDER BY x)): ties are then equal values, so
// the result does not depend on the order rows are read in. Numbers are
// excluded: 1.5 and 1.50 (0 and -0) tie but print differently.
func sortedByArgs(c plan.AggCall) bool {
	f, ok := funcs.Lookup(c.Name)
	if !ok || f.Agg == nil || !f.Agg.Ordered || len(c.Order) == 0 {
		return false
	}
	for _, a := range c.Args {
		switch a.Type().Kind {
		case types.KindNumeric, types.KindFloat4, types.KindFloat8:
			return false
		}
		found := false
		for _, k := range c.Order {
			found = found || k.E.String() == a.String()
		}
		if !found {
			return false
		}
	}
	return true
}

// windowPartition returns the PARTITION BY every call of w shares, or a
// blocker: WINDOW_FUNCTION recomputes the window partitions the changes
// touch, so every call needs the same, non-empty PARTITION BY.
func windowPartition(w *plan.Window) ([]plan.Expr, *Blocker) {
	var keys []plan.Expr
	for i, c := range w.Calls {
		if len(c.PartitionBy) == 0 {
			return nil, &Blocker{Code: ReasonWindowNoPartition, Object: c.Name + "()", Func: c.Name,
				Message: fmt.Sprintf("%s() OVER (…) has no PARTITION BY: every change touches its one partition, the whole input", c.Name),
				Fix:     "add PARTITION BY … to the window", Permanent: true}
		}
		if i == 0 {
			keys = c.PartitionBy
			continue
		}
		if len(c.PartitionBy) != len(keys) {
			return nil, windowMismatch(c)
		}
		for j := range keys {
			if keys[j].String() != c.PartitionBy[j].String() {
				return nil, windowMismatch(c)
			}
		}
	}
	return keys, nil
}

func windowMismatch(c plan.WindowCall) *Blocker {
	return &Blocker{Code: ReasonWindowNoPartition, Object: c.Name + "()", Func: c.Name,
		Message: fmt.Sprintf("%s() is partitioned differently from the query's other window functions", c.Name),
		Fix:     "use one PARTITION BY for every window function of the query", Permanent: true}
}

// windowBlocker finds what stops WINDOW_FUNCTION for w.
func windowBlocker(w *plan.Window) *Blocker {
	if _, b := windowPartition(w); b != nil {
		return b
	}
	// Floating-point and order-dependent aggregates are fine here: a
	// partition is always recomputed whole, its rows in one order.
	for _, c := range w.Calls {
		for _, e := range append(append([]plan.Expr{c.Filter}, c.Args...), c.PartitionBy...) {
			if e == nil {
				continue
			}
			if b := exprBlocker(e, false); b != nil {
				return b
			}
		}
	}
	return nil
}

// scanReadsTime reports whether a scan's key bounds read the time (a WHERE
// on a primary-key column against now(), pushed into the scan).
func scanReadsTime(s *plan.Scan) bool {
	for _, e := range plan.NodeExprs(s) {
		if readsTime(e) {
			return true
		}
	}
	return false
}
