package funcs

import (
	"math"
	"math/big"
	"strconv"

	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// The mathematical functions of R-Q3 with PostgreSQL 15's types, result
// scales and errors: a function with double precision and numeric
// overloads computes an integer argument in double precision (the binder
// prefers it), a numeric one exactly to PostgreSQL's result scale.

// PostgreSQL's numeric scale limits (numeric.c).
const (
	numericDscaleMax      = 16383
	numericMinSigDigits   = 16
	numericMaxDisplay     = 1000
	numericMaxResultScale = 2000
)

func floatFn(fn func(float64) (float64, error)) fnT {
	return func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		r, err := fn(a[0].F)
		if err != nil {
			return types.Datum{}, err
		}
		return types.NewFloat8(r), nil
	}
}

func float2Fn(fn func(x, y float64) (float64, error)) fnT {
	return func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		r, err := fn(a[0].F, a[1].F)
		if err != nil {
			return types.Datum{}, err
		}
		return types.NewFloat8(r), nil
	}
}

func numFn(fn func(x *apd.Decimal) (*apd.Decimal, error)) fnT {
	return func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		r, err := fn(a[0].D)
		if err != nil {
			return types.Datum{}, err
		}
		return types.NewNumeric(r), nil
	}
}

func num2Fn(fn func(x, y *apd.Decimal) (*apd.Decimal, error)) fnT {
	return func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		r, err := fn(a[0].D, a[1].D)
		if err != nil {
			return types.Datum{}, err
		}
		return types.NewNumeric(r), nil
	}
}

var (
	errOverflow  = pgerror.New(pgerror.NumericValueOutOfRange, "value out of range: overflow")
	errUnderflow = pgerror.New(pgerror.NumericValueOutOfRange, "value out of range: underflow")
	errOutOfRng  = pgerror.New(pgerror.NumericValueOutOfRange, "input is out of range")
	errNumOver   = pgerror.New(pgerror.NumericValueOutOfRange, "value overflows numeric format")
)

func errLog(zero bool) error {
	if zero {
		return pgerror.New(pgerror.InvalidArgumentForLog, "cannot take logarithm of zero")
	}
	return pgerror.New(pgerror.InvalidArgumentForLog, "cannot take logarithm of a negative number")
}

func errDivByZero() error { return pgerror.New(pgerror.DivisionByZero, "division by zero") }

func intRangeErr(k types.Kind) error {
	if k == types.KindInt8 {
		return pgerror.New(pgerror.NumericValueOutOfRange, "bigint out of range")
	}
	if k == types.KindInt2 {
		return pgerror.New(pgerror.NumericValueOutOfRange, "smallint out of range")
	}
	return pgerror.New(pgerror.NumericValueOutOfRange, "integer out of range")
}

// checkFloat is PostgreSQL's check_float8_val: an infinite result of
// finite inputs overflowed, a zero one (when zero is not allowed)
// underflowed.
func checkFloat(r float64, inputsFinite, zeroOK bool) (float64, error) {
	if math.IsInf(r, 0) && inputsFinite {
		return 0, errOverflow
	}
	if r == 0 && !zeroOK {
		return 0, errUnderflow
	}
	return r, nil
}

func finite(fs ...float64) bool {
	for _, f := range fs {
		if math.IsInf(f, 0) {
			return false
		}
	}
	return true
}

