package plan

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/types"
)

// Set-returning functions in a select list (PostgreSQL 10's rules): each
// call stands as an SRFRef until one ProjectSet, placed over the
// aggregation, the window functions and QUALIFY, runs every call of the
// list side by side; several calls give as many rows as the longest, the
// shorter ones padded with NULLs. A call may sit inside an expression
// (unnest(a) + 1) but not in CASE or COALESCE, nor inside another
// set-returning call or an aggregate.

// srfCollector gathers the set-returning calls of a select list.
type srfCollector struct {
	calls  []SRFCall
	inCall bool
}

// errSRFNotAllowed is PostgreSQL's error for a set-returning call where
// none may be.
func (b *Binder) errSRFNotAllowed(loc int32, clause string) error {
	if clause == "" {
		clause = "this context"
	}
	return b.errAt(loc, pgerror.FeatureNotSupported, "set-returning functions are not allowed in %s", clause)
}

// bindSRFCall binds a set-returning function called in an expression.
// field names the column of a several-column function ((f(x)).n); "" for
// the function's only column.
func (b *Binder) bindSRFCall(fc *pg_query.FuncCall, f *funcs.Func, name string, ec *exprCtx, field string) (Expr, error) {
	loc := fc.Location
	if fc.Over != nil {
		return nil, b.errAt(loc, pgerror.WrongObjectType, "OVER specified, but %s is not a window function nor an aggregate function", name)
	}
	if fc.AggStar || fc.AggDistinct || fc.AggFilter != nil || len(fc.AggOrder) > 0 {
		return nil, b.errAt(loc, pgerror.WrongObjectType, "%s is not an aggregate function", name)
	}
	switch {
	case ec.srfs == nil && ec.clause != "SELECT":
		return nil, b.errSRFNotAllowed(loc, ec.clause)
	case ec.aggs != nil && ec.aggs.inAgg:
		return nil, b.errAt(loc, pgerror.FeatureNotSupported, "aggregate function calls cannot contain set-returning function calls").
			WithHint("You might be able to move the set-returning function into a LATERAL FROM item.")
	case ec.wins != nil && ec.wins.inCall:
		return nil, b.errAt(loc, pgerror.FeatureNotSupported, "window function calls cannot contain set-returning function calls").
			WithHint("You might be able to move the set-returning function into a LATERAL FROM item.")
	case ec.srfs == nil:
		return nil, b.errSRFNotAllowed(loc, ec.clause)
	case ec.srfs.inCall:
		return nil, b.errAt(loc, pgerror.FeatureNotSupported, "a set-returning function in the arguments of another is not supported yet").
			WithHint("Move the inner call into a LATERAL FROM item.")
	}
	ec.srfs.inCall = true
	call, err := b.bindSRFArgs(fc, f, name, ec)
	ec.srfs.inCall = false
	if err != nil {
		return nil, err
	}
	col := 0
	switch {
	case field != "":
		col = -1
		for i, c := range call.Cols {
			if c.Name == field {
				col = i
			}
		}
		if col < 0 {
			return nil, b.errAt(loc, pgerror.UndefinedColumn, "column \"%s\" not found in data type record", field)
		}
	case len(call.Cols) > 1:
		// The row used whole: a record of the call's columns.
		ec.srfs.calls = append(ec.srfs.calls, *call)
		return &SRFRef{Idx: len(ec.srfs.calls) - 1, Col: -1, T: types.Record, loc: loc}, nil
	}
	ec.srfs.calls = append(ec.srfs.calls, *call)
	return &SRFRef{Idx: len(ec.srfs.calls) - 1, Col: col, T: call.Cols[col].T, loc: loc}, nil
}

