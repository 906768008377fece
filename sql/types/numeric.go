package types

import (
	"math/big"
	"strconv"

	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/pgerror"
)

// DecimalCtx is the context for exact NUMERIC arithmetic.
var DecimalCtx = apd.Context{Precision: 2000, MaxExponent: 100000, MinExponent: -100000, Rounding: apd.RoundHalfUp, Traps: apd.DefaultTraps}

// Scale returns the display scale of a numeric value (digits after the point).
func Scale(d *apd.Decimal) int32 {
	if d.Exponent < 0 {
		return -d.Exponent
	}
	return 0
}

// weightAndFirst returns PostgreSQL's base-10000 weight of the leading digit
// group and that group's value, for select_div_scale.
func weightAndFirst(d *apd.Decimal) (int, int) {
	s := d.Coeff.String()
	if s == "0" {
		return 0, 0
	}
	e := len(s) - 1 + int(d.Exponent)
	w := e / 4
	if e < 0 && e%4 != 0 {
		w = (e - 3) / 4
	}
	n := e - 4*w + 1
	group := s
	if len(group) > n {
		group = group[:n]
	}
	for len(group) < n {
		group += "0"
	}
	v, _ := strconv.Atoi(group)
	return w, v
}

// DivScale is PostgreSQL's select_div_scale: the result scale of a NUMERIC
// division.
func DivScale(a, b *apd.Decimal) int32 {
	w1, f1 := weightAndFirst(a)
	w2, f2 := weightAndFirst(b)
	qweight := w1 - w2
	if f1 <= f2 {
		qweight--
	}
	rscale := int32(16 - qweight*4)
	if s := Scale(a); s > rscale {
		rscale = s
	}
	if s := Scale(b); s > rscale {
		rscale = s
	}
	if rscale < 0 {
		rscale = 0
	}
	if rscale > 1000 {
		rscale = 1000
	}
	return rscale
}

// NumericDiv divides with PostgreSQL's result scale, rounding the exact
// quotient half away from zero at that scale (as div_var does): computed on
// the integer coefficients, so no intermediate rounding can creep in (a
// quotient far larger than its dividend, 69.5 / 4.9e-13, keeps every digit).
func NumericDiv(a, b *apd.Decimal) (*apd.Decimal, error) {
	if b.IsZero() {
		return nil, pgerror.New(pgerror.DivisionByZero, "division by zero")
	}
	scale := DivScale(a, b)
	if a.Form != apd.Finite || b.Form != apd.Finite {
		return numericDivSpecial(a, b, scale)
	}
	// a/b * 10^scale = ca/cb * 10^k
	k := int64(a.Exponent) - int64(b.Exponent) + int64(scale)
	if k > int64(DecimalCtx.MaxExponent) || -k > int64(DecimalCtx.MaxExponent) {
		return nil, pgerror.New(pgerror.NumericValueOutOfRange, "value overflows numeric format")
	}
	num := new(big.Int).Set(a.Coeff.MathBigInt())
	den := new(big.Int).Set(b.Coeff.MathBigInt())
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(abs64(k)), nil)
	if k >= 0 {
		num.Mul(num, p)
	} else {
		den.Mul(den, p)
	}
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	if r.Lsh(r, 1).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	out := new(apd.Decimal)
	out.Coeff.SetMathBigInt(q)
	out.Exponent = -scale
	out.Negative = a.Negative != b.Negative && q.Sign() != 0
	return out, nil
}

// numericDivSpecial divides when NaN or an infinity is involved.
func numericDivSpecial(a, b *apd.Decimal, scale int32) (*apd.Decimal, error) {
	r := new(apd.Decimal)
	ctx := DecimalCtx
	if _, err := ctx.Quo(r, a, b); err != nil {
		return nil, pgerror.New(pgerror.NumericValueOutOfRange, "numeric value out of range")
	}
	if r.Form != apd.Finite {
		return r, nil
	}
	out := new(apd.Decimal)
	if _, err := DecimalCtx.Quantize(out, r, -scale); err != nil {
		return nil, pgerror.New(pgerror.NumericValueOutOfRange, "numeric value out of range")
	}
	return out, nil
}

// NumericFromInt returns an exact decimal for v.
func NumericFromInt(v int64) *apd.Decimal { return apd.New(v, 0) }

// NumericFromFloat converts a float to a decimal as PostgreSQL's
// float8_numeric and float4_numeric do: through its text form with
// DBL_DIG (15) or FLT_DIG (6) significant digits.
func NumericFromFloat(f float64, bits int) (*apd.Decimal, error) {
	digits := 15
	if bits == 32 {
		digits = 6
	}
	d, _, err := apd.NewFromString(strconv.FormatFloat(f, 'g', digits, 64))
	if err != nil {
		return nil, pgerror.New(pgerror.FeatureNotSupported, "cannot convert %v to numeric", f)
	}
	// %g drops trailing zeros: 2.5000 is 2.5, and 1.5e+17 an integer.
	var r apd.Decimal
	r.Reduce(d)
	if r.Exponent > 0 {
		DecimalCtx.Quantize(&r, &r, 0)
	}
	return &r, nil
}
