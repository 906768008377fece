package types

import (
	"encoding/binary"
	"math"
	"math/big"

	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/pgerror"
)

// PostgreSQL's binary formats count from 2000-01-01.
const (
	pgEpochDays   = 10957
	pgEpochMicros = pgEpochDays * 86400 * 1000000
)

// AppendBinary appends the PostgreSQL binary send format of d (not NULL).
func AppendBinary(buf []byte, d Datum, t T) ([]byte, error) {
	switch t.Kind {
	case KindBool:
		if d.I != 0 {
			return append(buf, 1), nil
		}
		return append(buf, 0), nil
	case KindInt2:
		return binary.BigEndian.AppendUint16(buf, uint16(d.I)), nil
	case KindInt4, KindOid, KindRegclass, KindRegtype, KindRegproc, KindRegnamespace, KindRegrole:
		return binary.BigEndian.AppendUint32(buf, uint32(d.I)), nil
	case KindInt8:
		return binary.BigEndian.AppendUint64(buf, uint64(d.I)), nil
	case KindFloat4:
		return binary.BigEndian.AppendUint32(buf, math.Float32bits(float32(d.F))), nil
	case KindFloat8:
		return binary.BigEndian.AppendUint64(buf, math.Float64bits(d.F)), nil
	case KindNumeric:
		return appendNumericBinary(buf, d.D), nil
	case KindDate:
		return binary.BigEndian.AppendUint32(buf, uint32(int32(d.I-pgEpochDays))), nil
	case KindTimestamp, KindTimestampTZ:
		return binary.BigEndian.AppendUint64(buf, uint64(d.I-pgEpochMicros)), nil
	case KindInterval:
		buf = binary.BigEndian.AppendUint64(buf, uint64(d.I))
		buf = binary.BigEndian.AppendUint32(buf, uint32(d.Dd))
		return binary.BigEndian.AppendUint32(buf, uint32(d.M)), nil
	case KindBytea, KindText, KindVarchar, KindChar, KindName, KindInternalChar, KindUnknown, KindJSON, KindEnum:
		return append(buf, d.S...), nil
	case KindJSONB:
		// jsonb's binary format: version 1, then the text.
		return append(append(buf, 1), d.S...), nil
	case KindArray, KindInt2Vector, KindOidVector:
		return appendArrayBinary(buf, d, t)
	case KindRecord:
		return appendRecordBinary(buf, d)
	}
	return nil, pgerror.New(pgerror.FeatureNotSupported, "binary output of type %s is not supported", t.String())
}

