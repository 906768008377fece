package exec

import (
	"github.com/mvserver/mvserver/sql/exec/vec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// Vector expressions: the part of compile (expr.go) that has kernels in
// package vec. compileVec returns ok false for an expression without one
// (a function call, a text order, a float, …); the vectorized
// aggregation (vagg.go) then leaves the whole query to the row path.

// vexpr evaluates an expression over the rows sel of a batch; the result
// is owned by the expression (valid until its next call).
type vexpr func(b *vec.Batch, sel []int32) (*vec.Vec, error)

// vtype is an expression's vector type and scale.
type vtype struct {
	t     vec.Type
	scale int32
	// char: CHAR(n) bytes, equal when equal but for trailing spaces (no
	// comparison kernel; group keys compare trimmed).
	char bool
}

// vecTypeOf returns the vector type of SQL type t: integers (and bool,
// date, timestamps) as Int, NUMERIC(p ≤ 18, s) as Decimal at scale s,
// text and varchar as Bytes.
func vecTypeOf(t types.T) (vtype, bool) {
	switch t.Kind {
	case types.KindInt2, types.KindInt4, types.KindInt8, types.KindDate, types.KindTimestamp, types.KindTimestampTZ:
		return vtype{t: vec.Int}, true
	case types.KindBool:
		return vtype{t: vec.Bool}, true
	case types.KindNumeric:
		if t.Precision > 0 && t.Precision <= 18 && t.Scale >= 0 {
			return vtype{t: vec.Decimal, scale: t.Scale}, true
		}
	case types.KindText, types.KindVarchar:
		return vtype{t: vec.Bytes}, true
	case types.KindChar:
		return vtype{t: vec.Bytes, char: true}, true
	}
	return vtype{}, false
}

// vcompiler compiles expressions over an input whose column i is
// cols[i] (nil: no vector), of type types[i].
type vcompiler struct {
	cols  []vexpr
	types []vtype
	// c, when set, lets statement constants fold and functions without
	// a kernel run per row (vfunc.go).
	c *Ctx
}

func (vc *vcompiler) compile(e plan.Expr) (vexpr, vtype, bool) {
	if _, isConst := e.(*plan.Const); !isConst && vc.c != nil && statementConst(e) {
		return vc.fold(e)
	}
	switch x := e.(type) {
	case *plan.ColRef:
		if x.Idx >= len(vc.cols) || vc.cols[x.Idx] == nil {
			return nil, vtype{}, false
		}
		return vc.cols[x.Idx], vc.types[x.Idx], true
	case *plan.Const:
		return vconst(x)
	case *plan.Cast:
		in, it, ok := vc.compile(x.E)
		if !ok {
			return nil, vtype{}, false
		}
		from, to := x.E.Type(), x.T
		switch {
		case from.IsInteger() && to.IsInteger() && intWidth(to.Kind) >= intWidth(from.Kind):
			return in, it, true
		case isTextKind(from.Kind) && !it.char && (to.Kind == types.KindText || (to.Kind == types.KindVarchar && to.Width == 0)):
			// varchar → text changes no byte (TPC-H Q14's p_type LIKE
			// 'PROMO%' binds as p_type::text LIKE …).
			return in, it, true
		case from.Kind == types.KindDate && to.Kind == types.KindTimestamp:
			out := &vec.Vec{}
			return func(b *vec.Batch, sel []int32) (*vec.Vec, error) {
				a, err := in(b, sel)
				if err != nil {
					return nil, err
				}
				return out, vec.MapInt(a, types.DateToTimestamp, sel, b.N, out)
			}, vtype{t: vec.Int}, true
		case from.IsInteger() && to.Kind == types.KindNumeric && to.Precision == 0:
			out := &vec.Vec{}
			return func(b *vec.Batch, sel []int32) (*vec.Vec, error) {
				a, err := in(b, sel)
				if err != nil {
					return nil, err
				}
				a2 := *a
				a2.T, a2.Scale = vec.Int, 0
				return out, vec.Rescale(&a2, 0, sel, b.N, out)
			}, vtype{t: vec.Decimal}, true
		}
		return nil, vtype{}, false
	case *plan.Binary:
		return vc.binary(x)
	case *plan.Not:
		in, it, ok := vc.compile(x.E)
		if !ok || it.t != vec.Bool {
			return nil, vtype{}, false
		}
		out := &vec.Vec{}
		return func(b *vec.Batch, sel []int32) (*vec.Vec, error) {
			a, err := in(b, sel)
			if err != nil {
				return nil, err
			}
			vec.Not(a, sel, b.N, out)
			return out, nil
		}, it, true
	case *plan.IsNull:
		in, _, ok := vc.compile(x.E)
		if !ok {
			return nil, vtype{}, false
		}
		out := &vec.Vec{}
		not := x.Not
		return func(b *vec.Batch, sel []int32) (*vec.Vec, error) {
			a, err := in(b, sel)
			if err != nil {
				return nil, err
			}
			vec.IsNull(a, not, sel, b.N, out)
			return out, nil
		}, vtype{t: vec.Bool}, true
	case *plan.In:
		return vc.in(x)
	case *plan.Case:
		return vc.caseWhen(x)
	case *plan.And:
		return vc.logic(x.Args, true)
	case *plan.Or:
		return vc.logic(x.Args, false)
	case *plan.Func:
		return vc.rowFunc(x)
	}
	return nil, vtype{}, false
}

func isTextKind(k types.Kind) bool { return k == types.KindText || k == types.KindVarchar }

func intWidth(k types.Kind) int {
	switch k {
	case types.KindInt2:
		return 2
	case types.KindInt4:
		return 4
	}
	return 8
}

func vconst(x *plan.Const) (vexpr, vtype, bool) {
	d := constDatum(x)
	vt, ok := vecTypeOf(x.T)
	if x.T.Kind == types.KindNumeric {
		// A constant's own scale (its exponent), whatever its type's.
		vt, ok = vtype{t: vec.Decimal}, true
	}
	if !ok {
		return nil, vtype{}, false
	}
	var v *vec.Vec
	switch {
	case d.IsNull():
		v = vec.One(vt.t, vt.scale, 0, nil, true)
	case vt.t == vec.Bytes:
		v = vec.One(vec.Bytes, 0, 0, []byte(d.S), false)
	case vt.t == vec.Decimal:
		if d.D == nil || !d.D.Coeff.IsInt64() || d.D.Form != 0 {
			return nil, vtype{}, false
		}
		c, e := d.D.Coeff.Int64(), d.D.Exponent
		if e > 0 {
			m, ok := vec.Pow10(e)
			if !ok || c > (1<<62)/m {
				return nil, vtype{}, false
			}
			c, e = c*m, 0
		}
		if -e > 18 {
			return nil, vtype{}, false
		}
		if d.D.Negative {
			c = -c
		}
		vt.scale = -e
		v = vec.One(vec.Decimal, vt.scale, c, nil, false)
	default:
		v = vec.One(vt.t, 0, d.I, nil, false)
	}
	return func(*vec.Batch, []int32) (*vec.Vec, error) { return v, nil }, vt, true
}

var vecCmp = map[plan.Op]vec.CmpOp{plan.OpEq: vec.Eq, plan.OpNe: vec.Ne, plan.OpLt: vec.Lt, plan.OpLe: vec.Le, plan.OpGt: vec.Gt, plan.OpGe: vec.Ge}

var vecArith = map[plan.Op]vec.ArithOp{plan.OpAdd: vec.Add, plan.OpSub: vec.Sub, plan.OpMul: vec.Mul, plan.OpMod: vec.Mod}

func (vc *vcompiler) binary(x *plan.Binary) (vexpr, vtype, bool) {
	l, lt, ok := vc.compile(x.L)
	if !ok {
		return nil, vtype{}, false
	}
	if x.Op == plan.OpLike || x.Op == plan.OpNotLike {
		return vlike(x, l, lt)
	}
	r, rt, ok := vc.compile(x.R)
	if !ok || lt.t != rt.t {
		return nil, vtype{}, false
	}
	if lt.char || rt.char {
		// CHAR(n) = / <> compares without trailing spaces when the left
		// operand is CHAR (types.Compare); other orders and text on the
		// left stay row at a time.
		if !lt.char || (x.Op != plan.OpEq && x.Op != plan.OpNe) {
			return nil, vtype{}, false
		}
		return vc.charCompare(x.Op == plan.OpNe, l, r)
	}
	lk, rk := x.L.Type().Kind, x.R.Type().Kind
	// As the row path does, the right operand is evaluated only on the
	// rows where the left one is not NULL (an error it would raise on
	// the others is not raised); c is nil when there are none.
	var nn []int32
	both := func(b *vec.Batch, sel []int32) (*vec.Vec, *vec.Vec, error) {
		a, err := l(b, sel)
		if err != nil {
			return nil, nil, err
		}
		rs := sel
		if len(a.Nulls) > 0 {
			nn = vec.NotNull(a, sel, nn[:0])
			rs = nn
		}
		if len(rs) == 0 {
			return a, nil, nil
		}
		c, err := r(b, rs)
		return a, c, err
	}
	out := &vec.Vec{}
	if op, isCmp := vecCmp[x.Op]; isCmp {
		if lk != rk && lt.t != vec.Decimal {
			return nil, vtype{}, false
		}
		if lt.t == vec.Bytes && op != vec.Eq && op != vec.Ne {
			return nil, vtype{}, false // other orders follow the collation
		}
		return func(b *vec.Batch, sel []int32) (*vec.Vec, error) {
			a, c, err := both(b, sel)
			if err != nil || c == nil {
				return vec.AllNull(vec.Bool, sel, b.N, out), err
			}
			return out, vec.Compare(op, a, c, sel, b.N, out)
		}, vtype{t: vec.Bool}, true
	}
	op, isArith := vecArith[x.Op]
	if !isArith {
		return nil, vtype{}, false
	}
	k := x.T.Kind
	switch {
	case lt.t == vec.Int && x.L.Type().IsInteger() && x.R.Type().IsInteger() && x.T.IsInteger():
		return func(b *vec.Batch, sel []int32) (*vec.Vec, error) {
			a, c, err := both(b, sel)
			if err != nil || c == nil {
				return vec.AllNull(vec.Int, sel, b.N, out), err
			}
			return out, vec.ArithInt(op, k, a, c, sel, b.N, out)
		}, vtype{t: vec.Int}, true
	case lt.t == vec.Decimal && k == types.KindNumeric:
		scale, ok := vec.DecimalScale(op, lt.scale, rt.scale)
		if !ok || scale > 18 {
			return nil, vtype{}, false
		}
		return func(b *vec.Batch, sel []int32) (*vec.Vec, error) {
			a, c, err := both(b, sel)
			if err != nil || c == nil {
				out.Scale = scale
				return vec.AllNull(vec.Decimal, sel, b.N, out), err
			}
			return out, vec.ArithDecimal(op, a, c, sel, b.N, out)
		}, vtype{t: vec.Decimal, scale: scale}, true
	}
	return nil, vtype{}, false
}

// vlike is text [NOT] LIKE a constant pattern (vec.Like); CHAR
// operands and patterns that do not compile stay row at a time.
func vlike(x *plan.Binary, l vexpr, lt vtype) (vexpr, vtype, bool) {
	lp := constLike(x)
	if lp == nil || lt.t != vec.Bytes || lt.char {
		return nil, vtype{}, false
	}
	not := x.Op == plan.OpNotLike
	out := &vec.Vec{}
	return func(b *vec.Batch, sel []int32) (*vec.Vec, error) {
		a, err := l(b, sel)
		if err != nil {
			return nil, err
		}
		vec.Like(a, lp, not, sel, b.N, out)
		return out, nil
	}, vtype{t: vec.Bool}, true
}

func (vc *vcompiler) logic(args []plan.Expr, and bool) (vexpr, vtype, bool) {
	var fns []vexpr
	for _, a := range args {
		f, t, ok := vc.compile(a)
		if !ok || t.t != vec.Bool {
			return nil, vtype{}, false
		}
		fns = append(fns, f)
	}
	lg := vec.Logic{And: and}
	acc := &vec.Vec{}
	var undecided []int32
	return func(b *vec.Batch, sel []int32) (*vec.Vec, error) {
		lg.Start(acc, sel, b.N)
		cur := sel
		for k, f := range fns {
			if k > 0 {
				undecided = lg.Undecided(acc, cur, undecided[:0])
				cur = undecided
				if len(cur) == 0 {
					break
				}
			}
			r, err := f(b, cur)
			if err != nil {
				return nil, err
			}
			lg.Fold(acc, r, cur)
		}
		return acc, nil
	}, vtype{t: vec.Bool}, true
}

// constLike is x's pattern when x is LIKE or NOT LIKE a non-NULL
// constant, else nil. A pattern that does not compile (it ends in the
// escape character) is nil too: the row path raises its error, on the
// same rows as before. Both paths match with vec.CompileLike's matcher.
func constLike(x *plan.Binary) *vec.LikePattern {
	if x.Op != plan.OpLike && x.Op != plan.OpNotLike {
		return nil
	}
	pc, ok := x.R.(*plan.Const)
	if !ok || pc.D.IsNull() {
		return nil
	}
	lp, err := vec.CompileLike(pc.D.S)
	if err != nil {
		return nil
	}
	return lp
}
