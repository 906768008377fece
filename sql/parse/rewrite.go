package parse

import (
	"container/heap"
	"regexp"
	"strings"
)

// posMap maps byte offsets of rewritten text back to the original text.
type posMap struct {
	segs []seg
	// joins are the JOIN keywords written LEFT SEMI/ANTI JOIN.
	joins []joinMark
}

// seg: rewritten bytes [newStart, newStart+length) came from original bytes
// starting at origStart; exact segments map byte for byte, others map every
// offset to origStart.
type seg struct {
	newStart, origStart, length int
	exact                       bool
	// inserted: text the rewrite added before origStart (QUALIFY's
	// closing parenthesis), no token of the client's.
	inserted bool
}

// insertedAt reports whether rewritten offset newOff falls in inserted
// text, and the original offset it stands before.
func (m *posMap) insertedAt(newOff int) (int, bool) {
	for i := len(m.segs) - 1; i >= 0; i-- {
		s := m.segs[i]
		if newOff >= s.newStart {
			return s.origStart, s.inserted && newOff < s.newStart+s.length
		}
	}
	return 0, false
}

func (m *posMap) orig(newOff int) int {
	for i := len(m.segs) - 1; i >= 0; i-- {
		s := m.segs[i]
		if newOff >= s.newStart {
			if s.exact {
				d := newOff - s.newStart
				if d > s.length {
					d = s.length
				}
				return s.origStart + d
			}
			return s.origStart
		}
	}
	return newOff
}

// builder assembles rewritten text and its position map.
type builder struct {
	sb      strings.Builder
	m       posMap
	marks   []joinMark
	inserts []insertion
}

func (b *builder) reset() {
	b.sb.Reset()
	b.m.segs = b.m.segs[:0]
	b.m.joins = b.m.joins[:0]
	b.marks = b.marks[:0]
	b.inserts = b.inserts[:0]
}

func (b *builder) copy(src string, start, end int) {
	if end <= start {
		return
	}
	b.m.segs = append(b.m.segs, seg{newStart: b.sb.Len(), origStart: start, length: end - start, exact: true})
	b.sb.WriteString(src[start:end])
}

func (b *builder) replace(origStart int, text string) {
	b.m.segs = append(b.m.segs, seg{newStart: b.sb.Len(), origStart: origStart, length: len(text)})
	b.sb.WriteString(text)
}

// rewrite is one Databricks/Spark spelling PostgreSQL's grammar lacks. apply
// looks at toks[i:] (non-space tokens in sig) and, when it matches, writes the
// replacement and returns how many significant tokens it consumed.
type rewrite struct {
	name string
	// starts are the words (lower case) a match begins with; "`" stands
	// for a backtick identifier. apply is tried only at such a token, so a
	// statement none of them occur in costs a map lookup per word
	// (TestRewriteStarts checks the lists against every apply).
	starts []string
	apply  func(src string, sig []token, i int, b *builder) int
}

// rewrites is the table of DESIGN.md's Databricks-spellings pass.
var rewrites = []rewrite{
	{name: "backtick identifier", starts: []string{"`"}, apply: rewriteBacktick},
	{name: "INTERVAL n unit", starts: []string{"interval"}, apply: rewriteIntervalLiteral},
	{name: "current_timestamp() / current_date()", starts: []string{"current_timestamp", "current_date", "current_time", "localtimestamp", "current_user", "session_user"}, apply: rewriteNiladicCall},
	{name: "LEFT SEMI JOIN / LEFT ANTI JOIN", starts: []string{"left"}, apply: rewriteSemiAntiJoin},
	{name: "TABLE(name) as a function argument", starts: []string{"table"}, apply: rewriteTableArg},
	{name: "QUALIFY cond", starts: []string{"qualify"}, apply: rewriteQualify},
	{name: "array(a, b) as a call", starts: []string{"array"}, apply: rewriteArrayCall},
	{name: "a [NOT] RLIKE/REGEXP b", starts: []string{"not", "rlike", "regexp"}, apply: rewriteRLike},
}

// rewritesAt maps a start word to the rewrites (in table order) that may
// match there; maxStartLen is its longest word.
var rewritesAt, maxStartLen = func() (map[string][]*rewrite, int) {
	m := map[string][]*rewrite{}
	n := 0
	for i := range rewrites {
		for _, w := range rewrites[i].starts {
			m[w] = append(m[w], &rewrites[i])
			n = max(n, len(w))
		}
	}
	return m, n
}()

