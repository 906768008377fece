package ddl

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
)

// comment runs COMMENT ON {TABLE | VIEW | MATERIALIZED VIEW | COLUMN} name IS
// 'text' | NULL: the comment shows in \d+, DESCRIBE, obj_description and
// col_description (pg_description).
func comment(e *Env, cs *pg_query.CommentStmt) (Result, error) {
	var parts []string
	for _, n := range cs.Object.GetList().GetItems() {
		parts = append(parts, n.GetString_().GetSval())
	}
	var col string
	var want catalog.ObjectKind
	switch cs.Objtype {
	case pg_query.ObjectType_OBJECT_TABLE:
		want = catalog.KindTable
	case pg_query.ObjectType_OBJECT_VIEW:
		want = catalog.KindView
	case pg_query.ObjectType_OBJECT_MATVIEW:
		want = catalog.KindMaterializedView
	case pg_query.ObjectType_OBJECT_COLUMN:
		if len(parts) < 2 {
			return Result{}, pgerror.New(pgerror.SyntaxError, "column name must be qualified")
		}
		col, parts = parts[len(parts)-1], parts[:len(parts)-1]
	default:
		return Result{}, pgerror.New(pgerror.FeatureNotSupported, "COMMENT ON %s is not supported yet", strings.ToLower(strings.TrimPrefix(cs.Objtype.String(), "OBJECT_")))
	}
	if len(parts) == 0 {
		return Result{}, pgerror.New(pgerror.SyntaxError, "COMMENT needs an object name")
	}
	t, err := e.Cat.Resolve(parts, e.SearchPath)
	if err != nil {
		return Result{}, err
	}
	if catalog.IsSystem(t) {
		return Result{}, pgerror.New(pgerror.InsufficientPrivilege, "permission denied: \"%s\" is a system view", t.Name)
	}
	if !e.Cat.Owns(e.Subject, t) {
		return Result{}, catalog.NotOwner(t)
	}
	if want != "" && t.Kind != want && !(want == catalog.KindTable && t.Kind == catalog.KindStreamingTable) {
		return Result{}, pgerror.New(pgerror.WrongObjectType, "\"%s\" is not a %s", t.Name, strings.ReplaceAll(string(want), "_", " "))
	}
	nt := t.Clone()
	if col != "" {
		i := nt.ColumnIndex(col)
		if i < 0 {
			return Result{}, pgerror.New(pgerror.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", col, t.Name)
		}
		nt.Columns[i].Comment = cs.Comment
	} else {
		nt.Comment = cs.Comment
	}
	e.Cat.PutTable(nt)
	return Result{Tag: "COMMENT", Changed: []uint32{nt.ID}}, nil
}
