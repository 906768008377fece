package plan

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/types"
)

// Window functions (R-Q2). A SELECT's window calls are collected while its
// select list, ORDER BY and QUALIFY are bound, as aggregates are: each
// becomes a WinRef, and one Window node placed over the FROM/WHERE input
// (over the aggregation and HAVING when the query groups, so a window may
// read aggregates) computes them all; the WinRefs then read its output
// columns. DISTINCT, ORDER BY and LIMIT come after, as in PostgreSQL.

// PostgreSQL's frame option bits (parsenodes.h), as pg_query reports them
// in WindowDef.FrameOptions.
const (
	frameNonDefault         = 0x00001
	frameRange              = 0x00002
	frameRows               = 0x00004
	frameGroups             = 0x00008
	frameStartUnboundedPrec = 0x00020
	frameEndUnboundedFoll   = 0x00100
	frameStartCurrentRow    = 0x00200
	frameEndCurrentRow      = 0x00400
	frameStartOffsetPrec    = 0x00800
	frameEndOffsetPrec      = 0x01000
	frameStartOffsetFoll    = 0x02000
	frameEndOffsetFoll      = 0x04000
	frameExcludeCurrentRow  = 0x08000
	frameExcludeGroup       = 0x10000
	frameExcludeTies        = 0x20000
)

// winCollector gathers the window calls of one SELECT.
type winCollector struct {
	calls []WindowCall
	locs  []callLocs
	keys  map[string]int // call string → index: equal calls share a column
	// named are the WINDOW clause's definitions, used marks those some
	// call referenced.
	named map[string]*winSpec
	order []string // names in definition order
	used  map[string]bool
	// inCall: binding a call's arguments; inDef: its window definition.
	inCall, inDef bool
}

// callLocs are where a call and its parts are in the statement (errors
// found when they are lifted over an aggregation point there).
type callLocs struct {
	args, part, order []int32
}

func locsOf(ns []*pg_query.Node, sortBy bool) []int32 {
	out := make([]int32, len(ns))
	for i, n := range ns {
		if sb := n.GetSortBy(); sortBy && sb != nil {
			n = sb.Node
		}
		out[i] = nodeLocation(n)
	}
	return out
}

// winSpec is a window definition after resolving references to named
// windows, still unbound.
type winSpec struct {
	partition, order []*pg_query.Node
	frameOptions     int32
	start, end       *pg_query.Node
	loc              int32
}

// windowsNotAllowedIn turns an expression context into the words of
// PostgreSQL's "window functions are not allowed in …".
func windowsNotAllowedIn(clause string) string {
	switch {
	case clause == "":
		return "this context"
	case clause == "function arguments":
		return "functions in FROM"
	case strings.HasPrefix(clause, "window "):
		return "window definitions"
	}
	return clause
}

// newWinCollector resolves a SELECT's WINDOW clause: each definition may
// build on one defined before it.
func (b *Binder) newWinCollector(defs []*pg_query.Node) (*winCollector, error) {
	w := &winCollector{keys: map[string]int{}, named: map[string]*winSpec{}, used: map[string]bool{}}
	for _, n := range defs {
		wd := n.GetWindowDef()
		if wd == nil {
			continue
		}
		if _, dup := w.named[wd.Name]; dup {
			return nil, b.errAt(wd.Location, pgerror.WindowingError, "window \"%s\" is already defined", wd.Name)
		}
		spec, err := b.resolveWindowDef(wd, w, false)
		if err != nil {
			return nil, err
		}
		w.named[wd.Name] = spec
		w.order = append(w.order, wd.Name)
	}
	return w, nil
}

