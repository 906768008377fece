package vec

import (
	"strings"
	"unsafe"
)

// LIKE without a regular expression. A pattern whose only wildcard is %
// (no _, no escape) is its literal pieces: the first must begin the
// value, the last end it, and the others appear in order between them
// ('PROMO%' is a prefix test, '%BRASS' a suffix test, '%green%' a
// search). Other patterns, and ILIKE, keep the regular expression.

// LikePattern is a compiled %-only LIKE pattern.
type LikePattern struct {
	pieces []string
	exact  bool // no % at all: the value equals the pattern
}

// CompileLike compiles p; ok is false when p has _ or a backslash (the
// caller matches it otherwise).
func CompileLike(p string) (*LikePattern, bool) {
	if strings.ContainsAny(p, `_\`) {
		return nil, false
	}
	pieces := strings.Split(p, "%")
	return &LikePattern{pieces: pieces, exact: len(pieces) == 1}, true
}

// Match reports whether s matches the pattern.
func (p *LikePattern) Match(s []byte) bool {
	// Read only, and not kept: s's bytes seen as a string.
	return p.MatchString(unsafe.String(unsafe.SliceData(s), len(s)))
}

// MatchString reports whether s matches the pattern.
func (p *LikePattern) MatchString(s string) bool {
	if p.exact {
		return s == p.pieces[0]
	}
	first, last := p.pieces[0], p.pieces[len(p.pieces)-1]
	if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	mid := s[len(first) : len(s)-len(last)]
	for _, q := range p.pieces[1 : len(p.pieces)-1] {
		i := strings.Index(mid, q)
		if i < 0 {
			return false
		}
		mid = mid[i+len(q):]
	}
	return true
}

// Like computes a [NOT] LIKE p over sel into out (Bool): NULL for a NULL
// a.
func Like(a *Vec, p *LikePattern, not bool, sel []int32, n int, out *Vec) {
	prepare(out, Bool, sel, n)
	nullIn(out, a, nil, sel)
	for _, i := range sel {
		j := at(a, i)
		if a.Nulls.Get(j) {
			continue
		}
		if p.Match(a.Value(j)) != not {
			out.I[i] = 1
		}
	}
}