func init() {
	f8, num, i4, i8 := types.Float8, types.Numeric, types.Int4, types.Int8
	ceil := []*Overload{
		strict(params(f8), f8, floatFn(func(x float64) (float64, error) { return math.Ceil(x), nil })),
		strict(params(num), num, numFn(func(x *apd.Decimal) (*apd.Decimal, error) { return integral(x, true) })),
	}
	pure("ceil", ceil...)
	pure("ceiling", ceil...)
	pure("floor",
		strict(params(f8), f8, floatFn(func(x float64) (float64, error) { return math.Floor(x), nil })),
		strict(params(num), num, numFn(func(x *apd.Decimal) (*apd.Decimal, error) { return integral(x, false) })))
	pure("trunc",
		strict(params(f8), f8, floatFn(func(x float64) (float64, error) { return math.Trunc(x), nil })),
		strict(params(num), num, numFn(func(x *apd.Decimal) (*apd.Decimal, error) { return truncNumeric(x, 0) })),
		strict(params(num, i4), num, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			r, err := truncNumeric(a[0].D, a[1].I)
			if err != nil {
				return types.Datum{}, err
			}
			return types.NewNumeric(r), nil
		}))
	intMod := func(k types.Kind) *Overload {
		t := types.T{Kind: k}
		return strict(params(t, t), t, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			r, err := types.IntMod(a[0].I, a[1].I)
			return types.NewInt(k, r), err
		})
	}
	pure("mod", intMod(types.KindInt2), intMod(types.KindInt4), intMod(types.KindInt8),
		strict(params(num, num), num, num2Fn(func(x, y *apd.Decimal) (*apd.Decimal, error) {
			if x.Form != apd.Finite || y.Form != apd.Finite {
				return nonFiniteMod(x, y)
			}
			return types.NumericMod(x, y)
		})))
	pure("div", strict(params(num, num), num, num2Fn(numericDiv)))
	power := []*Overload{
		strict(params(f8, f8), f8, float2Fn(floatPow)),
		strict(params(num, num), num, num2Fn(numericPow)),
	}
	pure("power", power...)
	pure("pow", power...)
	pure("sqrt",
		strict(params(f8), f8, floatFn(func(x float64) (float64, error) {
			if x < 0 {
				return 0, pgerror.New(pgerror.InvalidArgumentForPower, "cannot take square root of a negative number")
			}
			return math.Sqrt(x), nil
		})),
		strict(params(num), num, numFn(numericSqrt)))
	pure("cbrt", strict(params(f8), f8, floatFn(func(x float64) (float64, error) { return cbrt(x), nil })))
	pure("exp",
		strict(params(f8), f8, floatFn(func(x float64) (float64, error) {
			switch {
			case math.IsNaN(x):
				return x, nil
			case math.IsInf(x, 1):
				return x, nil
			case math.IsInf(x, -1):
				return 0, nil
			}
			return checkFloat(crExp(x), true, false)
		})),
		strict(params(num), num, numFn(numericExp)))
	ln := func(log func(float64) float64) func(float64) (float64, error) {
		return func(x float64) (float64, error) {
			if x == 0 {
				return 0, errLog(true)
			}
			if x < 0 {
				return 0, errLog(false)
			}
			return log(x), nil
		}
	}
	pure("ln", strict(params(f8), f8, floatFn(ln(crLog))), strict(params(num), num, numFn(numericLn)))
	log10 := []*Overload{
		strict(params(f8), f8, floatFn(ln(crLog10))),
		strict(params(num), num, numFn(func(x *apd.Decimal) (*apd.Decimal, error) { return numericLog(apd.New(10, 0), x) })),
	}
	pure("log10", log10...)
	pure("log", append(log10, strict(params(num, num), num, num2Fn(numericLog)))...)
	pure("sign",
		strict(params(f8), f8, floatFn(func(x float64) (float64, error) {
			switch {
			case x > 0:
				return 1, nil
			case x < 0:
				return -1, nil
			}
			return 0, nil // NaN too, as PostgreSQL's comparisons give
		})),
		strict(params(num), num, numFn(func(x *apd.Decimal) (*apd.Decimal, error) {
			if x.Form == apd.NaN {
				return x, nil
			}
			return apd.New(int64(x.Sign()), 0), nil
		})))
	pure("pi", &Overload{Ret: ret(f8), Fn: func(*Ctx, []types.Datum) (types.Datum, error) { return types.NewFloat8(math.Pi), nil }})
	const radiansPerDegree = 0.0174532925199432957692
	pure("degrees", strict(params(f8), f8, floatFn(func(x float64) (float64, error) {
		return checkFloat(x/radiansPerDegree, finite(x), true)
	})))
	pure("radians", strict(params(f8), f8, floatFn(func(x float64) (float64, error) {
		return checkFloat(x*radiansPerDegree, finite(x), true)
	})))
	trig := func(name string, fn func(float64) float64, domain func(float64) bool) {
		pure(name, strict(params(f8), f8, floatFn(func(x float64) (float64, error) {
			if math.IsNaN(x) {
				return x, nil
			}
			if !domain(x) {
				return 0, errOutOfRng
			}
			return checkFloat(fn(x), true, true)
		})))
	}
	notInf := func(x float64) bool { return !math.IsInf(x, 0) }
	unit := func(x float64) bool { return x >= -1 && x <= 1 }
	any := func(float64) bool { return true }
	trig("sin", crSin, notInf)
	trig("cos", crCos, notInf)
	trig("tan", crTan, notInf)
	trig("asin", crAsin, unit)
	trig("acos", crAcos, unit)
	trig("atan", crAtan, any)
	pure("cot", strict(params(f8), f8, floatFn(func(x float64) (float64, error) {
		if math.IsNaN(x) {
			return x, nil
		}
		if math.IsInf(x, 0) {
			return 0, errOutOfRng
		}
		return 1 / crTan(x), nil // PostgreSQL divides tan's double
	})))
	pure("atan2", strict(params(f8, f8), f8, float2Fn(func(y, x float64) (float64, error) { return crAtan2(y, x), nil })))
	for _, name := range []string{"sinh", "cosh", "tanh", "asinh", "acosh", "atanh"} {
		fn := map[string]func(float64) float64{"sinh": math.Sinh, "cosh": math.Cosh, "tanh": math.Tanh,
			"asinh": math.Asinh, "acosh": math.Acosh, "atanh": math.Atanh}[name]
		dom := any
		switch name {
		case "acosh":
			dom = func(x float64) bool { return x >= 1 }
		case "atanh":
			dom = unit
		}
		pure(name, strict(params(f8), f8, floatFn(func(x float64) (float64, error) {
			if math.IsNaN(x) {
				return x, nil
			}
			if !dom(x) {
				return 0, errOutOfRng
			}
			r := fn(x)
			if math.IsInf(r, 0) && !math.IsInf(x, 0) && name != "atanh" {
				return 0, errOverflow
			}
			return r, nil
		})))
	}
	gcdInt := func(k types.Kind, lcm bool) *Overload {
		t := types.T{Kind: k}
		return strict(params(t, t), t, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			r, err := intGcdLcm(k, a[0].I, a[1].I, lcm)
			return types.NewInt(k, r), err
		})
	}
	pure("gcd", gcdInt(types.KindInt4, false), gcdInt(types.KindInt8, false),
		strict(params(num, num), num, num2Fn(func(x, y *apd.Decimal) (*apd.Decimal, error) { return numericGcdLcm(x, y, false) })))
	pure("lcm", gcdInt(types.KindInt4, true), gcdInt(types.KindInt8, true),
		strict(params(num, num), num, num2Fn(func(x, y *apd.Decimal) (*apd.Decimal, error) { return numericGcdLcm(x, y, true) })))
	pure("width_bucket",
		strict(params(f8, f8, f8, i4), i4, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			r, err := widthBucketFloat(a[0].F, a[1].F, a[2].F, a[3].I)
			return types.NewInt4(r), err
		}),
		strict(params(num, num, num, i4), i4, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			r, err := widthBucketNumeric(a[0].D, a[1].D, a[2].D, a[3].I)
			return types.NewInt4(r), err
		}))
	pure("scale", strict(params(num), i4, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		if a[0].D.Form != apd.Finite {
			return types.NullDatum, nil
		}
		return types.NewInt4(int64(types.Scale(a[0].D))), nil
	}))
	pure("trim_scale", strict(params(num), num, numFn(func(x *apd.Decimal) (*apd.Decimal, error) {
		r := new(apd.Decimal)
		r.Reduce(x)
		if r.Exponent > 0 {
			types.DecimalCtx.Quantize(r, r, 0)
		}
		return r, nil
	})))
	pure("factorial", strict(params(i8), num, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		n := a[0].I
		if n < 0 {
			return types.Datum{}, pgerror.New(pgerror.NumericValueOutOfRange, "factorial of a negative number is undefined")
		}
		if n > 32177 {
			return types.Datum{}, errNumOver
		}
		r := new(big.Int).MulRange(1, max(n, 1))
		return types.NewNumeric(apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(r), 0)), nil
	}))
}

