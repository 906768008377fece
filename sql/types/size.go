package types

import "unsafe"

// DatumBytes is the size of a Datum struct: what one value costs in a
// row or an array before anything it points to.
const DatumBytes = int64(unsafe.Sizeof(Datum{}))

// ExtraBytes estimates what a value holds outside its Datum struct (a
// string's bytes, a decimal's digits, an array's elements), for memory
// budgets (R-X3): an estimate of the Go heap, not exact accounting.
func ExtraBytes(d Datum) int64 {
	n := int64(len(d.S))
	if d.D != nil {
		n += 48 + int64(len(d.D.Coeff.Bits()))*8
	}
	if d.A != nil {
		n += 32 + int64(len(d.A.Elems))*DatumBytes
		for _, e := range d.A.Elems {
			if e.S != "" || e.D != nil || e.A != nil {
				n += ExtraBytes(e)
			}
		}
	}
	return n
}

// WithCap returns s with capacity n (at least len(s)): a copy in a new
// array of exactly that size, where append would pick its own (up to a
// quarter more than asked for large slices), so that what a memory budget
// was charged is what is allocated.
func WithCap[E any](s []E, n int) []E {
	ns := make([]E, len(s), max(n, len(s)))
	copy(ns, s)
	return ns
}
