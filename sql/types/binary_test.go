package types

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/apd/v3"
)

// numericWire builds PostgreSQL's binary numeric: ndigits, weight, sign,
// dscale, then the base-10000 digits.
func numericWire(weight int16, sign, dscale uint16, digits ...uint16) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(len(digits)))
	b = binary.BigEndian.AppendUint16(b, uint16(weight))
	b = binary.BigEndian.AppendUint16(b, sign)
	b = binary.BigEndian.AppendUint16(b, dscale)
	for _, d := range digits {
		b = binary.BigEndian.AppendUint16(b, d)
	}
	return b
}

// The binary numeric a client receives, byte for byte, as PostgreSQL
// sends it: digit groups aligned on the decimal point, no leading or
// trailing zero group, the scale kept.
func TestNumericBinaryWire(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []byte
	}{
		{"0", numericWire(0, 0, 0)},
		{"0.00", numericWire(0, 0, 2)},
		{"1", numericWire(0, 0, 0, 1)},
		{"1.50", numericWire(0, 0, 2, 1, 5000)},
		{"-12345.678", numericWire(1, 0x4000, 3, 1, 2345, 6780)},
		{"0.0001", numericWire(-1, 0, 4, 1)},
		{"0.000012345", numericWire(-2, 0, 9, 1234, 5000)},
		{"10000", numericWire(1, 0, 0, 1)},
		{"1E+10", numericWire(2, 0, 0, 100)},
		{"9999.9999", numericWire(0, 0, 4, 9999, 9999)},
		{"-0.5", numericWire(-1, 0x4000, 1, 5000)},
		{"123456789012345678901234567890.5", numericWire(7, 0, 1, 12, 3456, 7890, 1234, 5678, 9012, 3456, 7890, 5000)},
		{"NaN", []byte{0, 0, 0, 0, 0xC0, 0, 0, 0}},
		{"Infinity", []byte{0, 0, 0, 0, 0xD0, 0, 0, 0}},
		{"-Infinity", []byte{0, 0, 0, 0, 0xF0, 0, 0, 0}},
	} {
		d, _, err := apd.NewFromString(c.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendNumericBinary(nil, d); !slices.Equal(got, c.want) {
			t.Errorf("%s: got % x, want % x", c.in, got, c.want)
		}
	}
}

// Seeded random numerics (coefficients of 1 to 60 digits, exponents
// either side of the point, both signs) come back from their binary form
// with their value and scale.
func TestNumericBinaryRoundTrip(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 9))
	for range 5000 {
		digits := make([]byte, 1+rng.IntN(60))
		for i := range digits {
			digits[i] = byte('0' + rng.IntN(10))
		}
		s := fmt.Sprintf("%s%sE%d", []string{"", "-"}[rng.IntN(2)], digits, rng.IntN(80)-60)
		d, _, err := apd.NewFromString(s)
		if err != nil {
			t.Fatal(err)
		}
		if d.Exponent > 0 { // a numeric's scale is never negative: as stored
			if _, err := apd.BaseContext.WithPrecision(200).Quantize(d, d, 0); err != nil {
				t.Fatal(err)
			}
		}
		bin := appendNumericBinary(nil, d)
		back, ok := parseNumericBinary(bin)
		if !ok || back.Cmp(d) != 0 || back.Exponent != d.Exponent {
			t.Fatalf("seed %d: %s (%s) → % x → %v (exponent %d, ok %v)", seed, s, d, bin, back, back.Exponent, ok)
		}
	}
}

func BenchmarkNumericBinary(b *testing.B) {
	d, _, _ := apd.NewFromString("-12345.678")
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = appendNumericBinary(buf[:0], d)
	}
}
