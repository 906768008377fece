package parse

import "testing"

func TestMentionsIdent(t *testing.T) {
	for _, c := range []struct {
		s, name string
		want    bool
	}{
		{"(qty > 0)", "qty", true},
		{"(qty2 > 0)", "qty", false},
		{"(note <> 'qty')", "qty", false},
		{"((lo <= hi) AND (hi < 100))", "hi", true},
	} {
		if got := MentionsIdent(c.s, c.name); got != c.want {
			t.Errorf("MentionsIdent(%q, %q) = %v", c.s, c.name, got)
		}
	}
}
