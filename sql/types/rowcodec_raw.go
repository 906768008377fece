package types

import (
	"encoding/binary"
	"math"
)

// RawValue is one column of an encoded row as its raw scalar, without a
// Datum: what a columnar scan copies into its vectors. K is KindNull for
// a column the row does not hold.
//
//   - bool, ints, date, timestamps: I.
//   - floats: F.
//   - numeric: when Small, the value is I × 10^Exp (I signed, |I| < 2^63,
//     a finite value); otherwise (NaN, infinities, a wider coefficient)
//     Small is false and the value needs DecodeNumeric of B.
//   - strings and bytea: B, which aliases the encoded row.
//   - intervals, arrays, records and enums: B is the payload (the caller decodes
//     the row with a RowDecoder instead).
type RawValue struct {
	K     Kind
	Small bool
	Exp   int32
	I     int64
	F     float64
	B     []byte
}

// DecodeRaw fills out (indexed as Decode's out) from value without
// building Datums or copying strings.
func (rd *RowDecoder) DecodeRaw(value []byte, out []RawValue) error {
	for i := range out {
		out[i] = RawValue{}
	}
	last := uint32(len(rd.pos) - 1)
	id := uint32(0)
	b := value
	for len(b) > 0 {
		delta, n := binary.Uvarint(b)
		if n <= 0 || len(b) < n+1 {
			return errCorrupt
		}
		id += uint32(delta)
		k := Kind(b[n])
		b = b[n+1:]
		want := 0
		if int(id) < len(rd.pos) {
			want = rd.pos[id]
		}
		if want == 0 {
			rest, err := skipPayload(k, b)
			if err != nil {
				return err
			}
			b = rest
			if id >= last {
				return nil
			}
			continue
		}
		v := &out[want-1]
		v.K = k
		switch k {
		case KindBool, KindInt2, KindInt4, KindInt8, KindOid, KindRegclass, KindRegtype, KindRegproc, KindRegnamespace, KindRegrole, KindDate, KindTimestamp, KindTimestampTZ:
			x, m := binary.Varint(b)
			if m <= 0 {
				return errCorrupt
			}
			v.I = x
			b = b[m:]
		case KindFloat4, KindFloat8:
			if len(b) < 8 {
				return errCorrupt
			}
			v.F = math.Float64frombits(binary.BigEndian.Uint64(b))
			b = b[8:]
		case KindNumeric:
			rest, err := skipDecimal(b)
			if err != nil {
				return err
			}
			v.B = b[:len(b)-len(rest)]
			rawSmallDecimal(v)
			b = rest
		case KindInterval, KindArray, KindInt2Vector, KindOidVector, KindRecord, KindEnum:
			_, rest, err := decodePayload(k, b, false)
			if err != nil {
				return err
			}
			v.B = b[:len(b)-len(rest)]
			b = rest
		default:
			l, m := binary.Uvarint(b)
			if m <= 0 || uint64(len(b)-m) < l {
				return errCorrupt
			}
			v.B = b[m : m+int(l)]
			b = b[m+int(l):]
		}
		if id >= last {
			return nil
		}
	}
	return nil
}

// rawSmallDecimal sets v.Small, I and Exp when v.B (a numeric payload)
// is finite with a coefficient below 2^63.
func rawSmallDecimal(v *RawValue) {
	b := v.B
	if b[0] != numFinite && b[0] != numNeg {
		return
	}
	exp, n := binary.Varint(b[1:])
	if exp < math.MinInt32 || exp > math.MaxInt32 {
		return
	}
	c := b[1+n:]
	l, m := binary.Uvarint(c)
	if l > 8 {
		return
	}
	var u uint64
	for _, x := range c[m : m+int(l)] {
		u = u<<8 | uint64(x)
	}
	if u > math.MaxInt64 {
		return
	}
	v.I = int64(u)
	if b[0] == numNeg {
		v.I = -v.I
	}
	v.Exp, v.Small = int32(exp), true
}

// DecodeNumeric decodes a numeric payload (RawValue.B of a numeric).
func DecodeNumeric(b []byte) (Datum, error) {
	d, _, err := decodeDecimal(b)
	if err != nil {
		return Datum{}, err
	}
	return NewNumeric(d), nil
}
