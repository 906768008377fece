package parse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// QualifyNames is pg_get_viewdef's and pg_get_expr's schema
// qualification: PostgreSQL prints a relation's schema when the session's
// search path would not find that relation by its bare name (pg_dump
// sets an empty search path, so its dump names public.orders). qual gets
// each bare relation name of the statement that no WITH query of it
// defines (seq false), and each bare sequence-name literal of nextval,
// currval and setval (seq true), and returns the schema to write, or ""
// to leave the name. sql is a statement, or an expression when expr is
// set. The text is returned unchanged when nothing is qualified or it
// does not parse; otherwise it is deparsed.
func QualifyNames(sql string, expr bool, qual func(name string, seq bool) string) string {
	text := sql
	if expr {
		text = "SELECT " + sql
	}
	tree, err := pg_query.Parse(text)
	if err != nil || len(tree.Stmts) != 1 {
		return sql
	}
	root := tree.Stmts[0].Stmt
	ctes := CTENames(root)
	changed := false
	walkTree(root, func(m protoreflect.Message) bool {
		switch x := m.Interface().(type) {
		case *pg_query.RangeVar:
			if x.Schemaname == "" && x.Catalogname == "" && !ctes[x.Relname] {
				if s := qual(x.Relname, false); s != "" {
					x.Schemaname, changed = s, true
				}
			}
			return false
		case *pg_query.FuncCall:
			name := strings.ToLower(strVal(x.Funcname[len(x.Funcname)-1]))
			if (name == "nextval" || name == "currval" || name == "setval") && len(x.Args) > 0 {
				if sv := seqLiteral(x.Args[0]); sv != nil && isBareName(sv.Sval) {
					if s := qual(sv.Sval, true); s != "" {
						sv.Sval, changed = quoteName(s)+"."+sv.Sval, true
					}
				}
			}
		}
		return true
	})
	if !changed {
		return sql
	}
	var out string
	if expr {
		sel := root.GetSelectStmt()
		if sel == nil || len(sel.TargetList) != 1 {
			return sql
		}
		out, err = DeparseExpr(sel.TargetList[0].GetResTarget().Val)
	} else {
		out, err = Deparse(root)
	}
	if err != nil {
		return sql
	}
	return out
}

func strVal(n *pg_query.Node) string {
	if s := n.GetString_(); s != nil {
		return s.Sval
	}
	return ""
}

// isBareName reports whether a regclass literal is one lower-case
// identifier (no schema, no quotes), the only form QualifyNames changes.
func isBareName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && (r >= '0' && r <= '9' || r == '$')) {
			return false
		}
	}
	return true
}

// quoteName double-quotes an identifier unless it is a plain lower-case one.
func quoteName(s string) string {
	if isBareName(s) {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// SequenceNames lists the sequence-name literals of the nextval, currval
// and setval calls in an expression ("seq" or "schema.seq" as written).
func SequenceNames(expr string) []string {
	tree, err := pg_query.Parse("SELECT " + expr)
	if err != nil || len(tree.Stmts) != 1 {
		return nil
	}
	var out []string
	walkTree(tree.Stmts[0].Stmt, func(m protoreflect.Message) bool {
		if x, ok := m.Interface().(*pg_query.FuncCall); ok {
			name := strings.ToLower(strVal(x.Funcname[len(x.Funcname)-1]))
			if (name == "nextval" || name == "currval" || name == "setval") && len(x.Args) > 0 {
				if sv := seqLiteral(x.Args[0]); sv != nil {
					out = append(out, sv.Sval)
				}
			}
		}
		return true
	})
	return out
}

// seqLiteral is the string of a sequence argument 'name' or
// 'name'::regclass, nil for any other argument.
func seqLiteral(n *pg_query.Node) *pg_query.String {
	if tc := n.GetTypeCast(); tc != nil {
		n = tc.Arg
	}
	if c := n.GetAConst(); c != nil {
		if sv, ok := c.Val.(*pg_query.A_Const_Sval); ok {
			return sv.Sval
		}
	}
	return nil
}
