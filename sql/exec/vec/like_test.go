package vec

import (
	"math/rand"
	"regexp"
	"strings"
	"testing"
)

// likeRegexp is LIKE as a regular expression, for %-only patterns.
func likeRegexp(p string) *regexp.Regexp {
	pieces := strings.Split(p, "%")
	for i, q := range pieces {
		pieces[i] = regexp.QuoteMeta(q)
	}
	return regexp.MustCompile("(?s)^" + strings.Join(pieces, ".*") + "$")
}

// TestLikeMatchesRegexp: random %-only patterns over random strings (a
// small alphabet, so pieces repeat and overlap; newlines; multi-byte
// letters) match as the regular expression does; patterns with _ or a
// backslash are refused.
func TestLikeMatchesRegexp(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	alpha := []string{"a", "b", "ab", "\n", "é", "%"}
	word := func(n int, wild bool) string {
		var sb strings.Builder
		for range rng.Intn(n) {
			c := alpha[rng.Intn(len(alpha))]
			if c == "%" && !wild {
				c = "a"
			}
			sb.WriteString(c)
		}
		return sb.String()
	}
	for range 3000 {
		p := word(6, true)
		lp, ok := CompileLike(p)
		if !ok {
			t.Fatalf("pattern %q refused", p)
		}
		re := likeRegexp(p)
		for range 20 {
			s := word(8, false)
			if got, want := lp.MatchString(s), re.MatchString(s); got != want {
				t.Fatalf("seed %d: %q LIKE %q: %v, the regular expression says %v", seed, s, p, got, want)
			}
			if lp.Match([]byte(s)) != lp.MatchString(s) {
				t.Fatalf("Match and MatchString differ on %q LIKE %q", s, p)
			}
		}
	}
	for _, p := range []string{"a_", `a\%`, "_"} {
		if _, ok := CompileLike(p); ok {
			t.Errorf("pattern %q compiled", p)
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
	lp, _ := CompileLike("PROMO%")
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