// cbrt is glibc's cube root (sysdeps/ieee754/dbl-64/s_cbrt.c), which
// PostgreSQL's cbrt calls: a polynomial guess refined once, so that the
// results agree digit for digit (cbrt(27) is 3.0000000000000004 there).
func cbrt(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x + x
	}
	// float64 variables: C divides the rounded constants in double
	// precision, where Go would fold exact ones.
	cbrt2, sqrCbrt2 := 1.2599210498948731648, 1.5874010519681994748
	factor := [5]float64{1.0 / sqrCbrt2, 1.0 / cbrt2, 1.0, cbrt2, sqrCbrt2}
	xm, xe := math.Frexp(math.Abs(x))
	u := 0.354895765043919860 + (1.50819193781584896+(-2.11499494167371287+(2.44693122563534430+(-1.83469277483613086+
		(0.784932344976639262-0.145263899385486377*xm)*xm)*xm)*xm)*xm)*xm
	t2 := u * u * u
	ym := u * (t2 + 2.0*xm) / (2.0*t2 + xm) * factor[2+xe%3]
	return math.Copysign(math.Ldexp(ym, xe/3), x)
}

// integral rounds to an integer in the given direction (ceil, floor).
func integral(x *apd.Decimal, ceil bool) (*apd.Decimal, error) {
	if x.Form != apd.Finite {
		return x, nil
	}
	c := bigCtx(x, 0)
	r := new(apd.Decimal)
	var err error
	if ceil {
		_, err = c.Ceil(r, x)
	} else {
		_, err = c.Floor(r, x)
	}
	if err == nil {
		_, err = c.Quantize(r, r, 0)
	}
	if err != nil {
		return nil, errNumOver
	}
	return r, nil
}

