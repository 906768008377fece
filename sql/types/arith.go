package types

import (
	"math"
	"math/bits"

	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/pgerror"
)

var errDivZero = pgerror.New(pgerror.DivisionByZero, "division by zero")

// IntAdd adds with the overflow check of result kind k.
func IntAdd(k Kind, a, b int64) (int64, error) {
	r := a + b
	if (r > a) != (b > 0) || !IntFits(k, r) {
		return 0, intOutOfRange(k)
	}
	return r, nil
}

// IntSub subtracts with the overflow check of result kind k.
func IntSub(k Kind, a, b int64) (int64, error) {
	r := a - b
	if (r < a) != (b > 0) || !IntFits(k, r) {
		return 0, intOutOfRange(k)
	}
	return r, nil
}

// IntMul multiplies with the overflow check of result kind k.
func IntMul(k Kind, a, b int64) (int64, error) {
	hi, lo := bits.Mul64(uint64(abs64(a)), uint64(abs64(b)))
	neg := (a < 0) != (b < 0)
	if hi != 0 || (lo > math.MaxInt64 && !(neg && lo == 1<<63)) || a == math.MinInt64 && b != 1 && b != 0 || b == math.MinInt64 && a != 1 && a != 0 {
		return 0, intOutOfRange(k)
	}
	r := a * b
	if !IntFits(k, r) {
		return 0, intOutOfRange(k)
	}
	return r, nil
}

func abs64(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

// IntDiv divides, truncating toward zero as PostgreSQL does.
func IntDiv(k Kind, a, b int64) (int64, error) {
	if b == 0 {
		return 0, errDivZero
	}
	if b == -1 {
		if a == math.MinInt64 || !IntFits(k, -a) {
			return 0, intOutOfRange(k)
		}
		return -a, nil
	}
	return a / b, nil
}

// IntMod is the remainder with the sign of the dividend.
func IntMod(a, b int64) (int64, error) {
	if b == 0 {
		return 0, errDivZero
	}
	if b == -1 {
		return 0, nil
	}
	return a % b, nil
}

// FloatCheck reports PostgreSQL's float overflow/underflow errors for a
// result computed from finite inputs.
func FloatCheck(r float64, inputsFinite bool, k Kind) (float64, error) {
	if k == KindFloat4 {
		r = float64(float32(r))
	}
	if math.IsInf(r, 0) && inputsFinite {
		return 0, pgerror.New(pgerror.NumericValueOutOfRange, "value out of range: overflow")
	}
	return r, nil
}

// NumericAdd etc. are exact decimal operations.
func NumericAdd(a, b *apd.Decimal) (*apd.Decimal, error) {
	r := new(apd.Decimal)
	if _, err := DecimalCtx.Add(r, a, b); err != nil {
		return nil, pgerror.New(pgerror.NumericValueOutOfRange, "value overflows numeric format")
	}
	return r, nil
}

// NumericSub subtracts exactly.
func NumericSub(a, b *apd.Decimal) (*apd.Decimal, error) {
	r := new(apd.Decimal)
	if _, err := DecimalCtx.Sub(r, a, b); err != nil {
		return nil, pgerror.New(pgerror.NumericValueOutOfRange, "value overflows numeric format")
	}
	return r, nil
}

// NumericMul multiplies exactly.
func NumericMul(a, b *apd.Decimal) (*apd.Decimal, error) {
	r := new(apd.Decimal)
	if _, err := DecimalCtx.Mul(r, a, b); err != nil {
		return nil, pgerror.New(pgerror.NumericValueOutOfRange, "value overflows numeric format")
	}
	return r, nil
}

// NumericMod is the remainder with the sign of the dividend.
func NumericMod(a, b *apd.Decimal) (*apd.Decimal, error) {
	if b.IsZero() {
		return nil, errDivZero
	}
	r := new(apd.Decimal)
	if _, err := DecimalCtx.Rem(r, a, b); err != nil {
		return nil, pgerror.New(pgerror.NumericValueOutOfRange, "value overflows numeric format")
	}
	return r, nil
}

// AddIntervalToTimestamp adds an interval to micros since the epoch (months
// and days in calendar terms, in UTC for timestamp and in loc for timestamptz).
func AddInterval(k Kind, micros int64, iv Datum, sign int, env *Env) (int64, error) {
	months, days, us := int64(iv.M)*int64(sign), int64(iv.Dd)*int64(sign), iv.I*int64(sign)
	if months != 0 || days != 0 {
		loc := env.loc()
		if k == KindTimestamp {
			loc = nil
		}
		t := unixMicroIn(micros, loc)
		y, m, d := t.Year(), int(t.Month())+int(months), t.Day()
		y += floorDivInt(m-1, 12)
		m = (m-1)%12 + 1
		if m <= 0 {
			m += 12
		}
		if dm := daysIn(y, m); d > dm {
			d = dm
		}
		t2 := dateIn(y, m, d, t, loc).AddDate(0, 0, int(days))
		var err error
		if micros, err = timeMicros(t2); err != nil {
			return 0, err
		}
	}
	return addMicros(micros, us)
}

func floorDivInt(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// IntervalAdd adds two intervals field by field.
func IntervalAdd(a, b Datum, sign int) (Datum, error) {
	m := int64(a.M) + int64(sign)*int64(b.M)
	d := int64(a.Dd) + int64(sign)*int64(b.Dd)
	if m > math.MaxInt32 || m < math.MinInt32 || d > math.MaxInt32 || d < math.MinInt32 {
		return Datum{}, pgerror.New(pgerror.DatetimeFieldOverflow, "interval out of range")
	}
	return NewInterval(int32(m), int32(d), a.I+int64(sign)*b.I), nil
}

// IntervalMul multiplies an interval by a number, as PostgreSQL's interval_mul.
func IntervalMul(a Datum, f float64) Datum {
	months := float64(a.M) * f
	wholeMonths := math.Trunc(months)
	days := float64(a.Dd)*f + (months-wholeMonths)*30
	wholeDays := math.Trunc(days)
	us := float64(a.I)*f + (days-wholeDays)*86400e6
	return NewInterval(int32(wholeMonths), int32(wholeDays), int64(math.Round(us)))
}

// TimestampDiff returns a - b as an interval (days and time, as PostgreSQL's
// timestamp_mi with justify_hours).
func TimestampDiff(a, b int64) Datum {
	us := a - b
	days := us / 86400e6
	us -= days * 86400e6
	return NewInterval(0, int32(days), us)
}
