package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cockroachdb/apd/v3"
)

// Order-preserving key encoding. The SQL layer composes primary keys (and index
// keys) by appending one encoded value per column; bytes.Compare of two
// encodings orders them exactly as the values (and, for composites, as the
// tuples, column by column). Every encoding is self-delimiting, so a composite
// can be decoded column by column and no encoding is a prefix of another.
//
// Each value starts with a marker byte. NULL has the smallest marker, so NULL
// sorts before every value in ascending order. The Desc variants write the
// ascending encoding with every byte inverted, which reverses the order (so in
// a descending column NULL sorts last).

// Marker bytes. Their order matters only between NULL, the not-null bound and
// the values of one type; different types never share a column.
const (
	markerNull    byte = 0x00
	markerNotNull byte = 0x01 // a scan bound only: above NULL, below every value
	markerBool    byte = 0x10
	markerInt     byte = 0x11
	markerFloat   byte = 0x12
	markerDecimal byte = 0x13
	markerBytes   byte = 0x14
	markerString  byte = 0x15
)

// Decimal classes, written after markerDecimal.
const (
	decNegInf byte = 0x01
	decNeg    byte = 0x02
	decZero   byte = 0x03
	decPos    byte = 0x04
	decPosInf byte = 0x05
	decNaN    byte = 0x06
)

// Byte strings: 0x00 is escaped as 0x00 0xFF and the value ends with 0x00 0x01,
// so a string sorts before every string it is a proper prefix of.
const (
	escByte    byte = 0x00
	escEscaped byte = 0xFF
	escTerm    byte = 0x01
)

// ErrBadEncoding is returned by the Decode functions for a buffer that does not
// hold the expected encoding.
var ErrBadEncoding = errors.New("storage: bad key encoding")

func badEncoding(what string, b []byte) error {
	if len(b) > 16 {
		b = b[:16]
	}
	return fmt.Errorf("%w: %s at %x", ErrBadEncoding, what, b)
}

// invert flips every byte of b in place.
func invert(b []byte) {
	for i := range b {
		b[i] = ^b[i]
	}
}

// AppendNull appends an ascending NULL: it sorts before every value.
func AppendNull(b []byte) []byte { return append(b, markerNull) }

// AppendNullDesc appends a descending NULL: it sorts after every value.
func AppendNullDesc(b []byte) []byte { return append(b, ^markerNull) }

// AppendNotNullMarker appends a bound that sorts after NULL and before every
// ascending value of any type: prefix+AppendNotNullMarker is the start key of
// "col IS NOT NULL" over an ascending column. It is not a value and does not
// decode.
func AppendNotNullMarker(b []byte) []byte { return append(b, markerNotNull) }

// AppendNotNullMarkerDesc is AppendNotNullMarker for a descending column: it
// sorts after every value and before NULL, so it is the end key of
// "col IS NOT NULL".
func AppendNotNullMarkerDesc(b []byte) []byte { return append(b, ^markerNotNull) }

// DecodeIfNull reports whether b starts with an ascending NULL and, if so,
// returns the rest after it; otherwise it returns b unchanged.
func DecodeIfNull(b []byte) (rest []byte, isNull bool) {
	if len(b) > 0 && b[0] == markerNull {
		return b[1:], true
	}
	return b, false
}

// DecodeIfNullDesc is DecodeIfNull for a descending column.
func DecodeIfNullDesc(b []byte) (rest []byte, isNull bool) {
	if len(b) > 0 && b[0] == ^markerNull {
		return b[1:], true
	}
	return b, false
}

// AppendBool appends v (false < true).
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, markerBool, 1)
	}
	return append(b, markerBool, 0)
}

// AppendBoolDesc appends v in descending order.
func AppendBoolDesc(b []byte, v bool) []byte {
	n := len(b)
	b = AppendBool(b, v)
	invert(b[n:])
	return b
}

// DecodeBool decodes an AppendBool value.
func DecodeBool(b []byte) (rest []byte, v bool, err error) { return decodeBool(b, 0) }