// bigCtx is a context precise enough for x's integer digits plus scale
// fractional ones.
func bigCtx(x *apd.Decimal, scale int64) apd.Context {
	c := types.DecimalCtx
	p := int64(x.NumDigits()) + int64(x.Exponent) + max(scale, 0) + 2
	c.Precision = uint32(max(p, 34))
	return c
}

// truncNumeric is trunc(x, s): toward zero at s fractional digits (s < 0
// zeroes integer digits); the result has max(s, 0) fractional digits.
func truncNumeric(x *apd.Decimal, s int64) (*apd.Decimal, error) {
	if x.Form != apd.Finite {
		return x, nil
	}
	s = max(min(s, numericDscaleMax), -numericDscaleMax)
	c := bigCtx(x, s)
	c.Rounding = apd.RoundDown
	r := new(apd.Decimal)
	if _, err := c.Quantize(r, x, int32(-s)); err != nil {
		return nil, errNumOver
	}
	if s < 0 {
		if _, err := c.Quantize(r, r, 0); err != nil {
			return nil, errNumOver
		}
	}
	return r, nil
}

func nonFiniteMod(x, y *apd.Decimal) (*apd.Decimal, error) {
	if x.Form == apd.NaN || y.Form == apd.NaN {
		return &apd.Decimal{Form: apd.NaN}, nil
	}
	if y.IsZero() {
		return nil, errDivByZero()
	}
	if x.Form == apd.Infinite {
		return &apd.Decimal{Form: apd.NaN}, nil
	}
	return x, nil // finite mod ±Infinity is the dividend
}

// numericDiv is div(x, y): the integer part of x / y.
func numericDiv(x, y *apd.Decimal) (*apd.Decimal, error) {
	if x.Form == apd.NaN || y.Form == apd.NaN {
		return &apd.Decimal{Form: apd.NaN}, nil
	}
	if y.IsZero() {
		return nil, errDivByZero()
	}
	if x.Form != apd.Finite || y.Form != apd.Finite {
		if x.Form == apd.Infinite && y.Form == apd.Infinite {
			return &apd.Decimal{Form: apd.NaN}, nil
		}
		if y.Form == apd.Infinite {
			return apd.New(0, 0), nil
		}
		r := &apd.Decimal{Form: apd.Infinite, Negative: x.Negative != y.Negative}
		return r, nil
	}
	c := bigCtx(x, 0)
	c.Precision += uint32(max(int64(y.NumDigits())-int64(y.Exponent), 0)) + 2
	r := new(apd.Decimal)
	if _, err := c.QuoInteger(r, x, y); err != nil {
		return nil, errNumOver
	}
	if _, err := c.Quantize(r, r, 0); err != nil {
		return nil, errNumOver
	}
	return r, nil
}

