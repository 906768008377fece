package funcs

import (
	"strings"
	"unicode/utf8"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// format(formatstr, args…) as PostgreSQL's text_format: %s (the value's
// text, NULL as empty), %I (quote_ident; NULL is an error), %L
// (quote_literal; NULL as NULL) and %%, each with an optional argument
// position n$, a - flag and a width (a number, * or *n$).
func init() {
	pure("format", &Overload{Params: params(types.Text, anyType), Variadic: true, Ret: ret(types.Text), Fn: formatFn})
}

func formatErr(format string, args ...any) *pgerror.Error {
	return pgerror.New(pgerror.InvalidParameterValue, format, args...)
}

func formatFn(c *Ctx, a []types.Datum) (types.Datum, error) {
	if a[0].IsNull() {
		return types.NullDatum, nil
	}
	f, args := a[0].S, a[1:]
	hint := "For a single \"%\" use \"%%\"."
	var out strings.Builder
	bld := c.building("function format")
	defer bld.done()
	next := 0 // the next argument an unnumbered specifier takes
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			out.WriteByte(f[i])
			continue
		}
		i++
		if i >= len(f) {
			return types.Datum{}, formatErr("unterminated format() type specifier").WithHint("%s", hint)
		}
		if f[i] == '%' {
			out.WriteByte('%')
			continue
		}
		// [argpos$][-][width|*|*argpos$]type
		num := func() (int, bool, error) {
			start, n := i, 0
			for i < len(f) && f[i] >= '0' && f[i] <= '9' {
				n = n*10 + int(f[i]-'0')
				if n > 1<<30 {
					return 0, false, pgerror.New(pgerror.NumericValueOutOfRange, "number is out of range")
				}
				i++
			}
			return n, i > start, nil
		}
		argPos := -1
		n, ok, err := num()
		if err != nil {
			return types.Datum{}, err
		}
		width, leftAlign := 0, false
		if ok {
			if i < len(f) && f[i] == '$' {
				if n == 0 {
					return types.Datum{}, formatErr("format specifies argument 0, but arguments are numbered from 1")
				}
				argPos = n - 1
				i++
			} else {
				width = n
			}
		}
		if !ok || argPos >= 0 {
			// flags and width
			for i < len(f) && f[i] == '-' {
				leftAlign = true
				i++
			}
			if i < len(f) && f[i] == '*' {
				i++
				wpos := next
				if n, ok, err := num(); err != nil {
					return types.Datum{}, err
				} else if ok {
					if i >= len(f) || f[i] != '$' {
						return types.Datum{}, formatErr("unterminated format() type specifier").WithHint("%s", hint)
					}
					if n == 0 {
						return types.Datum{}, formatErr("format specifies argument 0, but arguments are numbered from 1")
					}
					wpos = n - 1
					i++
				}
				if wpos >= len(args) {
					return types.Datum{}, formatErr("too few arguments for format()")
				}
				next = wpos + 1
				w := args[wpos]
				if !w.IsNull() {
					v, err := types.Cast(w, types.Int4, c.Env, false)
					if err != nil {
						return types.Datum{}, err
					}
					width = int(v.I)
					if width < 0 {
						leftAlign, width = true, -width
					}
				}
			} else if n, ok, err := num(); err != nil {
				return types.Datum{}, err
			} else if ok {
				width = n
			}
		}
		if i >= len(f) {
			return types.Datum{}, formatErr("unterminated format() type specifier").WithHint("%s", hint)
		}
		typ := f[i]
		if typ != 's' && typ != 'I' && typ != 'L' {
			_, size := utf8.DecodeRuneInString(f[i:])
			return types.Datum{}, formatErr("unrecognized format() type specifier \"%s\"", f[i:i+size]).WithHint("%s", hint)
		}
		if argPos < 0 {
			argPos = next
		}
		if argPos >= len(args) {
			return types.Datum{}, formatErr("too few arguments for format()")
		}
		next = argPos + 1
		v := args[argPos]
		var s string
		switch {
		case typ == 'I' && v.IsNull():
			return types.Datum{}, pgerror.New(pgerror.NullValueNotAllowed, "null values cannot be formatted as an SQL identifier")
		case typ == 'L' && v.IsNull():
			s = "NULL"
		case v.IsNull():
		default:
			s = string(types.AppendText(nil, v, c.Env))
			if typ == 'I' {
				s = QuoteIdent(s)
			} else if typ == 'L' {
				s = QuoteLiteral(s)
			}
		}
		pad := width - utf8.RuneCountInString(s)
		// The padded value is built, then copied into out.
		if err := bld.need(int64(out.Len()) + 2*int64(len(s)+max(pad, 0))); err != nil {
			return types.Datum{}, err
		}
		if pad > 0 {
			if leftAlign {
				s += strings.Repeat(" ", pad)
			} else {
				s = strings.Repeat(" ", pad) + s
			}
		}
		out.WriteString(s)
	}
	return types.NewText(out.String()), nil
}
