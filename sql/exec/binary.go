package exec

import (
	"math"
	"regexp"
	"strings"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

func compileBinary(x *plan.Binary, c *Ctx) (evalFn, error) {
	l, err := compile(x.L, c)
	if err != nil {
		return nil, err
	}
	r, err := compile(x.R, c)
	if err != nil {
		return nil, err
	}
	both := func(row Row) (types.Datum, types.Datum, bool, error) {
		a, err := l(row)
		if err != nil || a.IsNull() {
			return a, a, false, err
		}
		b, err := r(row)
		if err != nil || b.IsNull() {
			return a, b, false, err
		}
		return a, b, true, nil
	}
	if x.Op.IsComparison() {
		op := x.Op
		test := cmpTest(op)
		lk := x.L.Type().Kind
		if (lk == types.KindInt2 || lk == types.KindInt4 || lk == types.KindInt8 || lk == types.KindDate || lk == types.KindTimestamp || lk == types.KindTimestampTZ || lk == types.KindBool) && x.R.Type().Kind == lk {
			return func(row Row) (types.Datum, error) {
				a, b, ok, err := both(row)
				if !ok {
					return types.NullDatum, err
				}
				c := 0
				if a.I < b.I {
					c = -1
				} else if a.I > b.I {
					c = 1
				}
				return types.NewBool(test(c)), nil
			}, nil
		}
		return func(row Row) (types.Datum, error) {
			a, b, ok, err := both(row)
			if !ok {
				return types.NullDatum, err
			}
			return types.NewBool(test(types.Compare(a, b))), nil
		}, nil
	}
	switch x.Op {
	case plan.OpConcat:
		mem := c.Mem
		return func(row Row) (types.Datum, error) {
			a, b, ok, err := both(row)
			if !ok {
				return types.NullDatum, err
			}
			// A large result is reserved while it is built (funcs.Reserve's
			// rule): whoever keeps it counts it after.
			if n := int64(len(a.S) + len(b.S)); n >= funcs.LargeValue {
				if err := mem.Grow("operator ||", n); err != nil {
					return types.NullDatum, err
				}
				defer mem.Shrink(n)
			}
			return types.NewText(a.S + b.S), nil
		}, nil
	case plan.OpLike, plan.OpNotLike, plan.OpILike, plan.OpNotILike:
		return patternMatch(x, both, likeMatcher, x.Op == plan.OpILike || x.Op == plan.OpNotILike,
			x.Op == plan.OpNotLike || x.Op == plan.OpNotILike)
	case plan.OpRegex, plan.OpNotRegex, plan.OpIRegex, plan.OpNotIRegex:
		return patternMatch(x, both, regexMatcher, x.Op == plan.OpIRegex || x.Op == plan.OpNotIRegex,
			x.Op == plan.OpNotRegex || x.Op == plan.OpNotIRegex)
	}
	lt, rt, out := x.L.Type(), x.R.Type(), x.T
	env := c.Env
	arith := arithFn(x.Op, lt, rt, out, env)
	if arith == nil {
		return nil, pgerror.New(pgerror.UndefinedFunction, "operator does not exist: %s %s %s", lt.String(), x.Op.String(), rt.String())
	}
	return func(row Row) (types.Datum, error) {
		a, b, ok, err := both(row)
		if !ok {
			return types.NullDatum, err
		}
		return arith(a, b)
	}, nil
}

func cmpTest(op plan.Op) func(int) bool {
	switch op {
	case plan.OpEq:
		return func(c int) bool { return c == 0 }
	case plan.OpNe:
		return func(c int) bool { return c != 0 }
	case plan.OpLt:
		return func(c int) bool { return c < 0 }
	case plan.OpLe:
		return func(c int) bool { return c <= 0 }
	case plan.OpGt:
		return func(c int) bool { return c > 0 }
	}
	return func(c int) bool { return c >= 0 }
}

// arithFn returns the implementation of an arithmetic operator on the
// (already unified) operand types.
func arithFn(op plan.Op, lt, rt, out types.T, env *types.Env) func(a, b types.Datum) (types.Datum, error) {
	k := out.Kind
	switch {
	case lt.IsInteger() && rt.IsInteger() && out.IsInteger():
		var f func(types.Kind, int64, int64) (int64, error)
		switch op {
		case plan.OpAdd:
			f = types.IntAdd
		case plan.OpSub:
			f = types.IntSub
		case plan.OpMul:
			f = types.IntMul
		case plan.OpDiv:
			f = types.IntDiv
		case plan.OpMod:
			f = func(_ types.Kind, a, b int64) (int64, error) { return types.IntMod(a, b) }
		case plan.OpBitAnd:
			f = func(_ types.Kind, a, b int64) (int64, error) { return a & b, nil }
		case plan.OpBitOr:
			f = func(_ types.Kind, a, b int64) (int64, error) { return a | b, nil }
		case plan.OpBitXor:
			f = func(_ types.Kind, a, b int64) (int64, error) { return a ^ b, nil }
		case plan.OpShl, plan.OpShr:
			// PostgreSQL shifts by the count modulo the type's width and
			// truncates to the type.
			bits := map[types.Kind]int64{types.KindInt2: 16, types.KindInt4: 32, types.KindInt8: 64}[lt.Kind]
			left := op == plan.OpShl
			f = func(k types.Kind, a, b int64) (int64, error) {
				n := uint(((b % bits) + bits) % bits)
				if left {
					return truncInt(k, a<<n), nil
				}
				return a >> n, nil
			}
		}
		return func(a, b types.Datum) (types.Datum, error) {
			v, err := f(k, a.I, b.I)
			return types.NewInt(k, v), err
		}
	case lt.Kind == types.KindNumeric && rt.Kind == types.KindNumeric:
		return func(a, b types.Datum) (types.Datum, error) {
			var err error
			var r = a.D
			switch op {
			case plan.OpAdd:
				r, err = types.NumericAdd(a.D, b.D)
			case plan.OpSub:
				r, err = types.NumericSub(a.D, b.D)
			case plan.OpMul:
				r, err = types.NumericMul(a.D, b.D)
			case plan.OpDiv:
				r, err = types.NumericDiv(a.D, b.D)
			case plan.OpMod:
				r, err = types.NumericMod(a.D, b.D)
			}
			if err != nil {
				return types.Datum{}, err
			}
			return types.NewNumeric(r), nil
		}
	case (lt.Kind == types.KindFloat4 || lt.Kind == types.KindFloat8) && (rt.Kind == types.KindFloat4 || rt.Kind == types.KindFloat8):
		return func(a, b types.Datum) (types.Datum, error) {
			var r float64
			switch op {
			case plan.OpAdd:
				r = a.F + b.F
			case plan.OpSub:
				r = a.F - b.F
			case plan.OpMul:
				r = a.F * b.F
			case plan.OpDiv:
				if b.F == 0 {
					return types.Datum{}, pgerror.New(pgerror.DivisionByZero, "division by zero")
				}
				r = a.F / b.F
			}
			finite := !math.IsInf(a.F, 0) && !math.IsInf(b.F, 0)
			v, err := types.FloatCheck(r, finite, k)
			return types.NewFloat(k, v), err
		}
	case lt.Kind == types.KindDate && rt.IsInteger():
		sign := 1
		if op == plan.OpSub {
			sign = -1
		}
		return func(a, b types.Datum) (types.Datum, error) { return types.DateAddDays(a.I, b.I, sign) }
	case lt.Kind == types.KindDate && rt.Kind == types.KindDate:
		return func(a, b types.Datum) (types.Datum, error) { return types.NewInt4(a.I - b.I), nil }
	case (lt.Kind == types.KindTimestamp || lt.Kind == types.KindTimestampTZ) && rt.Kind == types.KindInterval:
		sign := 1
		if op == plan.OpSub {
			sign = -1
		}
		return func(a, b types.Datum) (types.Datum, error) {
			v, err := types.AddInterval(lt.Kind, a.I, b, sign, env)
			return types.NewTimestamp(lt.Kind, v), err
		}
	case lt.IsTime() && rt.IsTime() && out.Kind == types.KindInterval:
		return func(a, b types.Datum) (types.Datum, error) { return types.TimestampDiff(a.I, b.I), nil }
	case lt.Kind == types.KindInterval && rt.Kind == types.KindInterval:
		sign := 1
		if op == plan.OpSub {
			sign = -1
		}
		return func(a, b types.Datum) (types.Datum, error) { return types.IntervalAdd(a, b, sign) }
	case lt.Kind == types.KindInterval && rt.Kind == types.KindFloat8:
		return func(a, b types.Datum) (types.Datum, error) {
			if op == plan.OpDiv {
				if b.F == 0 {
					return types.Datum{}, pgerror.New(pgerror.DivisionByZero, "division by zero")
				}
				return types.IntervalMul(a, 1/b.F), nil
			}
			return types.IntervalMul(a, b.F), nil
		}
	}
	return nil
}

// compileRegex compiles a POSIX regular expression of ~ and friends. Go's
// RE2 syntax covers the extended expressions clients send; what it lacks
// (back references, lookaround) is 2201B, as an invalid pattern is.
func compileRegex(pat string, ci bool) (*regexp.Regexp, error) {
	if ci {
		pat = "(?i)" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, pgerror.New(pgerror.InvalidRegularExpression, "invalid regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return re, nil
}

// truncInt wraps v to the width of integer kind k, as C's integer types do.
func truncInt(k types.Kind, v int64) int64 {
	switch k {
	case types.KindInt2:
		return int64(int16(v))
	case types.KindInt4:
		return int64(int32(v))
	}
	return v
}

// patternMatch compiles LIKE and the regular-expression operators: the
// pattern, turned into a matcher by compilePat, is compiled once when it
// is a constant and per row otherwise; neg negates the match.
func patternMatch(x *plan.Binary, both func(Row) (types.Datum, types.Datum, bool, error),
	compilePat func(pat string, ci bool) (func(string) bool, error), ci, neg bool) (evalFn, error) {
	var fixed func(string) bool
	if pc, ok := x.R.(*plan.Const); ok && !pc.D.IsNull() {
		m, err := compilePat(pc.D.S, ci)
		if err != nil {
			return nil, err
		}
		fixed = m
	}
	return func(row Row) (types.Datum, error) {
		a, b, ok, err := both(row)
		if !ok {
			return types.NullDatum, err
		}
		m := fixed
		if m == nil {
			if m, err = compilePat(b.S, ci); err != nil {
				return types.Datum{}, err
			}
		}
		return types.NewBool(m(a.S) != neg), nil
	}, nil
}

// regexMatcher compiles a regular expression operator's pattern.
func regexMatcher(pat string, ci bool) (func(string) bool, error) {
	re, err := compileRegex(pat, ci)
	if err != nil {
		return nil, err
	}
	return re.MatchString, nil
}