// DecodeBoolDesc decodes an AppendBoolDesc value.
func DecodeBoolDesc(b []byte) (rest []byte, v bool, err error) { return decodeBool(b, 0xFF) }

func decodeBool(b []byte, inv byte) ([]byte, bool, error) {
	if len(b) < 2 || b[0]^inv != markerBool || b[1]^inv > 1 {
		return b, false, badEncoding("bool", b)
	}
	return b[2:], b[1]^inv == 1, nil
}

// AppendInt64 appends v as its marker and 8 big-endian bytes with the sign bit
// flipped (9 bytes).
func AppendInt64(b []byte, v int64) []byte {
	b = append(b, markerInt)
	return binary.BigEndian.AppendUint64(b, uint64(v)^(1<<63))
}

// AppendInt64Desc appends v in descending order.
func AppendInt64Desc(b []byte, v int64) []byte {
	b = append(b, ^markerInt)
	return binary.BigEndian.AppendUint64(b, ^(uint64(v) ^ (1 << 63)))
}

// DecodeInt64 decodes an AppendInt64 value.
func DecodeInt64(b []byte) (rest []byte, v int64, err error) { return decodeInt64(b, 0) }

// DecodeInt64Desc decodes an AppendInt64Desc value.
func DecodeInt64Desc(b []byte) (rest []byte, v int64, err error) { return decodeInt64(b, 0xFF) }

func decodeInt64(b []byte, inv byte) ([]byte, int64, error) {
	if len(b) < 9 || b[0]^inv != markerInt {
		return b, 0, badEncoding("int64", b)
	}
	u := binary.BigEndian.Uint64(b[1:9])
	if inv != 0 {
		u = ^u
	}
	return b[9:], int64(u ^ (1 << 63)), nil
}

// floatNaNKey is the transformed bit pattern of every NaN: above +Inf, as
// PostgreSQL sorts NaN after every other float.
const floatNaNKey uint64 = 0xFFF8000000000000

func floatKey(f float64) uint64 {
	if f != f {
		return floatNaNKey
	}
	if f == 0 {
		f = 0 // -0 == 0
	}
	u := math.Float64bits(f)
	if u>>63 == 0 {
		return u ^ (1 << 63)
	}
	return ^u
}

// AppendFloat64 appends f (IEEE bits made order-preserving; -0 encodes as 0,
// every NaN encodes alike and sorts after +Inf).
func AppendFloat64(b []byte, f float64) []byte {
	b = append(b, markerFloat)
	return binary.BigEndian.AppendUint64(b, floatKey(f))
}

// AppendFloat64Desc appends f in descending order.
func AppendFloat64Desc(b []byte, f float64) []byte {
	b = append(b, ^markerFloat)
	return binary.BigEndian.AppendUint64(b, ^floatKey(f))
}

// DecodeFloat64 decodes an AppendFloat64 value.
func DecodeFloat64(b []byte) (rest []byte, f float64, err error) { return decodeFloat64(b, 0) }

// DecodeFloat64Desc decodes an AppendFloat64Desc value.
func DecodeFloat64Desc(b []byte) (rest []byte, f float64, err error) {
	return decodeFloat64(b, 0xFF)
}

func decodeFloat64(b []byte, inv byte) ([]byte, float64, error) {
	if len(b) < 9 || b[0]^inv != markerFloat {
		return b, 0, badEncoding("float64", b)
	}
	u := binary.BigEndian.Uint64(b[1:9])
	if inv != 0 {
		u = ^u
	}
	if u>>63 == 1 {
		u ^= 1 << 63
	} else {
		u = ^u
	}
	return b[9:], math.Float64frombits(u), nil
}

// AppendBytes appends v escaped (0x00 → 0x00 0xFF) and terminated (0x00 0x01).
func AppendBytes(b, v []byte) []byte {
	b = append(b, markerBytes)
	return appendEscaped(b, v)
}

// AppendString is AppendBytes for a string (bytewise order, i.e. code point
// order for UTF-8).
func AppendString(b []byte, s string) []byte {
	b = append(b, markerString)
	return appendEscaped(b, s)
}

