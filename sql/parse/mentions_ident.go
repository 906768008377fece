package parse

import "strings"

// MentionsIdent reports whether name occurs in s (SQL text kept in the
// catalog: a CHECK condition) as a whole identifier outside string
// literals.
func MentionsIdent(s, name string) bool {
	isID := func(b byte) bool {
		return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
	}
	inStr := false
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			inStr = !inStr
			continue
		}
		if inStr || !strings.HasPrefix(s[i:], name) {
			continue
		}
		if (i == 0 || !isID(s[i-1])) && (i+len(name) == len(s) || !isID(s[i+len(name)])) {
			return true
		}
	}
	return false
}
