package plan

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/types"
)

// ChangeColumns are the columns table_changes adds to the table's (R-T7).
var ChangeColumns = []Column{
	{Name: "_change_type", T: types.Text},
	{Name: "_commit_version", T: types.Int8},
	{Name: "_commit_timestamp", T: types.TimestampTZ},
}

// bindRangeFunction binds a function in FROM: a set-returning function
// (bindFromSRF), table_changes('t', start [, end]), or one of the
// server's system relations. lat is the scope of the items to its left,
// which a set-returning function's arguments may read (functions in FROM
// are implicitly LATERAL).
func (b *Binder) bindRangeFunction(rf *pg_query.RangeFunction, lat *scope) (Node, *scope, error) {
	if len(rf.Functions) != 1 || rf.IsRowsfrom {
		return b.bindFromSRF(rf, lat)
	}
	fn := rf.Functions[0].GetList().Items[0].GetFuncCall()
	if fn == nil {
		return nil, nil, b.errAt(-1, pgerror.FeatureNotSupported, "this FROM function is not supported")
	}
	name := strVal(fn.Funcname[len(fn.Funcname)-1])
	switch name {
	case "event_log":
		return b.bindEventLog(fn, rf.Alias)
	case "refresh_history":
		if len(fn.Args) != 0 {
			return nil, nil, b.errAt(fn.Location, pgerror.UndefinedFunction, "refresh_history() takes no arguments")
		}
		return b.systemRows(&Rows{Cols: RefreshHistoryColumns, Gen: GenRefreshHistory}, rf.Alias, name, fn.Location)
	case "pg_stat_activity":
		if len(fn.Args) != 0 {
			return nil, nil, b.errAt(fn.Location, pgerror.UndefinedFunction, "pg_stat_activity() takes no arguments")
		}
		return b.systemRows(&Rows{Cols: PgStatActivityColumns, Gen: GenPgStatActivity}, rf.Alias, name, fn.Location)
	case "mv_insights":
		if len(fn.Args) != 0 {
			return nil, nil, b.errAt(fn.Location, pgerror.UndefinedFunction, "mv_insights() takes no arguments")
		}
		return b.systemRows(&Rows{Cols: MVInsightsColumns, Gen: GenMVInsights, Arg: b.Cat}, rf.Alias, name, fn.Location)
	}
	if name == "stream" && len(fn.Funcname) == 1 {
		// R-ST1: the session turns STREAM(name) into a relation only in a
		// streaming table's query (parse.ExtractStreams).
		return nil, nil, b.errAt(fn.Location, pgerror.FeatureNotSupported, "STREAM(…) reads a table as a stream, which only a streaming table's query does").
			WithHint("Use CREATE STREAMING TABLE name AS SELECT … FROM STREAM(source), or read the table without STREAM.")
	}
	if name != "table_changes" {
		return b.bindFromSRF(rf, lat)
	}
	if len(fn.Args) < 2 || len(fn.Args) > 3 {
		return nil, nil, b.errAt(fn.Location, pgerror.UndefinedFunction, "table_changes takes a table name, a start version or timestamp, and an optional end")
	}
	var args []Expr
	for _, a := range fn.Args {
		e, err := b.bindExpr(a, &exprCtx{clause: "function arguments"})
		if err != nil {
			return nil, nil, err
		}
		if _, ok := e.(*Const); !ok {
			if p, ok := e.(*Param); ok && len(args) == 0 {
				e, _ = b.coerce(p, types.Text, false, -1)
			}
		}
		args = append(args, e)
	}
	tc := &TableChanges{End: -1}
	nameC, ok := args[0].(*Const)
	if !ok || !nameC.T.IsString() && !isUnknown(nameC.T) {
		return nil, nil, b.errAt(fn.Location, pgerror.InvalidParameterValue, "table_changes: the first argument must be a table name literal")
	}
	parts := splitName(nameC.D.S)
	t, err := b.Cat.Resolve(parts, b.SearchPath)
	if err != nil {
		return nil, nil, withPos(err, b, nodeLocation(fn.Args[0]))
	}
	// Every version of every row: SELECT on the table, as reading it.
	if err := b.checkRead(t, nodeLocation(fn.Args[0])); err != nil {
		return nil, nil, err
	}
	tc.Table = t
	bound := func(e Expr, n *pg_query.Node, isEnd bool) error {
		c, ok := e.(*Const)
		if !ok {
			return b.errAt(nodeLocation(n), pgerror.InvalidParameterValue, "table_changes: versions and timestamps must be constants")
		}
		switch {
		case c.T.IsInteger():
			if isEnd {
				tc.End = c.D.I
			} else {
				tc.Start = c.D.I
			}
			return nil
		case isUnknown(c.T) || c.T.IsString() || c.T.IsTime():
			d, err := types.Cast(c.D, types.TimestampTZ, b.Env, true)
			if err != nil {
				return withPos(err, b, nodeLocation(n))
			}
			us := d.I
			if isEnd {
				tc.EndTime = &us
			} else {
				tc.StartTime = &us
			}
			return nil
		}
		return b.errAt(nodeLocation(n), pgerror.DatatypeMismatch, "table_changes: a version must be an integer or a timestamp, not %s", c.T.String())
	}
	if err := bound(args[1], fn.Args[1], false); err != nil {
		return nil, nil, err
	}
	if len(args) == 3 {
		if err := bound(args[2], fn.Args[2], true); err != nil {
			return nil, nil, err
		}
	}
	alias := "table_changes"
	if rf.Alias != nil {
		alias = rf.Alias.Aliasname
	}
	sc := b.newScope()
	sc.rels, sc.relIDs = []string{alias}, []uint32{0}
	for i, c := range t.Columns {
		col := Column{Name: c.Name, T: c.Type}
		tc.cols = append(tc.cols, col)
		sc.cols = append(sc.cols, scopeCol{rel: alias, name: c.Name, t: c.Type, scanIdx: i})
	}
	for _, c := range ChangeColumns {
		tc.cols = append(tc.cols, c)
		sc.cols = append(sc.cols, scopeCol{rel: alias, name: c.Name, t: c.T, scanIdx: -1})
	}
	if rf.Alias != nil {
		if err := b.renameColumns(sc, rf.Alias, fn.Location); err != nil {
			return nil, nil, err
		}
	}
	return tc, sc, nil
}

