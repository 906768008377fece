package stats

import (
	"math"
	"math/rand"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/types"
)

var intCol = catalog.Column{ID: 1, Name: "c", Type: types.T{Kind: types.KindInt4}}

// TestReservoir: the sample has the reservoir's size and is spread over
// the whole stream (Algorithm L's skips keep it uniform).
func TestReservoir(t *testing.T) {
	const n, size = 200000, 1000
	r := newReservoir(size, rand.New(rand.NewSource(1)))
	slots := make([]int64, 0, size)
	for pos := int64(0); pos < n; pos++ {
		slot, take := r.offer()
		if !take {
			continue
		}
		if slot == len(slots) {
			slots = append(slots, pos)
		} else {
			slots[slot] = pos
		}
	}
	if len(slots) != size {
		t.Fatalf("sample of %d, want %d", len(slots), size)
	}
	var sum float64
	late := 0
	for _, p := range slots {
		sum += float64(p)
		if p >= n/2 {
			late++
		}
	}
	// Uniform: mean n/2 (standard error n/sqrt(12*size) ≈ 1826).
	if mean := sum / size; math.Abs(mean-n/2) > 4*1826 {
		t.Fatalf("mean position %.0f, want about %d", mean, n/2)
	}
	if late < 400 || late > 600 {
		t.Fatalf("%d of %d sampled from the second half", late, size)
	}
}

func ints(vals ...int) []types.Datum {
	out := make([]types.Datum, len(vals))
	for i, v := range vals {
		out[i] = types.NewInt4(int64(v))
	}
	return out
}

// TestNDistinct: PostgreSQL's rules for the distinct count of a sample.
func TestNDistinct(t *testing.T) {
	// All unique in the sample: unique in the table, -1.
	var u []int
	for i := 0; i < 30000; i++ {
		u = append(u, i*7)
	}
	if cs := computeColumn(intCol, ints(u...), 1e6, DefaultTarget); cs.NDistinct != -1 || len(cs.MCV) != 0 || len(cs.Histogram) != 101 {
		t.Fatalf("unique: n_distinct %v, %d MCVs, %d bounds", cs.NDistinct, len(cs.MCV), len(cs.Histogram))
	}
	// Every value seen more than once: all seen, 50 values, all MCVs.
	var rep []int
	for i := 0; i < 30000; i++ {
		rep = append(rep, i%50)
	}
	cs := computeColumn(intCol, ints(rep...), 1e6, DefaultTarget)
	if cs.NDistinct != 50 || len(cs.MCV) != 50 || cs.MCF[0] != 1.0/50 || cs.Histogram != nil {
		t.Fatalf("repeated: n_distinct %v, %d MCVs (%v), %d bounds", cs.NDistinct, len(cs.MCV), cs.MCF[:1], len(cs.Histogram))
	}
	// Haas-Stokes: n = 30000 sampled of N = 1e6; 10000 values twice
	// (nmultiple) and 10000 once (f1): d = 20000, and
	// n*d / (n - f1 + f1*n/N) = 6e8 / 20300 = 29557 (> 10% of N? no:
	// kept as a count).
	var hs []int
	for i := 0; i < 10000; i++ {
		hs = append(hs, i, i)
	}
	for i := 0; i < 10000; i++ {
		hs = append(hs, 100000+i)
	}
	cs = computeColumn(intCol, ints(hs...), 1e6, DefaultTarget)
	want := math.Floor(30000.0*20000/(30000-10000+10000*30000/1e6) + 0.5)
	if cs.NDistinct != want {
		t.Fatalf("Haas-Stokes: n_distinct %v, want %v", cs.NDistinct, want)
	}
	// No value twice as common as the rest: no MCV list.
	if len(cs.MCV) != 0 {
		t.Fatalf("Haas-Stokes: %d MCVs, want none", len(cs.MCV))
	}
}

// TestMCVSignificance: of a sample from a large table, only values
// significantly more common than the rest are kept as MCVs.
func TestMCVSignificance(t *testing.T) {
	var v []int
	for i := 0; i < 3000; i++ {
		v = append(v, 7) // 10%
	}
	for i := 0; i < 27000; i++ {
		v = append(v, 1000+i%9000) // 9000 values, 3 times each
	}
	cs := computeColumn(intCol, ints(v...), 1e7, DefaultTarget)
	if len(cs.MCV) != 1 || cs.MCV[0].I != 7 || cs.MCF[0] != 0.1 {
		t.Fatalf("MCVs %v %v, want {7} {0.1}", cs.MCV, cs.MCF)
	}
	if len(cs.Histogram) != 101 || cs.Histogram[0].I != 1000 || cs.Histogram[100].I != 9999 {
		t.Fatalf("histogram of %d bounds from %v to %v", len(cs.Histogram), cs.Histogram[0], cs.Histogram[len(cs.Histogram)-1])
	}
}

// TestCorrelation: values in key order correlate 1, reversed -1.
func TestCorrelation(t *testing.T) {
	var up, down []int
	for i := 0; i < 100; i++ {
		up = append(up, i)
		down = append(down, 100-i)
	}
	if cs := computeColumn(intCol, ints(up...), 100, DefaultTarget); math.Abs(cs.Correlation-1) > 1e-9 {
		t.Fatalf("ascending: correlation %v", cs.Correlation)
	}
	if cs := computeColumn(intCol, ints(down...), 100, DefaultTarget); math.Abs(cs.Correlation+1) > 1e-9 {
		t.Fatalf("descending: correlation %v", cs.Correlation)
	}
}

// TestNumericWidth: PostgreSQL's numeric storage, base-10000 digits.
func TestNumericWidth(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int
	}{{"0", 3}, {"1.5", 7}, {"3.0", 5}, {"12345.6789", 9}, {"10000", 5}, {"0.0001", 5}, {"-42", 5}} {
		d, _, err := apd.NewFromString(c.s)
		if err != nil {
			t.Fatal(err)
		}
		if got := numericWidth(types.NewNumeric(d)); got != c.want {
			t.Errorf("numericWidth(%s) = %d, want %d", c.s, got, c.want)
		}
	}
}
