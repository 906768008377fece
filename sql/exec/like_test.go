package exec

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLikeMatchesRegexp checks the LIKE matcher against the regexp that
// LIKE used to compile to, on fixed cases and on random patterns and
// strings over a small alphabet (multi-byte characters, '%', '_' and
// escapes included), so every placement of the wildcards is met.
func TestLikeMatchesRegexp(t *testing.T) {
	cases := []struct {
		pat, s string
		want   bool
	}{
		{"%special%requests%", "a special set of requests here", true},
		{"%special%requests%", "requests special", false},
		{"%BRASS", "LARGE POLISHED BRASS", true},
		{"%BRASS", "BRASS ", false},
		{"PROMO%", "PROMO BURNISHED", true},
		{"forest%", "fores", false},
		{"a_c", "aéc", true},
		{"a_c", "ac", false},
		{"%a%a%", "aa", true},
		{"%a%a%", "a", false},
		{"%ab_", "xabab", false},
		{"%ab_", "xabc", true},
		{"_%_", "é", false},
		{`100\%`, "100%", true},
		{`100\%`, "1000", false},
		{`a\_b`, "a_b", true},
		{`a\_b`, "axb", false},
		{"", "", true},
		{"", "x", false},
		{"%", "", true},
		{"%%", "anything", true},
		{"a%%b", "ab", true},
		{"line\n%", "line\nnext", true},
	}
	for _, c := range cases {
		m, err := likeMatcher(c.pat, false)
		if err != nil {
			t.Fatalf("%q: %v", c.pat, err)
		}
		if got := m(c.s); got != c.want {
			t.Errorf("%q LIKE %q = %v, want %v", c.s, c.pat, got, c.want)
		}
	}
	if _, err := likeMatcher(`ab\`, false); err == nil {
		t.Errorf("a pattern ending in an escape compiled")
	}

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