// bindFromSRF binds set-returning functions in FROM: f(…), ROWS FROM
// (f(…), g(…)) and unnest(a, b, …) (one call per array), WITH ORDINALITY,
// AS alias(columns). The calls run side by side in a ProjectSet over one
// empty row; their arguments are bound one evaluation level down, seeing
// the items to the left as an enclosing query (like a LATERAL subquery),
// and a call that reads them comes back as a pending Apply, which
// flattenSRFApply turns into a ProjectSet over the left input.
func (b *Binder) bindFromSRF(rf *pg_query.RangeFunction, lat *scope) (Node, *scope, error) {
	saveOuter, saveLvl := b.outer, b.lvl
	var lvl *level
	if lat != nil {
		lvl = &level{parent: lat.lvl}
		b.outer, b.lvl = lat, lvl
	}
	calls, err := b.bindFromCalls(rf)
	b.outer, b.lvl = saveOuter, saveLvl
	if err != nil {
		return nil, nil, err
	}
	ps := &ProjectSet{Input: &Values{Rows: [][]Expr{{}}}, Calls: calls, Ordinality: rf.Ordinality}
	cols := append([]Column(nil), ps.Columns()...)
	if len(calls) == 1 && len(calls[0].Cols) == 1 && rf.Alias != nil {
		// A function of one column is named by the alias (AS g), as in
		// PostgreSQL.
		cols[0].Name = rf.Alias.Aliasname
	}
	sc, err := b.derivedScope(cols, rf.Alias, calls[0].Name, -1)
	if err != nil {
		return nil, nil, err
	}
	if lvl != nil && len(lvl.params) > 0 {
		return &Apply{Kind: JoinInner, Right: ps, Params: lvl.params}, sc, nil
	}
	return ps, sc, nil
}

