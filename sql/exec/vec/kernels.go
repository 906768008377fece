package vec

import (
	"bytes"
	"math"
	"math/bits"

	"github.com/mvserver/mvserver/sql/types"
)

// CmpOp is a comparison.
type CmpOp uint8

// The comparisons.
const (
	Eq CmpOp = iota
	Ne
	Lt
	Le
	Gt
	Ge
)

func (op CmpOp) test(c int) bool {
	switch op {
	case Eq:
		return c == 0
	case Ne:
		return c != 0
	case Lt:
		return c < 0
	case Le:
		return c <= 0
	case Gt:
		return c > 0
	}
	return c >= 0
}

// At returns the index of row i in v: 0 for a one-row (constant)
// vector, i otherwise.
func At(v *Vec, i int32) int32 { return at(v, i) }

// at returns the index of row i in v: 0 for a one-row (constant) vector.
func at(v *Vec, i int32) int32 {
	if v.T == Bytes {
		if len(v.Off) == 2 {
			return 0
		}
		return i
	}
	if len(v.I) == 1 {
		return 0
	}
	return i
}

// One returns a one-row vector: a constant operand (kernels read row 0
// for every row of their selection).
func One(t Type, scale int32, i int64, b []byte, null bool) *Vec {
	v := &Vec{T: t, Scale: scale}
	if t == Bytes {
		v.Off = []int32{0, int32(len(b))}
		v.Data = append([]byte(nil), b...)
	} else {
		v.I = []int64{i}
	}
	if null {
		v.Nulls = Bitmap{1}
	}
	return v
}

// prepare sizes out for rows up to the largest of sel as type t.
func prepare(out *Vec, t Type, sel []int32, n int) {
	out.T = t
	out.Reset(n)
}

// nullIn sets out's NULLs over sel from a's and b's; it reports whether
// any row of sel is NULL.
func nullIn(out, a, b *Vec, sel []int32) bool {
	if len(a.Nulls) == 0 && (b == nil || len(b.Nulls) == 0) {
		return false
	}
	any := false
	for _, i := range sel {
		if a.Nulls.Get(at(a, i)) || (b != nil && b.Nulls.Get(at(b, i))) {
			out.SetNull(i)
			any = true
		}
	}
	return any
}

// Compare computes a op b over sel into out (Bool). Int and Decimal
// operands compare as numbers (decimals at their larger scale), Bytes
// byte-wise (only = and <> for text: other orders follow a collation).
func Compare(op CmpOp, a, b *Vec, sel []int32, n int, out *Vec) error {
	prepare(out, Bool, sel, n)
	hasNull := nullIn(out, a, b, sel)
	switch {
	case a.T == Bytes:
		for _, i := range sel {
			if hasNull && out.Nulls.Get(i) {
				continue
			}
			if op.test(bytes.Compare(a.Value(at(a, i)), b.Value(at(b, i)))) {
				out.I[i] = 1
			}
		}
		return nil
	case a.T == Decimal && a.Scale != b.Scale:
		as, bs := a, b
		if a.Scale < b.Scale {
			as, bs = b, a
			op = flip(op)
		}
		m := pow10(as.Scale - bs.Scale)
		for _, i := range sel {
			if hasNull && out.Nulls.Get(i) {
				continue
			}
			y, ok := mul64(bs.I[at(bs, i)], m)
			if !ok {
				return ErrOverflow
			}
			if op.test(cmp64(as.I[at(as, i)], y)) {
				out.I[i] = 1
			}
		}
		return nil
	}
	ac, bc := len(a.I) == 1, len(b.I) == 1
	if !ac && bc && !hasNull {
		y := b.I[0]
		for _, i := range sel {
			if op.test(cmp64(a.I[i], y)) {
				out.I[i] = 1
			}
		}
		return nil
	}
	for _, i := range sel {
		if hasNull && out.Nulls.Get(i) {
			continue
		}
		if op.test(cmp64(a.I[at(a, i)], b.I[at(b, i)])) {
			out.I[i] = 1
		}
	}
	return nil
}

func flip(op CmpOp) CmpOp {
	switch op {
	case Lt:
		return Gt
	case Le:
		return Ge
	case Gt:
		return Lt
	case Ge:
		return Le
	}
	return op
}

