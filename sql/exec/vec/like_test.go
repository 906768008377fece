package vec

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/mvserver/mvserver/pgerror"
)

// likeRef is LIKE by backtracking over runes, the definition itself:
// the reference the compiled matcher is checked against. It returns
// false for a pattern that ends in the escape character.
func likeRef(p, s []rune) bool {
	switch {
	case len(p) == 0:
		return len(s) == 0
	case p[0] == '%':
		for i := 0; i <= len(s); i++ {
			if likeRef(p[1:], s[i:]) {
				return true
			}
		}
		return false
	case p[0] == '_':
		return len(s) > 0 && likeRef(p[1:], s[1:])
	case p[0] == '\\':
		return len(p) > 1 && len(s) > 0 && p[1] == s[0] && likeRef(p[2:], s[1:])
	}
	return len(s) > 0 && p[0] == s[0] && likeRef(p[1:], s[1:])
}

// TestLikeCases: fixed cases, one per placement of the wildcards, and
// the error of a pattern that ends in the escape character.
func TestLikeCases(t *testing.T) {
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
		lp, err := CompileLike(c.pat)
		if err != nil {
			t.Fatalf("%q: %v", c.pat, err)
		}
		if got := lp.MatchString(c.s); got != c.want {
			t.Errorf("%q LIKE %q = %v, want %v", c.s, c.pat, got, c.want)
		}
	}
	_, err := CompileLike(`ab\`)
	if pgerror.Code(err) != pgerror.InvalidEscapeSequence {
		t.Errorf("a pattern ending in an escape: %v, want 22025", err)
	}
}

// TestLikeMatchesReference: random patterns (%, _, escapes) over random
// strings (a small alphabet, so pieces repeat and overlap; newlines;
// multi-byte letters) match as the backtracking definition does.
func TestLikeMatchesReference(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	alpha := []string{"a", "b", "ab", "\n", "é", "%", "_", `\`}
	word := func(n int, wild bool) string {
		var sb strings.Builder
		for range rng.Intn(n) {
			c := alpha[rng.Intn(len(alpha))]
			if !wild && (c == "%" || c == "_" || c == `\`) {
				c = "a"
			}
			sb.WriteString(c)
		}
		return sb.String()
	}
	for range 5000 {
		p := word(7, true)
		lp, err := CompileLike(p)
		if err != nil {
			if !strings.HasSuffix(strings.ReplaceAll(p, `\\`, ""), `\`) {
				t.Fatalf("pattern %q: %v", p, err)
			}
			continue
		}
		for range 20 {
			s := word(9, false)
			if got, want := lp.MatchString(s), likeRef([]rune(p), []rune(s)); got != want {
				t.Fatalf("seed %d: %q LIKE %q: %v, the definition says %v", seed, s, p, got, want)
			}
			if lp.Match([]byte(s)) != lp.MatchString(s) {
				t.Fatalf("Match and MatchString differ on %q LIKE %q", s, p)
			}
		}
	}
}

// TestLikeKernel: NULLs stay NULL, NOT LIKE inverts, rows outside sel
// are left alone.
func TestLikeKernel(t *testing.T) {
	a := &Vec{T: Bytes}
	a.Reset(4)
	vals := []string{"PROMO BRASS", "", "STANDARD PROMO", "PROMO"}
	a.Data = a.Data[:0]
	for i, v := range vals {
		a.Off[i] = int32(len(a.Data))
		a.Data = append(a.Data, v...)
	}
	a.Off[4] = int32(len(a.Data))
	a.SetNull(1)
	lp, err := CompileLike("PROMO%")
	if err != nil {
		t.Fatal(err)
	}
	out := &Vec{}
	Like(a, lp, false, []int32{0, 1, 2, 3}, 4, out)
	if out.I[0] != 1 || !out.IsNull(1) || out.I[2] != 0 || out.I[3] != 1 {
		t.Fatalf("LIKE: %v nulls %v", out.I, out.Nulls)
	}
	Like(a, lp, true, []int32{2, 3}, 4, out)
	if out.I[2] != 1 || out.I[3] != 0 || out.IsNull(1) {
		t.Fatalf("NOT LIKE over rows 2, 3: %v nulls %v", out.I, out.Nulls)
	}
}
