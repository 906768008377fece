package parse

import (
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/mvserver/mvserver/pgerror"
)

// Databricks LEFT SEMI JOIN / LEFT ANTI JOIN (R-Q1) have no PostgreSQL
// spelling, but pg_query's JoinType has the very kinds (JOIN_SEMI,
// JOIN_ANTI: PostgreSQL's planner uses them internally). So the rewrite
// blanks out LEFT and SEMI/ANTI, leaving a plain `JOIN … ON/USING` of the
// same length at the same place (every position after it is unchanged),
// and records where that JOIN keyword is; after pg_query has parsed the
// statement, markJoins finds the JoinExpr it produced and sets its type.
// The binder then binds a semi/anti join; nothing else sees the spelling.

// joinMark is a JOIN keyword (its byte offset in the rewritten text) that
// was written as LEFT SEMI/ANTI JOIN.
type joinMark struct {
	off  int
	kind pg_query.JoinType
}

// rewriteSemiAntiJoin: LEFT SEMI JOIN → `          JOIN` marked semi
// (LEFT ANTI JOIN likewise).
func rewriteSemiAntiJoin(src string, sig []token, i int, b *builder) int {
	if i+2 >= len(sig) || !isWord(src, sig[i], "left") || !isWord(src, sig[i+2], "join") {
		return 0
	}
	var kind pg_query.JoinType
	switch strings.ToLower(sig[i+1].text(src)) {
	case "semi":
		kind = pg_query.JoinType_JOIN_SEMI
	case "anti":
		kind = pg_query.JoinType_JOIN_ANTI
	default:
		return 0
	}
	if sig[i+1].kind != tokIdent {
		return 0
	}
	join := sig[i+2]
	b.replace(sig[i].start, strings.Repeat(" ", join.start-sig[i].start))
	b.marks = append(b.marks, joinMark{off: b.sb.Len(), kind: kind})
	b.copy(src, join.start, join.end)
	return 3
}

// markJoins sets the type of the JoinExpr each mark stands for: the join
// whose right-hand input starts first after the JOIN keyword.
func markJoins(ast *pg_query.Node, marks []joinMark) error {
	type cand struct {
		j     *pg_query.JoinExpr
		start int
	}
	var joins []cand
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if j, ok := m.Interface().(*pg_query.JoinExpr); ok && j.Rarg != nil {
			joins = append(joins, cand{j, minLocation(j.Rarg.ProtoReflect())})
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for k := 0; k < l.Len(); k++ {
					walk(l.Get(k).Message())
				}
			case fd.Message() != nil && !fd.IsMap():
				walk(v.Message())
			}
			return true
		})
	}
	walk(ast.ProtoReflect())
	for _, mk := range marks {
		var best *cand
		for k := range joins {
			c := &joins[k]
			if c.start > mk.off && (best == nil || c.start < best.start) {
				best = c
			}
		}
		if best == nil || best.j.Jointype != pg_query.JoinType_JOIN_INNER {
			return pgerror.New(pgerror.InternalError, "could not place a LEFT SEMI/ANTI JOIN")
		}
		best.j.Jointype = mk.kind
	}
	return nil
}

// minLocation is the smallest location recorded anywhere in m (-1: none).
func minLocation(m protoreflect.Message) int {
	best := -1
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.Kind() == protoreflect.Int32Kind && fd.Name() == "location":
				if loc := int(v.Int()); loc >= 0 && (best < 0 || loc < best) {
					best = loc
				}
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for k := 0; k < l.Len(); k++ {
					walk(l.Get(k).Message())
				}
			case fd.Message() != nil && !fd.IsMap():
				walk(v.Message())
			}
			return true
		})
	}
	walk(m)
	return best
}

// deparseJoinMarks deparses n with its semi and anti joins spelled LEFT
// SEMI / LEFT ANTI JOIN. pg_query's deparser prints them as inner joins, so
// each is deparsed as an inner join under a marker alias, which puts it in
// parentheses of its own; the join keyword of that group is then rewritten
// and the marker replaced by the join's own alias, if it had one. The tree
// is left as it was.
func deparseJoinMarks(n *pg_query.Node, deparse func(*pg_query.Node) (string, error)) (string, error) {
	type marked struct {
		j     *pg_query.JoinExpr
		kind  pg_query.JoinType
		alias *pg_query.Alias
		name  string
	}
	var marks []marked
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if j, ok := m.Interface().(*pg_query.JoinExpr); ok && (j.Jointype == pg_query.JoinType_JOIN_SEMI || j.Jointype == pg_query.JoinType_JOIN_ANTI) {
			marks = append(marks, marked{j: j, kind: j.Jointype, alias: j.Alias, name: fmt.Sprintf("mvserver_join_mark_%d", len(marks))})
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for k := 0; k < l.Len(); k++ {
					walk(l.Get(k).Message())
				}
			case fd.Message() != nil && !fd.IsMap():
				walk(v.Message())
			}
			return true
		})
	}
	if n != nil {
		walk(n.ProtoReflect())
	}
	if len(marks) == 0 {
		return deparse(n)
	}
	for _, mk := range marks {
		a := &pg_query.Alias{Aliasname: mk.name}
		if mk.alias != nil {
			a.Colnames = mk.alias.Colnames
		}
		mk.j.Jointype, mk.j.Alias = pg_query.JoinType_JOIN_INNER, a
	}
	text, err := deparse(n)
	for _, mk := range marks {
		mk.j.Jointype, mk.j.Alias = mk.kind, mk.alias
	}
	if err != nil {
		return "", err
	}
	for _, mk := range marks {
		if text, err = unmarkJoin(text, mk.name, mk.kind, mk.alias); err != nil {
			return "", err
		}
	}
	return text, nil
}

// unmarkJoin rewrites `(… JOIN … ) marker` into `(… LEFT SEMI JOIN … )
// alias`.
func unmarkJoin(text, marker string, kind pg_query.JoinType, alias *pg_query.Alias) (string, error) {
	var sig []token
	for _, t := range lex(text) {
		if t.kind != tokSpace {
			sig = append(sig, t)
		}
	}
	fail := pgerror.New(pgerror.InternalError, "could not deparse a LEFT SEMI/ANTI JOIN")
	for i, t := range sig {
		if t.kind != tokIdent || t.text(text) != marker {
			continue
		}
		if i == 0 || sig[i-1].text(text) != ")" {
			return "", fail
		}
		// Find the group's opening parenthesis, remembering the last JOIN
		// keyword at the group's own depth (the join's: a left input that
		// is a join comes first, a right one is in parentheses).
		depth, join := 0, -1
		k := i - 1
		for ; k >= 0; k-- {
			switch sig[k].text(text) {
			case ")":
				depth++
			case "(":
				depth--
			}
			if depth == 0 {
				break
			}
			if depth == 1 && join < 0 && isWord(text, sig[k], "join") {
				join = k
			}
		}
		if k < 0 || join < 0 {
			return "", fail
		}
		// A deparsed inner join may read INNER JOIN.
		start := sig[join].start
		if join > 0 && isWord(text, sig[join-1], "inner") {
			start = sig[join-1].start
		}
		kw := "LEFT SEMI JOIN"
		if kind == pg_query.JoinType_JOIN_ANTI {
			kw = "LEFT ANTI JOIN"
		}
		name := ""
		if alias != nil {
			name = `"` + strings.ReplaceAll(alias.Aliasname, `"`, `""`) + `"`
		}
		return text[:start] + kw + text[sig[join].end:t.start] + name + text[t.end:], nil
	}
	return "", fail
}
