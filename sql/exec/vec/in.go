package vec

import "bytes"

// CHAR(n) comparisons and IN lists. A CHAR value equals another when
// they are equal but for trailing spaces ('a' = 'a  '), as
// types.Compare and types.HashKey have it.

// TrimSpace returns b without its trailing spaces.
func TrimSpace(b []byte) []byte { return bytes.TrimRight(b, " ") }

// CompareChar computes a = b (or a <> b, with ne) over sel into out
// (Bool) for Bytes operands compared without trailing spaces.
func CompareChar(ne bool, a, b *Vec, sel []int32, n int, out *Vec) {
	prepare(out, Bool, sel, n)
	hasNull := nullIn(out, a, b, sel)
	for _, i := range sel {
		if hasNull && out.Nulls.Get(i) {
			continue
		}
		if bytes.Equal(TrimSpace(a.Value(at(a, i))), TrimSpace(b.Value(at(b, i)))) != ne {
			out.I[i] = 1
		}
	}
}

// InSet is the non-NULL constants of an IN list: integers, or bytes
// (trimmed of trailing spaces when Char).
type InSet struct {
	Ints  map[int64]struct{}
	Bytes [][]byte
	Char  bool
	// Not: NOT IN. HasNull: the list holds a NULL, so a value not found
	// is NULL rather than false (true for NOT IN).
	Not, HasNull bool
}

// In computes a [NOT] IN set over sel into out (Bool): NULL for a NULL
// a, and for a value not found when the list holds a NULL.
func In(a *Vec, set *InSet, sel []int32, n int, out *Vec) {
	prepare(out, Bool, sel, n)
	nullIn(out, a, nil, sel)
	var found, missing int64 = 1, 0
	if set.Not {
		found, missing = 0, 1
	}
	for _, i := range sel {
		j := at(a, i)
		if a.Nulls.Get(j) {
			continue
		}
		var ok bool
		if a.T == Bytes {
			v := a.Value(j)
			if set.Char {
				v = TrimSpace(v)
			}
			for _, c := range set.Bytes {
				if bytes.Equal(v, c) {
					ok = true
					break
				}
			}
		} else {
			_, ok = set.Ints[a.I[j]]
		}
		switch {
		case ok:
			out.I[i] = found
		case set.HasNull:
			out.SetNull(i)
		default:
			out.I[i] = missing
		}
	}
}

// Pick sets out's rows sel to r's (both of r's type, not Bytes): the
// rows of one CASE branch.
func Pick(r *Vec, sel []int32, out *Vec) {
	for _, i := range sel {
		j := at(r, i)
		if r.Nulls.Get(j) {
			out.SetNull(i)
			continue
		}
		out.I[i] = r.I[j]
	}
}