// nbase describes x in PostgreSQL's base-10000 digits: the weight of
// the first digit group, the first two groups and whether more non-zero
// groups follow the first.
func nbase(x *apd.Decimal) (weight, g0, g1 int, more bool) {
	s := x.Coeff.String()
	msd := len(s) - 1 + int(x.Exponent) // decimal exponent of the first digit
	weight = floorDiv(msd, 4)
	// digits from position 4*weight+3 down, as a string aligned to groups
	lead := 4*weight + 3 - msd
	padded := make([]byte, 0, lead+len(s)+8)
	for i := 0; i < lead; i++ {
		padded = append(padded, '0')
	}
	padded = append(padded, s...)
	for len(padded)%4 != 0 {
		padded = append(padded, '0')
	}
	group := func(i int) int {
		if 4*i+4 > len(padded) {
			return 0
		}
		v, _ := strconv.Atoi(string(padded[4*i : 4*i+4]))
		return v
	}
	g0, g1 = group(0), group(1)
	for i := 4; i < len(padded); i++ {
		if padded[i] != '0' {
			more = true
		}
	}
	return weight, g0, g1, more
}

func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// msdExp is the decimal exponent of x's most significant digit.
func msdExp(x *apd.Decimal) int {
	return int(x.NumDigits()) - 1 + int(x.Exponent)
}

// estimateLnDweight is numeric.c's estimate_ln_dweight: the decimal
// weight of ln(x), which picks the scale of ln, log and power.
func estimateLnDweight(x *apd.Decimal) int {
	if x.Sign() <= 0 {
		return 0
	}
	if x.Cmp(apd.New(9, -1)) >= 0 && x.Cmp(apd.New(11, -1)) <= 0 {
		d := new(apd.Decimal)
		types.DecimalCtx.Sub(d, x, apd.New(1, 0))
		if d.IsZero() {
			return 0
		}
		return msdExp(d)
	}
	w, g0, g1, more := nbase(x)
	digits, dweight := float64(g0), w*4
	if more || g1 != 0 {
		digits = digits*10000 + float64(g1)
		dweight -= 4
	}
	lnVar := math.Log(digits) + float64(dweight)*2.302585092994046
	return int(math.Log10(math.Abs(lnVar)))
}

func clampScale(rscale int, scales ...int32) int32 {
	for _, s := range scales {
		rscale = max(rscale, int(s))
	}
	return int32(max(min(rscale, numericMaxDisplay), 0))
}

// roundTo rounds r (half away from zero) to scale fractional digits.
func roundTo(r *apd.Decimal, scale int32) (*apd.Decimal, error) {
	c := bigCtx(r, int64(scale))
	c.Rounding = apd.RoundHalfUp
	out := new(apd.Decimal)
	if _, err := c.Quantize(out, r, -scale); err != nil {
		return nil, errNumOver
	}
	return out, nil
}

// workCtx is a context for a transcendental result whose decimal
// weight is about weight, computed to scale fractional digits.
func workCtx(weight int, scale int32) apd.Context {
	c := types.DecimalCtx
	c.Precision = uint32(max(weight, 0) + int(scale) + 12)
	return c
}

func numericSqrt(x *apd.Decimal) (*apd.Decimal, error) {
	if x.Form == apd.NaN {
		return x, nil
	}
	if x.Sign() < 0 {
		return nil, pgerror.New(pgerror.InvalidArgumentForPower, "cannot take square root of a negative number")
	}
	if x.Form == apd.Infinite {
		return x, nil
	}
	w := 0
	if !x.IsZero() {
		w, _, _, _ = nbase(x)
	}
	sweight := (w+1)*4/2 - 1
	rscale := clampScale(numericMinSigDigits-sweight, types.Scale(x))
	c := workCtx(msdExp(x)/2+1, rscale)
	r := new(apd.Decimal)
	if _, err := c.Sqrt(r, x); err != nil {
		return nil, errNumOver
	}
	return roundTo(r, rscale)
}

func numericExp(x *apd.Decimal) (*apd.Decimal, error) {
	switch {
	case x.Form == apd.NaN:
		return x, nil
	case x.Form == apd.Infinite && !x.Negative:
		return x, nil
	case x.Form == apd.Infinite:
		return apd.New(0, 0), nil
	}
	f, _ := x.Float64()
	if math.Abs(f) >= numericMaxResultScale*3 {
		if f > 0 {
			return nil, errNumOver
		}
		return apd.New(0, 0), nil
	}
	val := f * 0.434294481903252
	val = max(min(val, numericMaxResultScale), -numericMaxResultScale)
	rscale := clampScale(numericMinSigDigits-int(val), types.Scale(x))
	c := workCtx(int(val)+1, rscale)
	r := new(apd.Decimal)
	if _, err := c.Exp(r, x); err != nil {
		return nil, errNumOver
	}
	return roundTo(r, rscale)
}

