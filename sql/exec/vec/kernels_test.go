package vec

import (
	"testing"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

func ints(t Type, scale int32, vals ...int64) *Vec {
	v := New(t, len(vals))
	v.Scale = scale
	copy(v.I, vals)
	return v
}

// TestLogicThreeValued: AND and OR fold true, false and NULL as SQL does
// and evaluate later arguments only on undecided rows.
func TestLogicThreeValued(t *testing.T) {
	// Rows: every pair of (true, false, NULL).
	vals := []int64{1, 0, -1}
	var a, b []int64
	for _, x := range vals {
		for _, y := range vals {
			a, b = append(a, x), append(b, y)
		}
	}
	mk := func(xs []int64) *Vec {
		v := New(Bool, len(xs))
		for i, x := range xs {
			if x < 0 {
				v.SetNull(int32(i))
			} else {
				v.I[i] = x
			}
		}
		return v
	}
	va, vb := mk(a), mk(b)
	sel := All(nil, len(a))
	for _, and := range []bool{true, false} {
		l := Logic{And: and}
		acc := &Vec{}
		l.Start(acc, sel, len(a))
		l.Fold(acc, va, sel)
		und := l.Undecided(acc, sel, nil)
		l.Fold(acc, vb, und)
		for i := range a {
			want := int64(-1)
			x, y := a[i], b[i]
			switch {
			case and && (x == 0 || y == 0), !and && x == 1 || !and && y == 1:
				want = map[bool]int64{true: 0, false: 1}[and]
			case x >= 0 && y >= 0:
				want = map[bool]int64{true: 1, false: 0}[and]
			}
			got := acc.I[i]
			if acc.IsNull(int32(i)) {
				got = -1
			}
			if got != want {
				t.Errorf("and=%v %d, %d: got %d want %d", and, x, y, got, want)
			}
		}
		// The second argument ran only where the first left the result open.
		for _, i := range und {
			if and && a[i] == 0 || !and && a[i] == 1 {
				t.Errorf("and=%v: row %d evaluated after a deciding %d", and, i, a[i])
			}
		}
	}
}

// TestDecimalKernels: scales align for comparison and addition, multiply
// adds them, and a result past an int64 is ErrOverflow.
func TestDecimalKernels(t *testing.T) {
	sel := All(nil, 3)
	a := ints(Decimal, 2, 150, -1, 99) // 1.50, -0.01, 0.99
	b := ints(Decimal, 1, 15, 0, 10)   // 1.5, 0.0, 1.0
	out := &Vec{}
	if err := Compare(Eq, a, b, sel, 3, out); err != nil || out.I[0] != 1 || out.I[1] != 0 || out.I[2] != 0 {
		t.Fatalf("1.50 = 1.5: %v %v", out.I, err)
	}
	if err := Compare(Lt, b, a, sel, 3, out); err != nil || out.I[0] != 0 || out.I[1] != 0 || out.I[2] != 0 {
		t.Fatalf("b < a: %v %v", out.I, err)
	}
	if err := ArithDecimal(Sub, a, b, sel, 3, out); err != nil || out.Scale != 2 || out.I[0] != 0 || out.I[1] != -1 || out.I[2] != -1 {
		t.Fatalf("a - b: %v scale %d %v", out.I, out.Scale, err)
	}
	if err := ArithDecimal(Mul, a, b, sel, 3, out); err != nil || out.Scale != 3 || out.I[0] != 2250 || out.I[2] != 990 {
		t.Fatalf("a * b: %v scale %d %v", out.I, out.Scale, err)
	}
	big := ints(Decimal, 0, 1<<62, 0, 0)
	if err := ArithDecimal(Add, big, big, sel, 3, out); err != ErrOverflow {
		t.Fatalf("2^62 + 2^62: %v", err)
	}
	if err := ArithDecimal(Mul, big, One(Decimal, 0, 4, nil, false), sel, 3, out); err != ErrOverflow {
		t.Fatalf("2^62 * 4: %v", err)
	}
}

// TestIntKernelsErrors: integer overflow and division by zero are the
// row path's errors; NULL operands are NULL.
func TestIntKernelsErrors(t *testing.T) {
	sel := All(nil, 2)
	a := ints(Int, 0, 1<<31-1, 5)
	one := One(Int, 0, 1, nil, false)
	out := &Vec{}
	if err := ArithInt(Add, types.KindInt4, a, one, sel, 2, out); pgerror.Code(err) != pgerror.NumericValueOutOfRange {
		t.Fatalf("int4 max + 1: %v", err)
	}
	if err := ArithInt(Mod, types.KindInt4, a, One(Int, 0, 0, nil, false), sel, 2, out); pgerror.Code(err) != pgerror.DivisionByZero {
		t.Fatalf("%% 0: %v", err)
	}
	a.SetNull(0)
	if err := ArithInt(Add, types.KindInt4, a, one, sel, 2, out); err != nil || !out.IsNull(0) || out.I[1] != 6 {
		t.Fatalf("NULL + 1, 5 + 1: %v %v", out.I, err)
	}
	IsNull(a, false, sel, 2, out)
	if out.I[0] != 1 || out.I[1] != 0 {
		t.Fatalf("IS NULL: %v", out.I)
	}
}
