package plan

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/types"
)

// Arrays in expressions: ARRAY[…], subscripts and slices, x op ANY/ALL
// (array), the array operators (||, @>, <@, &&) and the polymorphic
// parameters of the array functions. Everything binds to Func calls of
// the functions in sql/funcs/array.go, so the rest of the planner, the
// executor and refresh see ordinary deterministic functions.

// errMultiDim is the answer to anything that would build an array of
// arrays.
func (b *Binder) errMultiDim(loc int32) error {
	return b.errAt(loc, pgerror.FeatureNotSupported, "multidimensional arrays are not supported")
}

// arrayFunc is the function ARRAY[…] builds its value with.
var arrayFunc, _ = funcs.Lookup("array")

// bindArrayExpr binds ARRAY[e, …]: the elements take their common type
// (text when all are untyped), or the element type of target when the
// constructor is cast (ARRAY[]::int[]).
func (b *Binder) bindArrayExpr(ae *pg_query.A_ArrayExpr, ec *exprCtx, target *types.T) (Expr, error) {
	loc := ae.Location
	var elems []Expr
	for _, n := range ae.Elements {
		if n.GetAArrayExpr() != nil {
			return nil, b.errMultiDim(nodeLocation(n))
		}
		e, err := b.bindExpr(n, ec)
		if err != nil {
			return nil, err
		}
		elems = append(elems, e)
	}
	var et types.T
	if target != nil {
		et = target.ElemType()
		for i, e := range elems {
			var err error
			if elems[i], err = b.explicitCast(e, et, nodeLocation(ae.Elements[i])); err != nil {
				return nil, err
			}
		}
	} else {
		if len(elems) == 0 {
			return nil, b.errAt(loc, pgerror.IndeterminateDatatype, "cannot determine type of empty array").
				WithHint("Explicitly cast to the desired type, for example ARRAY[]::integer[].")
		}
		var err error
		if elems, et, err = b.commonElems(elems, ae.Elements, "ARRAY"); err != nil {
			return nil, err
		}
	}
	if et.IsArray() {
		return nil, b.errMultiDim(loc)
	}
	t := types.ArrayOf(et)
	return &Func{Name: "array", Fn: arrayFunc, Overload: arrayFunc.Overloads[0], Args: elems, T: t}, nil
}

// commonElems brings expressions to their common type (untyped literals
// take it; text when all are untyped), as for COALESCE.
func (b *Binder) commonElems(es []Expr, nodes []*pg_query.Node, what string) ([]Expr, types.T, error) {
	t := types.Null
	for i, e := range es {
		if isUnknown(e.Type()) {
			continue
		}
		c, ok := commonType(t, e.Type())
		if !ok {
			return nil, t, b.errAt(nodeLocation(nodes[i]), pgerror.DatatypeMismatch, "%s types %s and %s cannot be matched", what, t.String(), e.Type().String())
		}
		t = c
	}
	if isUnknown(t) {
		t = types.Text
	}
	out := make([]Expr, len(es))
	for i, e := range es {
		var err error
		if out[i], err = b.coerce(e, t, false, nodeLocation(nodes[i])); err != nil {
			return nil, t, err
		}
	}
	return out, t, nil
}

// Functions behind subscripts (PostgreSQL's arr[i] and arr[lo:hi]).
var (
	subscriptFunc = &funcs.Func{Name: "subscript", Deterministic: true, Overloads: []*funcs.Overload{{NullStrict: true,
		Fn: func(_ *funcs.Ctx, a []types.Datum) (types.Datum, error) { return funcs.Subscript(a[0], a[1].I), nil }}}}
	sliceFuncs = map[[2]bool]*funcs.Func{}
)

func init() {
	for _, lo := range []bool{false, true} {
		for _, hi := range []bool{false, true} {
			lo, hi := lo, hi
			name := "slice"
			if !lo {
				name += "_from_start"
			}
			if !hi {
				name += "_to_end"
			}
			sliceFuncs[[2]bool{lo, hi}] = &funcs.Func{Name: name, Deterministic: true, Overloads: []*funcs.Overload{{NullStrict: true,
				Fn: func(_ *funcs.Ctx, a []types.Datum) (types.Datum, error) {
					var l, h *int64
					i := 1
					if lo {
						l = &a[i].I
						i++
					}
					if hi {
						h = &a[i].I
					}
					return funcs.Slice(a[0], l, h), nil
				}}}}
		}
	}
}

