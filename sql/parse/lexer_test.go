package parse

import (
	"strings"
	"testing"
)

// TestLexDollarQuotes: dollar-quoted strings and parameters lex as
// PostgreSQL's scanner reads them.
func TestLexDollarQuotes(t *testing.T) {
	for _, c := range []struct {
		src  string
		want []string
	}{
		{"$$a b$$", []string{"$$a b$$"}},
		{"$tag$a $$ b$tag$ x", []string{"$tag$a $$ b$tag$", " ", "x"}},
		{"$1 + $23", []string{"$1", " ", "+", " ", "$23"}},
		{"$$$$", []string{"$$$$"}},
		{"$a$$b", []string{"$a$$b"}}, // unterminated $a$ runs to the end
	} {
		var got []string
		for _, tk := range lex(c.src) {
			got = append(got, tk.text(c.src))
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%q: %q, want %q", c.src, got, c.want)
		}
	}
}

// TestLexDollarRun: a run of "$" lexes in one pass. The tag scan once ran
// over every "$" after each one (a tag holds no "$"), so a megabyte of
// them took hours (found by FuzzDeepChain).
func TestLexDollarRun(t *testing.T) {
	src := strings.Repeat("$", 1<<20) + "x1"
	toks := lex(src)
	if len(toks) == 0 || toks[len(toks)-1].end != len(src) {
		t.Fatalf("%d tokens", len(toks))
	}
}
