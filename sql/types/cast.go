package types

import (
	"math"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/pgerror"
)

func intOutOfRange(k Kind) error {
	switch k {
	case KindInt2:
		return pgerror.New(pgerror.NumericValueOutOfRange, "smallint out of range")
	case KindInt4:
		return pgerror.New(pgerror.NumericValueOutOfRange, "integer out of range")
	case KindOid, KindRegclass, KindRegtype, KindRegproc, KindRegnamespace, KindRegrole:
		return pgerror.New(pgerror.NumericValueOutOfRange, "OID out of range")
	}
	return pgerror.New(pgerror.NumericValueOutOfRange, "bigint out of range")
}

// CanCast reports whether a cast from one type to another exists (explicitly).
func CanCast(from, to T) bool {
	if from.IsArray() && to.IsArray() {
		return canCastArray(from, to)
	}
	if from.Kind == KindEnum && to.Kind == KindEnum {
		return from.Enum != nil && to.Enum != nil && from.Enum.OID == to.Enum.OID
	}
	if from.Kind == to.Kind || from.Kind == KindNull || from.Kind == KindUnknown {
		return true
	}
	if to.IsString() || from.IsString() {
		return true
	}
	switch {
	case from.IsOidAlias() && (to.IsOidAlias() || to.IsInteger()), to.IsOidAlias() && from.IsInteger():
		return true
	case from.IsNumeric() && to.IsNumeric():
		return true
	case from.Kind == KindBool && to.IsInteger(), from.IsInteger() && to.Kind == KindBool:
		return from.Kind == KindInt4 || to.Kind == KindInt4 || from.Kind == KindBool || to.Kind == KindBool
	case from.IsTime() && to.IsTime():
		return true
	}
	return false
}

