package types

import (
	"bytes"
	"math"
	"testing"

	"github.com/cockroachdb/apd/v3"
)

// TestSkipPayloadMatchesDecode: skipping a value leaves the bytes that
// decoding it leaves, for every kind's extremes, and fails where
// decoding fails on a value cut short.
func TestSkipPayloadMatchesDecode(t *testing.T) {
	big, _, _ := apd.NewFromString("-123456789012345678901234567890.12345")
	vals := []Datum{
		NewBool(true), NewBool(false),
		NewInt(KindInt2, math.MinInt16), NewInt4(math.MaxInt32), NewInt8(math.MinInt64), NewInt8(math.MaxInt64), NewInt8(0), NewInt8(-1),
		NewFloat8(math.Inf(-1)), NewFloat(KindFloat4, 1.5),
		NewNumeric(apd.New(12345, -2)), NewNumeric(apd.New(-1, 0)), NewNumeric(big), NewNumeric(&apd.Decimal{Form: apd.NaN}), NewNumeric(&apd.Decimal{Form: apd.Infinite, Negative: true}),
		NewText(""), NewText("a longer text of some bytes"), NewString(KindVarchar, "v"), NewString(KindChar, "c  "), NewBytea([]byte{0, 1, 255}),
		NewString(KindName, "name"), NewString(KindJSON, `{"a":1}`), NewString(KindJSONB, `[]`), NewString(KindInternalChar, "x"),
		NewDate(-700000), NewTimestamp(KindTimestampTZ, math.MaxInt64), NewInterval(-3, 40, 1<<40),
		NewArray(KindArray, []Datum{NewInt8(1), NullDatum, NewText("z")}),
		{K: KindOid, I: 4294967295},
	}
	tail := []byte{7, 8, 9}
	for _, d := range vals {
		p := appendPayload(nil, d)
		full := append(append([]byte(nil), p...), tail...)
		got, err := skipPayload(d.K, full)
		if err != nil || !bytes.Equal(got, tail) {
			t.Fatalf("%v: skip left %v (err %v), want %v", d, got, err, tail)
		}
		for n := range len(p) {
			_, wantRest, wantErr := decodePayload(d.K, p[:n], false)
			gotRest, gotErr := skipPayload(d.K, p[:n])
			if (gotErr != nil) != (wantErr != nil) || !bytes.Equal(gotRest, wantRest) {
				t.Fatalf("%v cut to %d bytes: skip %v err %v, decode %v err %v", d, n, gotRest, gotErr, wantRest, wantErr)
			}
		}
	}
	// An 11-byte or overflowing varint is corrupt for both.
	for _, b := range [][]byte{{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2}} {
		_, _, wantErr := decodePayload(KindInt8, b, false)
		if _, err := skipPayload(KindInt8, b); (err != nil) != (wantErr != nil) {
			t.Fatalf("%v: skip err %v, decode err %v", b, err, wantErr)
		}
	}
}