// ParseBinary decodes a PostgreSQL binary-format parameter value of type t.
func ParseBinary(b []byte, t T) (Datum, error) {
	bad := func() (Datum, error) {
		return Datum{}, pgerror.New(pgerror.InvalidBinaryRepresentation, "incorrect binary data format in bind parameter of type %s", t.String())
	}
	switch t.Kind {
	case KindBool:
		if len(b) != 1 {
			return bad()
		}
		return NewBool(b[0] != 0), nil
	case KindInt2:
		if len(b) != 2 {
			return bad()
		}
		return NewInt(KindInt2, int64(int16(binary.BigEndian.Uint16(b)))), nil
	case KindInt4, KindOid, KindRegclass, KindRegtype, KindRegproc, KindRegnamespace, KindRegrole:
		if len(b) != 4 {
			return bad()
		}
		if t.IsOidAlias() {
			return NewInt(t.Kind, int64(binary.BigEndian.Uint32(b))), nil
		}
		return NewInt(KindInt4, int64(int32(binary.BigEndian.Uint32(b)))), nil
	case KindInt8:
		if len(b) != 8 {
			return bad()
		}
		return NewInt8(int64(binary.BigEndian.Uint64(b))), nil
	case KindFloat4:
		if len(b) != 4 {
			return bad()
		}
		return NewFloat(KindFloat4, float64(math.Float32frombits(binary.BigEndian.Uint32(b)))), nil
	case KindFloat8:
		if len(b) != 8 {
			return bad()
		}
		return NewFloat8(math.Float64frombits(binary.BigEndian.Uint64(b))), nil
	case KindNumeric:
		d, ok := parseNumericBinary(b)
		if !ok {
			return bad()
		}
		return NewNumeric(d), nil
	case KindDate:
		if len(b) != 4 {
			return bad()
		}
		return CheckDate(int64(int32(binary.BigEndian.Uint32(b))) + pgEpochDays)
	case KindTimestamp, KindTimestampTZ:
		if len(b) != 8 {
			return bad()
		}
		v, err := addMicros(int64(binary.BigEndian.Uint64(b)), pgEpochMicros)
		if err != nil {
			return Datum{}, err
		}
		return NewTimestamp(t.Kind, v), nil
	case KindInterval:
		if len(b) != 16 {
			return bad()
		}
		return NewInterval(int32(binary.BigEndian.Uint32(b[12:])), int32(binary.BigEndian.Uint32(b[8:])), int64(binary.BigEndian.Uint64(b))), nil
	case KindBytea:
		return NewBytea(b), nil
	case KindText, KindVarchar, KindChar, KindName, KindInternalChar, KindUnknown, KindJSON, KindEnum:
		return ParseText(string(b), t, nil)
	case KindJSONB:
		if len(b) == 0 || b[0] != 1 {
			return Datum{}, pgerror.New(pgerror.InvalidBinaryRepresentation, "unsupported jsonb version number %d", append(b, 0)[0])
		}
		return ParseText(string(b[1:]), t, nil)
	case KindArray, KindInt2Vector, KindOidVector:
		return parseArrayBinary(b, t)
	}
	return Datum{}, pgerror.New(pgerror.FeatureNotSupported, "binary input of type %s is not supported", t.String())
}

var tenThousand = big.NewInt(10000)

func appendNumericBinary(buf []byte, d *apd.Decimal) []byte {
	if d.Form == apd.NaN || d.Form == apd.NaNSignaling {
		return append(buf, 0, 0, 0, 0, 0xC0, 0, 0, 0)
	}
	if d.Form == apd.Infinite {
		sign := uint16(0xD000)
		if d.Negative {
			sign = 0xF000
		}
		buf = append(buf, 0, 0, 0, 0)
		buf = binary.BigEndian.AppendUint16(buf, sign)
		return append(buf, 0, 0)
	}
	dscale := int32(0)
	if d.Exponent < 0 {
		dscale = -d.Exponent
	}
	// The absolute coefficient's decimal digits (in a stack buffer: a
	// coefficient that fits 64 bits prints without allocating), laid out
	// so the decimal point falls on a base-10000 boundary: zeros to the
	// left of the integer part and to the right of the fraction fill the
	// groups. A numeric column's every value in a binary result goes
	// through here.
	var coef [40]byte
	s := d.Coeff.Append(coef[:0], 10)
	if len(s) == 1 && s[0] == '0' {
		buf = append(buf, 0, 0, 0, 0, 0, 0)
		return binary.BigEndian.AppendUint16(buf, uint16(dscale))
	}
	intLen := len(s) + int(d.Exponent) // digits before the point (may be <= 0 or > len)
	var aligned [64]byte
	all := aligned[:0]
	nInt := 0 // digits of the (padded) integer part
	switch {
	case intLen <= 0:
		all = appendZeros(all, -intLen)
		all = append(all, s...)
	default:
		pad := (4 - intLen%4) % 4
		all = appendZeros(all, pad)
		all = append(all, s...)
		if intLen > len(s) {
			all = appendZeros(all, intLen-len(s))
		}
		nInt = pad + intLen
	}
	all = appendZeros(all, (4-(len(all)-nInt)%4)%4)
	group := func(i int) uint16 {
		g := all[4*i : 4*i+4]
		return uint16(g[0]-'0')*1000 + uint16(g[1]-'0')*100 + uint16(g[2]-'0')*10 + uint16(g[3]-'0')
	}
	// Leading and trailing zero groups are not sent.
	first, last := 0, len(all)/4
	for first < last && group(first) == 0 {
		first++
	}
	for last > first && group(last-1) == 0 {
		last--
	}
	weight := nInt/4 - 1 - first
	buf = binary.BigEndian.AppendUint16(buf, uint16(last-first))
	buf = binary.BigEndian.AppendUint16(buf, uint16(int16(weight)))
	sign := uint16(0)
	if d.Negative {
		sign = 0x4000
	}
	buf = binary.BigEndian.AppendUint16(buf, sign)
	buf = binary.BigEndian.AppendUint16(buf, uint16(dscale))
	for i := first; i < last; i++ {
		buf = binary.BigEndian.AppendUint16(buf, group(i))
	}
	return buf
}