func numericLn(x *apd.Decimal) (*apd.Decimal, error) {
	if x.Form == apd.NaN {
		return x, nil
	}
	if x.IsZero() {
		return nil, errLog(true)
	}
	if x.Sign() < 0 {
		return nil, errLog(false)
	}
	if x.Form == apd.Infinite {
		return x, nil
	}
	rscale := clampScale(numericMinSigDigits-estimateLnDweight(x), types.Scale(x))
	c := workCtx(4, rscale)
	r := new(apd.Decimal)
	if _, err := c.Ln(r, x); err != nil {
		return nil, errNumOver
	}
	return roundTo(r, rscale)
}

// numericLog is log(base, x).
func numericLog(base, x *apd.Decimal) (*apd.Decimal, error) {
	if base.Form == apd.NaN || x.Form == apd.NaN {
		return &apd.Decimal{Form: apd.NaN}, nil
	}
	for _, v := range []*apd.Decimal{base, x} {
		if v.IsZero() {
			return nil, errLog(true)
		}
		if v.Sign() < 0 {
			return nil, errLog(false)
		}
	}
	if base.Form == apd.Infinite || x.Form == apd.Infinite {
		switch {
		case base.Form == apd.Infinite && x.Form == apd.Infinite:
			return &apd.Decimal{Form: apd.NaN}, nil
		case base.Form == apd.Infinite:
			return apd.New(0, 0), nil
		}
		// log(finite, Infinity) is Infinity whatever the base
		return &apd.Decimal{Form: apd.Infinite}, nil
	}
	if base.Cmp(apd.New(1, 0)) == 0 {
		return nil, errDivByZero()
	}
	resultDweight := estimateLnDweight(x) - estimateLnDweight(base)
	rscale := clampScale(numericMinSigDigits-resultDweight, types.Scale(base), types.Scale(x))
	c := workCtx(max(resultDweight, 0)+8, rscale+8)
	lb, lx, r := new(apd.Decimal), new(apd.Decimal), new(apd.Decimal)
	c.Ln(lb, base)
	c.Ln(lx, x)
	if _, err := c.Quo(r, lx, lb); err != nil {
		return nil, errNumOver
	}
	return roundTo(r, rscale)
}

func floatPow(x, y float64) (float64, error) {
	if math.IsNaN(x) {
		if math.IsNaN(y) || y != 0 {
			return math.NaN(), nil
		}
		return 1, nil
	}
	if math.IsNaN(y) {
		if x != 1 {
			return math.NaN(), nil
		}
		return 1, nil
	}
	if x == 0 && y < 0 {
		return 0, pgerror.New(pgerror.InvalidArgumentForPower, "zero raised to a negative power is undefined")
	}
	if x < 0 && math.Floor(y) != y {
		return 0, pgerror.New(pgerror.InvalidArgumentForPower, "a negative number raised to a non-integer power yields a complex result")
	}
	if !finite(x, y) {
		return math.Pow(x, y), nil
	}
	r := crPow(x, y)
	if math.IsInf(r, 0) {
		return 0, errOverflow
	}
	if r == 0 && x != 0 {
		return 0, errUnderflow
	}
	return r, nil
}

