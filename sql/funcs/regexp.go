package funcs

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// The regular-expression functions of PostgreSQL 15 (regexp_replace,
// regexp_match, regexp_matches, regexp_like, regexp_count, regexp_substr,
// regexp_instr, regexp_split_to_array/_table) and Databricks' rlike.
// Patterns are PostgreSQL's advanced regular expressions as far as Go's
// RE2 syntax reaches (what it lacks, back references and lookaround, is
// 2201B as an invalid pattern is). As in PostgreSQL, . matches a newline
// unless the n flag makes the match newline-sensitive.

// reFlags are a flags argument, parsed.
type reFlags struct {
	global bool
	prefix string // Go flags: (?i), (?s), (?m)
	quote  bool   // q: the pattern is a literal string
	expand bool   // x: whitespace and # comments are ignored
}

func parseReFlags(s string) (reFlags, error) {
	f := reFlags{}
	ci, dotNL, multi := false, true, false
	for _, c := range s {
		switch c {
		case 'g':
			f.global = true
		case 'i':
			ci = true
		case 'c':
			ci = false
		case 'n', 'm':
			dotNL, multi = false, true
		case 'p':
			dotNL, multi = false, false
		case 'w':
			dotNL, multi = true, true
		case 's':
			dotNL, multi = true, false
		case 'q':
			f.quote = true
		case 'x':
			f.expand = true
		case 't', 'e':
		case 'b':
			return f, pgerror.New(pgerror.FeatureNotSupported, "basic regular expressions (flag b) are not supported")
		default:
			return f, pgerror.New(pgerror.InvalidParameterValue, "invalid regular expression option: \"%c\"", c)
		}
	}
	var p []byte
	if ci {
		p = append(p, 'i')
	}
	if dotNL {
		p = append(p, 's')
	}
	if multi {
		p = append(p, 'm')
	}
	if len(p) > 0 {
		f.prefix = "(?" + string(p) + ")"
	}
	return f, nil
}

var reCache struct {
	sync.Mutex
	m map[string]*regexp.Regexp
}

