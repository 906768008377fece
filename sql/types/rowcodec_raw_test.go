package types

import (
	"math/rand"
	"testing"

	"github.com/cockroachdb/apd/v3"
)

// TestDecodeRawMatchesDecode: every column DecodeRaw gives is the value
// Decode gives, for random rows of every scalar kind (and NULLs).
func TestDecodeRawMatchesDecode(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	ids := []uint32{1, 2, 3, 4, 5, 6, 7}
	for n := 0; n < 2000; n++ {
		var vals []Datum
		var dec apd.Decimal
		dec.SetFinite(rng.Int63()>>uint(rng.Intn(63)), -int32(rng.Intn(6)))
		if rng.Intn(2) == 0 {
			dec.Negative = true
		}
		if rng.Intn(10) == 0 {
			dec.Coeff.SetString("123456789012345678901234567890", 10)
		}
		vals = append(vals, NewInt4(rng.Int63n(1<<31)-1<<30), NewInt8(rng.Int63()-rng.Int63()), NewFloat8(rng.NormFloat64()),
			NewNumeric(&dec), NewText(string(rune('a'+rng.Intn(26)))), NewBool(rng.Intn(2) == 0), Datum{K: KindDate, I: rng.Int63n(100000)})
		for i := range vals {
			if rng.Intn(8) == 0 {
				vals[i] = NullDatum
			}
		}
		buf := AppendRowValue(nil, ids, vals)
		// Read columns 2, 4, 5 and 7 only.
		want := []uint32{2, 4, 5, 7}
		rd := NewRowDecoder(want)
		full := make([]Datum, len(want))
		if err := rd.Decode(buf, full); err != nil {
			t.Fatal(err)
		}
		raw := make([]RawValue, len(want))
		if err := rd.DecodeRaw(buf, raw); err != nil {
			t.Fatal(err)
		}
		for i, d := range full {
			r := raw[i]
			if d.IsNull() != (r.K == KindNull) || (!d.IsNull() && d.K != r.K) {
				t.Fatalf("row %d col %d: kind %v vs %v", n, i, d.K, r.K)
			}
			switch d.K {
			case KindInt8, KindBool, KindDate:
				if d.I != r.I {
					t.Fatalf("row %d col %d: %d vs %d", n, i, d.I, r.I)
				}
			case KindNumeric:
				var got apd.Decimal
				if r.Small {
					got.SetFinite(r.I, r.Exp)
				} else {
					x, err := DecodeNumeric(r.B)
					if err != nil {
						t.Fatal(err)
					}
					got.Set(x.D)
				}
				if got.Cmp(d.D) != 0 || got.Exponent != d.D.Exponent {
					t.Fatalf("row %d: numeric %s vs %s", n, got.String(), d.D.String())
				}
				if r.Small != d.D.Coeff.IsInt64() {
					t.Fatalf("row %d: small %v for %s", n, r.Small, d.D.String())
				}
			case KindText:
				if string(r.B) != d.S {
					t.Fatalf("row %d: %q vs %q", n, r.B, d.S)
				}
			}
		}
	}
}
