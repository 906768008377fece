package types

import (
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

// NumericDiv divides with PostgreSQL's result scale.
func NumericDiv(a, b *apd.Decimal) (*apd.Decimal, error) {
	if b.IsZero() {
		return nil, pgerror.New(pgerror.DivisionByZero, "division by zero")
	}
	scale := DivScale(a, b)
	r := new(apd.Decimal)
	ctx := DecimalCtx
	// enough precision for the integer digits plus the scale
	ctx.Precision = uint32(int32(a.NumDigits()) + a.Exponent + scale + int32(b.NumDigits()) + 8)
	if ctx.Precision < 20 {
		ctx.Precision = 20
	}
	if _, err := ctx.Quo(r, a, b); err != nil {
		return nil, pgerror.New(pgerror.NumericValueOutOfRange, "numeric value out of range")
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