// AppendBytesDesc appends v in descending order.
func AppendBytesDesc(b, v []byte) []byte {
	n := len(b)
	b = AppendBytes(b, v)
	invert(b[n:])
	return b
}

// AppendStringDesc appends s in descending order.
func AppendStringDesc(b []byte, s string) []byte {
	n := len(b)
	b = AppendString(b, s)
	invert(b[n:])
	return b
}

func appendEscaped[T []byte | string](b []byte, v T) []byte {
	for {
		i := indexZero(v)
		if i < 0 {
			break
		}
		b = append(b, v[:i]...)
		b = append(b, escByte, escEscaped)
		v = v[i+1:]
	}
	b = append(b, v...)
	return append(b, escByte, escTerm)
}

func indexZero[T []byte | string](v T) int {
	for i := 0; i < len(v); i++ {
		if v[i] == 0 {
			return i
		}
	}
	return -1
}

// DecodeBytes decodes an AppendBytes (or AppendString) value, appending the
// bytes to buf (which may be nil) and returning the extended buf; with a
// reused buf it does not allocate.
func DecodeBytes(b, buf []byte) (rest, v []byte, err error) {
	return decodeEscaped(b, buf, markerBytes, 0)
}

// DecodeBytesDesc decodes an AppendBytesDesc (or AppendStringDesc) value into
// buf.
func DecodeBytesDesc(b, buf []byte) (rest, v []byte, err error) {
	return decodeEscaped(b, buf, markerBytes, 0xFF)
}

// DecodeString decodes an AppendString value.
func DecodeString(b []byte) (rest []byte, s string, err error) {
	rest, v, err := decodeEscaped(b, nil, markerString, 0)
	return rest, string(v), err
}

// DecodeStringDesc decodes an AppendStringDesc value.
func DecodeStringDesc(b []byte) (rest []byte, s string, err error) {
	rest, v, err := decodeEscaped(b, nil, markerString, 0xFF)
	return rest, string(v), err
}

func decodeEscaped(b, buf []byte, marker, inv byte) ([]byte, []byte, error) {
	if len(b) < 1 || (b[0]^inv != marker && !(marker == markerBytes && b[0]^inv == markerString)) {
		return b, buf, badEncoding("bytes", b)
	}
	r := b[1:]
	esc := escByte ^ inv
	for {
		i := bytes.IndexByte(r, esc)
		if i < 0 || i+1 >= len(r) {
			return b, buf, badEncoding("unterminated bytes", b)
		}
		n := len(buf)
		buf = append(buf, r[:i]...)
		if inv != 0 {
			invert(buf[n:])
		}
		switch r[i+1] ^ inv {
		case escTerm:
			return r[i+2:], buf, nil
		case escEscaped:
			buf = append(buf, 0)
			r = r[i+2:]
		default:
			return b, buf, badEncoding("bad escape in bytes", b)
		}
	}
}

// AppendDecimal appends d so that encodings order as numeric values: equal
// values encode equally whatever their scale (1.0, 1.00 and 1 are one key,
// -0 is 0), -Infinity < negatives < 0 < positives < +Infinity < NaN (NaN sorts
// last, as PostgreSQL's numeric does).
//
// A finite non-zero |d| is written as 0.p1p2…pn × 100^e with base-100 digits
// p1 ≠ 0 and pn ≠ 0: a class byte, e as a sign-flipped big-endian int32, then
// one byte per digit, 2p+1 for every digit but the last and 2p for the last (so
// the digits are self-delimiting and a shorter digit string sorts first).
// Negative values invert e and the digit bytes.
func AppendDecimal(b []byte, d *apd.Decimal) []byte {
	b = append(b, markerDecimal)
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return append(b, decNaN)
	case apd.Infinite:
		if d.Negative {
			return append(b, decNegInf)
		}
		return append(b, decPosInf)
	}
	if d.Coeff.Sign() == 0 {
		return append(b, decZero)
	}
	var scratch [48]byte
	digits := d.Coeff.Append(scratch[:0], 10)
	exp := int64(d.Exponent)
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	// value = 0.digits × 10^e10
	e10 := exp + int64(len(digits))
	lead := 0
	if e10%2 != 0 {
		lead = 1 // prepend a 0 digit so the exponent is even
		e10++
	}
	e100 := e10 / 2
	if e100 > math.MaxInt32 {
		e100 = math.MaxInt32 // unreachable for SQL numerics (≤ 131072 digits)
	} else if e100 < math.MinInt32 {
		e100 = math.MinInt32
	}
	n := len(b)
	if d.Negative {
		b = append(b, decNeg)
	} else {
		b = append(b, decPos)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(int32(e100))^(1<<31))
	total := lead + len(digits)
	digit := func(i int) byte { // i-th digit of the padded string
		i -= lead
		if i < 0 || i >= len(digits) {
			return 0
		}
		return digits[i] - '0'
	}
	for i := 0; i < total; i += 2 {
		p := digit(i)*10 + digit(i+1)
		if i+2 >= total {
			b = append(b, 2*p)
		} else {
			b = append(b, 2*p+1)
		}
	}
	if d.Negative {
		invert(b[n+1:])
	}
	return b
}