// bindFromCalls binds the calls of a FROM function item.
func (b *Binder) bindFromCalls(rf *pg_query.RangeFunction) ([]SRFCall, error) {
	if len(rf.Coldeflist) > 0 {
		return nil, b.errAt(-1, pgerror.FeatureNotSupported, "a column definition list is not supported: only functions whose columns are known can be called in FROM")
	}
	ec := &exprCtx{sc: b.newScope(), clause: "functions in FROM"}
	var calls []SRFCall
	for _, item := range rf.Functions {
		list := item.GetList()
		fc := list.Items[0].GetFuncCall()
		if fc == nil {
			return nil, b.errAt(nodeLocation(list.Items[0]), pgerror.FeatureNotSupported, "only function calls can be used in FROM")
		}
		if len(list.Items) > 1 && list.Items[1] != nil && len(list.Items[1].GetList().GetItems()) > 0 {
			return nil, b.errAt(fc.Location, pgerror.FeatureNotSupported, "a column definition list is not supported: only functions whose columns are known can be called in FROM")
		}
		var parts []string
		for _, n := range fc.Funcname {
			parts = append(parts, strVal(n))
		}
		name := strings.ToLower(parts[len(parts)-1])
		if len(parts) > 1 && parts[0] != "pg_catalog" && parts[0] != "information_schema" {
			return nil, b.errAt(fc.Location, pgerror.UndefinedFunction, "function %s does not exist", strings.Join(parts, ".")).
				WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
		}
		f, ok := funcs.Lookup(name)
		if !ok {
			return nil, b.errAt(fc.Location, pgerror.UndefinedFunction, "function %s does not exist", strings.Join(parts, ".")).
				WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
		}
		if f.Agg != nil || f.Window != nil {
			return nil, b.errAt(fc.Location, pgerror.FeatureNotSupported, "%s is not a set-returning function: aggregate and window functions cannot be called in FROM", name)
		}
		if fc.Over != nil || fc.AggStar || fc.AggDistinct || fc.AggFilter != nil || len(fc.AggOrder) > 0 {
			return nil, b.errAt(fc.Location, pgerror.WrongObjectType, "%s is not an aggregate function", name)
		}
		if !f.ReturnsSet() {
			// A scalar function in FROM is one row of one column.
			call, err := b.bindSRFArgs(fc, f, name, ec)
			if err != nil {
				return nil, err
			}
			call.Overload = scalarAsSRF(call.Overload)
			calls = append(calls, *call)
			continue
		}
		if name == "unnest" && len(fc.Args) > 1 && !rf.IsRowsfrom {
			// unnest(a, b, …) in FROM is ROWS FROM (unnest(a), unnest(b), …).
			for _, a := range fc.Args {
				one := &pg_query.FuncCall{Funcname: fc.Funcname, Args: []*pg_query.Node{a}, Location: fc.Location}
				call, err := b.bindSRFArgs(one, f, name, ec)
				if err != nil {
					return nil, err
				}
				calls = append(calls, *call)
			}
			continue
		}
		call, err := b.bindSRFArgs(fc, f, name, ec)
		if err != nil {
			return nil, err
		}
		calls = append(calls, *call)
	}
	return calls, nil
}

// scalarAsSRF wraps a scalar overload as a set-returning one giving one
// row (NULL when a strict overload has a NULL argument, as PostgreSQL
// gives for a scalar function in FROM).
func scalarAsSRF(ov *funcs.Overload) *funcs.Overload {
	w := *ov
	w.NullStrict = false
	w.SRF = func(c *funcs.Ctx, args []types.Datum) (funcs.RowIter, error) {
		d := types.NullDatum
		null := false
		for _, a := range args {
			null = null || a.IsNull()
		}
		if !null || !ov.NullStrict {
			var err error
			if d, err = ov.Fn(c, args); err != nil {
				return nil, err
			}
		}
		done := false
		return func() ([]types.Datum, bool, error) {
			if done {
				return nil, false, nil
			}
			done = true
			return []types.Datum{d}, true, nil
		}, nil
	}
	return &w
}

