package exec

import (
	"bytes"
	"testing"

	"github.com/mvserver/mvserver/sql/types"
)

// TestArrayKeyOrder: array keys order as array_cmp does (a proper prefix
// first, NULL elements after every value), NULL arrays first.
func TestArrayKeyOrder(t *testing.T) {
	a := func(xs ...any) types.Datum {
		var es []types.Datum
		for _, x := range xs {
			if x == nil {
				es = append(es, types.NullDatum)
			} else {
				es = append(es, types.NewInt4(int64(x.(int))))
			}
		}
		return types.NewArrayOf(es...)
	}
	ordered := []types.Datum{types.NullDatum, a(), a(-5), a(1), a(1, 2), a(1, 2, nil), a(1, 3), a(1, nil), a(2), a(nil)}
	var prev []byte
	for i, d := range ordered {
		k, err := appendKeyDatum(nil, d)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && bytes.Compare(prev, k) >= 0 {
			t.Errorf("key of %v does not sort after the one of %v", d, ordered[i-1])
		}
		if i > 0 && types.CompareNullsLast(ordered[i-1], d) >= 0 && !ordered[i-1].IsNull() {
			t.Errorf("test order wrong at %v", d)
		}
		prev = k
	}
}