func cmp64(a, b int64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

var pow10tab = func() (t [19]int64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return
}()

// pow10 returns 10^n for 0 ≤ n ≤ 18, and 0 (never fits) past it.
func pow10(n int32) int64 {
	if n < 0 || n >= int32(len(pow10tab)) {
		return 0
	}
	return pow10tab[n]
}

// Pow10 returns 10^n for 0 ≤ n ≤ 18 (ok false past it).
func Pow10(n int32) (int64, bool) {
	p := pow10(n)
	return p, p != 0
}

// mul64 multiplies, reporting whether the product fits an int64.
func mul64(a, b int64) (int64, bool) {
	if b == 0 {
		return 0, true
	}
	neg := (a < 0) != (b < 0)
	hi, lo := bits.Mul64(uint64(abs(a)), uint64(abs(b)))
	if hi != 0 || lo > math.MaxInt64 || a == math.MinInt64 || b == math.MinInt64 {
		return 0, false
	}
	if neg {
		return -int64(lo), true
	}
	return int64(lo), true
}

func abs(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

// ArithOp is an arithmetic operator.
type ArithOp uint8

// The arithmetic operators.
const (
	Add ArithOp = iota
	Sub
	Mul
	Mod
)

// ArithInt computes a op b over sel into out (Int) with the overflow
// and division checks of result kind k (sql/types' IntAdd, IntSub,
// IntMul, IntMod: the row path's errors, on the first failing row of
// sel).
func ArithInt(op ArithOp, k types.Kind, a, b *Vec, sel []int32, n int, out *Vec) error {
	prepare(out, Int, sel, n)
	hasNull := nullIn(out, a, b, sel)
	for _, i := range sel {
		if hasNull && out.Nulls.Get(i) {
			continue
		}
		x, y := a.I[at(a, i)], b.I[at(b, i)]
		var r int64
		var err error
		switch op {
		case Add:
			r, err = types.IntAdd(k, x, y)
		case Sub:
			r, err = types.IntSub(k, x, y)
		case Mul:
			r, err = types.IntMul(k, x, y)
		case Mod:
			r, err = types.IntMod(x, y)
		}
		if err != nil {
			return err
		}
		out.I[i] = r
	}
	return nil
}

// DecimalScale is the scale of a op b for decimal operands of scales as
// and bs (PostgreSQL's and the row path's exact rules: the larger for +
// and −, the sum for ×); ok is false for an operator without a decimal
// kernel.
func DecimalScale(op ArithOp, as, bs int32) (int32, bool) {
	switch op {
	case Add, Sub:
		return max(as, bs), true
	case Mul:
		return as + bs, true
	}
	return 0, false
}

// ArithDecimal computes a op b (+, −, ×) over sel into out (Decimal at
// DecimalScale). A result past an int64 at that scale is ErrOverflow.
func ArithDecimal(op ArithOp, a, b *Vec, sel []int32, n int, out *Vec) error {
	scale, ok := DecimalScale(op, a.Scale, b.Scale)
	if !ok || scale > 18 {
		return ErrOverflow
	}
	prepare(out, Decimal, sel, n)
	out.Scale = scale
	hasNull := nullIn(out, a, b, sel)
	am, bm := int64(1), int64(1)
	if op != Mul {
		am, bm = pow10(scale-a.Scale), pow10(scale-b.Scale)
	}
	for _, i := range sel {
		if hasNull && out.Nulls.Get(i) {
			continue
		}
		x, y := a.I[at(a, i)], b.I[at(b, i)]
		var r int64
		switch op {
		case Mul:
			if r, ok = mul64(x, y); !ok {
				return ErrOverflow
			}
		default:
			if am != 1 {
				if x, ok = mul64(x, am); !ok {
					return ErrOverflow
				}
			}
			if bm != 1 {
				if y, ok = mul64(y, bm); !ok {
					return ErrOverflow
				}
			}
			if op == Sub {
				if y == math.MinInt64 {
					return ErrOverflow
				}
				y = -y
			}
			r = x + y
			if (r > x) != (y > 0) && y != 0 {
				return ErrOverflow
			}
		}
		out.I[i] = r
	}
	return nil
}

// Rescale sets out to a's values at a larger scale (an integer's
// cast to NUMERIC: scale 0 to 0 is a copy).
func Rescale(a *Vec, scale int32, sel []int32, n int, out *Vec) error {
	prepare(out, Decimal, sel, n)
	out.Scale = scale
	m := pow10(scale - a.Scale)
	if m == 0 {
		return ErrOverflow
	}
	hasNull := nullIn(out, a, nil, sel)
	for _, i := range sel {
		if hasNull && out.Nulls.Get(i) {
			continue
		}
		r, ok := mul64(a.I[at(a, i)], m)
		if !ok {
			return ErrOverflow
		}
		out.I[i] = r
	}
	return nil
}

// Not computes NOT a over sel (NULL stays NULL).
func Not(a *Vec, sel []int32, n int, out *Vec) {
	prepare(out, Bool, sel, n)
	nullIn(out, a, nil, sel)
	for _, i := range sel {
		out.I[i] = 1 - a.I[at(a, i)]
	}
}

// IsNull computes a IS [NOT] NULL over sel.
func IsNull(a *Vec, not bool, sel []int32, n int, out *Vec) {
	prepare(out, Bool, sel, n)
	for _, i := range sel {
		if a.Nulls.Get(at(a, i)) != not {
			out.I[i] = 1
		}
	}
}

// Logic accumulates AND or OR: Start sets acc to the identity (true for
// AND, false for OR) over sel; Undecided returns the rows an argument
// must still be evaluated on; Fold folds an argument's result in.
type Logic struct{ And bool }

// Start sets acc to the identity over sel.
func (l Logic) Start(acc *Vec, sel []int32, n int) {
	prepare(acc, Bool, sel, n)
	if l.And {
		for _, i := range sel {
			acc.I[i] = 1
		}
	}
}

// Undecided returns the rows of sel whose result is not yet known (AND:
// not false; OR: not true), in out's memory.
func (l Logic) Undecided(acc *Vec, sel, out []int32) []int32 {
	if l.And {
		return NotFalse(acc, sel, out)
	}
	return NotTrue(acc, sel, out)
}

// Fold folds r into acc over sel (the undecided rows).
func (l Logic) Fold(acc, r *Vec, sel []int32) {
	var decide int64 // the value that decides: false for AND, true for OR
	if !l.And {
		decide = 1
	}
	for _, i := range sel {
		j := at(r, i)
		switch {
		case r.Nulls.Get(j):
			acc.SetNull(i)
		case r.I[j] == decide:
			acc.I[i] = decide
			acc.clearNull(i)
		}
	}
}

// MapInt sets out (Int) to f of a's values over sel (NULL stays NULL);
// f's error stops it (a conversion's range error, as the row path's).
func MapInt(a *Vec, f func(int64) (int64, error), sel []int32, n int, out *Vec) error {
	prepare(out, Int, sel, n)
	hasNull := nullIn(out, a, nil, sel)
	for _, i := range sel {
		if hasNull && out.Nulls.Get(i) {
			continue
		}
		r, err := f(a.I[at(a, i)])
		if err != nil {
			return err
		}
		out.I[i] = r
	}
	return nil
}
