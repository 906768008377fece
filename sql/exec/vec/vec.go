package vec

import "errors"

// Type is a vector's physical type.
type Type uint8

// The vector types.
const (
	Int Type = iota
	Decimal
	Bool
	Bytes
)

// ErrOverflow reports a decimal result past an int64 at its scale: the
// caller computes row at a time instead.
var ErrOverflow = errors.New("vec: decimal past int64")

// Vec is one column of a batch.
type Vec struct {
	T     Type
	Scale int32   // Decimal: value = I[i] / 10^Scale
	I     []int64 // Int, Decimal, Bool (0 or 1)
	Off   []int32 // Bytes: value i is Data[Off[i]:Off[i+1]]
	Data  []byte
	Nulls Bitmap // nil: no NULLs
}

// Bitmap has bit i set for a NULL at row i.
type Bitmap []uint64

// Get reports bit i.
func (b Bitmap) Get(i int32) bool {
	return int(i>>6) < len(b) && b[i>>6]&(1<<(uint(i)&63)) != 0
}

// New returns a vector of type t for n rows (values zero, no NULLs).
func New(t Type, n int) *Vec {
	v := &Vec{T: t}
	v.Reset(n)
	return v
}

// Reset makes v hold n rows of zero values without NULLs, reusing its
// memory.
func (v *Vec) Reset(n int) {
	if v.T == Bytes {
		v.Off = grow32(v.Off, n+1)
		v.Data = v.Data[:0]
	} else {
		v.I = grow64(v.I, n)
		clear(v.I)
	}
	v.Nulls = v.Nulls[:0]
}

func grow64(s []int64, n int) []int64 {
	if cap(s) < n {
		return make([]int64, n)
	}
	return s[:n]
}

func grow32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

// IsNull reports whether row i is NULL.
func (v *Vec) IsNull(i int32) bool { return v.Nulls.Get(i) }

// SetNull marks row i NULL.
func (v *Vec) SetNull(i int32) {
	w := int(i>>6) + 1
	if len(v.Nulls) < w {
		n := max(w, (len(v.I)+len(v.Off)+63)/64+1)
		for len(v.Nulls) < n {
			v.Nulls = append(v.Nulls, 0)
		}
	}
	v.Nulls[i>>6] |= 1 << (uint(i) & 63)
}

// clearNull marks row i not NULL.
func (v *Vec) clearNull(i int32) {
	if int(i>>6) < len(v.Nulls) {
		v.Nulls[i>>6] &^= 1 << (uint(i) & 63)
	}
}

// Value returns row i's bytes (Bytes).
func (v *Vec) Value(i int32) []byte { return v.Data[v.Off[i]:v.Off[i+1]] }

// Batch is up to a batch of rows as columns.
type Batch struct {
	N    int
	Cols []*Vec
}

// All returns the selection of every row of n, in sel's memory.
func All(sel []int32, n int) []int32 {
	sel = grow32(sel, n)
	for i := range sel {
		sel[i] = int32(i)
	}
	return sel
}

// True returns the rows of sel where the Bool vector b is true (not
// NULL), in out's memory (which may be sel's).
func True(b *Vec, sel, out []int32) []int32 {
	out = out[:0]
	for _, i := range sel {
		if j := at(b, i); b.I[j] != 0 && !b.Nulls.Get(j) {
			out = append(out, i)
		}
	}
	return out
}

// NotFalse returns the rows of sel where b is true or NULL.
func NotFalse(b *Vec, sel, out []int32) []int32 {
	out = out[:0]
	for _, i := range sel {
		if j := at(b, i); b.I[j] != 0 || b.Nulls.Get(j) {
			out = append(out, i)
		}
	}
	return out
}

// NotTrue returns the rows of sel where b is false or NULL.
func NotTrue(b *Vec, sel, out []int32) []int32 {
	out = out[:0]
	for _, i := range sel {
		if j := at(b, i); b.I[j] == 0 || b.Nulls.Get(j) {
			out = append(out, i)
		}
	}
	return out
}

// NotNull returns the rows of sel where a is not NULL, in out's memory
// (sel itself when a has no NULLs).
func NotNull(a *Vec, sel, out []int32) []int32 {
	if len(a.Nulls) == 0 {
		return sel
	}
	out = out[:0]
	for _, i := range sel {
		if !a.Nulls.Get(at(a, i)) {
			out = append(out, i)
		}
	}
	return out
}

// AllNull sets out to type t with every row of sel NULL.
func AllNull(t Type, sel []int32, n int, out *Vec) *Vec {
	out.T = t
	out.Reset(n)
	for _, i := range sel {
		out.SetNull(i)
	}
	return out
}