// resolveWindowDef applies PostgreSQL's rules for a definition that names
// another window: it takes that window's PARTITION BY (and may not give
// its own), its ORDER BY unless it has none (then may add one), and may not
// copy a window with a frame clause. over is set for an OVER clause.
func (b *Binder) resolveWindowDef(wd *pg_query.WindowDef, w *winCollector, over bool) (*winSpec, error) {
	if over && wd.Name != "" {
		// OVER w: the named window as it is.
		spec, ok := w.named[wd.Name]
		if !ok {
			return nil, b.errAt(wd.Location, pgerror.UndefinedObject, "window \"%s\" does not exist", wd.Name)
		}
		w.used[wd.Name] = true
		return spec, nil
	}
	spec := &winSpec{partition: wd.PartitionClause, order: wd.OrderClause, frameOptions: wd.FrameOptions, start: wd.StartOffset, end: wd.EndOffset, loc: wd.Location}
	if wd.Refname == "" {
		return spec, nil
	}
	ref, ok := w.named[wd.Refname]
	if !ok {
		return nil, b.errAt(wd.Location, pgerror.UndefinedObject, "window \"%s\" does not exist", wd.Refname)
	}
	w.used[wd.Refname] = true
	if len(wd.PartitionClause) > 0 {
		return nil, b.errAt(wd.Location, pgerror.WindowingError, "cannot override PARTITION BY clause of window \"%s\"", wd.Refname)
	}
	spec.partition = ref.partition
	if len(ref.order) > 0 {
		if len(wd.OrderClause) > 0 {
			return nil, b.errAt(wd.Location, pgerror.WindowingError, "cannot override ORDER BY clause of window \"%s\"", wd.Refname)
		}
		spec.order = ref.order
	}
	if ref.frameOptions&frameNonDefault != 0 {
		e := b.errAt(wd.Location, pgerror.WindowingError, "cannot copy window \"%s\" because it has a frame clause", wd.Refname)
		if over && len(wd.OrderClause) == 0 && wd.FrameOptions&frameNonDefault == 0 {
			e = e.WithHint("Omit the parentheses in this OVER clause.")
		}
		return nil, e
	}
	return spec, nil
}

// checkUnusedWindows binds the named windows no call used, for the errors
// PostgreSQL reports in them all the same (a column that does not exist).
func (b *Binder) checkUnusedWindows(w *winCollector, sc *scope) error {
	for _, name := range w.order {
		spec := w.named[name]
		if w.used[name] {
			continue
		}
		ec := &exprCtx{sc: sc, aggs: &aggCollector{}, wins: w, clause: "window definitions"}
		if _, _, err := b.bindWindowSpec(spec, ec); err != nil {
			return err
		}
	}
	return nil
}

// bindWindowSpec binds a definition's PARTITION BY and ORDER BY (window
// functions are not allowed there, aggregates are).
func (b *Binder) bindWindowSpec(spec *winSpec, ec *exprCtx) ([]Expr, []SortKey, error) {
	w := ec.wins
	saved := w.inDef
	w.inDef = true
	defer func() { w.inDef = saved }()
	dc := &exprCtx{sc: ec.sc, aggs: ec.aggs, wins: w, clause: "window definitions"}
	var parts []Expr
	for _, n := range spec.partition {
		e, err := b.bindExpr(n, dc)
		if err != nil {
			return nil, nil, err
		}
		if isUnknown(e.Type()) {
			e, _ = b.coerce(e, types.Text, false, -1)
		}
		parts = append(parts, e)
	}
	var keys []SortKey
	for _, n := range spec.order {
		sb := n.GetSortBy()
		if len(sb.UseOp) > 0 {
			return nil, nil, b.errAt(sb.Location, pgerror.FeatureNotSupported, "ORDER BY … USING is not supported")
		}
		e, err := b.bindExpr(sb.Node, dc)
		if err != nil {
			return nil, nil, err
		}
		if isUnknown(e.Type()) {
			e, _ = b.coerce(e, types.Text, false, -1)
		}
		k := SortKey{E: e, Desc: sb.SortbyDir == pg_query.SortByDir_SORTBY_DESC}
		k.NullsFirst = k.Desc
		switch sb.SortbyNulls {
		case pg_query.SortByNulls_SORTBY_NULLS_FIRST:
			k.NullsFirst = true
		case pg_query.SortByNulls_SORTBY_NULLS_LAST:
			k.NullsFirst = false
		}
		keys = append(keys, k)
	}
	return parts, keys, nil
}

