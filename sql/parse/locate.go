package parse

import (
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Locating constructs in a query, so that what blocks incremental refresh
// can be shown where it is written (R-I8: EXPLAIN CREATE, the NOTICEs and
// mv_insights give a line and column). Every locator returns a pg_query
// location — a byte offset into Statement.SQL — or -1 when the construct is
// not in the tree. When a construct occurs more than once, the first in the
// text wins (protobuf reflection walks fields in no fixed order, so the
// smallest location is taken rather than the first visited).

// firstLocation returns the smallest non-negative location that loc gives
// for a message of the tree, or -1.
func firstLocation(n *pg_query.Node, loc func(m protoreflect.ProtoMessage) int32) int32 {
	best := int32(-1)
	walkTree(n, func(m protoreflect.Message) bool {
		if l := loc(m.Interface()); l >= 0 && (best < 0 || l < best) {
			best = l
		}
		return true
	})
	return best
}

// nowValueFunctions are the SQL value functions the binder reads as now()
// (CURRENT_TIMESTAMP, LOCALTIMESTAMP, CURRENT_DATE, with or without a
// precision), so a blocker on now() points at them too.
var nowValueFunctions = map[pg_query.SQLValueFunctionOp]bool{
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP:   true,
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N: true,
	pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP:      true,
	pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:    true,
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:        true,
}

// FuncLocation locates the first call of the function name (its last name
// part, lower case as the binder sees it), in expressions and in FROM.
func FuncLocation(n *pg_query.Node, name string) int32 {
	return firstLocation(n, func(m protoreflect.ProtoMessage) int32 {
		switch x := m.(type) {
		case *pg_query.FuncCall:
			if len(x.Funcname) > 0 && nameString(x.Funcname[len(x.Funcname)-1]) == name {
				return x.Location
			}
		case *pg_query.SQLValueFunction:
			if name == "now" && nowValueFunctions[x.Op] {
				return x.Location
			}
		}
		return -1
	})
}

// RelationLocation locates the first relation reference (RangeVar) that
// match accepts.
func RelationLocation(n *pg_query.Node, match func(*pg_query.RangeVar) bool) int32 {
	return firstLocation(n, func(m protoreflect.ProtoMessage) int32 {
		if rv, ok := m.(*pg_query.RangeVar); ok && match(rv) {
			return rv.Location
		}
		return -1
	})
}

// RecursiveWithLocation locates the WITH RECURSIVE clause that defines the
// query named cte ("" = any WITH RECURSIVE).
func RecursiveWithLocation(n *pg_query.Node, cte string) int32 {
	return firstLocation(n, func(m protoreflect.ProtoMessage) int32 {
		w, ok := m.(*pg_query.WithClause)
		if !ok || !w.Recursive {
			return -1
		}
		if cte == "" {
			return w.Location
		}
		for _, c := range w.Ctes {
			if ce := c.GetCommonTableExpr(); ce != nil && ce.Ctename == cte {
				return w.Location
			}
		}
		return -1
	})
}

// SubLinkLocation locates the first subquery used as an expression. Scalar
// and array subqueries come first: EXISTS and IN subqueries are usually
// turned into joins, so they are the likelier culprit only when no other
// subquery is there.
func SubLinkLocation(n *pg_query.Node) int32 {
	pick := func(joinable bool) int32 {
		return firstLocation(n, func(m protoreflect.ProtoMessage) int32 {
			sl, ok := m.(*pg_query.SubLink)
			if !ok {
				return -1
			}
			isJoinable := sl.SubLinkType == pg_query.SubLinkType_EXISTS_SUBLINK || sl.SubLinkType == pg_query.SubLinkType_ANY_SUBLINK
			if isJoinable != joinable {
				return -1
			}
			return sl.Location
		})
	}
	if l := pick(false); l >= 0 {
		return l
	}
	return pick(true)
}

// ColumnLocation locates the first reference to a column named column
// (the last part of a possibly qualified column reference).
func ColumnLocation(n *pg_query.Node, column string) int32 {
	return firstLocation(n, func(m protoreflect.ProtoMessage) int32 {
		cr, ok := m.(*pg_query.ColumnRef)
		if !ok || len(cr.Fields) == 0 {
			return -1
		}
		if nameString(cr.Fields[len(cr.Fields)-1]) == column {
			return cr.Location
		}
		return -1
	})
}

// LimitLocation locates the first LIMIT, OFFSET or FETCH keyword of the
// statement: pg_query keeps the location of the count, not of the keyword,
// so the keyword is the last such word before the count in the text.
func (s *Statement) LimitLocation() int32 {
	count := firstLocation(s.AST, func(m protoreflect.ProtoMessage) int32 {
		sel, ok := m.(*pg_query.SelectStmt)
		if !ok {
			return -1
		}
		best := int32(-1)
		for _, e := range []*pg_query.Node{sel.LimitCount, sel.LimitOffset} {
			if l := nodeStart(e); l >= 0 && (best < 0 || l < best) {
				best = l
			}
		}
		return best
	})
	kw := int32(-1)
	for _, t := range lex(s.SQL) {
		if count >= 0 && int32(t.start) >= count {
			break
		}
		if t.kind == tokIdent {
			switch strings.ToLower(t.text(s.SQL)) {
			case "limit", "offset", "fetch":
				kw = int32(t.start)
				if count < 0 {
					return kw
				}
			}
		}
	}
	if kw < 0 {
		return count
	}
	return kw
}

// nodeStart is the smallest location in a subtree (-1 when none), the
// start of an expression such as a LIMIT count.
func nodeStart(n *pg_query.Node) int32 {
	if n == nil || n.Node == nil {
		return -1
	}
	return firstLocation(n, func(m protoreflect.ProtoMessage) int32 {
		f := m.ProtoReflect().Descriptor().Fields().ByName("location")
		if f == nil || f.Kind() != protoreflect.Int32Kind {
			return -1
		}
		return int32(m.ProtoReflect().Get(f).Int())
	})
}

// TextPosition maps a pg_query location to a 1-based character position in
// the statement's own text (Text), 0 for an unknown location. Position, by
// contrast, counts from the start of the whole query string.
func (s *Statement) TextPosition(loc int32) int {
	if loc < 0 {
		return 0
	}
	off := int(loc)
	if s.m != nil {
		off = s.m.orig(off)
	}
	if off > len(s.Text) {
		off = len(s.Text)
	}
	return utf8.RuneCountInString(s.Text[:off]) + 1
}

// LineColumn turns a 1-based character position in text into a 1-based
// line and column (characters; a tab counts as one). ok is false for
// position 0 (unknown).
func LineColumn(text string, pos int) (line, col int, ok bool) {
	if pos <= 0 {
		return 0, 0, false
	}
	line, col = 1, 1
	i := 1
	for _, r := range text {
		if i == pos {
			break
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i++
	}
	return line, col, true
}

// nameString is the text of a String node (a name part), "" otherwise.
func nameString(n *pg_query.Node) string {
	if s := n.GetString_(); s != nil {
		return s.Sval
	}
	return ""
}