// flattenSRFApply turns an inner Apply of set-returning calls that read
// the row to their left into a ProjectSet over that row's input (with the
// ON condition as a Filter over it): one pass, no plan per row, and a shape
// refresh differentiates row by row. Any other Apply is returned as is.
func flattenSRFApply(ap *Apply) Node {
	ps, ok := ap.Right.(*ProjectSet)
	if !ok || ap.Kind != JoinInner {
		return ap
	}
	if v, ok := ps.Input.(*Values); !ok || len(v.Rows) != 1 || len(v.Rows[0]) != 0 {
		return ap
	}
	params := ap.Params
	calls := make([]SRFCall, len(ps.Calls))
	for i, c := range ps.Calls {
		args := make([]Expr, len(c.Args))
		for j, a := range c.Args {
			args[j] = Rewrite(a, func(x Expr) Expr {
				if r, ok := x.(*OuterRef); ok {
					return params[r.Idx]
				}
				return x
			})
		}
		c.Args = args
		calls[i] = c
	}
	var out Node = &ProjectSet{Input: ap.Left, Calls: calls, Ordinality: ps.Ordinality}
	if ap.Residual != nil {
		out = &Filter{Input: out, Cond: ap.Residual}
	}
	return out
}

// bindEventLog binds event_log('name') and event_log(TABLE(name)) (the
// parser turns TABLE(name) into a string literal): the event log of a
// materialized view (R-O1).
func (b *Binder) bindEventLog(fn *pg_query.FuncCall, alias *pg_query.Alias) (Node, *scope, error) {
	if len(fn.Args) != 1 {
		return nil, nil, b.errAt(fn.Location, pgerror.UndefinedFunction, "event_log takes one argument: TABLE(name) or 'name'")
	}
	e, err := b.bindExpr(fn.Args[0], &exprCtx{clause: "function arguments"})
	if err != nil {
		return nil, nil, err
	}
	c, ok := e.(*Const)
	if !ok || c.D.IsNull() || !(c.T.IsString() || isUnknown(c.T)) {
		return nil, nil, b.errAt(nodeLocation(fn.Args[0]), pgerror.InvalidParameterValue, "event_log: the argument must be TABLE(name) or a name literal")
	}
	t, err := b.Cat.Resolve(splitName(c.D.S), b.SearchPath)
	if err != nil {
		return nil, nil, withPos(err, b, nodeLocation(fn.Args[0]))
	}
	if t.Dataset == nil {
		return nil, nil, b.errAt(nodeLocation(fn.Args[0]), pgerror.WrongObjectType, "\"%s\" is not a materialized view or streaming table: it has no event log", t.Name)
	}
	return b.systemRows(&Rows{Cols: EventLogColumns, Gen: GenEventLog, Arg: t.ID}, alias, "event_log", fn.Location)
}

// systemRows gives a generated relation its scope.
func (b *Binder) systemRows(r *Rows, alias *pg_query.Alias, name string, loc int32) (Node, *scope, error) {
	sc, err := b.derivedScope(r.Cols, alias, name, loc)
	if err != nil {
		return nil, nil, err
	}
	return r, sc, nil
}

// splitName splits a dotted name, honouring double quotes; unquoted parts
// are lower-cased.
func splitName(s string) []string {
	var parts []string
	var cur []rune
	quoted := false
	wasQuoted := false
	flush := func() {
		p := string(cur)
		if !wasQuoted {
			p = lower(p)
		}
		parts = append(parts, p)
		cur = cur[:0]
		wasQuoted = false
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '"' && quoted && i+1 < len(rs) && rs[i+1] == '"':
			cur = append(cur, '"')
			i++
		case r == '"' || r == '`':
			quoted = !quoted
			wasQuoted = true
		case r == '.' && !quoted:
			flush()
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return parts
}

func lower(s string) string {
	b := []rune(s)
	for i, r := range b {
		if r >= 'A' && r <= 'Z' {
			b[i] = r + 32
		}
	}
	return string(b)
}

// SplitName is splitName for other packages (names given as strings).
func SplitName(s string) []string { return splitName(s) }
