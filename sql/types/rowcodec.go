package types

import (
	"encoding/binary"
	"math"

	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/pgerror"
)

// Row value encoding (invariant 4 of doc.go): for each non-NULL value in
// ascending column-id order, uvarint(column id − previous id), one kind byte,
// then the payload:
//
//	bool, ints, date, timestamps: zigzag varint
//	floats: 8 bytes big-endian IEEE
//	numeric: form/sign byte, zigzag varint exponent, uvarint length, coefficient bytes
//	strings, bytea: uvarint length, bytes
//	enum: 8 bytes big-endian IEEE sort order, uvarint length, label bytes
//	interval: zigzag varints months, days, micros
//	arrays, vectors, records: uvarint element (field) count, then per element its kind
//	  byte and payload (a NULL element: the KindNull byte alone)

const (
	numFinite byte = iota
	numNeg
	numNaN
	numInf
	numNegInf
)

// ColumnValue is one column of a row for encoding.
type ColumnValue struct {
	ID    uint32
	Datum Datum
}

// AppendRowValue appends the encoding of the row's values to buf. ids must be
// ascending and parallel to vals.
func AppendRowValue(buf []byte, ids []uint32, vals []Datum) []byte {
	prev := uint32(0)
	for i, d := range vals {
		if d.K == KindNull {
			continue
		}
		buf = binary.AppendUvarint(buf, uint64(ids[i]-prev))
		prev = ids[i]
		buf = append(buf, byte(d.K))
		buf = appendPayload(buf, d)
	}
	return buf
}

// appendPayload appends the encoding of d's value (its kind byte is
// written by the caller).
func appendPayload(buf []byte, d Datum) []byte {
	switch d.K {
	case KindBool, KindInt2, KindInt4, KindInt8, KindOid, KindRegclass, KindRegtype, KindRegproc, KindRegnamespace, KindRegrole, KindDate, KindTimestamp, KindTimestampTZ:
		buf = binary.AppendVarint(buf, d.I)
	case KindFloat4, KindFloat8:
		buf = binary.BigEndian.AppendUint64(buf, math.Float64bits(d.F))
	case KindNumeric:
		buf = appendDecimal(buf, d.D)
	case KindInterval:
		buf = binary.AppendVarint(buf, int64(d.M))
		buf = binary.AppendVarint(buf, int64(d.Dd))
		buf = binary.AppendVarint(buf, d.I)
	case KindArray, KindInt2Vector, KindOidVector, KindRecord:
		buf = appendArrayPayload(buf, d)
	case KindEnum:
		buf = binary.BigEndian.AppendUint64(buf, math.Float64bits(d.F))
		buf = binary.AppendUvarint(buf, uint64(len(d.S)))
		buf = append(buf, d.S...)
	default:
		buf = binary.AppendUvarint(buf, uint64(len(d.S)))
		buf = append(buf, d.S...)
	}
	return buf
}

func appendDecimal(buf []byte, d *apd.Decimal) []byte {
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return append(buf, numNaN)
	case apd.Infinite:
		if d.Negative {
			return append(buf, numNegInf)
		}
		return append(buf, numInf)
	}
	if d.Negative {
		buf = append(buf, numNeg)
	} else {
		buf = append(buf, numFinite)
	}
	buf = binary.AppendVarint(buf, int64(d.Exponent))
	if d.Coeff.IsUint64() {
		u := d.Coeff.Uint64()
		var tmp [8]byte
		binary.BigEndian.PutUint64(tmp[:], u)
		i := 0
		for i < 8 && tmp[i] == 0 {
			i++
		}
		buf = binary.AppendUvarint(buf, uint64(8-i))
		return append(buf, tmp[i:]...)
	}
	b := d.Coeff.Bytes()
	buf = binary.AppendUvarint(buf, uint64(len(b)))
	return append(buf, b...)
}

var errCorrupt = pgerror.New(pgerror.DataCorrupted, "corrupt row value")

// RowDecoder decodes the columns a plan needs from encoded rows. A row's
// columns are stored in ascending id, so decoding stops at the last
// column wanted: a filter on a table's early columns does not walk the
// rest of each row (most of a TPC-H Q14 scan's decoding, issue 21).
type RowDecoder struct {
	// pos[columnID] is the output index + 1 (0 = not needed); the last
	// entry is the last column wanted.
	pos []int
	// at are the output indexes written (DecodeWanted clears only them).
	at []int
}

// NewRowDecoder builds a decoder that writes column ids[i] to out[i].
func NewRowDecoder(ids []uint32) *RowDecoder {
	at := make([]int, len(ids))
	for i := range at {
		at[i] = i
	}
	return NewRowDecoderAt(ids, at)
}

// NewRowDecoderAt builds a decoder that writes column ids[i] to out[at[i]]:
// a scan decodes straight into its output row.
func NewRowDecoderAt(ids []uint32, at []int) *RowDecoder {
	max := uint32(0)
	for _, id := range ids {
		if id > max {
			max = id
		}
	}
	pos := make([]int, max+1)
	for i, id := range ids {
		pos[id] = at[i] + 1
	}
	return &RowDecoder{pos: pos, at: append([]int(nil), at...)}
}