// bindWindowCall binds f(args) OVER (…): a window-only function or an
// aggregate used as a window function.
func (b *Binder) bindWindowCall(fc *pg_query.FuncCall, f *funcs.Func, name string, ec *exprCtx) (Expr, error) {
	loc := fc.Location
	if f.Agg == nil && f.Window == nil {
		return nil, b.errAt(loc, pgerror.WrongObjectType, "OVER specified, but %s is not a window function nor an aggregate function", name)
	}
	if ec.aggs != nil && ec.aggs.inAgg {
		return nil, b.errAt(loc, pgerror.GroupingError, "aggregate function calls cannot contain window function calls")
	}
	w := ec.wins
	switch {
	case w == nil:
		return nil, b.errAt(loc, pgerror.WindowingError, "window functions are not allowed in %s", windowsNotAllowedIn(ec.clause))
	case w.inDef:
		return nil, b.errAt(loc, pgerror.WindowingError, "window functions are not allowed in window definitions")
	case w.inCall:
		return nil, b.errAt(loc, pgerror.WindowingError, "window function calls cannot be nested")
	}
	if f.Agg != nil && f.Agg.WithinGroup {
		return nil, b.errAt(loc, pgerror.FeatureNotSupported, "OVER is not supported for ordered-set aggregate %s", name)
	}
	if fc.AggDistinct || f.Agg != nil && f.Agg.Distinct {
		return nil, b.errAt(loc, pgerror.FeatureNotSupported, "DISTINCT is not implemented for window functions")
	}
	if len(fc.AggOrder) > 0 {
		return nil, b.errAt(loc, pgerror.FeatureNotSupported, "aggregate ORDER BY is not implemented for window functions")
	}
	if f.Window != nil && fc.AggFilter != nil {
		return nil, b.errAt(loc, pgerror.FeatureNotSupported, "FILTER is not implemented for non-aggregate window functions")
	}
	if f.Window != nil && fc.AggStar {
		return nil, b.errAt(loc, pgerror.WrongObjectType, "%s(*) specified, but %s is not an aggregate function", name, name)
	}
	spec, err := b.resolveWindowDef(fc.Over, w, true)
	if err != nil {
		return nil, err
	}
	call := WindowCall{Name: name, Fn: f}
	w.inCall = true
	inner := &exprCtx{sc: ec.sc, aggs: ec.aggs, wins: w, clause: ec.clause}
	var args []Expr
	for _, a := range fc.Args {
		e, err := b.bindExpr(a, inner)
		if err != nil {
			w.inCall = false
			return nil, err
		}
		args = append(args, e)
	}
	if f.Agg != nil {
		err = b.windowAgg(fc, f, name, args, inner, &call)
	} else {
		err = b.windowFunc(f, name, args, loc, &call)
	}
	w.inCall = false
	if err != nil {
		return nil, err
	}
	if call.PartitionBy, call.OrderBy, err = b.bindWindowSpec(spec, ec); err != nil {
		return nil, err
	}
	if call.Frame, err = b.bindFrame(spec, call.OrderBy, ec); err != nil {
		return nil, err
	}
	key := call.String() + " " + call.T.String()
	if i, ok := w.keys[key]; ok {
		return &WinRef{Idx: i, T: call.T}, nil
	}
	w.calls = append(w.calls, call)
	cl := callLocs{args: locsOf(fc.Args, false), part: locsOf(spec.partition, false), order: locsOf(spec.order, true)}
	if len(cl.args) != len(call.Args) {
		cl.args = nil // count(*)
	}
	w.locs = append(w.locs, cl)
	w.keys[key] = len(w.calls) - 1
	return &WinRef{Idx: len(w.calls) - 1, T: call.T}, nil
}

// windowAgg resolves an aggregate used as a window function.
func (b *Binder) windowAgg(fc *pg_query.FuncCall, f *funcs.Func, name string, args []Expr, inner *exprCtx, call *WindowCall) error {
	loc := fc.Location
	if fc.AggStar {
		if !f.Agg.Star {
			return b.errAt(loc, pgerror.UndefinedFunction, "%s(*) is not supported", name)
		}
		args = nil
	} else if len(args) == 0 && name == "count" {
		return b.errAt(loc, pgerror.UndefinedFunction, "function count() does not exist")
	}
	ats := make([]types.T, len(args))
	for i := range args {
		if isUnknown(args[i].Type()) {
			args[i], _ = b.coerce(args[i], types.Text, false, loc)
		}
		ats[i] = args[i].Type()
	}
	rt, newState, ok := f.Agg.Resolve(ats)
	if !ok {
		return b.noFunction(name, ats, loc)
	}
	call.Args, call.T, call.Agg = args, rt, &AggSpec{NewState: newState}
	if fc.AggFilter != nil {
		fe, err := b.bindExpr(fc.AggFilter, inner)
		if err != nil {
			return err
		}
		if fe, err = b.boolArg(fe, nodeLocation(fc.AggFilter), "FILTER"); err != nil {
			return err
		}
		call.Filter = fe
	}
	return nil
}

