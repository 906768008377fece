package funcs

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// The string functions of R-Q3 beyond scalar.go's, with PostgreSQL 15's
// semantics (and the Databricks spellings startswith/endswith). Lengths
// and positions count characters, as PostgreSQL does in UTF8.

// fnT is a function implementation.
type fnT = func(*Ctx, []types.Datum) (types.Datum, error)

// strict is a NULL-strict overload with a fixed result type.
func strict(params []types.T, r types.T, fn fnT) *Overload {
	return &Overload{Params: params, Ret: ret(r), NullStrict: true, Fn: fn}
}

// pure registers a deterministic function.
func pure(name string, ovs ...*Overload) {
	register(&Func{Name: name, Deterministic: true, Overloads: ovs})
}

// alias registers name as another name of an already registered function.
func alias(name, of string) {
	f := registry[of]
	register(&Func{Name: name, Deterministic: f.Deterministic, Overloads: f.Overloads, Agg: f.Agg})
}

func params(ts ...types.T) []types.T { return ts }

// textFn is a function of one string; building its result takes about
// factor times the string's bytes (a []rune copy is four), reserved when
// that is large.
func textFn(name string, factor int64, fn func(s string) string) fnT {
	return func(c *Ctx, a []types.Datum) (types.Datum, error) {
		held, err := c.Reserve("function "+name, factor*int64(len(a[0].S)))
		if err != nil {
			return types.Datum{}, err
		}
		defer c.Release(held)
		return types.NewText(fn(a[0].S)), nil
	}
}

// textBytes estimates the text of values joined (concat, concat_ws): a
// string's bytes, an array's elements' text, a few bytes for the others.
func textBytes(vals []types.Datum) int64 {
	var n int64
	for _, d := range vals {
		switch {
		case d.IsNull():
		case d.A != nil:
			n += types.ExtraBytes(d) / 2
		case d.K == types.KindText || d.K == types.KindVarchar || d.K == types.KindChar:
			n += int64(len(d.S))
		default:
			n += 2*int64(len(d.S)) + 24
		}
	}
	return n
}

// runesFn reserves what a function of the characters of strings of n
// bytes builds: a []rune copy (four bytes a character) and the result.
func runesFn(c *Ctx, name string, n int) (int64, error) {
	return c.Reserve("function "+name, 5*int64(n))
}

// maxStringBytes is the largest value PostgreSQL allocates for a string
// (MaxAllocSize less the header); beyond it "requested length too large".
const maxStringBytes = 0x3fffffff - 4

func errTooLarge() error {
	return pgerror.New(pgerror.ProgramLimitExceeded, "requested length too large")
}

