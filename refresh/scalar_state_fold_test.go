package refresh

import (
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/sql/types"
)

func dec(t *testing.T, s string) types.Datum {
	d, _, err := apd.NewFromString(s)
	if err != nil {
		t.Fatal(err)
	}
	return types.NewNumeric(d)
}

// TestExtremeFold: the stored MIN/MAX state follows its input's change as a
// fresh evaluation would, and says when it cannot.
func TestExtremeFold(t *testing.T) {
	ints := func(vs ...int64) []types.Datum {
		out := make([]types.Datum, len(vs))
		for i, v := range vs {
			out[i] = types.NewInt8(v)
		}
		return out
	}
	for _, c := range []struct {
		name         string
		max          bool
		start        []types.Datum
		lost, gained []types.Datum
		known, bad   bool
		want         string // the value, when known
		count        int64
	}{
		{"a row under the max", true, ints(1, 5, 5), nil, ints(3), true, false, "5", 2},
		{"one of a tie leaves", true, ints(1, 5, 5), ints(5), nil, true, false, "5", 1},
		{"the last row at the max leaves", true, ints(1, 5), ints(5), ints(2), false, false, "", 0},
		{"it leaves and one comes back", true, ints(1, 5), ints(5), ints(5), true, false, "5", 1},
		{"a new max", true, ints(1, 5), ints(5), ints(7, 7, 6), true, false, "7", 2},
		{"a lost row past the max", true, ints(1, 5), ints(9), nil, false, true, "", 0},
		{"min", false, ints(4, 2, 2), ints(2), ints(3, 1), true, false, "1", 1},
		{"NULLs are no values", true, []types.Datum{types.NullDatum, types.NewInt8(2)}, []types.Datum{types.NullDatum}, []types.Datum{types.NullDatum}, true, false, "2", 1},
		{"from empty", true, nil, nil, ints(3), true, false, "3", 1},
		{"emptied", true, ints(3), ints(3), nil, false, false, "", 0},
		{"the digits max returns", true, []types.Datum{dec(t, "1.5")}, nil, []types.Datum{dec(t, "1.50")}, true, false, "1.50", 2},
		{"a decimal at the max leaves", true, []types.Datum{dec(t, "1.50"), dec(t, "1.5")}, []types.Datum{dec(t, "1.5")}, nil, false, false, "", 0},
	} {
		e := &extreme{max: c.max, val: types.NullDatum}
		for _, v := range c.start {
			e.add(v)
		}
		// The state survives the checkpoint's encoding.
		st := e.state(1)
		e, err := decodeExtreme(st, c.max)
		if err != nil {
			t.Fatal(err)
		}
		known, bad := e.fold(c.lost, c.gained)
		if known != c.known || bad != c.bad {
			t.Errorf("%s: known %v bad %v, want %v %v", c.name, known, bad, c.known, c.bad)
			continue
		}
		if known && (e.val.String() != c.want || e.count != c.count) {
			t.Errorf("%s: %s×%d, want %s×%d", c.name, e.val.String(), e.count, c.want, c.count)
		}
	}
}