// windowFunc resolves a window-only function: its polymorphic parameters
// take the common type of their arguments (lag's value and default).
func (b *Binder) windowFunc(f *funcs.Func, name string, args []Expr, loc int32, call *WindowCall) error {
	def := f.Window
	ats := make([]types.T, len(args))
	for i, a := range args {
		ats[i] = a.Type()
	}
	if len(args) < def.MinArgs || len(args) > len(def.Params) {
		return b.noFunction(name, ats, loc)
	}
	poly := types.Null
	for i, a := range args {
		if def.Params[i].Kind != types.KindUnknown || isUnknown(a.Type()) {
			continue
		}
		t, ok := commonType(poly, a.Type())
		if !ok {
			return b.noFunction(name, ats, loc)
		}
		poly = t
	}
	if isUnknown(poly) && def.Ret.Kind == types.KindUnknown {
		return b.errAt(loc, pgerror.DatatypeMismatch, "could not determine polymorphic type because input has type unknown")
	}
	for i := range args {
		pt := def.Params[i]
		if pt.Kind == types.KindUnknown {
			pt = poly
		} else if !implicitCast(args[i].Type(), pt) {
			return b.noFunction(name, ats, loc)
		}
		var err error
		if args[i], err = b.coerce(args[i], pt, false, loc); err != nil {
			return err
		}
	}
	call.Args, call.T = args, def.Ret
	if def.Ret.Kind == types.KindUnknown {
		call.T = poly
	}
	return nil
}

