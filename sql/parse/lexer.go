package parse

import (
	"strings"
)

// tokKind classifies a token.
type tokKind uint8

const (
	tokSpace    tokKind = iota // whitespace and comments
	tokIdent                   // unquoted identifier or keyword
	tokQuoted                  // "quoted identifier"
	tokBacktick                // `backtick identifier`
	tokString                  // 'string', E'string', $$string$$
	tokNumber                  // 123, 1.5, 1e10
	tokParam                   // $1
	tokOp                      // operator or punctuation (one token per char run of operator chars)
	tokSemi                    // ;
	tokEOF
)

// token is one lexical token: its kind and byte span in the source.
type token struct {
	kind       tokKind
	start, end int
}

func (t token) text(src string) string { return src[t.start:t.end] }

// lex splits src into tokens. It never fails: an unterminated literal or
// comment runs to the end of the input (the SQL parser reports it).
func lex(src string) []token {
	// A bulk INSERT … VALUES has a token every 2-3 bytes; the cap keeps a
	// long string literal from reserving megabytes.
	toks := make([]token, 0, min(len(src)/2, 1<<15)+4)
	i := 0
	n := len(src)
	for i < n {
		c := src[i]
		start := i
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			for i < n && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r' || src[i] == '\f') {
				i++
			}
			toks = append(toks, token{tokSpace, start, i})
		case c == '-' && i+1 < n && src[i+1] == '-':
			// PostgreSQL's comment ends at either newline character.
			for i < n && src[i] != '\n' && src[i] != '\r' {
				i++
			}
			toks = append(toks, token{tokSpace, start, i})
		case c == '/' && i+1 < n && src[i+1] == '*':
			depth := 0
			for i < n {
				if i+1 < n && src[i] == '/' && src[i+1] == '*' {
					depth++
					i += 2
					continue
				}
				if i+1 < n && src[i] == '*' && src[i+1] == '/' {
					depth--
					i += 2
					if depth == 0 {
						break
					}
					continue
				}
				i++
			}
			toks = append(toks, token{tokSpace, start, i})
		case c == '\'':
			i = scanQuoted(src, i+1, '\'', false)
			toks = append(toks, token{tokString, start, i})
		case (c == 'E' || c == 'e') && i+1 < n && src[i+1] == '\'':
			i = scanQuoted(src, i+2, '\'', true)
			toks = append(toks, token{tokString, start, i})
		case (c == 'X' || c == 'x' || c == 'B' || c == 'b' || c == 'N' || c == 'n') && i+1 < n && src[i+1] == '\'':
			i = scanQuoted(src, i+2, '\'', false)
			toks = append(toks, token{tokString, start, i})
		case c == '"':
			i = scanQuoted(src, i+1, '"', false)
			toks = append(toks, token{tokQuoted, start, i})
		case c == '`':
			i = scanQuoted(src, i+1, '`', false)
			toks = append(toks, token{tokBacktick, start, i})
		case c == '$':
			if i+1 < n && src[i+1] >= '0' && src[i+1] <= '9' {
				i++
				for i < n && src[i] >= '0' && src[i] <= '9' {
					i++
				}
				toks = append(toks, token{tokParam, start, i})
				break
			}
			// dollar-quoted string $tag$...$tag$; a tag holds no "$"
			// (else a run of "$" rescans the rest at every one).
			j := i + 1
			for j < n && src[j] != '$' && (isIdentChar(src[j]) && !(src[j] >= '0' && src[j] <= '9' && j == i+1)) {
				j++
			}
			if j < n && src[j] == '$' {
				tag := src[i : j+1]
				k := strings.Index(src[j+1:], tag)
				if k < 0 {
					i = n
				} else {
					i = j + 1 + k + len(tag)
				}
				toks = append(toks, token{tokString, start, i})
				break
			}
			i++
			toks = append(toks, token{tokOp, start, i})
		case c >= '0' && c <= '9' || (c == '.' && i+1 < n && src[i+1] >= '0' && src[i+1] <= '9'):
			for i < n && (src[i] >= '0' && src[i] <= '9' || src[i] == '.' || src[i] == '_') {
				i++
			}
			if i < n && (src[i] == 'e' || src[i] == 'E') {
				j := i + 1
				if j < n && (src[j] == '+' || src[j] == '-') {
					j++
				}
				if j < n && src[j] >= '0' && src[j] <= '9' {
					i = j
					for i < n && src[i] >= '0' && src[i] <= '9' {
						i++
					}
				}
			}
			toks = append(toks, token{tokNumber, start, i})
		case isIdentStart(c):
			for i < n && isIdentChar(src[i]) {
				i++
			}
			toks = append(toks, token{tokIdent, start, i})
		case c == ';':
			i++
			toks = append(toks, token{tokSemi, start, i})
		case c == '(' || c == ')' || c == ',' || c == '[' || c == ']' || c == '.':
			i++
			toks = append(toks, token{tokOp, start, i})
		default:
			for i < n && isOpChar(src[i]) {
				// stop before a comment start
				if i > start && (src[i] == '-' && i+1 < n && src[i+1] == '-' || src[i] == '/' && i+1 < n && src[i+1] == '*') {
					break
				}
				i++
			}
			if i == start {
				i++
			}
			toks = append(toks, token{tokOp, start, i})
		}
	}
	return toks
}

func scanQuoted(src string, i int, q byte, backslash bool) int {
	n := len(src)
	for i < n {
		c := src[i]
		if backslash && c == '\\' {
			i += 2
			continue
		}
		if c == q {
			if i+1 < n && src[i+1] == q {
				i += 2
				continue
			}
			return i + 1
		}
		i++
	}
	return n
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isIdentChar(c byte) bool {
	return isIdentStart(c) || (c >= '0' && c <= '9') || c == '$'
}

func isOpChar(c byte) bool {
	return strings.IndexByte("+-*/<>=~!@#%^&|?:", c) >= 0
}
