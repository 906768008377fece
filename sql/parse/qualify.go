package parse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Databricks QUALIFY (R-Q1) filters a SELECT's rows on window function
// results: SELECT … [WHERE] [GROUP BY] [HAVING] [WINDOW …] QUALIFY cond
// [ORDER BY] [LIMIT]. PostgreSQL's grammar has no such clause, but its
// WINDOW clause sits at the same place and holds expressions, so the
// rewrite turns
//
//	QUALIFY cond            into  WINDOW mvserver_qualify AS (PARTITION BY cond)
//	WINDOW w AS (…) QUALIFY cond  into  WINDOW w AS (…) , mvserver_qualify AS (PARTITION BY cond)
//
// (a WINDOW clause right after the condition is joined with a comma). The
// condition's own text is copied as it is, so every position in it stays
// true; the binder takes the marked definition out of the WINDOW clause
// and binds its one expression as the QUALIFY condition. Deparse spells
// it QUALIFY again.

// QualifyWindow is the name of the window definition that carries a
// QUALIFY condition.
const QualifyWindow = "mvserver_qualify"

// words after which "qualify" is a column or alias name, not the clause.
var qualifyNotAfter = map[string]bool{
	"select": true, "distinct": true, "all": true, "as": true, "where": true, "and": true, "or": true,
	"not": true, "by": true, "on": true, "when": true, "then": true, "else": true, "having": true,
	"qualify": true, "is": true, "in": true, "like": true, "ilike": true, "between": true, "case": true,
	"using": true, "returning": true, "set": true, "values": true, "from": true, "join": true,
}

// words that, right after "qualify", make it a name (an alias: FROM t
// qualify WHERE …).
var qualifyNotBefore = map[string]bool{
	"from": true, "where": true, "group": true, "having": true, "order": true, "limit": true,
	"offset": true, "join": true, "inner": true, "left": true, "right": true, "full": true,
	"cross": true, "natural": true, "on": true, "using": true, "union": true, "intersect": true,
	"except": true, "window": true, "as": true, "and": true, "or": true, "is": true, "in": true,
	"fetch": true, "for": true, "into": true, "returning": true,
}

// words that end a QUALIFY condition at its own depth.
var qualifyEnds = map[string]bool{
	"order": true, "limit": true, "offset": true, "fetch": true, "window": true, "union": true,
	"intersect": true, "except": true, "for": true, "qualify": true,
}

// rewriteQualify: see above. It consumes only the QUALIFY keyword and asks
// for ")" to be inserted where the condition ends, so the condition itself
// goes through the other rewrites.
func rewriteQualify(src string, sig []token, i int, b *builder) int {
	if !isWord(src, sig[i], "qualify") || i == 0 || i+1 >= len(sig) {
		return 0
	}
	prev, next := sig[i-1], sig[i+1]
	switch prev.kind {
	case tokIdent:
		if qualifyNotAfter[strings.ToLower(prev.text(src))] {
			return 0
		}
	case tokOp:
		if prev.text(src) != ")" {
			return 0
		}
	case tokQuoted, tokBacktick, tokString, tokNumber, tokParam:
	default:
		return 0
	}
	switch next.kind {
	case tokIdent:
		if qualifyNotBefore[strings.ToLower(next.text(src))] {
			return 0
		}
	case tokOp:
		if t := next.text(src); t != "(" && t != "-" && t != "+" {
			return 0
		}
	case tokSemi, tokEOF:
		return 0
	}
	// Where the condition ends: a clause keyword or a closing parenthesis
	// at its own depth, or the end of the statement.
	end, depth := len(sig), 0
scan:
	for j := i + 1; j < len(sig); j++ {
		t := sig[j]
		switch {
		case t.kind == tokOp && t.text(src) == "(":
			depth++
		case t.kind == tokOp && t.text(src) == ")":
			if depth == 0 {
				end = j
				break scan
			}
			depth--
		case depth == 0 && t.kind == tokIdent && qualifyEnds[strings.ToLower(t.text(src))]:
			end = j
			break scan
		}
	}
	if end == i+1 {
		return 0
	}
	// Is there a WINDOW clause before, in the same SELECT?
	hasWindow := false
	depth = 0
back:
	for k := i - 1; k >= 0; k-- {
		t := sig[k]
		switch {
		case t.kind == tokOp && t.text(src) == ")":
			depth++
		case t.kind == tokOp && t.text(src) == "(":
			if depth == 0 {
				break back
			}
			depth--
		case depth == 0 && isWord(src, t, "select"):
			break back
		case depth == 0 && isWord(src, t, "window"):
			hasWindow = true
			break back
		}
	}
	open := "WINDOW " + QualifyWindow + " AS (PARTITION BY"
	if hasWindow {
		open = ", " + QualifyWindow + " AS (PARTITION BY"
	}
	b.replace(sig[i].start, open)
	closing := insertion{at: end, text: ")"}
	if end < len(sig) && isWord(src, sig[end], "window") && !hasWindow {
		closing = insertion{at: end, text: ") ,", consume: true}
	}
	b.inserts = append(b.inserts, closing)
	return 1
}

