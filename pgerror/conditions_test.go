package pgerror

import "testing"

func TestConditionCatches(t *testing.T) {
	dup, ok := ConditionCode("duplicate_object")
	if !ok || dup != "42710" {
		t.Fatalf("duplicate_object = %q, %v", dup, ok)
	}
	if _, ok := ConditionCode("no_such_condition"); ok {
		t.Fatal("an unknown name has a code")
	}
	for _, c := range []struct {
		cond, code string
		want       bool
	}{
		{"42710", "42710", true}, {"42710", "42P07", false},
		{"23000", "23505", true}, {"23000", "22012", false},
		{"others", "42710", true}, {"others", "57014", false}, {"others", "P0004", false},
	} {
		if got := ConditionCatches(c.cond, c.code); got != c.want {
			t.Errorf("ConditionCatches(%q, %q) = %v", c.cond, c.code, got)
		}
	}
}