func numericPow(x, y *apd.Decimal) (*apd.Decimal, error) {
	one := apd.New(1, 0)
	if x.Form == apd.NaN || y.Form == apd.NaN {
		if x.Form == apd.NaN && y.Form != apd.NaN && y.IsZero() || y.Form == apd.NaN && x.Form != apd.NaN && x.Cmp(one) == 0 {
			return one, nil
		}
		return &apd.Decimal{Form: apd.NaN}, nil
	}
	if x.IsZero() && y.Sign() < 0 {
		return nil, pgerror.New(pgerror.InvalidArgumentForPower, "zero raised to a negative power is undefined")
	}
	intExp := y.Form == apd.Finite && isIntegral(y)
	if x.Sign() < 0 && !intExp && y.Form == apd.Finite {
		return nil, pgerror.New(pgerror.InvalidArgumentForPower, "a negative number raised to a non-integer power yields a complex result")
	}
	if x.Form != apd.Finite || y.Form != apd.Finite {
		f1, _ := x.Float64()
		f2, _ := y.Float64()
		r := math.Pow(f1, f2)
		switch {
		case math.IsInf(r, 0):
			return &apd.Decimal{Form: apd.Infinite, Negative: r < 0}, nil
		case math.IsNaN(r):
			return &apd.Decimal{Form: apd.NaN}, nil
		}
		return types.NumericFromFloat(r, 64)
	}
	if intExp {
		if e, err := y.Int64(); err == nil && e >= math.MinInt32 && e <= math.MaxInt32 {
			rscale := clampScale(numericMinSigDigits, types.Scale(x))
			if x.IsZero() {
				if e == 0 {
					return roundTo(one, rscale)
				}
				return roundTo(apd.New(0, 0), rscale)
			}
			// the result's decimal weight, for the precision needed
			fx, _ := x.Float64()
			w := float64(e) * math.Log10(math.Abs(fx))
			if w > numericMaxResultScale*3 {
				return nil, errNumOver
			}
			if w < -numericMaxResultScale*3 {
				return roundTo(apd.New(0, 0), rscale)
			}
			c := workCtx(int(w)+1, rscale)
			r := new(apd.Decimal)
			if _, err := c.Pow(r, x, apd.New(e, 0)); err != nil {
				return nil, errNumOver
			}
			return roundTo(r, rscale)
		}
	}
	if x.IsZero() {
		return roundTo(apd.New(0, 0), numericMinSigDigits)
	}
	c := workCtx(8, 24)
	lx, ln := new(apd.Decimal), new(apd.Decimal)
	c.Ln(lx, x)
	c.Mul(ln, lx, y)
	val, _ := ln.Float64()
	if math.Abs(val) > numericMaxResultScale*3.01 {
		if val > 0 {
			return nil, errNumOver
		}
		return roundTo(apd.New(0, 0), numericMaxDisplay)
	}
	val *= 0.434294481903252
	rscale := clampScale(numericMinSigDigits-int(val), types.Scale(x), types.Scale(y))
	c = workCtx(int(val)+1, rscale+4)
	r := new(apd.Decimal)
	if _, err := c.Pow(r, x, y); err != nil {
		return nil, errNumOver
	}
	return roundTo(r, rscale)
}

func isIntegral(d *apd.Decimal) bool {
	if d.Exponent >= 0 {
		return true
	}
	var r apd.Decimal
	r.Reduce(d)
	return r.Exponent >= 0
}

// intGcdLcm is gcd or lcm of two integers of kind k.
func intGcdLcm(k types.Kind, a, b int64, lcm bool) (int64, error) {
	abs := func(v int64) uint64 {
		if v < 0 {
			return uint64(-v)
		}
		return uint64(v)
	}
	x, y := abs(a), abs(b)
	for y != 0 {
		x, y = y, x%y
	}
	limit := uint64(math.MaxInt64)
	if k == types.KindInt4 {
		limit = math.MaxInt32
	}
	if !lcm {
		if x > limit {
			return 0, intRangeErr(k)
		}
		return int64(x), nil
	}
	if a == 0 || b == 0 {
		return 0, nil
	}
	q := abs(a) / x
	hi, lo := bits64Mul(q, abs(b))
	if hi != 0 || lo > limit {
		return 0, intRangeErr(k)
	}
	return int64(lo), nil
}

func bits64Mul(a, b uint64) (uint64, uint64) {
	p := new(big.Int).Mul(new(big.Int).SetUint64(a), new(big.Int).SetUint64(b))
	if p.BitLen() > 64 {
		return 1, 0
	}
	return 0, p.Uint64()
}

