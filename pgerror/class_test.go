package pgerror

import "testing"

func TestClassName(t *testing.T) {
	for code, want := range map[string]string{
		InvalidTextRepresentation: "data exception",
		InsufficientPrivilege:     "syntax error or access rule violation",
		"XX000":                   "internal error",
		"ZZ999":                   "error",
		"":                        "error",
	} {
		if got := ClassName(code); got != want {
			t.Errorf("ClassName(%q) = %q, want %q", code, got, want)
		}
	}
}
