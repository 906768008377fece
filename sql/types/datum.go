package types

import (
	"bytes"
	"math"
	"strings"

	"github.com/cockroachdb/apd/v3"
)

// Datum is one SQL value. The zero value is NULL.
//
// Field use by kind:
//
//	Bool                      I (0 or 1)
//	Int2/Int4/Int8/Oid        I
//	Float4/Float8             F
//	Numeric                   D
//	Text/Varchar/Char/Name/JSON/Unknown  S
//	Bytea                     S (raw bytes)
//	Date                      I (days since 1970-01-01)
//	Timestamp/TimestampTZ     I (microseconds since 1970-01-01 00:00 UTC)
//	Interval                  I (microseconds), M (months), Dd (days)
//	Array/Int2Vector/OidVector  A (the elements)
//	Record                    A (the fields)
//	Enum                      S (the label), F (its sort order)
type Datum struct {
	K  Kind
	M  int32
	Dd int32
	I  int64
	F  float64
	S  string
	D  *apd.Decimal
	// A holds an array's elements (KindArray, KindInt2Vector, KindOidVector).
	A *Array
}

// Array is a one-dimensional array value with lower bound 1 (vectors: 0).
// Elements may be NULL. An Array is never modified once in a Datum.
type Array struct {
	Elems []Datum
}

// NewArray returns an array datum of kind k (KindArray or a vector kind).
func NewArray(k Kind, elems []Datum) Datum { return Datum{K: k, A: &Array{Elems: elems}} }

// NullDatum is SQL NULL.
var NullDatum = Datum{}

// IsNull reports whether d is NULL.
func (d Datum) IsNull() bool { return d.K == KindNull }

// NewBool returns a BOOLEAN datum.
func NewBool(b bool) Datum {
	if b {
		return Datum{K: KindBool, I: 1}
	}
	return Datum{K: KindBool}
}

// NewInt returns an integer datum of the given integer kind.
func NewInt(k Kind, v int64) Datum { return Datum{K: k, I: v} }

// NewInt8 returns a BIGINT datum.
func NewInt8(v int64) Datum { return Datum{K: KindInt8, I: v} }

// NewInt4 returns an INTEGER datum.
func NewInt4(v int64) Datum { return Datum{K: KindInt4, I: v} }

// NewFloat returns a float datum of the given float kind.
func NewFloat(k Kind, v float64) Datum {
	if k == KindFloat4 {
		v = float64(float32(v))
	}
	return Datum{K: k, F: v}
}

// NewFloat8 returns a DOUBLE PRECISION datum.
func NewFloat8(v float64) Datum { return Datum{K: KindFloat8, F: v} }

// NewNumeric returns a NUMERIC datum (d is not copied).
// A negative zero (0.00 * -12, a rounded -0.001) becomes zero: PostgreSQL
// numeric has no signed zero.
func NewNumeric(d *apd.Decimal) Datum {
	if d.Negative && d.Form == apd.Finite && d.Coeff.Sign() == 0 {
		d.Negative = false
	}
	return Datum{K: KindNumeric, D: d}
}

// NewText returns a TEXT datum.
func NewText(s string) Datum { return Datum{K: KindText, S: s} }

// NewString returns a datum of a string kind.
func NewString(k Kind, s string) Datum { return Datum{K: k, S: s} }

// NewBytea returns a BYTEA datum.
func NewBytea(b []byte) Datum { return Datum{K: KindBytea, S: string(b)} }

// NewDate returns a DATE datum (days since the Unix epoch).
func NewDate(days int64) Datum { return Datum{K: KindDate, I: days} }

// NewTimestamp returns a timestamp datum of kind k (micros since the Unix epoch).
func NewTimestamp(k Kind, micros int64) Datum { return Datum{K: k, I: micros} }

// NewInterval returns an INTERVAL datum.
func NewInterval(months, days int32, micros int64) Datum {
	return Datum{K: KindInterval, M: months, Dd: days, I: micros}
}

// Bool returns the value of a BOOLEAN datum.
func (d Datum) Bool() bool { return d.I != 0 }