func numericGcdLcm(a, b *apd.Decimal, lcm bool) (*apd.Decimal, error) {
	if a.Form != apd.Finite || b.Form != apd.Finite {
		return &apd.Decimal{Form: apd.NaN}, nil
	}
	scale := max(types.Scale(a), types.Scale(b))
	c := types.DecimalCtx
	x, y := new(apd.Decimal), new(apd.Decimal)
	x.Abs(a)
	y.Abs(b)
	for !y.IsZero() {
		r := new(apd.Decimal)
		if _, err := c.Rem(r, x, y); err != nil {
			return nil, errNumOver
		}
		x, y = y, r
	}
	res := x
	if lcm {
		if a.IsZero() || b.IsZero() {
			res = apd.New(0, 0)
		} else {
			q, r := new(apd.Decimal), new(apd.Decimal)
			cc := bigCtx(a, int64(scale))
			cc.Precision += uint32(b.NumDigits()) + 4
			if _, err := cc.Quo(q, a, x); err != nil {
				return nil, errNumOver
			}
			if _, err := cc.Mul(r, q, b); err != nil {
				return nil, errNumOver
			}
			res = r.Abs(r)
		}
	}
	return roundTo(res, scale)
}

func errBucket(msg string) error {
	return pgerror.New(pgerror.InvalidArgumentForWidthBucket, "%s", msg)
}

func widthBucketFloat(op, b1, b2 float64, count int64) (int64, error) {
	if count <= 0 {
		return 0, errBucket("count must be greater than zero")
	}
	if math.IsNaN(op) || math.IsNaN(b1) || math.IsNaN(b2) {
		return 0, errBucket("operand, lower bound, and upper bound cannot be NaN")
	}
	if math.IsInf(b1, 0) || math.IsInf(b2, 0) {
		return 0, errBucket("lower and upper bounds must be finite")
	}
	var r float64
	switch {
	case b1 < b2:
		switch {
		case op < b1:
			return 0, nil
		case op >= b2:
			if count == math.MaxInt32 {
				return 0, intRangeErr(types.KindInt4)
			}
			return count + 1, nil
		}
		if !math.IsInf(b2-b1, 0) {
			r = float64(count) * ((op - b1) / (b2 - b1))
		} else {
			r = float64(count) * ((op/2 - b1/2) / (b2/2 - b1/2))
		}
	case b1 > b2:
		switch {
		case op > b1:
			return 0, nil
		case op <= b2:
			if count == math.MaxInt32 {
				return 0, intRangeErr(types.KindInt4)
			}
			return count + 1, nil
		}
		if !math.IsInf(b1-b2, 0) {
			r = float64(count) * ((b1 - op) / (b1 - b2))
		} else {
			r = float64(count) * ((b1/2 - op/2) / (b1/2 - b2/2))
		}
	default:
		return 0, errBucket("lower bound cannot equal upper bound")
	}
	// PostgreSQL 15 does not clamp a quotient that rounds up to 1
	return int64(r) + 1, nil
}

func widthBucketNumeric(op, b1, b2 *apd.Decimal, count int64) (int64, error) {
	if count <= 0 {
		return 0, errBucket("count must be greater than zero")
	}
	if op.Form == apd.NaN || b1.Form == apd.NaN || b2.Form == apd.NaN {
		return 0, errBucket("operand, lower bound, and upper bound cannot be NaN")
	}
	if b1.Form == apd.Infinite || b2.Form == apd.Infinite {
		return 0, errBucket("lower and upper bounds must be finite")
	}
	cmp := b1.Cmp(b2)
	if cmp == 0 {
		return 0, errBucket("lower bound cannot equal upper bound")
	}
	lo, hi, v := b1, b2, op
	if cmp > 0 {
		// reversed bounds: mirror everything
		lo, hi, v = new(apd.Decimal).Neg(b1), new(apd.Decimal).Neg(b2), new(apd.Decimal).Neg(op)
	}
	if v.Cmp(lo) < 0 {
		return 0, nil
	}
	if v.Cmp(hi) >= 0 {
		if count == math.MaxInt32 {
			return 0, intRangeErr(types.KindInt4)
		}
		return count + 1, nil
	}
	// PostgreSQL's compute_bucket: the quotient rounded to its division
	// scale, plus one, floored
	c := types.DecimalCtx
	num, den := new(apd.Decimal), new(apd.Decimal)
	c.Sub(num, v, lo)
	c.Mul(num, num, apd.New(count, 0))
	c.Sub(den, hi, lo)
	q, err := types.NumericDiv(num, den)
	if err != nil {
		return 0, err
	}
	c.Add(q, q, apd.New(1, 0))
	f := new(apd.Decimal)
	c.Floor(f, q)
	r, err := f.Int64()
	if err != nil || r > math.MaxInt32 {
		return 0, intRangeErr(types.KindInt4)
	}
	return r, nil
}
