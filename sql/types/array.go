package types

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/mvserver/mvserver/pgerror"
)

// Arrays (KindArray) and the vectors int2vector/oidvector: one-dimensional,
// lower bound 1 (vectors 0), elements possibly NULL. Text forms follow
// PostgreSQL's array_in/array_out ('{1,2,NULL,"a b"}') and int2vectorin/out
// ('1 2 3'); comparison follows array_cmp (element by element, NULL
// elements greater than any value, a proper prefix first).

// NewArrayOf returns an array datum (KindArray) holding elems.
func NewArrayOf(elems ...Datum) Datum { return NewArray(KindArray, elems) }

// ArrayLen returns the number of elements of an array datum (0 for NULL).
func (d Datum) ArrayLen() int {
	if d.A == nil {
		return 0
	}
	return len(d.A.Elems)
}

// Elems returns the elements of an array datum (nil for NULL or empty).
func (d Datum) Elems() []Datum {
	if d.A == nil {
		return nil
	}
	return d.A.Elems
}

// ArrayLower is the subscript of the first element of an array of kind k:
// 1, or 0 for the vectors.
func ArrayLower(k Kind) int {
	if k == KindInt2Vector || k == KindOidVector {
		return 0
	}
	return 1
}

func malformedArray(s, detail string) error {
	return pgerror.New(pgerror.InvalidTextRepresentation, "malformed array literal: \"%s\"", s).WithDetail("%s", detail)
}