// bindIndirection binds arr[i], arr[lo:hi] and a field of a set-returning
// call's row, (f(x)).name.
func (b *Binder) bindIndirection(ind *pg_query.A_Indirection, ec *exprCtx) (Expr, error) {
	loc := nodeLocation(ind.Arg)
	if fc, f, field := srfField(ind); fc != nil {
		name := strVal(fc.Funcname[len(fc.Funcname)-1])
		return b.bindSRFCall(fc, f, name, ec, field)
	}
	if len(ind.Indirection) == 1 {
		if s := ind.Indirection[0].GetString_(); s != nil {
			return b.bindFieldSelect(ind, s.Sval, ec)
		}
	}
	arr, err := b.bindExpr(ind.Arg, ec)
	if err != nil {
		return nil, err
	}
	t := arr.Type()
	for _, n := range ind.Indirection {
		if n.GetAIndices() == nil {
			return nil, b.errAt(loc, pgerror.FeatureNotSupported, "this indirection is not supported")
		}
	}
	if t.Kind == types.KindName && len(ind.Indirection) == 1 && !ind.Indirection[0].GetAIndices().IsSlice {
		// PostgreSQL's name is a char[64] of bound 0: name[i] is its
		// i-th byte as a "char" (pg_dump tests typname[0] = '_').
		i, err := b.bindExpr(ind.Indirection[0].GetAIndices().Uidx, ec)
		if err != nil {
			return nil, err
		}
		if i, err = b.coerce(i, types.Int4, false, loc); err != nil {
			return nil, err
		}
		return &Func{Name: nameSubscriptFunc.Name, Fn: nameSubscriptFunc, Overload: nameSubscriptFunc.Overloads[0], Args: []Expr{arr, i}, T: types.InternalChar}, nil
	}
	if !t.IsArray() {
		return nil, b.errAt(loc, pgerror.DatatypeMismatch, "cannot subscript type %s because it does not support subscripting", t.String())
	}
	if len(ind.Indirection) > 1 {
		for _, n := range ind.Indirection {
			if n.GetAIndices().IsSlice {
				return nil, b.errMultiDim(loc)
			}
		}
		// arr[i][j] of a one-dimensional array is NULL, as in PostgreSQL.
		return &Const{D: types.NullDatum, T: t.ElemType()}, nil
	}
	ix := ind.Indirection[0].GetAIndices()
	sub := func(n *pg_query.Node) (Expr, error) {
		e, err := b.bindExpr(n, ec)
		if err != nil {
			return nil, err
		}
		et := e.Type()
		switch {
		case isUnknown(et):
			return b.coerce(e, types.Int4, false, nodeLocation(n))
		case et.Kind == types.KindInt2 || et.Kind == types.KindInt4 || et.Kind == types.KindInt8:
			return e, nil
		case et.IsNumeric():
			return &Cast{E: e, T: types.Int4}, nil
		}
		return nil, b.errAt(nodeLocation(n), pgerror.DatatypeMismatch, "array subscript must have type integer")
	}
	if !ix.IsSlice {
		i, err := sub(ix.Uidx)
		if err != nil {
			return nil, err
		}
		return &Func{Name: subscriptFunc.Name, Fn: subscriptFunc, Overload: subscriptFunc.Overloads[0], Args: []Expr{arr, i}, T: t.ElemType()}, nil
	}
	args := []Expr{arr}
	for _, n := range []*pg_query.Node{ix.Lidx, ix.Uidx} {
		if n == nil {
			continue
		}
		e, err := sub(n)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	f := sliceFuncs[[2]bool{ix.Lidx != nil, ix.Uidx != nil}]
	return &Func{Name: f.Name, Fn: f, Overload: f.Overloads[0], Args: args, T: types.ArrayOf(t.ElemType())}, nil
}

// nameSubscriptFunc is name[i]: the i-th byte (from 0) of the name's 64,
// which are NUL past its end ("" as a "char"); NULL outside 0..63.
var nameSubscriptFunc = &funcs.Func{Name: "name_subscript", Deterministic: true, Overloads: []*funcs.Overload{{NullStrict: true,
	Fn: func(_ *funcs.Ctx, a []types.Datum) (types.Datum, error) {
		s, i := a[0].S, a[1].I
		switch {
		case i < 0 || i >= 64:
			return types.NullDatum, nil
		case i >= int64(len(s)):
			return types.NewString(types.KindInternalChar, ""), nil
		}
		return types.NewString(types.KindInternalChar, s[i:i+1]), nil
	}}}}

// quantifiedFuncs holds the functions behind x op ANY/ALL (array), one per
// operator and quantifier.
var quantifiedFuncs = map[string]*funcs.Func{}

func quantifiedFunc(op Op, all bool) *funcs.Func {
	name := op.String() + " ANY"
	if all {
		name = op.String() + " ALL"
	}
	if f, ok := quantifiedFuncs[name]; ok {
		return f // read-only after init
	}
	test := cmpTest(op)
	f := &funcs.Func{Name: name, Deterministic: true, Overloads: []*funcs.Overload{{
		Fn: func(_ *funcs.Ctx, a []types.Datum) (types.Datum, error) {
			if a[1].IsNull() {
				return types.NullDatum, nil
			}
			elems := a[1].Elems()
			if len(elems) == 0 {
				return types.NewBool(all), nil
			}
			if a[0].IsNull() {
				return types.NullDatum, nil
			}
			sawNull := false
			for _, e := range elems {
				if e.IsNull() {
					sawNull = true
					continue
				}
				if test(types.Compare(a[0], e)) != all {
					return types.NewBool(!all), nil
				}
			}
			if sawNull {
				return types.NullDatum, nil
			}
			return types.NewBool(all), nil
		}}}}
	quantifiedFuncs[name] = f
	return f
}

// cmpTest turns a comparison's three-way result into its truth value.
func cmpTest(op Op) func(int) bool {
	switch op {
	case OpEq:
		return func(c int) bool { return c == 0 }
	case OpNe:
		return func(c int) bool { return c != 0 }
	case OpLt:
		return func(c int) bool { return c < 0 }
	case OpLe:
		return func(c int) bool { return c <= 0 }
	case OpGt:
		return func(c int) bool { return c > 0 }
	}
	return func(c int) bool { return c >= 0 }
}

func init() {
	// Built before any binding runs (bindings share the map).
	for _, op := range []Op{OpEq, OpNe, OpLt, OpLe, OpGt, OpGe} {
		quantifiedFunc(op, false)
		quantifiedFunc(op, true)
	}
}

// bindArrayQuantified binds x op ANY (array) and x op ALL (array): the
// comparison in the common type of x and the array's elements. An untyped
// right side (a literal, a parameter) is read as an array of x's type.
func (b *Binder) bindArrayQuantified(a *pg_query.A_Expr, ec *exprCtx) (Expr, error) {
	loc := a.Location
	op := opName(a.Name)
	cop, ok := compareOps[op]
	if !ok {
		return nil, b.errAt(loc, pgerror.FeatureNotSupported, "%s ANY/ALL (array) is not supported yet; only comparison operators are", op)
	}
	l, err := b.bindExpr(a.Lexpr, ec)
	if err != nil {
		return nil, err
	}
	r, err := b.bindExpr(a.Rexpr, ec)
	if err != nil {
		return nil, err
	}
	lt, rt := l.Type(), r.Type()
	if isUnknown(rt) {
		et := lt
		if isUnknown(et) {
			et = types.Text
		}
		if r, err = b.coerce(r, types.ArrayOf(et), false, nodeLocation(a.Rexpr)); err != nil {
			return nil, err
		}
		rt = r.Type()
	}
	if !rt.IsArray() {
		return nil, b.errAt(loc, pgerror.WrongObjectType, "op ANY/ALL (array) requires array on right side")
	}
	et := rt.ElemType()
	ct, ok := commonType(lt, et)
	if !ok {
		return nil, b.errAt(loc, pgerror.UndefinedFunction, "operator does not exist: %s %s %s", lt.String(), op, et.String()).
			WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
	}
	if l, err = b.coerce(l, ct, false, nodeLocation(a.Lexpr)); err != nil {
		return nil, err
	}
	if ct.Kind != et.Kind {
		if r, err = b.coerce(r, types.ArrayOf(ct), false, nodeLocation(a.Rexpr)); err != nil {
			return nil, err
		}
	}
	f := quantifiedFunc(cop, a.Kind == pg_query.A_Expr_Kind_AEXPR_OP_ALL)
	return &Func{Name: f.Name, Fn: f, Overload: f.Overloads[0], Args: []Expr{l, r}, T: types.Bool}, nil
}

// arrayOperators are the array operators bound to functions.
var arrayOperators = map[string]string{"@>": "arraycontains", "<@": "arraycontained", "&&": "arrayoverlap"}

// arrayOperator binds the array forms of ||, @>, <@ and &&; ok is false
// when op with these operands is not one of them.
func (b *Binder) arrayOperator(op string, l, r Expr, loc int32) (e Expr, ok bool, err error) {
	lt, rt := l.Type(), r.Type()
	if !lt.IsArray() && !rt.IsArray() {
		return nil, false, nil
	}
	name := arrayOperators[op]
	if op == "||" {
		// An untyped side is read as an array (anycompatiblearray ||
		// anycompatiblearray is PostgreSQL's first choice).
		switch {
		case lt.IsArray() && (rt.IsArray() || isUnknown(rt)), rt.IsArray() && isUnknown(lt):
			name = "array_cat"
		case lt.IsArray():
			name = "array_append"
		default:
			name = "array_prepend"
		}
	}
	if name == "" {
		return nil, false, nil
	}
	f, _ := funcs.Lookup(name)
	ov, args, err := b.resolveCall(f, name, []Expr{l, r}, loc)
	if pe, ok := err.(*pgerror.Error); ok && pe.Code == pgerror.UndefinedFunction {
		return nil, true, b.errAt(loc, pgerror.UndefinedFunction, "operator does not exist: %s %s %s", lt.String(), op, rt.String()).
			WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
	}
	if err != nil {
		return nil, true, err
	}
	ats := []types.T{args[0].Type(), args[1].Type()}
	return &Func{Name: name, Fn: f, Overload: ov, Args: args, T: ov.Ret(ats)}, true, nil
}

// polyRole is the role of argument i of a polymorphic overload.
func polyRole(ov *funcs.Overload, i int) funcs.Poly {
	if i < len(ov.Poly) {
		return ov.Poly[i]
	}
	return ov.Poly[len(ov.Poly)-1]
}

// overloadParams returns the types ov's parameters take for args: those
// it declares, or, for a polymorphic overload, the common element type of
// its polymorphic arguments (text when all are untyped) and arrays of it.
// ok is false when the polymorphic arguments do not fit together.
func overloadParams(ov *funcs.Overload, args []Expr) ([]types.T, bool) {
	out := make([]types.T, len(args))
	if ov.Poly == nil {
		for i := range args {
			out[i] = paramType(ov, i)
		}
		return out, true
	}
	elem, have := types.Null, false
	for i, a := range args {
		at := a.Type()
		if isUnknown(at) {
			continue
		}
		var cand types.T
		switch polyRole(ov, i) {
		case funcs.PolyElem:
			if at.Kind == types.KindArray {
				return nil, false // an array of arrays
			}
			cand = at
		case funcs.PolyArray:
			if !at.IsArray() {
				return nil, false
			}
			cand = at.ElemType()
		default:
			continue
		}
		if !have {
			elem, have = cand, true
			continue
		}
		c, ok := commonType(elem, cand)
		if !ok {
			return nil, false
		}
		elem = c
	}
	if !have {
		elem = types.Text
	}
	for i, a := range args {
		switch polyRole(ov, i) {
		case funcs.PolyElem:
			out[i] = elem
		case funcs.PolyArray:
			// A vector is passed as it is (its subscripts start at 0).
			if at := a.Type(); at.IsArray() && at.Kind != types.KindArray && at.ElemType() == elem {
				out[i] = at
			} else {
				out[i] = types.ArrayOf(elem)
			}
		default:
			out[i] = paramType(ov, i)
		}
	}
	return out, true
}

// arrayImplicitCast reports whether PostgreSQL converts array type from to
// array type to without a cast: when the elements convert so (a vector
// becomes an array of its element type).
func arrayImplicitCast(from, to types.T) bool {
	if !from.IsArray() || to.Kind != types.KindArray {
		return false
	}
	fe, te := from.ElemType(), to.ElemType()
	return fe.Kind == te.Kind || implicitCast(fe, te)
}

// arrayCommonType is the common type of two array types: PostgreSQL
// compares arrays of the same element type only.
func arrayCommonType(a, b types.T) (types.T, bool) {
	if a.ElemType().Kind != b.ElemType().Kind {
		return types.T{}, false
	}
	switch {
	case a == b:
		return a, true
	case a.Kind != types.KindArray && b.Kind != types.KindArray:
		return a, true // two vectors of one kind
	}
	// A modifier survives only when both have it (as for scalars).
	return types.ArrayOf(types.T{Kind: a.ElemType().Kind}), true
}
