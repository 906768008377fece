package parse

import pg_query "github.com/pganalyze/pg_query_go/v6"

// PrettyExpr is the pretty form of an expression's text, as
// pg_get_constraintdef(oid, true) and pg_get_expr(…, true) print it: the
// parentheses the catalog keeps around each operator and boolean
// combination ("((a > 0) AND (b > 0))") are dropped where precedence
// makes them redundant ("a > 0 AND b > 0"). Text that does not parse as
// one expression is returned unchanged.
func PrettyExpr(sql string) string {
	tree, err := pg_query.Parse("SELECT " + sql)
	if err != nil || len(tree.Stmts) != 1 {
		return sql
	}
	sel := tree.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 || sel.FromClause != nil || sel.TargetList[0].GetResTarget() == nil {
		return sql
	}
	out, err := DeparseExpr(sel.TargetList[0].GetResTarget().Val)
	if err != nil {
		return sql
	}
	return out
}
