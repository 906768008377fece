package funcs

import (
	"math/rand"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/mvserver/mvserver/sql/types"
)

// TestSumNumericIntegerPath: a numeric SUM that adds values of one
// exponent as integers (sumNumeric.small) gives the digits and scale of
// decimal additions one by one, through adds, retractions, exponent
// changes, negative zero, huge coefficients, NaN, State/SetState.
func TestSumNumericIntegerPath(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	vals := []string{"1.25", "-3.50", "0.00", "-0.00", "7", "1e3", "0.001", "12345678901234567890.12", "-99999999999999.99", "4503599627370497", "NaN"}
	for trial := 0; trial < 2000; trial++ {
		var s sumNumeric
		var ref apd.Decimal
		refNaN := false
		for op := 0; op < 1+rng.Intn(40); op++ {
			var v string
			if rng.Intn(3) > 0 {
				v = vals[rng.Intn(3)] // mostly one exponent
			} else {
				v = vals[rng.Intn(len(vals))]
			}
			d, _, err := apd.NewFromString(v)
			if err != nil {
				t.Fatal(err)
			}
			if v == "NaN" {
				if trial%7 != 0 {
					continue
				}
				refNaN = true
			}
			arg := []types.Datum{types.NewNumeric(d)}
			switch rng.Intn(4) {
			case 0:
				if _, err := s.Retract(nil, arg); err != nil {
					t.Fatal(err)
				}
				_, _ = types.DecimalCtx.Sub(&ref, &ref, d)
			case 1:
				st := s.State()
				var s2 sumNumeric
				if err := s2.SetState(st); err != nil {
					t.Fatal(err)
				}
				s = s2
				fallthrough
			default:
				if err := s.Add(nil, arg); err != nil {
					t.Fatal(err)
				}
				_, _ = types.DecimalCtx.Add(&ref, &ref, d)
			}
		}
		st := s.State()
		got := st[1].D
		if refNaN != (got.Form == apd.NaN) || !refNaN && (got.String() != ref.String() || got.Exponent != ref.Exponent || got.Negative != ref.Negative) {
			t.Fatalf("trial %d: sum %s (exponent %d), one by one %s (exponent %d)", trial, got, got.Exponent, &ref, ref.Exponent)
		}
	}
}