func (b *Binder) noFunction(name string, ats []types.T, loc int32) error {
	ts := make([]string, len(ats))
	for i, t := range ats {
		ts[i] = t.String()
	}
	return b.errAt(loc, pgerror.UndefinedFunction, "function %s(%s) does not exist", name, strings.Join(ts, ", ")).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

// bindFrame binds a frame clause (PostgreSQL's default frame without one).
func (b *Binder) bindFrame(spec *winSpec, order []SortKey, ec *exprCtx) (WindowFrame, error) {
	opts := spec.frameOptions
	if opts&frameNonDefault == 0 {
		return DefaultFrame, nil
	}
	var f WindowFrame
	switch {
	case opts&frameRows != 0:
		f.Mode = FrameRows
	case opts&frameGroups != 0:
		f.Mode = FrameGroups
	default:
		f.Mode = FrameRange
	}
	switch {
	case opts&frameStartUnboundedPrec != 0:
		f.Start.Kind = UnboundedPreceding
	case opts&frameStartCurrentRow != 0:
		f.Start.Kind = CurrentRow
	case opts&frameStartOffsetPrec != 0:
		f.Start.Kind = OffsetPreceding
	case opts&frameStartOffsetFoll != 0:
		f.Start.Kind = OffsetFollowing
	default:
		return f, b.errAt(spec.loc, pgerror.WindowingError, "frame start cannot be UNBOUNDED FOLLOWING")
	}
	switch {
	case opts&frameEndUnboundedFoll != 0:
		f.End.Kind = UnboundedFollowing
	case opts&frameEndOffsetPrec != 0:
		f.End.Kind = OffsetPreceding
	case opts&frameEndOffsetFoll != 0:
		f.End.Kind = OffsetFollowing
	case opts&frameEndCurrentRow != 0:
		f.End.Kind = CurrentRow
	default:
		return f, b.errAt(spec.loc, pgerror.WindowingError, "frame end cannot be UNBOUNDED PRECEDING")
	}
	switch {
	case opts&frameExcludeCurrentRow != 0:
		f.Exclude = ExcludeCurrentRow
	case opts&frameExcludeGroup != 0:
		f.Exclude = ExcludeGroup
	case opts&frameExcludeTies != 0:
		f.Exclude = ExcludeTies
	}
	hasOffset := f.Start.Kind == OffsetPreceding || f.Start.Kind == OffsetFollowing ||
		f.End.Kind == OffsetPreceding || f.End.Kind == OffsetFollowing
	switch f.Mode {
	case FrameGroups:
		if len(order) == 0 {
			return f, b.errAt(spec.loc, pgerror.WindowingError, "GROUPS mode requires an ORDER BY clause")
		}
	case FrameRange:
		if hasOffset && len(order) != 1 {
			return f, b.errAt(spec.loc, pgerror.WindowingError, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column")
		}
	}
	for _, x := range []struct {
		bound *FrameBound
		n     *pg_query.Node
	}{{&f.Start, spec.start}, {&f.End, spec.end}} {
		if x.bound.Kind != OffsetPreceding && x.bound.Kind != OffsetFollowing {
			continue
		}
		e, err := b.bindFrameOffset(x.n, f.Mode, order, ec)
		if err != nil {
			return f, err
		}
		x.bound.Offset = e
	}
	return f, nil
}

// bindFrameOffset binds n PRECEDING/FOLLOWING: a value that reads no column
// of the row, bigint for ROWS and GROUPS; for RANGE one the ORDER BY key
// can be moved by (PostgreSQL's in_range support: numbers by numbers,
// dates, timestamps and intervals by intervals).
func (b *Binder) bindFrameOffset(n *pg_query.Node, mode FrameMode, order []SortKey, ec *exprCtx) (Expr, error) {
	loc := nodeLocation(n)
	clause := "window " + mode.String()
	e, err := b.bindExpr(n, &exprCtx{sc: ec.sc, clause: clause})
	if err != nil {
		return nil, err
	}
	if hasColRef(e) {
		return nil, b.errAt(loc, pgerror.InvalidColumnReference, "argument of %s must not contain variables", mode)
	}
	if mode != FrameRange {
		return b.coerce(e, types.Int8, false, loc)
	}
	kt, ot := order[0].E.Type(), e.Type()
	var want types.T
	switch {
	case kt.IsInteger():
		if isUnknown(ot) || ot.IsInteger() {
			want = types.Int8
		}
	case kt.Kind == types.KindNumeric:
		if isUnknown(ot) || ot.IsInteger() || ot.Kind == types.KindNumeric {
			want = types.Numeric
		}
	case kt.Kind == types.KindFloat4 || kt.Kind == types.KindFloat8:
		if isUnknown(ot) || ot.IsNumeric() {
			want = types.Float8
		}
	case kt.Kind == types.KindDate || kt.Kind == types.KindTimestamp || kt.Kind == types.KindTimestampTZ || kt.Kind == types.KindInterval:
		if isUnknown(ot) || ot.Kind == types.KindInterval {
			want = types.Interval
		}
	default:
		return nil, b.errAt(loc, pgerror.FeatureNotSupported, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s", kt.String())
	}
	if want.Kind == 0 {
		return nil, b.errAt(loc, pgerror.FeatureNotSupported, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s and offset type %s", kt.String(), ot.String()).
			WithHint("Cast the offset value to an appropriate type.")
	}
	return b.coerce(e, want, false, loc)
}

// placeWindows puts the Window node computing w's calls over input (the
// FROM/WHERE rows, or the aggregation's output when grouped: lift
// re-expresses the calls over it) and rewrites each expression of exprs to
// read the calls' columns.
func (b *Binder) placeWindows(input Node, w *winCollector, lift func(e Expr, loc int32) (Expr, error), exprs ...*Expr) (Node, error) {
	win := &Window{Input: input, Calls: w.calls}
	for i := range win.Calls {
		c := &win.Calls[i]
		at := func(locs []int32, j int) int32 {
			if j < len(locs) {
				return locs[j]
			}
			return -1
		}
		liftAll := func(es []Expr, locs []int32) ([]Expr, error) {
			out := make([]Expr, len(es))
			for j, e := range es {
				var err error
				if out[j], err = lift(e, at(locs, j)); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
		var err error
		if c.Args, err = liftAll(c.Args, w.locs[i].args); err != nil {
			return nil, err
		}
		if c.PartitionBy, err = liftAll(c.PartitionBy, w.locs[i].part); err != nil {
			return nil, err
		}
		keys := make([]SortKey, len(c.OrderBy))
		for j, k := range c.OrderBy {
			if k.E, err = lift(k.E, at(w.locs[i].order, j)); err != nil {
				return nil, err
			}
			keys[j] = k
		}
		c.OrderBy = keys
		if c.Filter != nil {
			if c.Filter, err = lift(c.Filter, -1); err != nil {
				return nil, err
			}
		}
	}
	base := len(input.Columns())
	win.Cols = append([]Column(nil), input.Columns()...)
	for _, c := range win.Calls {
		win.Cols = append(win.Cols, Column{Name: c.Name, T: c.T})
	}
	for _, p := range exprs {
		if *p == nil {
			continue
		}
		*p = Rewrite(*p, func(x Expr) Expr {
			if r, ok := x.(*WinRef); ok {
				return &ColRef{Idx: base + r.Idx, T: r.T}
			}
			return x
		})
	}
	return win, nil
}

func containsWin(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if _, ok := x.(*WinRef); ok {
			found = true
		}
		return !found
	})
	return found
}

// splitQualify takes the QUALIFY condition out of a WINDOW clause, where
// sql/parse carries it as the definition named parse.QualifyWindow (its
// one PARTITION BY expression), and returns it with the real definitions.
func (b *Binder) splitQualify(defs []*pg_query.Node) (*pg_query.Node, []*pg_query.Node, error) {
	for i, n := range defs {
		if wd := n.GetWindowDef(); wd != nil && wd.Name == parse.QualifyWindow && len(wd.PartitionClause) > 0 {
			if len(wd.PartitionClause) > 1 {
				return nil, nil, b.errAt(nodeLocation(wd.PartitionClause[1]), pgerror.SyntaxError, "QUALIFY takes one condition")
			}
			rest := append(append([]*pg_query.Node(nil), defs[:i]...), defs[i+1:]...)
			return wd.PartitionClause[0], rest, nil
		}
	}
	return nil, defs, nil
}