// AppendDecimalDesc appends d in descending order.
func AppendDecimalDesc(b []byte, d *apd.Decimal) []byte {
	n := len(b)
	b = AppendDecimal(b, d)
	invert(b[n:])
	return b
}

// DecodeDecimal decodes an AppendDecimal value into d. The result is reduced
// (no trailing zeros: 1.50 decodes as 1.5), since the encoding keeps only the
// numeric value.
func DecodeDecimal(b []byte, d *apd.Decimal) (rest []byte, err error) {
	return decodeDecimal(b, d, 0)
}

// DecodeDecimalDesc decodes an AppendDecimalDesc value into d.
func DecodeDecimalDesc(b []byte, d *apd.Decimal) (rest []byte, err error) {
	return decodeDecimal(b, d, 0xFF)
}

func decodeDecimal(b []byte, d *apd.Decimal, inv byte) ([]byte, error) {
	d.SetFinite(0, 0)
	if len(b) < 2 || b[0]^inv != markerDecimal {
		return b, badEncoding("decimal", b)
	}
	switch b[1] ^ inv {
	case decNaN:
		d.Form = apd.NaN
		return b[2:], nil
	case decNegInf:
		d.Form, d.Negative = apd.Infinite, true
		return b[2:], nil
	case decPosInf:
		d.Form = apd.Infinite
		return b[2:], nil
	case decZero:
		return b[2:], nil
	case decPos, decNeg:
	default:
		return b, badEncoding("decimal class", b)
	}
	neg := b[1]^inv == decNeg
	dinv := inv
	if neg {
		dinv = ^inv
	}
	if len(b) < 7 {
		return b, badEncoding("short decimal", b)
	}
	e100 := int64(int32((binary.BigEndian.Uint32(b[2:6]) ^ uint32(dinv)*0x01010101) ^ (1 << 31)))
	var scratch [48]byte
	digits := scratch[:0]
	i := 6
	for {
		if i >= len(b) {
			return b, badEncoding("unterminated decimal", b)
		}
		c := b[i] ^ dinv
		i++
		p := c / 2
		if p > 99 {
			return b, badEncoding("decimal digit", b)
		}
		digits = append(digits, '0'+p/10, '0'+p%10)
		if c%2 == 0 {
			break
		}
	}
	if _, ok := d.Coeff.SetString(string(digits), 10); !ok {
		return b, badEncoding("decimal digits", b)
	}
	d.Exponent = int32(2*e100 - int64(len(digits)))
	d.Negative = neg
	d.Reduce(d)
	return b[i:], nil
}

// PrefixEnd returns the smallest key greater than every key that starts with
// prefix (the exclusive end of a prefix scan), or nil when there is none (the
// prefix is empty or all 0xFF): nil means unbounded in Scan.
func PrefixEnd(prefix []byte) []byte {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xFF {
			end := make([]byte, i+1)
			copy(end, prefix)
			end[i]++
			return end
		}
	}
	return nil
}
