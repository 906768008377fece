package vec

import (
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/mvserver/mvserver/pgerror"
)

// LIKE without a regular expression, for the vector kernel and the row
// path alike (sql/exec's likeMatcher). A LIKE pattern is literal text,
// '_' (any one character) and '%' (any run of characters), with
// backslash escapes. The pattern is split at its '%'s into segments: the
// first must match at the start, the last at the end, and each one
// between at its leftmost place after the one before (leftmost is always
// safe: it leaves the most text for the rest). A segment that is one
// literal is found with strings.Index ('PROMO%' is a prefix test,
// '%BRASS' a suffix test, '%green%' a search); one with '_' is tried at
// each character. Matching Go's backtracking regexp engine was a quarter
// of TPC-H-derived Q13's time (o_comment NOT LIKE '%special%requests%').
// ILIKE is not compiled here (the caller keeps a case-folding regexp).

// likePart is one piece of a segment: literal text, or any runes '_'s.
type likePart struct {
	lit  string
	runs int // the number of '_'s when lit is empty
}

// likeSegment is the text between two '%'s.
type likeSegment []likePart

// LikePattern is a compiled LIKE pattern.
type LikePattern struct {
	segs []likeSegment // len(segs) - 1 is the number of '%' runs
}

// CompileLike splits p (backslash escapes) at its '%'s. A pattern that
// ends in the escape character is SQLSTATE 22025, as in PostgreSQL.
func CompileLike(p string) (*LikePattern, error) {
	lp := &LikePattern{segs: []likeSegment{nil}}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			s := &lp.segs[len(lp.segs)-1]
			*s = append(*s, likePart{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(p); i++ {
		switch ch := p[i]; ch {
		case '\\':
			if i+1 >= len(p) {
				return nil, pgerror.New(pgerror.InvalidEscapeSequence, "LIKE pattern must not end with escape character")
			}
			i++
			lit.WriteByte(p[i])
		case '%':
			flush()
			if last := lp.segs[len(lp.segs)-1]; len(last) > 0 || len(lp.segs) == 1 {
				lp.segs = append(lp.segs, nil)
			} // a run of '%'s is one
		case '_':
			flush()
			s := &lp.segs[len(lp.segs)-1]
			if n := len(*s); n > 0 && (*s)[n-1].lit == "" {
				(*s)[n-1].runs++
			} else {
				*s = append(*s, likePart{runs: 1})
			}
		default:
			lit.WriteByte(ch)
		}
	}
	flush()
	return lp, nil
}

// matchAt matches seg at s[i:] and returns where it ends.
func (seg likeSegment) matchAt(s string, i int) (int, bool) {
	for _, p := range seg {
		if p.lit != "" {
			if !strings.HasPrefix(s[i:], p.lit) {
				return 0, false
			}
			i += len(p.lit)
			continue
		}
		for range p.runs {
			if i >= len(s) {
				return 0, false
			}
			if s[i] < utf8.RuneSelf {
				i++
				continue
			}
			_, n := utf8.DecodeRuneInString(s[i:])
			i += n
		}
	}
	return i, true
}

// literal reports whether seg is one piece of literal text.
func (seg likeSegment) literal() bool { return len(seg) == 1 && seg[0].lit != "" }

// find returns the end of seg's leftmost match at or after i.
func (seg likeSegment) find(s string, i int) (int, bool) {
	if seg.literal() {
		j := strings.Index(s[i:], seg[0].lit)
		if j < 0 {
			return 0, false
		}
		return i + j + len(seg[0].lit), true
	}
	for ; i <= len(s); i++ {
		if i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
			continue
		}
		if e, ok := seg.matchAt(s, i); ok {
			return e, true
		}
	}
	return 0, false
}

// Match reports whether s matches the pattern.
func (lp *LikePattern) Match(s []byte) bool {
	// Read only, and not kept: s's bytes seen as a string.
	return lp.MatchString(unsafe.String(unsafe.SliceData(s), len(s)))
}

// MatchString reports whether s matches the whole pattern.
func (lp *LikePattern) MatchString(s string) bool {
	first := lp.segs[0]
	pos, ok := first.matchAt(s, 0)
	if !ok {
		return false
	}
	if len(lp.segs) == 1 {
		return pos == len(s)
	}
	for _, seg := range lp.segs[1 : len(lp.segs)-1] {
		if pos, ok = seg.find(s, pos); !ok {
			return false
		}
	}
	last := lp.segs[len(lp.segs)-1]
	if len(last) == 0 {
		return true
	}
	if last.literal() {
		return len(s)-pos >= len(last[0].lit) && strings.HasSuffix(s, last[0].lit)
	}
	// The last segment ends at the end of s: try it at each character
	// from pos on.
	for i := pos; i <= len(s); i++ {
		if i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
			continue
		}
		if e, ok := last.matchAt(s, i); ok && e == len(s) {
			return true
		}
	}
	return false
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
