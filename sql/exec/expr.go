package exec

import (
	"regexp"
	"strings"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// constDatum is a constant's value, of the constant's type.
func constDatum(x *plan.Const) types.Datum {
	d := x.D
	if d.K != types.KindNull && d.K != x.T.Kind && x.T.Kind != types.KindUnknown {
		d.K = x.T.Kind
	}
	return d
}

// castBytes estimates what casting d to t builds when that may be large:
// an array's text (a few bytes an element besides their strings), a
// text's array (a Datum an element), 0 for the small cases.
func castBytes(d types.Datum, t types.T) int64 {
	const large = funcs.LargeValue / 64
	switch {
	case d.A != nil && len(d.A.Elems) >= large && !t.IsArray():
		n := int64(len(d.A.Elems)) * 24
		for _, e := range d.A.Elems {
			n += 2 * int64(len(e.S))
		}
		return n
	case len(d.S) >= large && t.IsArray():
		return int64(strings.Count(d.S, ",")+1) * types.DatumBytes
	case len(d.S) >= large:
		return int64(len(d.S))
	}
	return 0
}

// evalFn computes an expression over a row.
type evalFn func(row Row) (types.Datum, error)

// Compile turns a typed expression into a closure.
func Compile(e plan.Expr, c *Ctx) (evalFn, error) { return compile(e, c) }

func compile(e plan.Expr, c *Ctx) (evalFn, error) {
	switch x := e.(type) {
	case *plan.ColRef:
		idx := x.Idx
		return func(row Row) (types.Datum, error) { return row[idx], nil }, nil
	case *plan.Const:
		d := constDatum(x)
		return func(Row) (types.Datum, error) { return d, nil }, nil
	case *plan.Param:
		if x.N > len(c.Params) {
			return nil, pgerror.New(pgerror.UndefinedParameter, "there is no parameter $%d", x.N)
		}
		d := c.Params[x.N-1]
		if !d.IsNull() && d.K != x.T.Kind {
			var err error
			if d, err = types.Cast(d, x.T, c.Env, false); err != nil {
				return nil, err
			}
		}
		return func(Row) (types.Datum, error) { return d, nil }, nil
	case *plan.Cast:
		in, err := compile(x.E, c)
		if err != nil {
			return nil, err
		}
		t, env, explicit, mem := x.T, c.Env, x.Explicit, c.Mem
		return func(row Row) (types.Datum, error) {
			d, err := in(row)
			if err != nil || d.IsNull() {
				return d, err
			}
			// A large result is reserved while it is built (funcs.Reserve's
			// rule).
			if n := castBytes(d, t); n >= funcs.LargeValue {
				if err := mem.Grow("cast to "+t.String(), n); err != nil {
					return types.NullDatum, err
				}
				defer mem.Shrink(n)
			}
			return types.Cast(d, t, env, explicit)
		}, nil
	case *plan.Binary:
		return compileBinary(x, c)
	case *plan.Neg:
		in, err := compile(x.E, c)
		if err != nil {
			return nil, err
		}
		return func(row Row) (types.Datum, error) {
			d, err := in(row)
			if err != nil || d.IsNull() {
				return d, err
			}
			return negate(d)
		}, nil
	case *plan.Not:
		in, err := compile(x.E, c)
		if err != nil {
			return nil, err
		}
		return func(row Row) (types.Datum, error) {
			d, err := in(row)
			if err != nil || d.IsNull() {
				return d, err
			}
			return types.NewBool(!d.Bool()), nil
		}, nil
	case *plan.And, *plan.Or:
		var args []plan.Expr
		isAnd := false
		if a, ok := x.(*plan.And); ok {
			args, isAnd = a.Args, true
		} else {
			args = x.(*plan.Or).Args
		}
		fns, err := compileAll(args, c)
		if err != nil {
			return nil, err
		}
		return func(row Row) (types.Datum, error) {
			sawNull := false
			for _, f := range fns {
				d, err := f(row)
				if err != nil {
					return d, err
				}
				if d.IsNull() {
					sawNull = true
					continue
				}
				if d.Bool() != isAnd {
					return types.NewBool(!isAnd), nil
				}
			}
			if sawNull {
				return types.NullDatum, nil
			}
			return types.NewBool(isAnd), nil
		}, nil
	case *plan.IsNull:
		in, err := compile(x.E, c)
		if err != nil {
			return nil, err
		}
		not := x.Not
		return func(row Row) (types.Datum, error) {
			d, err := in(row)
			if err != nil {
				return d, err
			}
			return types.NewBool(d.IsNull() != not), nil
		}, nil
	case *plan.IsBool:
		in, err := compile(x.E, c)
		if err != nil {
			return nil, err
		}
		want, not := x.Value, x.Not
		return func(row Row) (types.Datum, error) {
			d, err := in(row)
			if err != nil {
				return d, err
			}
			var r bool
			switch want {
			case -1:
				r = d.IsNull()
			case 1:
				r = !d.IsNull() && d.Bool()
			default:
				r = !d.IsNull() && !d.Bool()
			}
			return types.NewBool(r != not), nil
		}, nil
	case *plan.IsDistinct:
		l, err := compile(x.L, c)
		if err != nil {
			return nil, err
		}
		r, err := compile(x.R, c)
		if err != nil {
			return nil, err
		}
		not := x.Not
		return func(row Row) (types.Datum, error) {
			a, err := l(row)
			if err != nil {
				return a, err
			}
			b, err := r(row)
			if err != nil {
				return b, err
			}
			return types.NewBool(types.Equal(a, b) == not), nil
		}, nil
	case *plan.In:
		in, err := compile(x.E, c)
		if err != nil {
			return nil, err
		}
		if f, ok := compileConstIn(x, in); ok {
			return f, nil
		}
		list, err := compileAll(x.List, c)
		if err != nil {
			return nil, err
		}
		not := x.Not
		return func(row Row) (types.Datum, error) {
			d, err := in(row)
			if err != nil || d.IsNull() {
				return types.NullDatum, err
			}
			sawNull := false
			for _, f := range list {
				v, err := f(row)
				if err != nil {
					return v, err
				}
				if v.IsNull() {
					sawNull = true
					continue
				}
				if types.Compare(d, v) == 0 {
					return types.NewBool(!not), nil
				}
			}
			if sawNull {
				return types.NullDatum, nil
			}
			return types.NewBool(not), nil
		}, nil
	case *plan.Case:
		type when struct{ cond, res evalFn }
		var whens []when
		for _, w := range x.Whens {
			cf, err := compile(w.Cond, c)
			if err != nil {
				return nil, err
			}
			rf, err := compile(w.Result, c)
			if err != nil {
				return nil, err
			}
			whens = append(whens, when{cf, rf})
		}
		var elseFn evalFn
		if x.Else != nil {
			var err error
			if elseFn, err = compile(x.Else, c); err != nil {
				return nil, err
			}
		}
		return func(row Row) (types.Datum, error) {
			for _, w := range whens {
				d, err := w.cond(row)
				if err != nil {
					return d, err
				}
				if !d.IsNull() && d.Bool() {
					return w.res(row)
				}
			}
			if elseFn != nil {
				return elseFn(row)
			}
			return types.NullDatum, nil
		}, nil
	case *plan.Coalesce:
		fns, err := compileAll(x.Args, c)
		if err != nil {
			return nil, err
		}
		return func(row Row) (types.Datum, error) {
			for _, f := range fns {
				d, err := f(row)
				if err != nil || !d.IsNull() {
					return d, err
				}
			}
			return types.NullDatum, nil
		}, nil
	case *plan.NullIf:
		l, err := compile(x.L, c)
		if err != nil {
			return nil, err
		}
		r, err := compile(x.R, c)
		if err != nil {
			return nil, err
		}
		return func(row Row) (types.Datum, error) {
			a, err := l(row)
			if err != nil {
				return a, err
			}
			b, err := r(row)
			if err != nil {
				return b, err
			}
			if !a.IsNull() && !b.IsNull() && types.Compare(a, b) == 0 {
				return types.NullDatum, nil
			}
			return a, nil
		}, nil
	case *plan.Greatest:
		fns, err := compileAll(x.Args, c)
		if err != nil {
			return nil, err
		}
		dir := 1
		if x.Least {
			dir = -1
		}
		return func(row Row) (types.Datum, error) {
			var best types.Datum
			for _, f := range fns {
				d, err := f(row)
				if err != nil {
					return d, err
				}
				if d.IsNull() {
					continue
				}
				if best.IsNull() || types.Compare(d, best)*dir > 0 {
					best = d
				}
			}
			return best, nil
		}, nil
	case *plan.OuterRef:
		return compileOuterRef(x, c)
	case *plan.Subquery:
		return compileSubquery(x, c)
	case *plan.Func:
		fns, err := compileAll(x.Args, c)
		if err != nil {
			return nil, err
		}
		fn := x.Overload.Fn
		strict := x.Overload.NullStrict
		fctx := c.funcCtx()
		return func(row Row) (types.Datum, error) {
			args := make([]types.Datum, len(fns))
			for i, f := range fns {
				d, err := f(row)
				if err != nil {
					return d, err
				}
				if strict && d.IsNull() {
					return types.NullDatum, nil
				}
				args[i] = d
			}
			return fn(fctx, args)
		}, nil
	}
	return nil, pgerror.New(pgerror.InternalError, "cannot compile expression %T", e)
}

func compileAll(es []plan.Expr, c *Ctx) ([]evalFn, error) {
	out := make([]evalFn, len(es))
	for i, e := range es {
		f, err := compile(e, c)
		if err != nil {
			return nil, err
		}
		out[i] = f
	}
	return out, nil
}

func negate(d types.Datum) (types.Datum, error) {
	switch d.K {
	case types.KindInt2, types.KindInt4, types.KindInt8:
		v, err := types.IntSub(d.K, 0, d.I)
		return types.NewInt(d.K, v), err
	case types.KindFloat4, types.KindFloat8:
		return types.NewFloat(d.K, -d.F), nil
	case types.KindNumeric:
		r, err := types.NumericSub(types.NumericFromInt(0), d.D)
		if err != nil {
			return d, err
		}
		if d.D.Exponent < 0 {
			r.Exponent = d.D.Exponent
			r.Coeff.Set(&d.D.Coeff)
			r.Negative = !d.D.Negative && !d.D.IsZero()
		}
		return types.NewNumeric(r), nil
	case types.KindInterval:
		return types.NewInterval(-d.M, -d.Dd, -d.I), nil
	}
	return d, pgerror.New(pgerror.UndefinedFunction, "operator does not exist: - %s", types.T{Kind: d.K}.String())
}

// likeToRegexp converts a LIKE pattern (with backslash escapes) to a regexp.
func likeToRegexp(p string, ci bool) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("(?s)^")
	if ci {
		b.WriteString("(?i)")
	}
	for i := 0; i < len(p); i++ {
		ch := p[i]
		switch ch {
		case '\\':
			if i+1 >= len(p) {
				return nil, pgerror.New(pgerror.InvalidEscapeSequence, "LIKE pattern must not end with escape character")
			}
			// the escaped character, all of its UTF-8 sequence
			j := i + 2
			for j < len(p) && p[j]&0xC0 == 0x80 {
				j++
			}
			b.WriteString(regexp.QuoteMeta(p[i+1 : j]))
			i = j - 1
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		default:
			// copy a whole UTF-8 sequence
			j := i + 1
			for j < len(p) && p[j]&0xC0 == 0x80 {
				j++
			}
			b.WriteString(regexp.QuoteMeta(p[i:j]))
			i = j - 1
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}