// Cast converts d to type t. explicit is true for CAST/:: (VARCHAR(n)
// truncates instead of failing).
func Cast(d Datum, t T, env *Env, explicit bool) (Datum, error) {
	if d.K == KindNull {
		return d, nil
	}
	from := d.K
	if t.IsArray() && d.A != nil {
		return castArray(d, t, env, explicit)
	}
	switch {
	case from == t.Kind:
		switch t.Kind {
		case KindNumeric:
			return ApplyNumericTypmod(d, t)
		case KindVarchar, KindChar:
			return ApplyStringTypmod(d, t, explicit)
		}
		return d, nil
	case from == KindText || from == KindVarchar || from == KindUnknown || from == KindName || from == KindInternalChar || from == KindJSON || from == KindJSONB:
		if t.IsString() {
			return ApplyStringTypmod(NewString(t.Kind, d.S), t, explicit)
		}
		return ParseText(d.S, t, env)
	case from == KindChar:
		if t.IsString() {
			return ApplyStringTypmod(NewString(t.Kind, strings.TrimRight(d.S, " ")), t, explicit)
		}
		return ParseText(d.S, t, env)
	}
	if t.IsString() {
		if from == KindBool {
			// bool::text is 'true'/'false' (booltext), not boolout's t/f.
			return ApplyStringTypmod(NewString(t.Kind, map[bool]string{true: "true", false: "false"}[d.I != 0]), t, explicit)
		}
		s := string(AppendText(nil, d, env))
		return ApplyStringTypmod(NewString(t.Kind, s), t, explicit)
	}
	switch t.Kind {
	case KindInt2, KindInt4, KindInt8, KindOid, KindRegclass, KindRegtype, KindRegproc, KindRegnamespace, KindRegrole:
		var v int64
		switch from {
		case KindInt2, KindInt4, KindInt8, KindOid, KindRegclass, KindRegtype, KindRegproc, KindRegnamespace, KindRegrole, KindBool:
			v = d.I
		case KindFloat4, KindFloat8:
			f := math.RoundToEven(d.F)
			if math.IsNaN(f) || f < -9.223372036854775808e18 || f >= 9.223372036854775808e18 {
				return Datum{}, intOutOfRange(t.Kind)
			}
			v = int64(f)
		case KindNumeric:
			if d.D.Form != apd.Finite {
				return Datum{}, pgerror.New(pgerror.FeatureNotSupported, "cannot convert %s to %s", d.String(), t.String())
			}
			var r apd.Decimal
			if _, err := DecimalCtx.RoundToIntegralValue(&r, d.D); err != nil {
				return Datum{}, intOutOfRange(t.Kind)
			}
			i, err := r.Int64()
			if err != nil {
				return Datum{}, intOutOfRange(t.Kind)
			}
			v = i
		default:
			return Datum{}, cannotCast(from, t)
		}
		if !IntFits(t.Kind, v) {
			return Datum{}, intOutOfRange(t.Kind)
		}
		return NewInt(t.Kind, v), nil
	case KindFloat4, KindFloat8:
		var f float64
		switch from {
		case KindInt2, KindInt4, KindInt8, KindOid, KindRegclass, KindRegtype, KindRegproc, KindRegnamespace, KindRegrole:
			f = float64(d.I)
		case KindFloat4, KindFloat8:
			f = d.F
		case KindNumeric:
			var err error
			f, err = d.D.Float64()
			if err != nil && d.D.Form == apd.Finite {
				return Datum{}, pgerror.New(pgerror.NumericValueOutOfRange, "value out of range: overflow")
			}
			if d.D.Form == apd.NaN {
				f = math.NaN()
			}
		default:
			return Datum{}, cannotCast(from, t)
		}
		if t.Kind == KindFloat4 && !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) > math.MaxFloat32 {
			return Datum{}, pgerror.New(pgerror.NumericValueOutOfRange, "value out of range: overflow")
		}
		return NewFloat(t.Kind, f), nil
	case KindNumeric:
		var n *apd.Decimal
		switch from {
		case KindInt2, KindInt4, KindInt8, KindOid, KindRegclass, KindRegtype, KindRegproc, KindRegnamespace, KindRegrole:
			n = NumericFromInt(d.I)
		case KindFloat4, KindFloat8:
			if math.IsNaN(d.F) {
				n = &apd.Decimal{Form: apd.NaN}
			} else if math.IsInf(d.F, 0) {
				n = &apd.Decimal{Form: apd.Infinite, Negative: d.F < 0}
			} else {
				bits := 64
				if from == KindFloat4 {
					bits = 32
				}
				var err error
				if n, err = NumericFromFloat(d.F, bits); err != nil {
					return Datum{}, err
				}
			}
		default:
			return Datum{}, cannotCast(from, t)
		}
		return ApplyNumericTypmod(NewNumeric(n), t)
	case KindBool:
		if from == KindInt4 || from == KindInt2 || from == KindInt8 {
			return NewBool(d.I != 0), nil
		}
	case KindDate:
		switch from {
		case KindTimestamp:
			return NewDate(floorDiv(d.I, 86400e6)), nil
		case KindTimestampTZ:
			t := time.UnixMicro(d.I).In(env.loc())
			return NewDate(daysFromCivil(t.Year(), int(t.Month()), t.Day())), nil
		}
	case KindTimestamp:
		switch from {
		case KindDate:
			v, err := DateToTimestamp(d.I)
			if err != nil {
				return Datum{}, err
			}
			return NewTimestamp(KindTimestamp, v), nil
		case KindTimestampTZ:
			t := time.UnixMicro(d.I).In(env.loc())
			_, off := t.Zone()
			v, err := addMicros(d.I, int64(off)*1e6)
			if err != nil {
				return Datum{}, err
			}
			return NewTimestamp(KindTimestamp, v), nil
		}
	case KindTimestampTZ:
		switch from {
		case KindDate:
			v, err := DateToTimestamp(d.I)
			if err != nil {
				return Datum{}, err
			}
			return localToUTC(v, env.loc())
		case KindTimestamp:
			return localToUTC(d.I, env.loc())
		}
	}
	return Datum{}, cannotCast(from, t)
}

// localToUTC interprets micros as a wall-clock time in loc.
func localToUTC(micros int64, loc *time.Location) (Datum, error) {
	w := time.UnixMicro(micros).UTC()
	lt := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), loc)
	v, err := timeMicros(lt)
	if err != nil {
		return Datum{}, err
	}
	return NewTimestamp(KindTimestampTZ, v), nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func cannotCast(from Kind, t T) error {
	return pgerror.New(pgerror.CannotCoerce, "cannot cast type %s to %s", T{Kind: from}.String(), t.String())
}
