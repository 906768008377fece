package funcs

import (
	"strings"
	"unicode/utf8"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// SIMILAR TO: the parser turns `a SIMILAR TO p [ESCAPE e]` into
// `a ~ similar_to_escape(p [, e])`, so the pattern becomes a POSIX regular
// expression anchored at both ends, as PostgreSQL's does.
func init() {
	text := types.Text
	pure("similar_to_escape",
		strict(params(text), text, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			re, err := similarToRegex(a[0].S, "\\")
			return types.NewText(re), err
		}),
		strict(params(text, text), text, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			re, err := similarToRegex(a[0].S, a[1].S)
			return types.NewText(re), err
		}))
}

// similarToRegex converts a SIMILAR TO pattern: % is .*, _ is ., ( opens
// a non-capturing group, the regular-expression operators | * + ? {m,n}
// and bracket expressions keep their meaning, the escape character (""
// for none) makes the next character literal, and the other characters
// special to a regular expression (. ^ $ \) are literal.
func similarToRegex(pat, esc string) (string, error) {
	var e rune = -1
	if esc != "" {
		if utf8.RuneCountInString(esc) != 1 {
			return "", pgerror.New(pgerror.InvalidEscapeSequence, "invalid escape string").
				WithHint("Escape string must be empty or one character.")
		}
		e, _ = utf8.DecodeRuneInString(esc)
	}
	var b strings.Builder
	b.WriteString("^(?:")
	afterEscape, inBracket := false, false
	for _, c := range pat {
		switch {
		case afterEscape:
			if c == '"' {
				return "", pgerror.New(pgerror.FeatureNotSupported, "the escape-double-quote separators of SIMILAR TO are supported only by substring")
			}
			b.WriteByte('\\')
			b.WriteRune(c)
			afterEscape = false
		case c == e:
			afterEscape = true
		case inBracket:
			if c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(c)
			if c == ']' {
				inBracket = false
			}
		case c == '[':
			b.WriteRune(c)
			inBracket = true
		case c == '%':
			b.WriteString(".*")
		case c == '_':
			b.WriteByte('.')
		case c == '(':
			b.WriteString("(?:")
		case c == '\\', c == '.', c == '^', c == '$':
			b.WriteByte('\\')
			b.WriteRune(c)
		default:
			b.WriteRune(c)
		}
	}
	if afterEscape {
		return "", pgerror.New(pgerror.InvalidEscapeSequence, "invalid escape string").WithHint("Escape string must be empty or one character.")
	}
	b.WriteString(")$")
	return b.String(), nil
}
