package parse

import (
	"strings"
	"sync"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/mvserver/mvserver/pgerror"
)

// walkTree calls visit on every message of a statement's tree, pre-order;
// visit returning false skips that message's children.
func walkTree(n *pg_query.Node, visit func(protoreflect.Message) bool) {
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if !visit(m) {
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
}

// RangeVarParts is a relation reference's name as catalog.Resolve takes
// it: [catalog.][schema.]name.
func RangeVarParts(rv *pg_query.RangeVar) []string {
	var parts []string
	if rv.Catalogname != "" {
		parts = append(parts, rv.Catalogname)
	}
	if rv.Schemaname != "" {
		parts = append(parts, rv.Schemaname)
	}
	return append(parts, rv.Relname)
}

// RangeVars lists every relation reference (RangeVar) in a statement's tree,
// in tree order: what a view or materialized view reads (CTE names appear
// too; the caller resolves and skips them).
func RangeVars(n *pg_query.Node) []*pg_query.RangeVar {
	var out []*pg_query.RangeVar
	walkTree(n, func(m protoreflect.Message) bool {
		if rv, ok := m.Interface().(*pg_query.RangeVar); ok {
			out = append(out, rv)
			return false
		}
		return true
	})
	return out
}

// CTENames lists the names of the WITH queries in a statement's tree.
func CTENames(n *pg_query.Node) map[string]bool {
	names := map[string]bool{}
	walkTree(n, func(m protoreflect.Message) bool {
		if c, ok := m.Interface().(*pg_query.CommonTableExpr); ok {
			names[c.Ctename] = true
		}
		return true
	})
	return names
}

var (
	versionOnce sync.Once
	version     int32
)

// TreeVersion is the parse-tree version pg_query's deparser expects in a
// ParseResult built by hand (read once from a parse).
func TreeVersion() int32 {
	versionOnce.Do(func() {
		if t, err := pg_query.Parse("SELECT 1"); err == nil {
			version = t.Version
		}
	})
	return version
}

// Deparse turns a statement tree back into SQL text (canonical spelling).
// Semi and anti joins come back as LEFT SEMI / LEFT ANTI JOIN (see
// deparseJoinMarks) and QUALIFY as QUALIFY (deparseQualify), so the text
// parses to the same tree.
func Deparse(n *pg_query.Node) (string, error) {
	return deparseQualify(n, func(n *pg_query.Node) (string, error) {
		return deparseJoinMarks(n, func(n *pg_query.Node) (string, error) {
			return deparse(&pg_query.ParseResult{Version: TreeVersion(), Stmts: []*pg_query.RawStmt{{Stmt: n}}})
		})
	})
}

// DeparseExpr turns an expression tree back into SQL text (a column
// default, a CHECK constraint).
func DeparseExpr(e *pg_query.Node) (string, error) {
	out, err := deparse(&pg_query.ParseResult{Version: TreeVersion(), Stmts: []*pg_query.RawStmt{{Stmt: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: &pg_query.SelectStmt{
		TargetList:  []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(e, 0)},
		LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT,
		Op:          pg_query.SetOperation_SETOP_NONE,
	}}}}}})
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(out, "SELECT "), nil
}

// deparse is pg_query.Deparse for a tree its C stack can take (depth.go).
// Its errors are *pgerror.Error: 54001 for a tree too deep, XX000 for one
// pg_query's deparser does not take.
func deparse(tree *pg_query.ParseResult) (string, error) {
	if err := checkDeparse(tree); err != nil {
		return "", err
	}
	out, err := pg_query.Deparse(tree)
	if err != nil {
		return "", pgerror.Wrap(err, pgerror.InternalError, "deparse")
	}
	return out, nil
}

// FuncCallNames lists the names (the last part) of the functions a
// statement's tree calls: what a view's query needs of the SQL functions
// (CREATE FUNCTION) it inlines.
func FuncCallNames(n *pg_query.Node) []string {
	var out []string
	walkTree(n, func(m protoreflect.Message) bool {
		if fc, ok := m.Interface().(*pg_query.FuncCall); ok && len(fc.Funcname) > 0 {
			if s := fc.Funcname[len(fc.Funcname)-1].GetString_(); s != nil {
				out = append(out, s.Sval)
			}
		}
		return true
	})
	return out
}

// QueryCalls reports the names of the functions a stored query's text
// calls (nil when it does not parse).
func QueryCalls(query string) []string {
	st, err := ParseOne(query)
	if err != nil || st.AST == nil {
		return nil
	}
	return FuncCallNames(st.AST)
}

// WalkNodes calls visit on every Node of a tree, pre-order; visit
// returning false skips that node's children.
func WalkNodes(n *pg_query.Node, visit func(*pg_query.Node) bool) {
	walkTree(n, func(m protoreflect.Message) bool {
		if x, ok := m.Interface().(*pg_query.Node); ok {
			return visit(x)
		}
		return true
	})
}
