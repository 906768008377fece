package types

import (
	"encoding/binary"
	"strconv"

	"github.com/mvserver/mvserver/pgerror"
)

// PostgreSQL's binary array format (array_send/array_recv): int32 number of
// dimensions, int32 flags (1 = has NULLs), element type OID, then per
// dimension int32 length and int32 lower bound, then per element an int32
// length (-1 for NULL) and the element's own binary form. An empty array
// has no dimensions.

// appendArrayBinary appends array_send's form of d as type t.
func appendArrayBinary(buf []byte, d Datum, t T) ([]byte, error) {
	et := t.ElemType()
	elems := d.Elems()
	if len(elems) == 0 {
		buf = binary.BigEndian.AppendUint32(buf, 0)
		buf = binary.BigEndian.AppendUint32(buf, 0)
		return binary.BigEndian.AppendUint32(buf, et.OID()), nil
	}
	hasNull := uint32(0)
	for _, e := range elems {
		if e.IsNull() {
			hasNull = 1
			break
		}
	}
	buf = binary.BigEndian.AppendUint32(buf, 1)
	buf = binary.BigEndian.AppendUint32(buf, hasNull)
	buf = binary.BigEndian.AppendUint32(buf, et.OID())
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(elems)))
	buf = binary.BigEndian.AppendUint32(buf, uint32(int32(ArrayLower(t.Kind))))
	for _, e := range elems {
		if e.IsNull() {
			buf = binary.BigEndian.AppendUint32(buf, 0xFFFFFFFF)
			continue
		}
		at := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		var err error
		if buf, err = AppendBinary(buf, e, et); err != nil {
			return nil, err
		}
		binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	}
	return buf, nil
}

// parseArrayBinary reads array_recv's form as type t.
func parseArrayBinary(b []byte, t T) (Datum, error) {
	et := t.ElemType()
	bad := func(msg string) (Datum, error) {
		return Datum{}, pgerror.New(pgerror.InvalidBinaryRepresentation, "%s", msg)
	}
	if len(b) < 12 {
		return bad("insufficient data left in message")
	}
	ndim := int32(binary.BigEndian.Uint32(b))
	flags := binary.BigEndian.Uint32(b[4:])
	elemOID := binary.BigEndian.Uint32(b[8:])
	b = b[12:]
	switch {
	case ndim < 0:
		return bad("invalid number of dimensions: " + strconv.Itoa(int(ndim)))
	case ndim > 1:
		return Datum{}, pgerror.New(pgerror.FeatureNotSupported, "multidimensional arrays are not supported")
	case flags != 0 && flags != 1:
		return bad("invalid array flags")
	}
	if elemOID != et.OID() {
		return Datum{}, pgerror.New(pgerror.DatatypeMismatch, "binary data has array element type %d instead of expected %d", elemOID, et.OID())
	}
	if ndim == 0 {
		if len(b) != 0 {
			return bad("incorrect binary data format")
		}
		return NewArray(t.Kind, nil), nil
	}
	if len(b) < 8 {
		return bad("insufficient data left in message")
	}
	n := int32(binary.BigEndian.Uint32(b))
	lower := int32(binary.BigEndian.Uint32(b[4:]))
	b = b[8:]
	if n < 0 || int(n) > len(b)/4 {
		return bad("insufficient data left in message")
	}
	if n > 0 && int(lower) != ArrayLower(t.Kind) {
		return Datum{}, pgerror.New(pgerror.FeatureNotSupported, "arrays whose lower bound is not %d are not supported", ArrayLower(t.Kind))
	}
	elems := make([]Datum, n)
	for i := range elems {
		if len(b) < 4 {
			return bad("insufficient data left in message")
		}
		l := int32(binary.BigEndian.Uint32(b))
		b = b[4:]
		if l == -1 {
			continue
		}
		if l < 0 || int(l) > len(b) {
			return bad("insufficient data left in message")
		}
		e, err := ParseBinary(b[:l], et)
		if err != nil {
			return Datum{}, err
		}
		elems[i] = e
		b = b[l:]
	}
	if len(b) != 0 {
		return bad("incorrect binary data format")
	}
	return NewArray(t.Kind, elems), nil
}