// bindSRFArgs binds the arguments of a set-returning call and resolves its
// overload and columns.
func (b *Binder) bindSRFArgs(fc *pg_query.FuncCall, f *funcs.Func, name string, ec *exprCtx) (*SRFCall, error) {
	if !f.Deterministic {
		b.volatile++
	}
	var args []Expr
	for _, a := range fc.Args {
		e, err := b.bindExpr(a, ec)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	ov, args, err := b.resolveCall(f, name, args, fc.Location)
	if err != nil {
		return nil, err
	}
	ats := make([]types.T, len(args))
	for i, a := range args {
		ats[i] = a.Type()
	}
	call := &SRFCall{Name: name, Fn: f, Overload: ov, Args: args}
	if ov.Cols != nil {
		for _, c := range ov.Cols(ats) {
			call.Cols = append(call.Cols, Column{Name: c.Name, T: c.T})
		}
	} else {
		call.Cols = []Column{{Name: name, T: ov.Ret(ats)}}
	}
	return call, nil
}

// checkSRFPlacement rejects a select-list call inside CASE or COALESCE,
// whose other branches would not see the extra rows (PostgreSQL 10's
// rule).
func (b *Binder) checkSRFPlacement(e Expr, loc int32) error {
	var bad string
	var in func(e Expr, under string)
	in = func(e Expr, under string) {
		if bad != "" || e == nil {
			return
		}
		if r, ok := e.(*SRFRef); ok && under != "" {
			bad, loc = under, r.loc
			return
		}
		switch e.(type) {
		case *Case:
			under = "CASE"
		case *Coalesce:
			under = "COALESCE"
		}
		for _, c := range Children(e) {
			in(c, under)
		}
	}
	in(e, "")
	if bad != "" {
		return b.errAt(loc, pgerror.FeatureNotSupported, "set-returning functions are not allowed in %s", bad).
			WithHint("You might be able to move the set-returning function into a LATERAL FROM item.")
	}
	return nil
}

// srfArgs returns pointers to the arguments of the collected calls, for
// the rewrites that bring them over the aggregation and window output.
func (s *srfCollector) srfArgs() []*Expr {
	var out []*Expr
	for i := range s.calls {
		for j := range s.calls[i].Args {
			out = append(out, &s.calls[i].Args[j])
		}
	}
	return out
}

// placeProjectSet puts the ProjectSet of the collected calls over input
// and turns the SRFRefs in exprs into its columns.
func placeProjectSet(input Node, s *srfCollector, exprs ...*Expr) Node {
	ps := &ProjectSet{Input: input, Calls: s.calls}
	base := len(input.Columns())
	offsets := make([]int, len(s.calls))
	for i := range s.calls {
		offsets[i] = base
		base += len(s.calls[i].Cols)
	}
	for _, p := range exprs {
		if *p == nil {
			continue
		}
		*p = Rewrite(*p, func(x Expr) Expr {
			r, ok := x.(*SRFRef)
			switch {
			case !ok:
				return x
			case r.Col < 0:
				cols := s.calls[r.Idx].Cols
				fields := make([]Expr, len(cols))
				for i, c := range cols {
					fields[i] = &ColRef{Idx: offsets[r.Idx] + i, T: c.T, Name: c.Name}
				}
				return &Func{Name: rowFunc.Name, Fn: rowFunc, Overload: rowFunc.Overloads[0], Args: fields, T: types.Record}
			}
			return &ColRef{Idx: offsets[r.Idx] + r.Col, T: r.T}
		})
	}
	return ps
}

// srfField reads a field selection from a set-returning call,
// (f(x)).name: the call and the field, or nil when ind is not that shape.
func srfField(ind *pg_query.A_Indirection) (*pg_query.FuncCall, *funcs.Func, string) {
	fc := ind.Arg.GetFuncCall()
	if fc == nil || len(ind.Indirection) != 1 {
		return nil, nil, ""
	}
	field := ind.Indirection[0].GetString_()
	if field == nil {
		return nil, nil, ""
	}
	f, ok := funcs.Lookup(strings.ToLower(strVal(fc.Funcname[len(fc.Funcname)-1])))
	if !ok || !f.ReturnsSet() {
		return nil, nil, ""
	}
	return fc, f, field.Sval
}

// rowFunc builds a record of its arguments (a set-returning call's row used
// whole); fieldFuncs select field i of a record.
var (
	rowFunc = &funcs.Func{Name: "row", Deterministic: true, Overloads: []*funcs.Overload{{
		Fn: func(_ *funcs.Ctx, a []types.Datum) (types.Datum, error) {
			return types.NewRecord(append([]types.Datum(nil), a...)), nil
		}}}}
	fieldFuncs []*funcs.Func
)

// fieldFunc is the function selecting field i of a record (the first ones
// built once, read-only afterwards).
func fieldFunc(i int) *funcs.Func {
	if i < len(fieldFuncs) {
		return fieldFuncs[i]
	}
	return &funcs.Func{Name: "field" + itoaInt(i), Deterministic: true, Overloads: []*funcs.Overload{{NullStrict: true,
		Fn: func(_ *funcs.Ctx, a []types.Datum) (types.Datum, error) {
			if i >= a[0].ArrayLen() {
				return types.NullDatum, nil
			}
			return a[0].Elems()[i], nil
		}}}}
}

func init() {
	for i := 0; i < 16; i++ {
		fieldFuncs = append(fieldFuncs, fieldFunc(i))
	}
}

// bindFieldSelect binds (col).field on a record column: the field's
// position comes from the column's Fields, found where the reference
// resolves.
func (b *Binder) bindFieldSelect(ind *pg_query.A_Indirection, field string, ec *exprCtx) (Expr, error) {
	loc := nodeLocation(ind.Arg)
	arg, err := b.bindExpr(ind.Arg, ec)
	if err != nil {
		return nil, err
	}
	if arg.Type().Kind != types.KindRecord {
		return nil, b.errAt(loc, pgerror.WrongObjectType, "column notation .%s applied to type %s, which is not a composite type", field, arg.Type().String())
	}
	var fields []Column
	if cr := ind.Arg.GetColumnRef(); cr != nil {
		fields = b.columnFields(ec.sc, cr)
	}
	for i, f := range fields {
		if f.Name == field {
			fn := fieldFunc(i)
			return &Func{Name: fn.Name, Fn: fn, Overload: fn.Overloads[0], Args: []Expr{arg}, T: f.T}, nil
		}
	}
	return nil, b.errAt(loc, pgerror.UndefinedColumn, "could not identify column \"%s\" in record data type", field)
}

// columnFields returns the Fields of the record column a reference names,
// searching the scopes as resolveColumn does.
func (b *Binder) columnFields(sc *scope, cr *pg_query.ColumnRef) []Column {
	var parts []string
	for _, f := range cr.Fields {
		parts = append(parts, strVal(f))
	}
	var rel, name string
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		rel, name = parts[0], parts[1]
	default:
		rel, name = parts[len(parts)-2], parts[len(parts)-1]
	}
	if sc == nil {
		sc = b.newScope()
	}
	for cur := sc; cur != nil; cur = cur.outer {
		if i, err := cur.find(rel, name, b, parts, cr.Location); err == nil && i >= 0 {
			return cur.cols[i].fields
		}
	}
	return nil
}