func init() {
	text, i4, i8, bytea, boolT := types.Text, types.Int4, types.Int8, types.Bytea, types.Bool
	pure("octet_length",
		strict(params(text), i4, func(_ *Ctx, a []types.Datum) (types.Datum, error) { return types.NewInt4(int64(len(a[0].S))), nil }),
		// CHAR(n) counts its padding (bpcharoctetlen): the cast to text
		// would strip it.
		strict(params(types.Char), i4, func(_ *Ctx, a []types.Datum) (types.Datum, error) { return types.NewInt4(int64(len(a[0].S))), nil }),
		strict(params(bytea), i4, func(_ *Ctx, a []types.Datum) (types.Datum, error) { return types.NewInt4(int64(len(a[0].S))), nil }))
	pure("bit_length",
		strict(params(text), i4, func(_ *Ctx, a []types.Datum) (types.Datum, error) { return types.NewInt4(int64(8 * len(a[0].S))), nil }),
		strict(params(bytea), i4, func(_ *Ctx, a []types.Datum) (types.Datum, error) { return types.NewInt4(int64(8 * len(a[0].S))), nil }))
	// concat_ws(sep, …): NULL separator gives NULL; NULL values are skipped.
	pure("concat_ws", &Overload{Params: params(text, anyType, anyType), Variadic: true, Ret: ret(text),
		Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
			if a[0].IsNull() {
				return types.NullDatum, nil
			}
			size := textBytes(a[1:]) + int64(len(a)-2)*int64(len(a[0].S))
			held, err := c.Reserve("function concat_ws", size)
			if err != nil {
				return types.Datum{}, err
			}
			defer c.Release(held)
			b := make([]byte, 0, size)
			first := true
			for _, d := range a[1:] {
				if d.IsNull() {
					continue
				}
				if !first {
					b = append(b, a[0].S...)
				}
				first = false
				b = types.AppendText(b, d, c.Env)
			}
			return types.NewText(string(b)), nil
		}})
	pure("split_part", strict(params(text, text, i4), text, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		s, sep, n := a[0].S, a[1].S, a[2].I
		if n == 0 {
			return types.Datum{}, pgerror.New(pgerror.InvalidParameterValue, "field position must not be zero")
		}
		var parts []string
		switch {
		case s == "":
			return types.NewText(""), nil
		case sep == "":
			parts = []string{s}
		default:
			parts = strings.Split(s, sep)
		}
		if n < 0 {
			n += int64(len(parts)) + 1
		}
		if n < 1 || n > int64(len(parts)) {
			return types.NewText(""), nil
		}
		return types.NewText(parts[n-1]), nil
	}))
	pad := func(left bool) fnT {
		name := "function rpad"
		if left {
			name = "function lpad"
		}
		return func(c *Ctx, a []types.Datum) (types.Datum, error) {
			s, n, fill := a[0].S, a[1].I, " "
			if len(a) > 2 {
				fill = a[2].S
			}
			if n < 0 {
				n = 0
			}
			if n > maxStringBytes/4 {
				return types.Datum{}, errTooLarge()
			}
			if have := int64(utf8.RuneCountInString(s)); have >= n || fill == "" {
				return types.NewText(s[:runeOffset(s, n)]), nil
			}
			// The padding is whole copies of fill and a part of one: its
			// size is known before anything is built.
			need := n - int64(utf8.RuneCountInString(s))
			fr := int64(utf8.RuneCountInString(fill))
			whole, part := need/fr, fill[:runeOffset(fill, need%fr)]
			size := int64(len(s)) + whole*int64(len(fill)) + int64(len(part))
			held, err := c.Reserve(name, size)
			if err != nil {
				return types.Datum{}, err
			}
			defer c.Release(held)
			var b strings.Builder
			b.Grow(int(size))
			if !left {
				b.WriteString(s)
			}
			writeRepeated(&b, fill, whole)
			b.WriteString(part)
			if left {
				b.WriteString(s)
			}
			return types.NewText(b.String()), nil
		}
	}
	pure("lpad", strict(params(text, i4), text, pad(true)), strict(params(text, i4, text), text, pad(true)))
	pure("rpad", strict(params(text, i4), text, pad(false)), strict(params(text, i4, text), text, pad(false)))
	pure("left", strict(params(text, i4), text, func(c *Ctx, a []types.Datum) (types.Datum, error) {
		held, err := runesFn(c, "left", len(a[0].S))
		if err != nil {
			return types.Datum{}, err
		}
		defer c.Release(held)
		rs, n := []rune(a[0].S), a[1].I
		if n < 0 {
			n += int64(len(rs))
		}
		n = max(0, min(n, int64(len(rs))))
		return types.NewText(string(rs[:n])), nil
	}))
	pure("right", strict(params(text, i4), text, func(c *Ctx, a []types.Datum) (types.Datum, error) {
		held, err := runesFn(c, "right", len(a[0].S))
		if err != nil {
			return types.Datum{}, err
		}
		defer c.Release(held)
		rs, n := []rune(a[0].S), a[1].I
		if n < 0 {
			n += int64(len(rs))
		}
		n = max(0, min(n, int64(len(rs))))
		return types.NewText(string(rs[int64(len(rs))-n:])), nil
	}))
	// strpos(s, sub) and POSITION(sub IN s), which the grammar turns into
	// position(s, sub): the character position of the first occurrence.
	strpos := strict(params(text, text), i4, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		i := strings.Index(a[0].S, a[1].S)
		if i < 0 {
			return types.NewInt4(0), nil
		}
		return types.NewInt4(int64(utf8.RuneCountInString(a[0].S[:i]) + 1)), nil
	})
	pure("strpos", strpos)
	pure("position", strpos, strict(params(bytea, bytea), i4, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		return types.NewInt4(int64(strings.Index(a[0].S, a[1].S) + 1)), nil
	}))
	// Databricks instr(str, substr) and locate(substr, str).
	pure("instr", strpos)
	pure("initcap", strict(params(text), text, textFn("initcap", 2, initcap)))
	pure("repeat", strict(params(text, i4), text, func(c *Ctx, a []types.Datum) (types.Datum, error) {
		n := max(a[1].I, 0)
		if n > 0 && int64(len(a[0].S)) > (maxStringBytes)/n {
			return types.Datum{}, errTooLarge()
		}
		held, err := c.Reserve("function repeat", n*int64(len(a[0].S)))
		if err != nil {
			return types.Datum{}, err
		}
		defer c.Release(held)
		return types.NewText(strings.Repeat(a[0].S, int(n))), nil
	}))
	pure("reverse", strict(params(text), text, textFn("reverse", 5, func(s string) string {
		rs := []rune(s)
		for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
			rs[i], rs[j] = rs[j], rs[i]
		}
		return string(rs)
	})))
	pure("translate", strict(params(text, text, text), text, func(c *Ctx, a []types.Datum) (types.Datum, error) {
		// The result is at most as long as the string (in characters),
		// and the builder may double past it.
		held, err := c.Reserve("function translate", 2*int64(len(a[0].S)))
		if err != nil {
			return types.Datum{}, err
		}
		defer c.Release(held)
		from, to := []rune(a[1].S), []rune(a[2].S)
		var b strings.Builder
		for _, r := range a[0].S {
			i := -1
			for j, f := range from {
				if f == r {
					i = j
					break
				}
			}
			switch {
			case i < 0:
				b.WriteRune(r)
			case i < len(to):
				b.WriteRune(to[i])
			}
		}
		return types.NewText(b.String()), nil
	}))
	pure("ascii", strict(params(text), i4, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		r, _ := utf8.DecodeRuneInString(a[0].S)
		if a[0].S == "" {
			r = 0
		}
		return types.NewInt4(int64(r)), nil
	}))
	pure("chr", strict(params(i4), text, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		v := a[0].I
		switch {
		case v < 0:
			return types.Datum{}, pgerror.New(pgerror.InvalidParameterValue, "character number must be positive")
		case v == 0:
			return types.Datum{}, pgerror.New(pgerror.ProgramLimitExceeded, "null character not permitted")
		case v > 0x10ffff:
			return types.Datum{}, pgerror.New(pgerror.ProgramLimitExceeded, "requested character too large for encoding: %d", v)
		case v >= 0xd800 && v <= 0xdfff:
			return types.Datum{}, pgerror.New(pgerror.ProgramLimitExceeded, "requested character not valid for encoding: %d", v)
		}
		return types.NewText(string(rune(v))), nil
	}))
	// overlay(s PLACING r FROM start [FOR count]).
	overlay := func(c *Ctx, a []types.Datum) (types.Datum, error) {
		held, err := runesFn(c, "overlay", len(a[0].S)+len(a[1].S))
		if err != nil {
			return types.Datum{}, err
		}
		defer c.Release(held)
		s, r := []rune(a[0].S), []rune(a[1].S)
		start := a[2].I
		count := int64(len(r))
		if len(a) > 3 {
			count = a[3].I
		}
		if start <= 0 {
			return types.Datum{}, pgerror.New(pgerror.SubstringError, "negative substring length not allowed")
		}
		end := start + count // where the rest of s resumes (1-based)
		if end > math.MaxInt32 || end < math.MinInt32 {
			return types.Datum{}, pgerror.New(pgerror.NumericValueOutOfRange, "integer out of range")
		}
		head := s[:min(start-1, int64(len(s)))]
		tail := s[min(max(end-1, 0), int64(len(s))):]
		return types.NewText(string(head) + string(r) + string(tail)), nil
	}
	pure("overlay", strict(params(text, text, i4), text, overlay), strict(params(text, text, i4, i4), text, overlay))
	pure("starts_with", strict(params(text, text), boolT, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		return types.NewBool(strings.HasPrefix(a[0].S, a[1].S)), nil
	}))
	alias("startswith", "starts_with")
	pure("endswith", strict(params(text, text), boolT, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		return types.NewBool(strings.HasSuffix(a[0].S, a[1].S)), nil
	}))
	pure("to_hex",
		strict(params(i4), text, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			return types.NewText(hexString(uint64(uint32(a[0].I)))), nil
		}),
		strict(params(i8), text, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			return types.NewText(hexString(uint64(a[0].I))), nil
		}))
	pure("quote_ident", strict(params(text), text, textFn("quote_ident", 2, QuoteIdent)))
	// quote_literal and quote_nullable take any value through its text form.
	pure("quote_literal", &Overload{Params: params(anyType), Ret: ret(text), NullStrict: true, Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
		return types.NewText(QuoteLiteral(string(types.AppendText(nil, a[0], c.Env)))), nil
	}})
	pure("quote_nullable", &Overload{Params: params(anyType), Ret: ret(text), Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
		if a[0].IsNull() {
			return types.NewText("NULL"), nil
		}
		return types.NewText(QuoteLiteral(string(types.AppendText(nil, a[0], c.Env)))), nil
	}})
}

