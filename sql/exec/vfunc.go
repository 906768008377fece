package exec

import (
	"github.com/mvserver/mvserver/sql/exec/vec"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// Function calls in vector expressions. Two cases keep a query on the
// vectorized path where a call used to send all of it row at a time:
//
//   - A part of an expression that reads no column and calls only
//     deterministic functions or now() (fixed for the statement) has one
//     value for the whole statement: the row path computes it once and it
//     becomes a constant vector (W4's event_time > current_timestamp -
//     INTERVAL '1 hour'). When computing it fails, the expression is left
//     to the row path, which raises the error only if a row reaches it.
//   - A deterministic function without a kernel whose arguments are
//     integer-like vectors (integers, bool, dates, timestamps) or
//     constants, and whose result is one too, runs the row path's own
//     function on each selected row, on Datums built in place (W4's
//     date_trunc('minute', event_time)). Its values and errors are the
//     row path's; a NULL-strict function sees only the rows whose earlier
//     arguments are not NULL, as the row path evaluates them.

// statementConst reports whether e is the same value for every row of a
// statement: no column, outer reference, subquery or aggregate, and no
// function but deterministic ones and now().
func statementConst(e plan.Expr) bool {
	ok := true
	plan.Walk(e, func(x plan.Expr) bool {
		if !ok {
			return false // a part seen before is not: the rest need not be looked at
		}
		switch x := x.(type) {
		case *plan.Const, *plan.Param, *plan.Cast, *plan.Binary, *plan.Neg, *plan.Not, *plan.And, *plan.Or,
			*plan.IsNull, *plan.IsBool, *plan.IsDistinct, *plan.In, *plan.Case, *plan.Coalesce, *plan.NullIf, *plan.Greatest:
		case *plan.Func:
			ok = x.Fn != nil && (x.Fn.Deterministic || x.Name == "now") && x.Fn.Agg == nil && x.Fn.Window == nil &&
				x.Overload != nil && x.Overload.SRF == nil
		default:
			ok = false
		}
		return ok
	})
	return ok
}

// fold computes a statement constant (statementConst) once, by the row
// path, as a constant vector.
func (vc *vcompiler) fold(e plan.Expr) (vexpr, vtype, bool) {
	f, err := compile(e, vc.c)
	if err != nil {
		return nil, vtype{}, false
	}
	d, err := f(nil)
	if err != nil {
		return nil, vtype{}, false
	}
	return vconst(&plan.Const{D: d, T: e.Type()})
}

// intLike reports whether vector type t holds its values in I as the
// row path's Datum.I does (integers, dates, timestamps; bool as 0 or 1).
func intLike(t vtype) bool { return t.t == vec.Int || t.t == vec.Bool }

// rowFunc is a call of x's own function on each selected row (see
// above); ok is false when x does not qualify.
func (vc *vcompiler) rowFunc(x *plan.Func) (vexpr, vtype, bool) {
	if vc.c == nil || x.Fn == nil || !x.Fn.Deterministic || x.Fn.Agg != nil || x.Fn.Window != nil ||
		x.Overload == nil || x.Overload.SRF != nil || x.Overload.Fn == nil {
		return nil, vtype{}, false
	}
	rt, ok := vecTypeOf(x.T)
	if !ok || !intLike(rt) {
		return nil, vtype{}, false
	}
	// Per argument: a vector (fns[k]) or a constant (args[k]).
	n := len(x.Args)
	fns := make([]vexpr, n)
	kinds := make([]types.Kind, n)
	args := make([]types.Datum, n)
	consts := make([]types.Datum, n)
	for k, a := range x.Args {
		if statementConst(a) {
			f, err := compile(a, vc.c)
			if err != nil {
				return nil, vtype{}, false
			}
			if consts[k], err = f(nil); err != nil {
				return nil, vtype{}, false
			}
			continue
		}
		f, t, ok := vc.compile(a)
		if !ok || !intLike(t) {
			return nil, vtype{}, false
		}
		fns[k], kinds[k] = f, a.Type().Kind
	}
	fn, strict := x.Overload.Fn, x.Overload.NullStrict
	fctx := vc.c.funcCtx()
	vals := make([]*vec.Vec, n)
	var live, buf []int32
	out := &vec.Vec{}
	return func(b *vec.Batch, sel []int32) (*vec.Vec, error) {
		out.T, out.Scale = rt.t, 0
		out.Reset(b.N)
		live = append(live[:0], sel...)
		for k, f := range fns {
			if f == nil {
				if strict && consts[k].IsNull() {
					live = live[:0]
				}
				continue
			}
			v, err := f(b, live)
			if err != nil {
				return nil, err
			}
			vals[k] = v
			if strict && len(v.Nulls) > 0 {
				buf = vec.NotNull(v, live, buf[:0])
				live, buf = buf, live
			}
		}
		if strict {
			nullOutside(out, sel, live)
		}
		for _, i := range live {
			if err := callRow(fn, fctx, fns, vals, consts, kinds, args, i, out); err != nil {
				return nil, err
			}
		}
		return out, nil
	}, vtype{t: rt.t}, true
}

// callRow calls fn on row i's arguments and puts its result at out's row
// i; errVecFallback when the result is not integer-like after all.
func callRow(fn func(*funcs.Ctx, []types.Datum) (types.Datum, error), fctx *funcs.Ctx, fns []vexpr, vals []*vec.Vec,
	consts []types.Datum, kinds []types.Kind, args []types.Datum, i int32, out *vec.Vec) error {
	for k := range args {
		if fns[k] == nil {
			args[k] = consts[k]
			continue
		}
		v := vals[k]
		if j := vec.At(v, i); v.Nulls.Get(j) {
			args[k] = types.NullDatum
		} else {
			args[k] = types.Datum{K: kinds[k], I: v.I[j]}
		}
	}
	d, err := fn(fctx, args)
	if err != nil {
		return err
	}
	if d.IsNull() {
		out.SetNull(i)
		return nil
	}
	if t, ok := vecTypeOf(types.T{Kind: d.K}); !ok || !intLike(t) {
		return errVecFallback
	}
	out.I[i] = d.I
	return nil
}

// nullOutside marks NULL the rows of sel that are not in live (both
// ascending, live a subset of sel).
func nullOutside(out *vec.Vec, sel, live []int32) {
	k := 0
	for _, i := range sel {
		if k < len(live) && live[k] == i {
			k++
			continue
		}
		out.SetNull(i)
	}
}
