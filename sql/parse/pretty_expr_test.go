package parse

import "testing"

func TestPrettyExpr(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"(qty > 0)", "qty > 0"},
		{"((a > 0) AND (b > 0))", "a > 0 AND b > 0"},
		{"((a IS NOT NULL) OR (b <> 'x'::text))", "a IS NOT NULL OR b <> 'x'::text"},
		{"((a + 1) * 2)", "(a + 1) * 2"},
		{"a >", "a >"},                 // does not parse: unchanged
		{"1; SELECT 2", "1; SELECT 2"}, // not one expression: unchanged
	} {
		if got := PrettyExpr(c.in); got != c.want {
			t.Errorf("PrettyExpr(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
