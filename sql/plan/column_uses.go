package plan

import (
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/types"
)

// ColumnUse is one use of a column of a stored relation (table, materialized
// view, streaming table) by a query: Ref is the column reference that
// resolved to it, nil when a * expanded to it. Table and AttrNum (1-based)
// name the column. Only the query's own references count: those inside a
// plain view it reads belong to that view.
type ColumnUse struct {
	Ref     *pg_query.ColumnRef
	Table   uint32
	AttrNum int16
}

// noteUse records a use of scope column c when the binder collects them.
func (b *Binder) noteUse(ref *pg_query.ColumnRef, c scopeCol) {
	if b.uses != nil && c.scan != nil && c.table != 0 {
		*b.uses = append(*b.uses, ColumnUse{Ref: ref, Table: c.table, AttrNum: c.attnum})
	}
}

// StoredQuery is a view's or materialized view's stored query, bound as a
// definition: the parsed statement (whose nodes the uses point into), its
// output columns, the column uses and the relation names of the query's
// own text.
type StoredQuery struct {
	Stmt      *parse.Statement
	Cols      []Column
	Uses      []ColumnUse
	Relations []RelationUse
}

// BindStoredQuery parses and binds v's stored query (a view's or
// materialized view's) against cat as a definition (it is not run, and
// privileges are not checked), its names resolved under the search path
// of its CREATE (R-M8).
func BindStoredQuery(cat *catalog.Catalog, v *catalog.Table, env *types.Env) (*StoredQuery, error) {
	st, err := parse.ParseOne(v.Query)
	if err != nil || st == nil || st.AST == nil || st.AST.GetSelectStmt() == nil {
		return nil, pgerror.New(pgerror.InternalError, "%s has an invalid definition", v.Name)
	}
	path := v.ViewSearchPath
	if v.Dataset != nil {
		path = v.Dataset.SearchPath
	}
	out := &StoredQuery{Stmt: st}
	b := &Binder{Cat: cat, SearchPath: slices.Clone(path), Stmt: st, Env: env, DefinitionOnly: true, uses: &out.Uses, relUses: &out.Relations}
	q, err := b.BindSelect(st.AST.GetSelectStmt())
	if err != nil {
		return nil, err
	}
	out.Cols = q.Cols
	return out, nil
}