// candidates returns the rewrites that may match at token t.
func candidates(src string, t token) []*rewrite {
	switch t.kind {
	case tokBacktick:
		return rewritesAt["`"]
	case tokIdent:
	default:
		return nil
	}
	if t.end-t.start > maxStartLen {
		return nil
	}
	var buf [32]byte
	w := buf[:0]
	for k := t.start; k < t.end; k++ {
		c := src[k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		w = append(w, c)
	}
	return rewritesAt[string(w)]
}

// rewriteRLike: Databricks' infix regular-expression match, a RLIKE b and
// a REGEXP b → a ~ b, a NOT RLIKE b → a !~ b. rlike(a, b) and regexp(a,
// b) calls are functions (sql/funcs) and stay.
func rewriteRLike(src string, sig []token, i int, b *builder) int {
	isOp := func(j int) bool {
		return j < len(sig) && (isWord(src, sig[j], "rlike") || isWord(src, sig[j], "regexp"))
	}
	if i == 0 || i+1 >= len(sig) {
		return 0
	}
	if isWord(src, sig[i], "not") && isOp(i+1) && i+2 < len(sig) && endsOperand(src, sig[i-1]) {
		b.replace(sig[i].start, "!~")
		b.replace(sig[i+1].start, "")
		return 2
	}
	if !isOp(i) || !endsOperand(src, sig[i-1]) {
		return 0
	}
	b.replace(sig[i].start, "~")
	return 1
}

// endsOperand: t can end an expression (a literal, a name, a closing
// parenthesis), so a word after it is an infix operator.
func endsOperand(src string, t token) bool {
	switch t.kind {
	case tokNumber, tokString, tokQuoted, tokBacktick:
		return true
	case tokOp:
		s := t.text(src)
		return s == ")" || s == "]"
	case tokIdent:
		return !operandKeywords[strings.ToLower(t.text(src))]
	}
	return false
}

// operandKeywords are words after which a name starts an expression.
var operandKeywords = map[string]bool{
	"select": true, "where": true, "and": true, "or": true, "not": true, "on": true, "when": true, "then": true,
	"else": true, "by": true, "having": true, "case": true, "in": true, "is": true, "like": true, "as": true,
	"from": true, "join": true, "distinct": true, "all": true, "qualify": true, "set": true, "values": true,
	"return": true, "returning": true, "limit": true, "offset": true, "using": true, "between": true,
}

// rewriteTableArg: event_log(TABLE(cat.sch.mv)) → event_log('cat.sch.mv').
// Only right after "(" or ",", so SQL's own TABLE name statement is untouched.
func rewriteTableArg(src string, sig []token, i int, b *builder) int {
	if !isWord(src, sig[i], "table") || i == 0 || i+3 >= len(sig) {
		return 0
	}
	if prev := sig[i-1].text(src); prev != "(" && prev != "," {
		return 0
	}
	if sig[i+1].text(src) != "(" {
		return 0
	}
	var name strings.Builder
	for j := i + 2; j < len(sig); j++ {
		t := sig[j]
		switch {
		case t.kind == tokIdent:
			name.WriteString(t.text(src))
		case t.kind == tokQuoted || t.kind == tokBacktick:
			s := t.text(src)
			name.WriteString(`"` + strings.ReplaceAll(s[1:len(s)-1], `"`, `""`) + `"`)
		case t.kind == tokOp && t.text(src) == ".":
			name.WriteString(".")
		case t.kind == tokOp && t.text(src) == ")":
			if name.Len() == 0 {
				return 0
			}
			b.replace(sig[i].start, "'"+strings.ReplaceAll(name.String(), "'", "''")+"'")
			return j + 1 - i
		default:
			return 0
		}
	}
	return 0
}

// rewriteBacktick: `a b` → "a b".
func rewriteBacktick(src string, sig []token, i int, b *builder) int {
	t := sig[i]
	if t.kind != tokBacktick {
		return 0
	}
	inner := src[t.start+1 : t.end]
	if strings.HasSuffix(inner, "`") {
		inner = inner[:len(inner)-1]
	}
	inner = strings.ReplaceAll(inner, "``", "`")
	inner = strings.ReplaceAll(inner, `"`, `""`)
	b.replace(t.start, `"`+inner+`"`)
	return 1
}

var intervalUnits = map[string]string{
	"year": "year", "years": "years", "month": "month", "months": "months",
	"week": "week", "weeks": "weeks", "day": "day", "days": "days",
	"hour": "hour", "hours": "hours", "minute": "minute", "minutes": "minutes",
	"second": "second", "seconds": "seconds", "millisecond": "millisecond",
	"milliseconds": "milliseconds", "microsecond": "microsecond", "microseconds": "microseconds",
}

// rewriteIntervalLiteral: INTERVAL 1 HOUR / INTERVAL 5 MINUTES / INTERVAL -2 DAYS
// → INTERVAL '1 HOUR'.
func rewriteIntervalLiteral(src string, sig []token, i int, b *builder) int {
	if !isWord(src, sig[i], "interval") || i+2 >= len(sig) {
		return 0
	}
	j := i + 1
	neg := ""
	if sig[j].kind == tokOp && sig[j].text(src) == "-" && j+1 < len(sig) {
		neg = "-"
		j++
	}
	if j+1 >= len(sig) || sig[j+1].kind != tokIdent {
		return 0
	}
	num := sig[j].text(src)
	switch {
	case sig[j].kind == tokNumber:
	case sig[j].kind == tokString && neg == "" && quotedNumber.MatchString(num):
		// INTERVAL '1' HOUR: a quoted number with a unit qualifier means
		// that many units (SQL standard), not seconds.
		num = strings.TrimSpace(num[1 : len(num)-1])
		if j+2 < len(sig) && isWord(src, sig[j+2], "to") {
			return 0 // INTERVAL '1 2' DAY TO HOUR: left to PostgreSQL's grammar
		}
	default:
		return 0
	}
	unit := strings.ToLower(sig[j+1].text(src))
	if _, ok := intervalUnits[unit]; !ok {
		return 0
	}
	b.copy(src, sig[i].start, sig[i].end)
	b.replace(sig[i+1].start, " '"+neg+num+" "+unit+"'")
	return j + 2 - i
}

// quotedNumber is a string literal holding one (signed) number.
var quotedNumber = regexp.MustCompile(`^'\s*[-+]?[0-9]+(\.[0-9]*)?\s*'$`)

// rewriteNiladicCall: current_timestamp() → current_timestamp (PostgreSQL's
// SQL-standard niladic functions take no parentheses).
func rewriteNiladicCall(src string, sig []token, i int, b *builder) int {
	if i+2 >= len(sig) || sig[i].kind != tokIdent {
		return 0
	}
	w := strings.ToLower(sig[i].text(src))
	if w != "current_timestamp" && w != "current_date" && w != "current_time" && w != "localtimestamp" && w != "current_user" && w != "current_schema" && w != "session_user" {
		return 0
	}
	if w == "current_schema" {
		return 0 // current_schema() is a real function in PostgreSQL
	}
	if sig[i+1].text(src) != "(" || sig[i+2].text(src) != ")" {
		return 0
	}
	b.copy(src, sig[i].start, sig[i].end)
	return 3
}

// applyRewrites rewrites src (one statement) and returns the new text and
// its position map.
func applyRewrites(src string, toks []token) (string, *posMap) {
	sig := make([]token, 0, len(toks))
	for _, t := range toks {
		if t.kind != tokSpace {
			sig = append(sig, t)
		}
	}
	return rewriteSig(src, sig)
}

// rewriteSig is applyRewrites given the significant tokens only.
func rewriteSig(src string, sig []token) (string, *posMap) {
	b := &builder{}
	var tb builder // one rewrite's output, reused
	last := 0      // original offset copied so far
	var pending pendingInserts
	// insert writes the pending insertions before significant token i (or
	// at the end); it reports whether one consumed token i.
	insert := func(i int) bool {
		consumed := false
		for pending.Len() > 0 && pending.h[0].at < i {
			heap.Pop(&pending) // its token was consumed by a rewrite
		}
		for pending.Len() > 0 && pending.h[0].at == i {
			in := heap.Pop(&pending).(pendingInsert)
			at := len(src)
			if i < len(sig) {
				at = sig[i].start
			}
			if i == len(sig) && len(sig) > 0 {
				at = sig[len(sig)-1].end
			}
			b.copy(src, last, at)
			b.replace(at, in.text)
			b.m.segs[len(b.m.segs)-1].inserted = true
			last = at
			if in.consume && i < len(sig) {
				last, consumed = sig[i].end, true
			}
		}
		return consumed
	}
	for i := 0; i < len(sig); {
		if insert(i) {
			i++
			continue
		}
		consumed := 0
		for _, rw := range candidates(src, sig[i]) {
			tb.reset()
			if n := rw.apply(src, sig, i, &tb); n > 0 {
				b.copy(src, last, sig[i].start)
				base := b.sb.Len()
				for _, s := range tb.m.segs {
					s.newStart += base
					b.m.segs = append(b.m.segs, s)
				}
				for _, mk := range tb.marks {
					mk.off += base
					b.m.joins = append(b.m.joins, mk)
				}
				for _, in := range tb.inserts {
					pending.push(in)
				}
				b.sb.WriteString(tb.sb.String())
				last = sig[i+n-1].end
				consumed = n
				break
			}
		}
		if consumed == 0 {
			consumed = 1
		}
		i += consumed
	}
	insert(len(sig))
	if last == 0 {
		return src, nil
	}
	b.copy(src, last, len(src))
	return b.sb.String(), &b.m
}

// pendingInserts holds the insertions rewrites asked for (QUALIFY's
// closing parenthesis, array(…)'s bracket) as a heap ordered by the token
// they go before, then by when they were asked for, so the pass looks at
// the next one only: a statement of many QUALIFY clauses once cost a scan
// of all of them at every token.
type pendingInserts struct {
	h   []pendingInsert
	seq int
}

type pendingInsert struct {
	insertion
	seq int
}

func (p *pendingInserts) push(in insertion) {
	p.seq++
	heap.Push(p, pendingInsert{in, p.seq})
}

func (p *pendingInserts) Len() int { return len(p.h) }
func (p *pendingInserts) Less(i, j int) bool {
	a, b := p.h[i], p.h[j]
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}
func (p *pendingInserts) Swap(i, j int) { p.h[i], p.h[j] = p.h[j], p.h[i] }
func (p *pendingInserts) Push(x any)    { p.h = append(p.h, x.(pendingInsert)) }
func (p *pendingInserts) Pop() any {
	x := p.h[len(p.h)-1]
	p.h = p.h[:len(p.h)-1]
	return x
}

func isWord(src string, t token, w string) bool {
	return t.kind == tokIdent && strings.EqualFold(t.text(src), w)
}
