package refresh

import (
	"testing"

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
