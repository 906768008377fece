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

// TestNumericBinarySmallMatchesBig: random binary numerics of up to 4
// base-10000 digits (weights either side of the point, display scales
// above and below the digits', both signs, zero) decode to the same value
// and scale on the int64 path as on the big.Int one, whenever the int64
// path takes them.
func TestNumericBinarySmallMatchesBig(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 11))
	taken := 0
	for range 20000 {
		n := rng.IntN(5)
		digits := make([]byte, 2*n)
		for i := range n {
			g := rng.IntN(10000)
			if rng.IntN(4) == 0 {
				g = []int{0, 9999, 1, 5000}[rng.IntN(4)]
			}
			binary.BigEndian.PutUint16(digits[2*i:], uint16(g))
		}
		weight, dscale := rng.IntN(9)-4, rng.IntN(14)
		sign := []uint16{0, 0x4000}[rng.IntN(2)]
		small, ok := parseNumericBinarySmall(digits, n, weight, sign, dscale)
		if !ok {
			continue
		}
		taken++
		big, bok := parseNumericBinaryBig(digits, n, weight, sign, dscale)
		if !bok || small.Cmp(big) != 0 || small.Exponent != big.Exponent || small.Negative != big.Negative {
			t.Fatalf("seed %d: digits % x weight %d sign %x dscale %d: int64 path %v (exp %d), big.Int path %v (exp %d, ok %v)",
				seed, digits, weight, sign, dscale, small, small.Exponent, big, big.Exponent, bok)
		}
	}
	if taken < 5000 {
		t.Fatalf("seed %d: the int64 path took %d of 20000 values", seed, taken)
	}
	// A DECIMAL(15,2) as a client sends it: its last base-10000 digit
	// pads the scale (12345.67 is 1 2345 6700, display scale 2).
	for _, v := range []string{"12345.67", "-0.05", "0.00", "999999999999.99", "7"} {
		d, _, _ := apd.NewFromString(v)
		b := appendNumericBinary(nil, d)
		n, weight := int(binary.BigEndian.Uint16(b)), int(int16(binary.BigEndian.Uint16(b[2:])))
		got, ok := parseNumericBinarySmall(b[8:], n, weight, binary.BigEndian.Uint16(b[4:]), int(binary.BigEndian.Uint16(b[6:])))
		if !ok || got.Cmp(d) != 0 || got.Exponent != d.Exponent {
			t.Errorf("%s: the int64 path gives %v (ok %v)", v, got, ok)
		}
	}
}