func appendZeros(b []byte, n int) []byte {
	for range n {
		b = append(b, '0')
	}
	return b
}

// parseNumericBinarySmall is parseNumericBinary for the common value (a
// COPY's DECIMAL(15,2)): at most 4 base-10000 digits and none past the
// display scale (but the zeros that pad the last one), so the value at
// that scale is an
// int64 computed without big.Int or a rounding. ok is false for any
// other value, which the general path takes.
func parseNumericBinarySmall(digits []byte, n, weight int, sign uint16, dscale int) (*apd.Decimal, bool) {
	if n > 4 || (sign != 0 && sign != 0x4000) {
		return nil, false
	}
	var c int64
	for i := 0; i < n; i++ {
		g := int64(binary.BigEndian.Uint16(digits[2*i:]))
		if g > 9999 {
			return nil, false
		}
		c = c*10000 + g
	}
	// Digits to append (or, negative, zeros to drop: the last base-10000
	// digit pads the display scale) to reach the display scale.
	up := 4*(weight-n+1) + dscale
	if up < -3 || up > 18 {
		return nil, false
	}
	m := int64(1)
	for range max(up, -up) {
		m *= 10
	}
	switch {
	case up < 0 && c%m != 0:
		return nil, false // digits past the display scale: rounded by the general path
	case up < 0:
		c /= m
	case c != 0 && c > math.MaxInt64/m:
		return nil, false
	default:
		c *= m
	}
	d := new(apd.Decimal)
	d.SetFinite(c, -int32(dscale))
	d.Negative = sign == 0x4000
	return d, true
}

func parseNumericBinary(b []byte) (*apd.Decimal, bool) {
	if len(b) < 8 {
		return nil, false
	}
	n := int(binary.BigEndian.Uint16(b))
	weight := int(int16(binary.BigEndian.Uint16(b[2:])))
	sign := binary.BigEndian.Uint16(b[4:])
	dscale := int(binary.BigEndian.Uint16(b[6:]))
	if len(b) != 8+2*n {
		return nil, false
	}
	switch sign {
	case 0xC000:
		return &apd.Decimal{Form: apd.NaN}, true
	case 0xD000:
		return &apd.Decimal{Form: apd.Infinite}, true
	case 0xF000:
		return &apd.Decimal{Form: apd.Infinite, Negative: true}, true
	}
	if d, ok := parseNumericBinarySmall(b[8:], n, weight, sign, dscale); ok {
		return d, true
	}
	return parseNumericBinaryBig(b[8:], n, weight, sign, dscale)
}

// parseNumericBinaryBig is parseNumericBinary of any finite value.
func parseNumericBinaryBig(b []byte, n, weight int, sign uint16, dscale int) (*apd.Decimal, bool) {
	var coeff big.Int
	for i := 0; i < n; i++ {
		g := int64(binary.BigEndian.Uint16(b[2*i:]))
		if g > 9999 {
			return nil, false
		}
		coeff.Mul(&coeff, tenThousand)
		coeff.Add(&coeff, big.NewInt(g))
	}
	// value = coeff * 10000^(weight - n + 1)
	exp := 4 * (weight - n + 1)
	d := new(apd.Decimal)
	d.Coeff.SetMathBigInt(&coeff)
	d.Exponent = int32(exp)
	d.Negative = sign == 0x4000
	// present with the declared display scale
	r := new(apd.Decimal)
	if _, err := numericCtx.Quantize(r, d, -int32(dscale)); err != nil {
		return nil, false
	}
	return r, true
}
