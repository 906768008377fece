package ddl

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// Views over a column that ALTER TABLE renames, drops or retypes. The
// catalog keeps a view's query as SQL text; PostgreSQL keeps it as a tree
// of column numbers, so its views follow a rename and know which columns
// they use. Here both come from binding the stored query: the binder
// reports which column every reference (and every *) resolved to.

// ColumnUsers lists the views and materialized views (not streaming
// tables) that read t directly and use its column col (0-based) in cat: by a reference, through *, or
// in a way only binding shows (JOIN … USING names columns as words), which
// without is the catalog as it would be with the column gone.
func ColumnUsers(cat, without *catalog.Catalog, env *types.Env, t *catalog.Table, col int) []*catalog.Table {
	var out []*catalog.Table
	for _, d := range cat.Dependents(t.ID) {
		if d.Kind != catalog.KindView && d.Kind != catalog.KindMaterializedView {
			// A streaming table keeps its rows when its source's columns
			// change and fails its next refresh, saying so (R-ST).
			continue
		}
		sq, err := plan.BindStoredQuery(cat, d, env)
		if err != nil {
			continue // already broken: it answers for itself when read
		}
		used := false
		for _, u := range sq.Uses {
			used = used || u.Table == t.ID && int(u.AttrNum) == col+1
		}
		if !used && without != nil {
			_, err := plan.BindStoredQuery(without, d, env)
			used = err != nil
		}
		if used {
			out = append(out, d)
		}
	}
	return out
}

// DependentObjectsError is PostgreSQL's 2BP01 for a column others use.
func DependentObjectsError(t *catalog.Table, col string, users []*catalog.Table) error {
	return pgerror.New(pgerror.DependentObjectsStillExist, "cannot drop column %s of table %s because other objects depend on it", col, t.Name).
		WithDetail("%s %s depends on column %s of table %s", relationKindWord(users[0]), users[0].Name, col, t.Name).
		WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
}

// relationKindWord is how PostgreSQL names a relation's kind in a
// dependency message.
func relationKindWord(t *catalog.Table) string {
	if t.IsDataset() {
		return "materialized view"
	}
	return "view"
}

// RenameColumnInViews rewrites the queries of the views and materialized
// views reading t after its column col (0-based) is renamed to newName,
// as PostgreSQL's views follow a rename: each reference that resolved to
// the column names the new name, and an output column that took its name
// from it keeps the old one (SELECT i … becomes SELECT x AS i …). before
// is the catalog before the rename, after with it. It returns the changed
// views (clones); a view whose rewritten query no longer binds to the same
// columns fails the rename with 0A000 (a JOIN … USING of the column).
func RenameColumnInViews(before, after *catalog.Catalog, env *types.Env, t *catalog.Table, col int, newName string) ([]*catalog.Table, error) {
	old := t.Columns[col].Name
	var out []*catalog.Table
	for _, d := range before.Dependents(t.ID) {
		if d.Kind == catalog.KindTable {
			continue
		}
		sq, err := plan.BindStoredQuery(before, d, env)
		if err != nil {
			continue // already broken: it answers for itself when read
		}
		refs := map[*pg_query.ColumnRef]bool{}
		for _, u := range sq.Uses {
			if u.Ref != nil && u.Table == t.ID && int(u.AttrNum) == col+1 {
				refs[u.Ref] = true
			}
		}
		nd := d.Clone()
		if len(refs) > 0 {
			renameRefs(sq.Stmt.AST, refs, old, newName)
			text, err := parse.Deparse(sq.Stmt.AST)
			if err != nil {
				return nil, err
			}
			nd.Query = text
			if nd.Dataset != nil {
				nd.Dataset.QueryText = "" // the text as written no longer is the query
			}
		}
		// The view must read the same columns after the rename.
		nsq, err := plan.BindStoredQuery(after, nd, env)
		if err != nil || len(nsq.Cols) != len(sq.Cols) {
			return nil, pgerror.New(pgerror.FeatureNotSupported, "cannot rename column %s of table %s: the definition of %s %s cannot be rewritten to follow it", old, t.Name, relationKindWord(d), d.Name).
				WithHint("Drop the view, rename the column and create the view again.")
		}
		if len(refs) > 0 {
			out = append(out, nd)
		}
	}
	return out, nil
}

// renameRefs renames the column references refs (whose last field is old)
// to newName in tree, and names after old each SELECT-list entry that was
// one of them without an alias.
func renameRefs(tree *pg_query.Node, refs map[*pg_query.ColumnRef]bool, old, newName string) {
	parse.WalkNodes(tree, func(n *pg_query.Node) bool {
		if rt := n.GetResTarget(); rt != nil && rt.Name == "" {
			if cr := rt.Val.GetColumnRef(); cr != nil && refs[cr] {
				rt.Name = old
			}
		}
		if cr := n.GetColumnRef(); cr != nil && refs[cr] {
			cr.Fields[len(cr.Fields)-1] = pg_query.MakeStrNode(newName)
		}
		return true
	})
}