func hexString(u uint64) string {
	const digits = "0123456789abcdef"
	if u == 0 {
		return "0"
	}
	var b [16]byte
	i := len(b)
	for u > 0 {
		i--
		b[i] = digits[u&15]
		u >>= 4
	}
	return string(b[i:])
}

// initcap upper-cases the first letter of each word and lower-cases the
// rest; a word is a run of letters and digits.
func initcap(s string) string {
	var b strings.Builder
	prevAlnum := false
	for _, r := range s {
		if prevAlnum {
			b.WriteRune(unicode.ToLower(r))
		} else {
			b.WriteRune(unicode.ToUpper(r))
		}
		prevAlnum = unicode.IsLetter(r) || unicode.IsDigit(r)
	}
	return b.String()
}

// QuoteIdent quotes an identifier as quote_ident does: unless it is all
// lower-case letters, digits and underscores, starts with neither a digit
// nor is a keyword other than an unreserved one.
func QuoteIdent(s string) string {
	safe := s != "" && !(s[0] >= '0' && s[0] <= '9') && !quotedKeywords[s]
	for i := 0; i < len(s) && safe; i++ {
		c := s[i]
		safe = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
	}
	if safe {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// QuoteLiteral quotes a string as quote_literal does: quotes doubled, and
// with a backslash, an E'...' string with backslashes doubled.
func QuoteLiteral(s string) string {
	s = strings.ReplaceAll(s, "'", "''")
	if strings.Contains(s, `\`) {
		return `E'` + strings.ReplaceAll(s, `\`, `\\`) + `'`
	}
	return "'" + s + "'"
}

// quotedKeywords are PostgreSQL 15's keywords that are not unreserved
// (pg_get_keywords() with catcode <> 'U'): quote_ident quotes them.
var quotedKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric authorization between bigint
		binary bit boolean both case cast char character check coalesce collate collation column concurrently
		constraint create cross current_catalog current_date current_role current_schema current_time
		current_timestamp current_user dec decimal default deferrable desc distinct do else end except exists
		extract false fetch float for foreign freeze from full grant greatest group grouping having ilike in
		initially inner inout int integer intersect interval into is isnull join lateral leading least left like
		limit localtime localtimestamp national natural nchar none normalize not notnull null nullif numeric
		offset on only or order out outer overlaps overlay placing position precision primary real references
		returning right row select session_user setof similar smallint some substring symmetric table
		tablesample then time timestamp to trailing treat trim true union unique user using values varchar
		variadic verbose when where window with xmlattributes xmlconcat xmlelement xmlexists xmlforest
		xmlnamespaces xmlparse xmlpi xmlroot xmlserialize xmltable`) {
		m[w] = true
	}
	return m
}()

// runeOffset is the byte offset in s after its first n characters (len(s)
// when it has fewer).
func runeOffset(s string, n int64) int {
	if n <= 0 {
		return 0
	}
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// writeRepeated writes n copies of s to b, a chunk of copies at a time.
func writeRepeated(b *strings.Builder, s string, n int64) {
	const chunk = 64 << 10
	if n*int64(len(s)) <= chunk {
		for range n {
			b.WriteString(s)
		}
		return
	}
	per := max(1, chunk/int64(len(s)))
	c := strings.Repeat(s, int(per))
	for ; n >= per; n -= per {
		b.WriteString(c)
	}
	for range n {
		b.WriteString(s)
	}
}
