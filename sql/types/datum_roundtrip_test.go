package types

import (
	"math"
	"testing"

	"github.com/cockroachdb/apd/v3"
)

func dec(s string) Datum {
	d, _, err := apd.NewFromString(s)
	if err != nil {
		panic(err)
	}
	return NewNumeric(d)
}

var sampleRow = []Datum{
	NewBool(true), NewInt(KindInt2, -32768), NewInt4(2147483647), NewInt8(math.MinInt64),
	NewFloat(KindFloat4, 1.5), NewFloat8(-0.1), dec("-12345678901234567890.123456789"), dec("0.00"),
	NewText("héllo"), NewString(KindVarchar, ""), NewBytea([]byte{0, 255}), NewDate(-1),
	NewTimestamp(KindTimestamp, 1_700_000_000_123_456), NewTimestamp(KindTimestampTZ, -5), NewInterval(-14, 3, 3_600_000_001), {},
}

// TestRowValueRoundTrip: every kind survives encode/decode, NULLs stay NULL,
// and a decoder asking for a subset (or unknown ids) reads just those.
func TestRowValueRoundTrip(t *testing.T) {
	ids := make([]uint32, len(sampleRow))
	for i := range ids {
		ids[i] = uint32(i*3 + 1)
	}
	enc := AppendRowValue(nil, ids, sampleRow)
	out := make([]Datum, len(ids))
	if err := NewRowDecoder(ids).Decode(enc, out); err != nil {
		t.Fatal(err)
	}
	for i := range sampleRow {
		if !Equal(sampleRow[i], out[i]) || sampleRow[i].K != out[i].K {
			t.Errorf("column %d: wrote %v (%d) read %v (%d)", i, sampleRow[i], sampleRow[i].K, out[i], out[i].K)
		}
	}
	// numeric keeps its scale
	if got := out[7].String(); got != "0.00" {
		t.Errorf("numeric scale lost: %s", got)
	}
	sub := []uint32{ids[8], 999}
	o2 := make([]Datum, 2)
	if err := NewRowDecoder(sub).Decode(enc, o2); err != nil {
		t.Fatal(err)
	}
	if o2[0].S != "héllo" || !o2[1].IsNull() {
		t.Errorf("subset decode: %v", o2)
	}
	if err := NewRowDecoder(ids).Decode(enc[:len(enc)-1], out); err == nil {
		t.Errorf("truncated value decoded without error")
	}
}

// TestTextAndBinaryRoundTrip: text output parses back to the same value;
// binary output decodes back to the same value.
func TestTextAndBinaryRoundTrip(t *testing.T) {
	for _, d := range sampleRow {
		if d.IsNull() {
			continue
		}
		typ := T{Kind: d.K}
		txt := string(AppendText(nil, d, DefaultEnv))
		back, err := ParseText(txt, typ, DefaultEnv)
		if err != nil || !Equal(back, d) {
			t.Errorf("%s text %q -> %v, %v", typ, txt, back, err)
		}
		bin, err := AppendBinary(nil, d, typ)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		back, err = ParseBinary(bin, typ)
		if err != nil || !Equal(back, d) {
			t.Errorf("%s binary -> %v, %v", typ, back, err)
		}
	}
}

func TestTextOutput(t *testing.T) {
	for _, c := range []struct {
		d    Datum
		want string
	}{
		{NewFloat8(1e15), "1e+15"},
		{NewFloat8(123456789012345), "123456789012345"},
		{NewFloat8(0.0001), "0.0001"},
		{NewFloat8(0.00001), "1e-05"},
		{NewFloat(KindFloat4, 1000000), "1e+06"},
		{NewFloat8(math.Inf(-1)), "-Infinity"},
		{NewInterval(14, 3, 3_723_000_000), "1 year 2 mons 3 days 01:02:03"},
		{NewInterval(0, -1, 0), "-1 days"},
		{NewInterval(0, 0, 0), "00:00:00"},
		{NewDate(0), "1970-01-01"},
		{NewTimestamp(KindTimestamp, 1_500_000), "1970-01-01 00:00:01.5"},
		{NewBytea([]byte("ab")), `\x6162`},
		{dec("1.50"), "1.50"},
	} {
		if got := c.d.String(); got != c.want {
			t.Errorf("%v: got %q want %q", c.d.K, got, c.want)
		}
	}
}

func TestIntegerOverflow(t *testing.T) {
	if _, err := IntAdd(KindInt4, math.MaxInt32, 1); err == nil {
		t.Error("int4 overflow not detected")
	}
	if _, err := IntMul(KindInt8, math.MaxInt64/2+1, 2); err == nil {
		t.Error("int8 multiply overflow not detected")
	}
	if _, err := IntDiv(KindInt8, math.MinInt64, -1); err == nil {
		t.Error("int8 min / -1 not detected")
	}
	if _, err := IntDiv(KindInt4, 1, 0); err == nil {
		t.Error("division by zero not detected")
	}
	if v, err := IntMul(KindInt8, -3, 4); err != nil || v != -12 {
		t.Errorf("-3*4 = %d, %v", v, err)
	}
}

func BenchmarkRowEncode(b *testing.B) {
	ids := make([]uint32, len(sampleRow))
	for i := range ids {
		ids[i] = uint32(i + 1)
	}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendRowValue(buf[:0], ids, sampleRow)
	}
}

func BenchmarkRowDecode(b *testing.B) {
	ids := make([]uint32, len(sampleRow))
	for i := range ids {
		ids[i] = uint32(i + 1)
	}
	enc := AppendRowValue(nil, ids, sampleRow)
	dec := NewRowDecoder(ids)
	out := make([]Datum, len(ids))
	b.ReportAllocs()
	for b.Loop() {
		if err := dec.Decode(enc, out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRowDecodeNarrow decodes 2 of 16 columns, as a scan that needs few
// columns does.
func BenchmarkRowDecodeNarrow(b *testing.B) {
	ids := make([]uint32, len(sampleRow))
	for i := range ids {
		ids[i] = uint32(i + 1)
	}
	enc := AppendRowValue(nil, ids, sampleRow)
	dec := NewRowDecoder([]uint32{3, 4})
	out := make([]Datum, 2)
	b.ReportAllocs()
	for b.Loop() {
		if err := dec.Decode(enc, out); err != nil {
			b.Fatal(err)
		}
	}
}