// compileRe compiles a pattern under flags, caching the result.
func compileRe(pat string, f reFlags) (*regexp.Regexp, error) {
	key := f.prefix + "\x00" + pat
	if f.quote {
		key = "q" + key
	} else if f.expand {
		key = "x" + key
	}
	reCache.Lock()
	re, ok := reCache.m[key]
	reCache.Unlock()
	if ok {
		return re, nil
	}
	src := pat
	switch {
	case f.quote:
		src = regexp.QuoteMeta(pat)
	case f.expand:
		src = translateRe(stripExpanded(pat))
	default:
		src = translateRe(pat)
	}
	re, err := regexp.Compile(f.prefix + src)
	if err != nil {
		return nil, pgerror.New(pgerror.InvalidRegularExpression, "invalid regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	reCache.Lock()
	if reCache.m == nil || len(reCache.m) > 512 {
		reCache.m = map[string]*regexp.Regexp{}
	}
	reCache.m[key] = re
	reCache.Unlock()
	return re, nil
}

// translateRe rewrites what PostgreSQL's regular expressions spell or
// mean differently from RE2: \y and \Y (word boundary), \Z (end), and
// the character classes \w, \W and [[:alpha:]]-style names, which are
// Unicode-aware in a UTF8 database and ASCII-only in RE2.
func translateRe(p string) string {
	if !strings.ContainsAny(p, `\[`) {
		return p
	}
	var b strings.Builder
	inBracket := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\\' && i+1 < len(p) {
			switch p[i+1] {
			case 'y':
				b.WriteString(`\b`)
			case 'Y':
				b.WriteString(`\B`)
			case 'Z':
				b.WriteString(`\z`)
			case 'w':
				if inBracket {
					b.WriteString(`\p{L}\p{N}_`)
				} else {
					b.WriteString(`[\p{L}\p{N}_]`)
				}
			case 'W':
				if inBracket {
					b.WriteString(`\W`)
				} else {
					b.WriteString(`[^\p{L}\p{N}_]`)
				}
			default:
				b.WriteString(p[i : i+2])
			}
			i++
			continue
		}
		if inBracket && c == '[' && i+1 < len(p) && p[i+1] == ':' {
			if end := strings.Index(p[i:], ":]"); end > 0 {
				if repl, ok := unicodeClasses[p[i+2:i+end]]; ok {
					b.WriteString(repl)
					i += end + 1
					continue
				}
			}
		}
		switch {
		case !inBracket && c == '[':
			inBracket = true
			b.WriteByte(c)
			// a ] right after [ or [^ is a literal
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' {
				b.WriteString(`\]`)
				i++
			}
			continue
		case inBracket && c == ']':
			inBracket = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

// unicodeClasses are the bracket classes whose RE2 spelling is
// ASCII-only, as Unicode ones.
var unicodeClasses = map[string]string{
	"alpha": `\p{L}`, "alnum": `\p{L}\p{N}`, "upper": `\p{Lu}`, "lower": `\p{Ll}`, "word": `\p{L}\p{N}_`,
}

// stripExpanded removes the white space and # comments of an expanded
// (x flag) pattern, outside bracket expressions and escapes.
func stripExpanded(p string) string {
	var b strings.Builder
	inBracket := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			b.WriteString(p[i : i+2])
			i++
		case inBracket:
			if c == ']' {
				inBracket = false
			}
			b.WriteByte(c)
		case c == '[':
			inBracket = true
			b.WriteByte(c)
			if i+1 < len(p) && p[i+1] == ']' {
				b.WriteByte(']')
				i++
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case c == '#':
			for i < len(p) && p[i] != '\n' {
				i++
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// reArgs compiles a function's pattern with its flags (the argument at
// flagIdx, if present and not NULL).
func reArgs(a []types.Datum, patIdx, flagIdx int) (*regexp.Regexp, reFlags, error) {
	var fs string
	if flagIdx >= 0 && flagIdx < len(a) {
		fs = a[flagIdx].S
	}
	f, err := parseReFlags(fs)
	if err != nil {
		return nil, f, err
	}
	re, err := compileRe(a[patIdx].S, f)
	return re, f, err
}

func noGlobal(fn string, f reFlags, hint string) error {
	if !f.global {
		return nil
	}
	e := pgerror.New(pgerror.InvalidParameterValue, "%s() does not support the \"global\" option", fn)
	if hint != "" {
		e = e.WithHint("%s", hint)
	}
	return e
}

func badParam(name string, v int64) error {
	return pgerror.New(pgerror.InvalidParameterValue, "invalid value for parameter \"%s\": %d", name, v)
}

// byteOffset is the byte offset of character pos (1-based) of s, or
// len(s)+1 past its end.
func byteOffset(s string, pos int64) int {
	n := int64(1)
	for i := range s {
		if n == pos {
			return i
		}
		n++
	}
	if n == pos {
		return len(s)
	}
	return len(s) + 1
}

func charPos(s string, byteOff int) int64 {
	return int64(utf8.RuneCountInString(s[:byteOff]) + 1)
}

// matchesFrom returns the matches of re in s that start at byte offset
// from or later (all of them, or the first only).
//
// Each match found costs per bytes until the caller is done with it (its
// offsets, and what the caller builds from it): what they all take is
// reserved (the caller gives back held), and when they could take more
// than the budget has left only as many as fit are looked for, so that a
// string of millions of matches fails with 53200 (naming what) before
// they are all built.
func matchesFrom(c *Ctx, what string, re *regexp.Regexp, s string, from int, all bool, per int64) (ms [][]int, held int64, err error) {
	if from > len(s) {
		return nil, 0, nil
	}
	n := -1
	if !all && from == 0 {
		n = 1
	}
	per += matchBytes(re)
	capped := false
	if n < 0 && int64(len(s)+1)*per >= LargeValue {
		if avail := c.Available(); avail/per < int64(len(s)) {
			n, capped = int(avail/per)+1, true
		}
	}
	ms = re.FindAllStringSubmatchIndex(s, n)
	if capped && len(ms) == n {
		// More than fit, unless the budget has grown meanwhile: then
		// look for them all.
		worst := int64(len(s)+1) * per
		if err := c.Grow(what, worst); err != nil {
			return nil, 0, err
		}
		c.Shrink(worst)
		ms = re.FindAllStringSubmatchIndex(s, -1)
	}
	if held, err = c.Reserve(what, int64(len(ms))*per); err != nil {
		return nil, 0, err
	}
	if n < 0 && len(ms) > 0 {
		ms = withAbuttingEmpty(re, s, ms)
	}
	if from > 0 {
		out := ms[:0]
		for _, m := range ms {
			if m[0] >= from {
				out = append(out, m)
			}
		}
		ms = out
	}
	if !all && len(ms) > 1 {
		ms = ms[:1]
	}
	return ms, held, nil
}

// matchBytes is what one match found takes: its offsets (a pair for the
// match and for each group) and their slice.
func matchBytes(re *regexp.Regexp) int64 { return 24 + 16*int64(re.NumSubexp()+1) }

// withAbuttingEmpty adds the empty matches right after a non-empty one,
// which RE2 skips and PostgreSQL finds (regexp_replace('xy', 'x*', '-',
// 'g') is '--y-'). Whether the pattern matches empty there is asked of the
// rest of the string, so it is not asked of patterns whose meaning
// depends on what precedes (anchors, word boundaries).
func withAbuttingEmpty(re *regexp.Regexp, s string, ms [][]int) [][]int {
	src := re.String()
	if strings.ContainsAny(src, "^") || strings.Contains(src, `\b`) || strings.Contains(src, `\B`) || strings.Contains(src, `\A`) {
		return ms
	}
	var out [][]int
	for i, m := range ms {
		out = append(out, m)
		if m[1] == m[0] {
			continue
		}
		if i+1 < len(ms) && ms[i+1][0] == m[1] {
			continue // the next match starts there
		}
		if e := re.FindStringSubmatchIndex(s[m[1]:]); e != nil && e[0] == 0 && e[1] == 0 {
			for k := range e {
				if e[k] >= 0 {
					e[k] += m[1]
				}
			}
			out = append(out, e)
		}
	}
	return out
}

// groups returns a match's capture groups as a text[] (the whole match
// when the pattern has none); unmatched groups are NULL.
func groups(s string, m []int) types.Datum {
	if len(m) == 2 {
		return types.NewArrayOf(types.NewText(s[m[0]:m[1]]))
	}
	var out []types.Datum
	for i := 2; i < len(m); i += 2 {
		if m[i] < 0 {
			out = append(out, types.NullDatum)
		} else {
			out = append(out, types.NewText(s[m[i]:m[i+1]]))
		}
	}
	return types.NewArrayOf(out...)
}

// expandReplacement writes repl for match m of s: \1 to \9 are groups,
// \& the whole match and \\ a backslash.
func expandReplacement(b *strings.Builder, repl, s string, m []int) {
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c != '\\' || i+1 >= len(repl) {
			b.WriteByte(c)
			continue
		}
		n := repl[i+1]
		switch {
		case n >= '1' && n <= '9':
			g := int(n - '0')
			if 2*g+1 < len(m) && m[2*g] >= 0 {
				b.WriteString(s[m[2*g]:m[2*g+1]])
			}
			i++
		case n == '&':
			b.WriteString(s[m[0]:m[1]])
			i++
		case n == '\\':
			b.WriteByte('\\')
			i++
		default:
			b.WriteByte('\\')
		}
	}
}

func init() {
	text, i4, boolT := types.Text, types.Int4, types.Bool
	textArr := types.ArrayOf(types.Text)
	// regexp_replace(source, pattern, replacement [, flags]) and
	// (…, start [, N [, flags]]): N = 0 replaces every match; without N,
	// the g flag does.
	replace := func(c *Ctx, a []types.Datum, start, n int64, flags string) (types.Datum, error) {
		f, err := parseReFlags(flags)
		if err != nil {
			return types.Datum{}, err
		}
		re, err := compileRe(a[1].S, f)
		if err != nil {
			return types.Datum{}, err
		}
		if n < 0 {
			n = 0
			if !f.global {
				n = 1
			}
		}
		s := a[0].S
		ms, held, err := matchesFrom(c, "function regexp_replace", re, s, byteOffset(s, start), n != 1, 0)
		if err != nil {
			return types.Datum{}, err
		}
		defer c.Release(held)
		var b strings.Builder
		bld := c.building("function regexp_replace")
		defer bld.done()
		last := 0
		for i, m := range ms {
			if n > 0 && int64(i+1) != n {
				continue
			}
			// The text grows by doubling: it may take twice its size.
			if err := bld.need(2 * int64(b.Len()+m[0]-last+len(a[2].S)+m[1]-m[0])); err != nil {
				return types.Datum{}, err
			}
			b.WriteString(s[last:m[0]])
			expandReplacement(&b, a[2].S, s, m)
			last = m[1]
		}
		b.WriteString(s[last:])
		return types.NewText(b.String()), nil
	}
	pure("regexp_replace",
		strict(params(text, text, text), text, func(c *Ctx, a []types.Datum) (types.Datum, error) { return replace(c, a, 1, -1, "") }),
		strict(params(text, text, text, text), text, func(c *Ctx, a []types.Datum) (types.Datum, error) {
			return replace(c, a, 1, -1, a[3].S)
		}),
		strict(params(text, text, text, i4), text, func(c *Ctx, a []types.Datum) (types.Datum, error) {
			if a[3].I <= 0 {
				return types.Datum{}, badParam("start", a[3].I)
			}
			return replace(c, a, a[3].I, -1, "")
		}),
		strict(params(text, text, text, i4, i4), text, func(c *Ctx, a []types.Datum) (types.Datum, error) {
			if a[3].I <= 0 {
				return types.Datum{}, badParam("start", a[3].I)
			}
			if a[4].I < 0 {
				return types.Datum{}, badParam("n", a[4].I)
			}
			return replace(c, a, a[3].I, a[4].I, "")
		}),
		strict(params(text, text, text, i4, i4, text), text, func(c *Ctx, a []types.Datum) (types.Datum, error) {
			if a[3].I <= 0 {
				return types.Datum{}, badParam("start", a[3].I)
			}
			if a[4].I < 0 {
				return types.Datum{}, badParam("n", a[4].I)
			}
			return replace(c, a, a[3].I, a[4].I, a[5].S)
		}))
	match := func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		re, f, err := reArgs(a, 1, 2)
		if err != nil {
			return types.Datum{}, err
		}
		if err := noGlobal("regexp_match", f, "Use the regexp_matches function instead."); err != nil {
			return types.Datum{}, err
		}
		m := re.FindStringSubmatchIndex(a[0].S)
		if m == nil {
			return types.NullDatum, nil
		}
		return groups(a[0].S, m), nil
	}
	pure("regexp_match", strict(params(text, text), textArr, match), strict(params(text, text, text), textArr, match))
	matches := func(c *Ctx, a []types.Datum) (RowIter, error) {
		re, f, err := reArgs(a, 1, 2)
		if err != nil {
			return nil, err
		}
		s := a[0].S
		// Each match becomes a row holding a text[] of its groups; the
		// rows are kept (charged to the call) until they are read.
		ms, _, err := matchesFrom(c, "set-returning function regexp_matches", re, s, 0, f.global,
			2*types.DatumBytes+32+int64(max(re.NumSubexp(), 1))*types.DatumBytes)
		if err != nil {
			return nil, err
		}
		rows := make([]types.Datum, 0, len(ms))
		for _, m := range ms {
			rows = append(rows, groups(s, m))
		}
		return sliceIter(rows), nil
	}
	pure("regexp_matches",
		&Overload{Params: params(text, text), Ret: ret(textArr), NullStrict: true, SRF: matches},
		&Overload{Params: params(text, text, text), Ret: ret(textArr), NullStrict: true, SRF: matches})
	like := func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		re, f, err := reArgs(a, 1, 2)
		if err != nil {
			return types.Datum{}, err
		}
		if err := noGlobal("regexp_like", f, ""); err != nil {
			return types.Datum{}, err
		}
		return types.NewBool(re.MatchString(a[0].S)), nil
	}
	pure("regexp_like", strict(params(text, text), boolT, like), strict(params(text, text, text), boolT, like))
	// Databricks: rlike(str, regex) and regexp(str, regex).
	pure("rlike", strict(params(text, text), boolT, like))
	pure("regexp", strict(params(text, text), boolT, like))
	count := func(c *Ctx, a []types.Datum) (types.Datum, error) {
		start := int64(1)
		if len(a) > 2 {
			if start = a[2].I; start <= 0 {
				return types.Datum{}, badParam("start", start)
			}
		}
		re, f, err := reArgs(a, 1, 3)
		if err != nil {
			return types.Datum{}, err
		}
		if err := noGlobal("regexp_count", f, ""); err != nil {
			return types.Datum{}, err
		}
		s := a[0].S
		ms, held, err := matchesFrom(c, "function regexp_count", re, s, byteOffset(s, start), true, 0)
		c.Release(held)
		return types.NewInt4(int64(len(ms))), err
	}
	pure("regexp_count", strict(params(text, text), i4, count), strict(params(text, text, i4), i4, count),
		strict(params(text, text, i4, text), i4, count))
	// nth finds the N'th match from start for regexp_substr/regexp_instr;
	// its sub-expression sub (0: the whole match) as byte offsets.
	nth := func(c *Ctx, fn string, a []types.Datum, flagIdx, subIdx int) (string, []int, int, error) {
		start, n, sub := int64(1), int64(1), int64(0)
		if len(a) > 2 {
			if start = a[2].I; start <= 0 {
				return "", nil, 0, badParam("start", start)
			}
		}
		if len(a) > 3 {
			if n = a[3].I; n <= 0 {
				return "", nil, 0, badParam("n", n)
			}
		}
		if subIdx < len(a) {
			if sub = a[subIdx].I; sub < 0 {
				return "", nil, 0, badParam("subexpr", sub)
			}
		}
		re, f, err := reArgs(a, 1, flagIdx)
		if err != nil {
			return "", nil, 0, err
		}
		if err := noGlobal(fn, f, ""); err != nil {
			return "", nil, 0, err
		}
		s := a[0].S
		ms, held, err := matchesFrom(c, "function "+fn, re, s, byteOffset(s, start), true, 0)
		c.Release(held)
		if err != nil {
			return "", nil, 0, err
		}
		if int64(len(ms)) < n || 2*sub+1 >= int64(len(ms[n-1])) {
			return s, nil, 0, nil
		}
		return s, ms[n-1], int(sub), nil
	}
	substr := func(c *Ctx, a []types.Datum) (types.Datum, error) {
		s, m, sub, err := nth(c, "regexp_substr", a, 4, 5)
		if err != nil || m == nil || m[2*sub] < 0 {
			return types.NullDatum, err
		}
		return types.NewText(s[m[2*sub]:m[2*sub+1]]), nil
	}
	pure("regexp_substr", strict(params(text, text), text, substr), strict(params(text, text, i4), text, substr),
		strict(params(text, text, i4, i4), text, substr), strict(params(text, text, i4, i4, text), text, substr),
		strict(params(text, text, i4, i4, text, i4), text, substr))
	instr := func(c *Ctx, a []types.Datum) (types.Datum, error) {
		end := int64(0)
		if len(a) > 4 {
			if end = a[4].I; end != 0 && end != 1 {
				return types.Datum{}, badParam("endoption", end)
			}
		}
		s, m, sub, err := nth(c, "regexp_instr", a, 5, 6)
		if err != nil || m == nil || m[2*sub] < 0 {
			return types.NewInt4(0), err
		}
		if end == 1 {
			return types.NewInt4(charPos(s, m[2*sub+1])), nil
		}
		return types.NewInt4(charPos(s, m[2*sub])), nil
	}
	pure("regexp_instr", strict(params(text, text), i4, instr), strict(params(text, text, i4), i4, instr),
		strict(params(text, text, i4, i4), i4, instr), strict(params(text, text, i4, i4, i4), i4, instr),
		strict(params(text, text, i4, i4, i4, text), i4, instr), strict(params(text, text, i4, i4, i4, text, i4), i4, instr))
	// split returns the pieces and what it reserved for them (a Datum each,
	// and the match that ends it while they are found).
	split := func(c *Ctx, fn, what string, a []types.Datum) ([]types.Datum, int64, error) {
		re, f, err := reArgs(a, 1, 2)
		if err != nil {
			return nil, 0, err
		}
		if err := noGlobal(fn, f, ""); err != nil {
			return nil, 0, err
		}
		s := a[0].S
		ms, held, err := splitMatches(c, what, re, s)
		if err != nil {
			return nil, 0, err
		}
		out := make([]types.Datum, 0, len(ms)+1)
		last := 0
		for _, m := range ms {
			// An empty match at either end of the string or right after
			// the previous one splits nothing off.
			if m[0] == m[1] && (m[0] == 0 || m[0] == len(s) || m[0] == last) {
				continue
			}
			out = append(out, types.NewText(s[last:m[0]]))
			last = m[1]
		}
		return append(out, types.NewText(s[last:])), held, nil
	}
	splitArr := func(c *Ctx, a []types.Datum) (types.Datum, error) {
		parts, held, err := split(c, "regexp_split_to_array", "function regexp_split_to_array", a)
		defer c.Release(held)
		if err != nil {
			return types.Datum{}, err
		}
		return types.NewArray(types.KindArray, parts), nil
	}
	pure("regexp_split_to_array", strict(params(text, text), textArr, splitArr), strict(params(text, text, text), textArr, splitArr))
	// The pieces are kept until they are read: the charge stays with the
	// call (the operator running it gives it back when the call ends).
	splitTab := func(c *Ctx, a []types.Datum) (RowIter, error) {
		parts, _, err := split(c, "regexp_split_to_table", "set-returning function regexp_split_to_table", a)
		return sliceIter(parts), err
	}
	pure("regexp_split_to_table",
		&Overload{Params: params(text, text), Ret: ret(text), NullStrict: true, SRF: splitTab},
		&Overload{Params: params(text, text, text), Ret: ret(text), NullStrict: true, SRF: splitTab})
}

// substringRegex is substring(s FROM pattern): the first match, or its
// first parenthesized part (NULL when that took no part).
func substringRegex(_ *Ctx, a []types.Datum) (types.Datum, error) {
	re, err := compileRe(a[1].S, reFlags{prefix: "(?s)"})
	if err != nil {
		return types.Datum{}, err
	}
	m := re.FindStringSubmatchIndex(a[0].S)
	switch {
	case m == nil:
		return types.NullDatum, nil
	case len(m) > 2 && m[2] < 0:
		return types.NullDatum, nil
	case len(m) > 2:
		return types.NewText(a[0].S[m[2]:m[3]]), nil
	}
	return types.NewText(a[0].S[m[0]:m[1]]), nil
}

// splitMatches finds the matches that split s (regexp_split_to_array and
// _table), each costing its offsets and a piece's Datum, within the budget
// as matchesFrom does.
func splitMatches(c *Ctx, what string, re *regexp.Regexp, s string) ([][]int, int64, error) {
	per := 40 + types.DatumBytes
	n, capped := -1, false
	if int64(len(s)+1)*per >= LargeValue {
		if avail := c.Available(); avail/per < int64(len(s)) {
			n, capped = int(avail/per)+1, true
		}
	}
	ms := re.FindAllStringIndex(s, n)
	if capped && len(ms) == n {
		worst := int64(len(s)+1) * per
		if err := c.Grow(what, worst); err != nil {
			return nil, 0, err
		}
		c.Shrink(worst)
		ms = re.FindAllStringIndex(s, -1)
	}
	held, err := c.Reserve(what, int64(len(ms)+1)*per)
	return ms, held, err
}