// Compare orders two non-NULL datums of the same type family. Integers of
// different widths, and string kinds, compare with each other.
func Compare(a, b Datum) int {
	switch a.K {
	case KindBool, KindInt2, KindInt4, KindInt8, KindOid, KindRegclass, KindRegtype, KindRegproc, KindRegnamespace, KindRegrole, KindDate, KindTimestamp, KindTimestampTZ:
		if b.K == KindNumeric {
			return -b.D.Cmp(apd.New(a.I, 0))
		}
		if b.K == KindFloat8 || b.K == KindFloat4 {
			return compareFloat(float64(a.I), b.F)
		}
		switch {
		case a.I < b.I:
			return -1
		case a.I > b.I:
			return 1
		}
		return 0
	case KindFloat4, KindFloat8:
		if b.K == KindFloat4 || b.K == KindFloat8 {
			return compareFloat(a.F, b.F)
		}
		if b.K == KindNumeric {
			f, _ := b.D.Float64()
			return compareFloat(a.F, f)
		}
		return compareFloat(a.F, float64(b.I))
	case KindNumeric:
		switch b.K {
		case KindNumeric:
			return a.D.Cmp(b.D)
		case KindFloat4, KindFloat8:
			f, _ := a.D.Float64()
			return compareFloat(f, b.F)
		default:
			return a.D.Cmp(apd.New(b.I, 0))
		}
	case KindBytea:
		return bytes.Compare([]byte(a.S), []byte(b.S))
	case KindChar:
		return strings.Compare(strings.TrimRight(a.S, " "), strings.TrimRight(b.S, " "))
	case KindText, KindVarchar, KindName, KindInternalChar, KindJSON, KindJSONB, KindUnknown:
		return strings.Compare(a.S, b.S)
	case KindArray, KindInt2Vector, KindOidVector, KindRecord:
		return compareArrays(a, b)
	case KindEnum:
		// R-T3 enums: declaration order, the labels' sort orders.
		return compareFloat(a.F, b.F)
	case KindInterval:
		x, y := intervalKey(a), intervalKey(b)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	return 0
}

// CompareNullsLast orders datums with NULL greater than every value
// (PostgreSQL's default for ascending order).
func CompareNullsLast(a, b Datum) int {
	an, bn := a.K == KindNull, b.K == KindNull
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return Compare(a, b)
}

// intervalKey is the comparison key PostgreSQL uses: months as 30 days,
// days as 24 hours.
func intervalKey(d Datum) float64 {
	return float64(d.I) + float64(d.Dd)*86400e6 + float64(d.M)*30*86400e6
}

// compareFloat orders floats as PostgreSQL does: NaN equals NaN and is
// greater than every other value.
func compareFloat(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Equal reports whether two datums are equal (NULLs are not distinct from each other).
func Equal(a, b Datum) bool {
	if a.K == KindNull || b.K == KindNull {
		return a.K == b.K
	}
	return Compare(a, b) == 0
}

// HashKey appends a byte key for a to buf such that equal values (per
// Compare, within one type) give equal keys; used by hash aggregation, hash
// join and DISTINCT.
func HashKey(buf []byte, a Datum) []byte {
	switch a.K {
	case KindNull:
		return append(buf, 0)
	case KindBool, KindInt2, KindInt4, KindInt8, KindOid, KindRegclass, KindRegtype, KindRegproc, KindRegnamespace, KindRegrole, KindDate, KindTimestamp, KindTimestampTZ:
		u := uint64(a.I)
		return append(buf, 1, byte(u), byte(u>>8), byte(u>>16), byte(u>>24), byte(u>>32), byte(u>>40), byte(u>>48), byte(u>>56))
	case KindFloat4, KindFloat8:
		f := a.F
		if f == 0 {
			f = 0 // -0 == 0
		}
		if math.IsNaN(f) {
			f = math.NaN()
		}
		u := math.Float64bits(f)
		return append(buf, 2, byte(u), byte(u>>8), byte(u>>16), byte(u>>24), byte(u>>32), byte(u>>40), byte(u>>48), byte(u>>56))
	case KindNumeric:
		var r apd.Decimal
		r.Reduce(a.D)
		buf = append(buf, 3)
		return append(append(buf, r.String()...), 0)
	case KindInterval:
		u := math.Float64bits(intervalKey(a))
		return append(buf, 4, byte(u), byte(u>>8), byte(u>>16), byte(u>>24), byte(u>>32), byte(u>>40), byte(u>>48), byte(u>>56))
	case KindArray, KindInt2Vector, KindOidVector, KindRecord:
		return appendArrayHashKey(buf, a)
	case KindChar:
		s := strings.TrimRight(a.S, " ")
		buf = append(buf, 5, byte(len(s)), byte(len(s)>>8), byte(len(s)>>16), byte(len(s)>>24))
		return append(buf, s...)
	default:
		buf = append(buf, 5, byte(len(a.S)), byte(len(a.S)>>8), byte(len(a.S)>>16), byte(len(a.S)>>24))
		return append(buf, a.S...)
	}
}

// Preferred reports whether b, equal to a by Compare, is the canonical one
// of the two: the numeric with more fractional digits (1.50 over 1.5).
// GROUP BY keys, DISTINCT rows and MIN/MAX results keep the preferred of
// equal values, so the result does not depend on the order rows arrive in
// (an incremental refresh recomputes from rows read in another order).
func Preferred(a, b Datum) bool {
	switch {
	case a.K == KindNumeric && b.K == KindNumeric:
		return a.D != nil && b.D != nil && b.D.Exponent < a.D.Exponent
	case (a.K == KindFloat4 || a.K == KindFloat8) && a.K == b.K:
		// 0 over -0
		return a.F == 0 && b.F == 0 && math.Signbit(a.F) && !math.Signbit(b.F)
	}
	return false
}