// arraySpace is array_isspace: the whitespace array_in skips.
func arraySpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// parseArray reads array_in's text form into an array of t's element type.
// One dimension only; an explicit dimension decoration must say [1:n].
func parseArray(s string, t T, env *Env) (Datum, error) {
	elemT := t.ElemType()
	p := 0
	for p < len(s) && arraySpace(s[p]) {
		p++
	}
	wantLen := -1
	if p < len(s) && s[p] == '[' {
		// [lo:hi] dimension decoration, then '='.
		n := 0
		for p < len(s) && s[p] == '[' {
			end := strings.IndexByte(s[p:], ']')
			if end < 0 {
				return Datum{}, malformedArray(s, "Missing \"]\" in array dimensions.")
			}
			dim := s[p+1 : p+end]
			lo, hi := "1", dim
			if i := strings.IndexByte(dim, ':'); i >= 0 {
				lo, hi = dim[:i], dim[i+1:]
			}
			l, err1 := strconv.Atoi(strings.TrimSpace(lo))
			h, err2 := strconv.Atoi(strings.TrimSpace(hi))
			if err1 != nil || err2 != nil {
				return Datum{}, malformedArray(s, "Array dimensions must be integers.")
			}
			if h < l-1 {
				return Datum{}, malformedArray(s, "Upper bound cannot be less than lower bound.")
			}
			if l != 1 {
				return Datum{}, pgerror.New(pgerror.FeatureNotSupported, "arrays whose lower bound is not 1 are not supported")
			}
			wantLen = h - l + 1
			n++
			p += end + 1
			for p < len(s) && arraySpace(s[p]) {
				p++
			}
		}
		if n > 1 {
			return Datum{}, pgerror.New(pgerror.FeatureNotSupported, "multidimensional arrays are not supported")
		}
		if p >= len(s) || s[p] != '=' {
			return Datum{}, malformedArray(s, "Missing \"=\" after array dimensions.")
		}
		p++
		for p < len(s) && arraySpace(s[p]) {
			p++
		}
	}
	if p >= len(s) || s[p] != '{' {
		return Datum{}, malformedArray(s, "Array value must start with \"{\" or dimension information.")
	}
	p++
	// The structure is checked whole before any element is read, as
	// array_in does (its errors come first).
	var raw []string
	var nulls []bool
	unexpected := func(c byte) error {
		return malformedArray(s, "Unexpected \""+string(c)+"\" character.")
	}
	eoi := func() error { return malformedArray(s, "Unexpected end of input.") }
	closed := false
	first := true
	for !closed {
		for p < len(s) && arraySpace(s[p]) {
			p++
		}
		if p >= len(s) {
			return Datum{}, eoi()
		}
		c := s[p]
		switch {
		case c == '}' && first:
			p++
			closed = true
			continue
		case c == '{':
			if first {
				return Datum{}, pgerror.New(pgerror.FeatureNotSupported, "multidimensional arrays are not supported")
			}
			return Datum{}, unexpected(c)
		case c == ',' || c == '}':
			return Datum{}, unexpected(c)
		}
		first = false
		var b strings.Builder
		isNull := false
		if c == '"' {
			p++
			for {
				if p >= len(s) {
					return Datum{}, eoi()
				}
				ch := s[p]
				if ch == '\\' {
					if p+1 >= len(s) {
						return Datum{}, eoi()
					}
					b.WriteByte(s[p+1])
					p += 2
					continue
				}
				p++
				if ch == '"' {
					break
				}
				b.WriteByte(ch)
			}
			for p < len(s) && arraySpace(s[p]) {
				p++
			}
			if p >= len(s) {
				return Datum{}, eoi()
			}
			if s[p] != ',' && s[p] != '}' {
				return Datum{}, malformedArray(s, "Unexpected array element.")
			}
		} else {
			// Unquoted: up to an unescaped delimiter or brace; trailing
			// unescaped whitespace is dropped.
			keep := 0 // length of b up to the last escaped or non-space byte
			escaped := false
			for {
				if p >= len(s) {
					return Datum{}, eoi()
				}
				ch := s[p]
				if ch == ',' || ch == '}' {
					break
				}
				switch ch {
				case '\\':
					if p+1 >= len(s) {
						return Datum{}, eoi()
					}
					b.WriteByte(s[p+1])
					keep = b.Len()
					escaped = true
					p += 2
					continue
				case '"':
					return Datum{}, malformedArray(s, "Unexpected array element.")
				case '{':
					return Datum{}, unexpected(ch)
				}
				b.WriteByte(ch)
				if !arraySpace(ch) {
					keep = b.Len()
				}
				p++
			}
			str := b.String()[:keep]
			b.Reset()
			b.WriteString(str)
			isNull = !escaped && strings.EqualFold(str, "NULL")
		}
		raw = append(raw, b.String())
		nulls = append(nulls, isNull)
		if s[p] == '}' {
			closed = true
		}
		p++
	}
	for ; p < len(s); p++ {
		if !arraySpace(s[p]) {
			return Datum{}, malformedArray(s, "Junk after closing right brace.")
		}
	}
	if wantLen >= 0 && wantLen != len(raw) {
		return Datum{}, malformedArray(s, "Specified array dimensions do not match array contents.")
	}
	elems := make([]Datum, len(raw))
	for i, r := range raw {
		if nulls[i] {
			continue
		}
		e, err := ParseText(r, elemT, env)
		if err != nil {
			return Datum{}, err
		}
		elems[i] = e
	}
	return NewArray(t.Kind, elems), nil
}

// parseVector reads int2vector/oidvector input: integers separated by
// spaces.
func parseVector(s string, t T) (Datum, error) {
	elemT := t.ElemType()
	var elems []Datum
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r < 128 && arraySpace(byte(r)) }) {
		d, err := ParseText(f, elemT, nil)
		if err != nil {
			return Datum{}, pgerror.New(pgerror.InvalidTextRepresentation, "invalid input syntax for type %s: \"%s\"", elemT.String(), f)
		}
		elems = append(elems, d)
	}
	return NewArray(t.Kind, elems), nil
}

// appendArrayText appends array_out's (or, for the vectors, int2vectorout's)
// text form of d.
func appendArrayText(buf []byte, d Datum, env *Env) []byte {
	if d.K == KindInt2Vector || d.K == KindOidVector {
		for i, e := range d.Elems() {
			if i > 0 {
				buf = append(buf, ' ')
			}
			buf = AppendText(buf, e, env)
		}
		return buf
	}
	buf = append(buf, '{')
	var tmp []byte
	for i, e := range d.Elems() {
		if i > 0 {
			buf = append(buf, ',')
		}
		if e.IsNull() {
			buf = append(buf, "NULL"...)
			continue
		}
		tmp = AppendText(tmp[:0], e, env)
		buf = appendArrayElem(buf, tmp)
	}
	return append(buf, '}')
}

