package parse

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// DataChange reports whether sql is one INSERT, UPDATE, DELETE or MERGE
// (what a DO block's EXCEPTION clause cannot undo without
// subtransactions).
func DataChange(sql string) bool {
	st, err := ParseOne(sql)
	if err != nil || st == nil || st.AST == nil {
		return false
	}
	switch st.AST.Node.(type) {
	case *pg_query.Node_InsertStmt, *pg_query.Node_UpdateStmt, *pg_query.Node_DeleteStmt, *pg_query.Node_MergeStmt:
		return true
	}
	return false
}
