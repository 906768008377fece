package types

import "encoding/binary"

// skipPayload returns b past the value of kind k at its start, without
// decoding it. A scan that reads a table's late columns (TPC-H Q12's
// l_shipmode, the 15th of 16) walks every earlier column of every row:
// building a Datum for each only to drop it was most of the decoding
// (issue 21).
func skipPayload(k Kind, b []byte) ([]byte, error) {
	switch k {
	case KindBool, KindInt2, KindInt4, KindInt8, KindOid, KindRegclass, KindRegtype, KindRegproc, KindRegnamespace, KindRegrole, KindDate, KindTimestamp, KindTimestampTZ:
		// A varint ends at its first byte below 0x80 (at most 10 bytes,
		// the 10th at most 1, as binary.Varint checks).
		for i := 0; i < len(b) && i < binary.MaxVarintLen64; i++ {
			if b[i] < 0x80 {
				if i == binary.MaxVarintLen64-1 && b[i] > 1 {
					return nil, errCorrupt
				}
				return b[i+1:], nil
			}
		}
		return nil, errCorrupt
	case KindFloat4, KindFloat8:
		if len(b) < 8 {
			return nil, errCorrupt
		}
		return b[8:], nil
	case KindNumeric:
		return skipDecimal(b)
	case KindText, KindVarchar, KindBytea, KindUnknown, KindName, KindChar, KindJSON, KindInternalChar, KindJSONB:
		l, m := binary.Uvarint(b)
		if m <= 0 || uint64(len(b)-m) < l {
			return nil, errCorrupt
		}
		return b[m+int(l):], nil
	}
	_, rest, err := decodePayload(k, b, false)
	return rest, err
}