// insertion is text to put before significant token at (or after the
// last one when at is their count), replacing that token when consume.
type insertion struct {
	at      int
	text    string
	consume bool
}

// deparseQualify deparses n with each QUALIFY marker window spelled as a
// QUALIFY clause again. The marker is moved last in its WINDOW clause for
// the deparse (and put back after), so its text ends the clause.
func deparseQualify(n *pg_query.Node, deparse func(*pg_query.Node) (string, error)) (string, error) {
	type moved struct {
		s    *pg_query.SelectStmt
		orig []*pg_query.Node
	}
	var ms []moved
	walkTree(n, func(m protoreflect.Message) bool {
		s, ok := m.Interface().(*pg_query.SelectStmt)
		if !ok {
			return true
		}
		for k, w := range s.WindowClause {
			if wd := w.GetWindowDef(); wd != nil && wd.Name == QualifyWindow {
				orig := s.WindowClause
				re := append(append(append([]*pg_query.Node(nil), orig[:k]...), orig[k+1:]...), w)
				s.WindowClause = re
				ms = append(ms, moved{s, orig})
				break
			}
		}
		return true
	})
	text, err := deparse(n)
	for _, m := range ms {
		m.s.WindowClause = m.orig
	}
	if err != nil || len(ms) == 0 {
		return text, err
	}
	for {
		out, ok := unmarkQualify(text)
		if !ok {
			return text, nil
		}
		text = out
	}
}

// unmarkQualify rewrites the first `WINDOW mvserver_qualify AS
// (PARTITION BY cond)` (or `, mvserver_qualify AS (…)` after other
// windows) into `QUALIFY cond`.
func unmarkQualify(text string) (string, bool) {
	var sig []token
	for _, t := range lex(text) {
		if t.kind != tokSpace {
			sig = append(sig, t)
		}
	}
	for i := 1; i+4 < len(sig); i++ {
		if !isWord(text, sig[i], QualifyWindow) || !isWord(text, sig[i+1], "as") || sig[i+2].text(text) != "(" ||
			!isWord(text, sig[i+3], "partition") || !isWord(text, sig[i+4], "by") {
			continue
		}
		start, lead := sig[i-1].start, "QUALIFY "
		switch {
		case isWord(text, sig[i-1], "window"):
		case sig[i-1].text(text) == ",":
			lead = " QUALIFY "
		default:
			continue
		}
		depth := 0
		for j := i + 2; j < len(sig); j++ {
			switch sig[j].text(text) {
			case "(":
				depth++
			case ")":
				depth--
				if depth == 0 {
					if j <= i+5 {
						return text, false
					}
					cond := text[sig[i+5].start:sig[j].start]
					return text[:start] + lead + strings.TrimRight(cond, " ") + text[sig[j].end:], true
				}
			}
		}
	}
	return text, false
}