// appendArrayElem writes one element's text, quoted when array_in would
// otherwise misread it.
func appendArrayElem(buf, s []byte) []byte {
	quote := len(s) == 0 || len(s) == 4 && strings.EqualFold(string(s), "NULL")
	for _, c := range s {
		if c == '"' || c == '\\' || c == '{' || c == '}' || c == ',' || arraySpace(c) {
			quote = true
			break
		}
	}
	if !quote {
		return append(buf, s...)
	}
	buf = append(buf, '"')
	for _, c := range s {
		if c == '"' || c == '\\' {
			buf = append(buf, '\\')
		}
		buf = append(buf, c)
	}
	return append(buf, '"')
}

// compareArrays is array_cmp: element by element, a NULL element greater
// than any value and equal to another NULL; then the shorter array first.
func compareArrays(a, b Datum) int {
	x, y := a.Elems(), b.Elems()
	for i := 0; i < len(x) && i < len(y); i++ {
		if c := CompareNullsLast(x[i], y[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(x) < len(y):
		return -1
	case len(x) > len(y):
		return 1
	}
	return 0
}

// appendArrayHashKey appends a key equal for arrays equal by compareArrays.
func appendArrayHashKey(buf []byte, a Datum) []byte {
	n := a.ArrayLen()
	buf = append(buf, 6, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	for _, e := range a.Elems() {
		buf = HashKey(buf, e)
	}
	return buf
}

// castArray converts an array element by element to the array (or vector)
// type t.
func castArray(d Datum, t T, env *Env, explicit bool) (Datum, error) {
	et := t.ElemType()
	src := d.Elems()
	out := make([]Datum, len(src))
	for i, e := range src {
		if e.IsNull() {
			continue
		}
		c, err := Cast(e, et, env, explicit)
		if err != nil {
			return Datum{}, err
		}
		out[i] = c
	}
	return NewArray(t.Kind, out), nil
}

// canCastArray reports whether an array (or vector) type converts to
// another: when their elements do.
func canCastArray(from, to T) bool {
	if !from.IsArray() || !to.IsArray() {
		return false
	}
	return CanCast(from.ElemType(), to.ElemType())
}

// appendArrayPayload is the row encoding of an array's value (rowcodec.go):
// the element count, then each element's kind byte and payload.
func appendArrayPayload(buf []byte, d Datum) []byte {
	elems := d.Elems()
	buf = binary.AppendUvarint(buf, uint64(len(elems)))
	for _, e := range elems {
		buf = append(buf, byte(e.K))
		if e.K != KindNull {
			buf = appendPayload(buf, e)
		}
	}
	return buf
}

// decodeArrayPayload reads what appendArrayPayload wrote.
func decodeArrayPayload(k Kind, b []byte, want bool) (Datum, []byte, error) {
	n, m := binary.Uvarint(b)
	if m <= 0 || n > uint64(len(b)) {
		return Datum{}, nil, errCorrupt
	}
	b = b[m:]
	var elems []Datum
	if want {
		elems = make([]Datum, n)
	}
	for i := uint64(0); i < n; i++ {
		if len(b) < 1 {
			return Datum{}, nil, errCorrupt
		}
		ek := Kind(b[0])
		b = b[1:]
		if ek == KindNull {
			continue
		}
		e, rest, err := decodePayload(ek, b, want)
		if err != nil {
			return Datum{}, nil, err
		}
		if want {
			elems[i] = e
		}
		b = rest
	}
	if !want {
		return Datum{K: k}, b, nil
	}
	return NewArray(k, elems), b, nil
}

// arrayTypeName reads the array spellings of a type name: elem[] and
// PostgreSQL's internal _elem (_int4).
func arrayTypeName(name string, mods []int32) (T, bool) {
	var elem string
	switch {
	case strings.HasSuffix(name, "[]"):
		elem = strings.TrimSpace(strings.TrimSuffix(name, "[]"))
	case strings.HasPrefix(name, "_") && len(name) > 1:
		elem = name[1:]
	default:
		return T{}, false
	}
	e, ok := ParseTypeName(elem, mods)
	if !ok || e.Kind == KindArray || ArrayOID(e.Kind) == 0 {
		return T{}, false
	}
	return ArrayOf(e), true
}
