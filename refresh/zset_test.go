package refresh

import (
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/types"
)

func rowsOf(vals ...int64) rowSource {
	return func(emit func(exec.Row) error) error {
		for _, v := range vals {
			if err := emit(exec.Row{types.NewInt8(v)}); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestConsolidate(t *testing.T) {
	key := func(dst []byte, r exec.Row, _ int64) ([]byte, bool, error) {
		if r[0].I == 99 {
			return dst, false, nil // dropped by the keyer
		}
		return types.HashKey(dst, r[0]), true, nil
	}
	// An update of 2 to 3 (−2 +3), a row gained and lost again (5), two
	// copies of 1 gained, a dropped row.
	z, err := consolidate([]zTerm{{rowsOf(2, 5), -1}, {rowsOf(1, 3, 5, 1, 99), 1}, {nil, 1}}, key, true)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]int64{2: -1, 5: 0, 1: 2, 3: 1}
	if z.Len() != len(want) {
		t.Fatalf("%d keys, want %d", z.Len(), len(want))
	}
	order := []int64{2, 5, 1, 3}
	for i, e := range z.Entries() {
		if e.Row[0].I != order[i] {
			t.Errorf("entry %d is row %d, want %d (first-seen order)", i, e.Row[0].I, order[i])
		}
		if e.Weight != want[e.Row[0].I] {
			t.Errorf("row %d has weight %d, want %d", e.Row[0].I, e.Weight, want[e.Row[0].I])
		}
		if z.Weight(e.Key) != e.Weight {
			t.Errorf("Weight(%q) = %d, want %d", e.Key, z.Weight(e.Key), e.Weight)
		}
	}
	if z.Weight("absent") != 0 {
		t.Error("an absent key has a weight")
	}
}

func TestCancelRowsTakesOutPairs(t *testing.T) {
	d := func(s string) types.Datum { return types.NewText(s) }
	plus := [][]types.Datum{{d("a")}, {d("b")}, {d("b")}, {d("c")}}
	minus := [][]types.Datum{{d("b")}, {d("x")}, {d("a")}, {d("a")}}
	p, m := cancelRows(plus, minus)
	// a: 1 gained, 2 lost → 1 lost; b: 2 gained, 1 lost → 1 gained.
	if len(p) != 2 || p[0][0].S != "b" || p[1][0].S != "c" {
		t.Fatalf("plus = %v", p)
	}
	if len(m) != 2 || m[0][0].S != "x" || m[1][0].S != "a" {
		t.Fatalf("minus = %v", m)
	}
	// A decimal's scale tells images apart.
	n1 := apd.New(15, -1)
	n2 := apd.New(150, -2)
	p, m = cancelRows([][]types.Datum{{types.NewNumeric(n1)}}, [][]types.Datum{{types.NewNumeric(n2)}})
	if len(p) != 1 || len(m) != 1 {
		t.Fatalf("1.5 and 1.50 cancelled: %v %v", p, m)
	}
}
