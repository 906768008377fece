package exec

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLikeMatchesRegexp checks the row path's LIKE (vec's matcher) against
// the regexp that LIKE used to compile to and that ILIKE still compiles
// to, on random patterns and strings over a small alphabet (multi-byte
// characters, '%', '_' and escapes included), so LIKE and ILIKE over
// caseless text agree. vec's own test has the fixed cases.
func TestLikeMatchesRegexp(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "é", "%", "_", `\`}
	word := func(n int, pattern bool) string {
		var b strings.Builder
		for range rng.IntN(n) {
			k := alphabet[rng.IntN(len(alphabet))]
			if !pattern && (k == "%" || k == "_" || k == `\`) {
				k = "a"
			}
			b.WriteString(k)
		}
		return b.String()
	}
	for range 20000 {
		pat, s := word(8, true), word(10, false)
		re, rerr := likeToRegexp(pat, false)
		m, merr := likeMatcher(pat, false)
		if (rerr != nil) != (merr != nil) {
			t.Fatalf("%q: regexp error %v, matcher error %v", pat, rerr, merr)
		}
		if rerr != nil {
			continue
		}
		if want, got := re.MatchString(s), m(s); got != want {
			t.Fatalf("%q LIKE %q = %v, the regexp says %v", s, pat, got, want)
		}
	}
}

func BenchmarkLike(b *testing.B) {
	s := "furiously final accounts sleep carefully. special deposits wake requests"
	b.Run("matcher", func(b *testing.B) {
		m, _ := likeMatcher("%special%requests%", false)
		for b.Loop() {
			m(s)
		}
	})
	b.Run("regexp", func(b *testing.B) {
		re, _ := likeToRegexp("%special%requests%", false)
		for b.Loop() {
			re.MatchString(s)
		}
	})
}
