package parse

import (
	"testing"

	"github.com/mvserver/mvserver/pgerror"
)

// TestRewriteArrayCall: array(…) as a call becomes ARRAY[…]; ARRAY
// (subquery) and ARRAY[…] stay as they are.
func TestRewriteArrayCall(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"select array(1, 2)", "select array[1, 2]"},
		{"select array('a')", "select array['a']"},
		{"select size(array(array_max(x), (1+2)))", "select size(array[array_max(x), (1+2)])"},
		{"select array(array(1, 2), 3)", "select array[array[1, 2], 3]"},
		{"select array()", "select array[]"},
		{"select array(select 1)", "select array(select 1)"},
		{"select ARRAY(SELECT x FROM t)", "select ARRAY(SELECT x FROM t)"},
		{"select array((select 1))", "select array((select 1))"},
		{"select array(values (1))", "select array(values (1))"},
		{"select array(select 1, 2)", "select array(select 1, 2)"},
		{"select array[1, 2]", "select array[1, 2]"},
		{"select t.array(1)", "select t.array(1)"},
	} {
		got, _ := applyRewrites(c.in, lex(c.in))
		if got != c.out {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.out)
		}
	}
	// Positions after the rewrite still point into the client's text.
	q := "select array(1, 2) from from"
	_, err := Parse(q)
	pe := pgerror.Convert(err)
	if pe.Position == 0 || q[pe.Position-1:] != "from" {
		t.Fatalf("position %d (%s)", pe.Position, pe.Message)
	}
}
