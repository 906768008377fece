package parse

import (
	"fmt"
	"strings"
)

// nodeWords names pg_query node kinds in the words of SQL, for messages
// about what is not supported (never a Go type name).
var nodeWords = map[string]string{
	"RowExpr":          "row constructor",
	"XmlExpr":          "XML function",
	"XmlSerialize":     "XMLSERIALIZE",
	"GroupingFunc":     "GROUPING()",
	"CurrentOfExpr":    "WHERE CURRENT OF",
	"RangeTableSample": "TABLESAMPLE",
	"RangeTableFunc":   "XMLTABLE",
	"MultiAssignRef":   "multiple-column assignment",
	"MergeStmt":        "MERGE",
	"SetToDefault":     "DEFAULT",
	"AIndices":         "array slice",
	"ColumnRef":        "column reference",
	"RangeVar":         "table reference",
	"JoinExpr":         "join",
	"RangeFunction":    "function in FROM",
	"RangeSubselect":   "subquery in FROM",
	"SubLink":          "subquery",
	"ParamRef":         "parameter",
	"TypeCast":         "type cast",
	"CaseExpr":         "CASE",
	"BoolExpr":         "boolean expression",
	"NullTest":         "IS NULL test",
	"BooleanTest":      "IS TRUE test",
	"CoalesceExpr":     "COALESCE",
	"MinMaxExpr":       "GREATEST or LEAST",
	"SqlvalueFunction": "SQL value function",
	"CollateClause":    "COLLATE",
	"FuncCall":         "function call",
	"AArrayExpr":       "ARRAY constructor",
	"AIndirection":     "subscript or field selection",
	"AConst":           "constant",
	"AExpr":            "operator expression",
}

// NodeWords names the kind of a parsed node (a *pg_query.Node_X or its
// inner value) in SQL's words: "row constructor" for RowExpr, and for
// others its name split into lower-case words ("lock clause" for
// LockingClause).
func NodeWords(n any) string {
	name := fmt.Sprintf("%T", n)
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	name = strings.TrimPrefix(name, "Node_")
	if w, ok := nodeWords[name]; ok {
		return w
	}
	name = strings.TrimSuffix(name, "Stmt")
	var words []string
	start := 0
	for i := 1; i <= len(name); i++ {
		if i == len(name) || (name[i] >= 'A' && name[i] <= 'Z' && !(name[i-1] >= 'A' && name[i-1] <= 'Z')) {
			words = append(words, strings.ToLower(name[start:i]))
			start = i
		}
	}
	return strings.Join(words, " ")
}
