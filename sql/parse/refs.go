package parse

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// RangeVars lists every relation reference (RangeVar) in a statement's tree,
// in tree order: what a view or materialized view reads (CTE names appear
// too; the caller resolves and skips them).
func RangeVars(n *pg_query.Node) []*pg_query.RangeVar {
	var out []*pg_query.RangeVar
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if rv, ok := m.Interface().(*pg_query.RangeVar); ok {
			out = append(out, rv)
			return
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					walk(l.Get(i).Message())
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
	return out
}

// CTENames lists the names of the WITH queries in a statement's tree.
func CTENames(n *pg_query.Node) map[string]bool {
	names := map[string]bool{}
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if c, ok := m.Interface().(*pg_query.CommonTableExpr); ok {
			names[c.Ctename] = true
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					walk(l.Get(i).Message())
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
	return names
}

// Deparse turns a statement tree back into SQL text (canonical spelling).
// Semi and anti joins come back as LEFT SEMI / LEFT ANTI JOIN (see
// deparseJoinMarks), so the text parses to the same tree.
func Deparse(n *pg_query.Node) (string, error) {
	return deparseJoinMarks(n, func(n *pg_query.Node) (string, error) {
		t, err := pg_query.Parse("SELECT 1")
		if err != nil {
			return "", err
		}
		return pg_query.Deparse(&pg_query.ParseResult{Version: t.Version, Stmts: []*pg_query.RawStmt{{Stmt: n}}})
	})
}