// Decode fills out (len = len(ids), or the row NewRowDecoderAt's at
// indexes) from value; absent columns are NULL.
// Strings are copied (value may be reused by the caller).
func (rd *RowDecoder) Decode(value []byte, out []Datum) error {
	for i := range out {
		out[i] = Datum{}
	}
	return rd.decode(value, out)
}

// DecodeWanted is Decode for a row whose other places the caller keeps
// (a scratch row that holds only these columns): it clears and fills
// only the places the decoder writes.
func (rd *RowDecoder) DecodeWanted(value []byte, out []Datum) error {
	for _, i := range rd.at {
		out[i] = Datum{}
	}
	return rd.decode(value, out)
}

func (rd *RowDecoder) decode(value []byte, out []Datum) error {
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
		} else {
			d, rest, err := decodePayload(k, b, true)
			if err != nil {
				return err
			}
			b, out[want-1] = rest, d
		}
		if id >= last {
			return nil
		}
	}
	return nil
}

// decodePayload decodes the value of kind k at the start of b, returning
// the rest of b. Without want it only skips the value.
func decodePayload(k Kind, b []byte, want bool) (Datum, []byte, error) {
	d := Datum{K: k}
	switch k {
	case KindBool, KindInt2, KindInt4, KindInt8, KindOid, KindRegclass, KindRegtype, KindRegproc, KindRegnamespace, KindRegrole, KindDate, KindTimestamp, KindTimestampTZ:
		v, m := binary.Varint(b)
		if m <= 0 {
			return d, nil, errCorrupt
		}
		d.I = v
		b = b[m:]
	case KindFloat4, KindFloat8:
		if len(b) < 8 {
			return d, nil, errCorrupt
		}
		d.F = math.Float64frombits(binary.BigEndian.Uint64(b))
		b = b[8:]
	case KindNumeric:
		var err error
		if want {
			d.D, b, err = decodeDecimal(b)
		} else {
			b, err = skipDecimal(b)
		}
		if err != nil {
			return d, nil, err
		}
	case KindInterval:
		m1, a := binary.Varint(b)
		if a <= 0 {
			return d, nil, errCorrupt
		}
		b = b[a:]
		d1, c := binary.Varint(b)
		if c <= 0 {
			return d, nil, errCorrupt
		}
		b = b[c:]
		us, e := binary.Varint(b)
		if e <= 0 {
			return d, nil, errCorrupt
		}
		b = b[e:]
		d.M, d.Dd, d.I = int32(m1), int32(d1), us
	case KindArray, KindInt2Vector, KindOidVector, KindRecord:
		return decodeArrayPayload(k, b, want)
	case KindEnum:
		if len(b) < 8 {
			return d, nil, errCorrupt
		}
		d.F = math.Float64frombits(binary.BigEndian.Uint64(b))
		var err error
		if d.S, b, err = decodeString(b[8:], want); err != nil {
			return d, nil, err
		}
	default:
		var err error
		if d.S, b, err = decodeString(b, want); err != nil {
			return d, nil, err
		}
	}
	return d, b, nil
}

// decodeString decodes a uvarint length and that many bytes at the start
// of b, returning the rest; the string is built only when want.
func decodeString(b []byte, want bool) (string, []byte, error) {
	l, m := binary.Uvarint(b)
	if m <= 0 || uint64(len(b)-m) < l {
		return "", nil, errCorrupt
	}
	s := ""
	if want {
		s = string(b[m : m+int(l)])
	}
	return s, b[m+int(l):], nil
}

func skipDecimal(b []byte) ([]byte, error) {
	if len(b) < 1 {
		return nil, errCorrupt
	}
	if b[0] == numNaN || b[0] == numInf || b[0] == numNegInf {
		return b[1:], nil
	}
	_, n := binary.Varint(b[1:])
	if n <= 0 {
		return nil, errCorrupt
	}
	b = b[1+n:]
	l, m := binary.Uvarint(b)
	if m <= 0 || uint64(len(b)-m) < l {
		return nil, errCorrupt
	}
	return b[m+int(l):], nil
}

func decodeDecimal(b []byte) (*apd.Decimal, []byte, error) {
	if len(b) < 1 {
		return nil, nil, errCorrupt
	}
	switch b[0] {
	case numNaN:
		return &apd.Decimal{Form: apd.NaN}, b[1:], nil
	case numInf:
		return &apd.Decimal{Form: apd.Infinite}, b[1:], nil
	case numNegInf:
		return &apd.Decimal{Form: apd.Infinite, Negative: true}, b[1:], nil
	}
	neg := b[0] == numNeg
	exp, n := binary.Varint(b[1:])
	if n <= 0 {
		return nil, nil, errCorrupt
	}
	b = b[1+n:]
	l, m := binary.Uvarint(b)
	if m <= 0 || uint64(len(b)-m) < l {
		return nil, nil, errCorrupt
	}
	coeff := b[m : m+int(l)]
	d := new(apd.Decimal)
	if l <= 8 {
		var u uint64
		for _, c := range coeff {
			u = u<<8 | uint64(c)
		}
		d.Coeff.SetUint64(u)
	} else {
		d.Coeff.SetBytes(coeff)
	}
	d.Exponent = int32(exp)
	d.Negative = neg
	return d, b[m+int(l):], nil
}
