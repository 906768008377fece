package ddl

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// ALTER TABLE / VIEW / MATERIALIZED VIEW … RENAME TO and … SET SCHEMA.
// PostgreSQL's views name their relations by OID, so they keep working
// after either and pg_get_viewdef prints the new name. The catalog keeps a
// view's query as text; MoveRelation rewrites the text of every view,
// materialized view and streaming table that names the relation, from the
// names the binder reports (plan.RelationUse): the FROM items that
// resolved to it and the column references qualified by its name.

// relationKinds maps the object type of ALTER TABLE / VIEW / MATERIALIZED
// VIEW to the word its 42809 names; ALTER TABLE takes every relation.
var relationKinds = map[pg_query.ObjectType]string{
	pg_query.ObjectType_OBJECT_TABLE:   "",
	pg_query.ObjectType_OBJECT_VIEW:    "a view",
	pg_query.ObjectType_OBJECT_MATVIEW: "a materialized view",
}

// relationTags are the command tags of the three statements.
var relationTags = map[pg_query.ObjectType]string{
	pg_query.ObjectType_OBJECT_TABLE:   "ALTER TABLE",
	pg_query.ObjectType_OBJECT_VIEW:    "ALTER VIEW",
	pg_query.ObjectType_OBJECT_MATVIEW: "ALTER MATERIALIZED VIEW",
}

// renameRelation runs ALTER {TABLE | VIEW | MATERIALIZED VIEW} [IF EXISTS]
// name RENAME TO new.
func renameRelation(e *Env, rs *pg_query.RenameStmt) (Result, error) {
	t, r, err := e.alteredRelation(rs.RenameType, rs.Relation, rs.MissingOk)
	if t == nil || err != nil {
		return r, err
	}
	ids, err := MoveRelation(e.Cat.Clone(), e.Cat, e.Types, t, t.SchemaID, rs.Newname)
	if err != nil {
		return Result{}, err
	}
	r.Changed, r.SameQueries = ids, true
	if t.Kind == catalog.KindTable {
		r.Versions, r.Operation = []uint32{t.ID}, "RENAME TABLE"
	}
	return r, nil
}

// setRelationSchema runs ALTER {TABLE | VIEW | MATERIALIZED VIEW}
// [IF EXISTS] name SET SCHEMA schema.
func setRelationSchema(e *Env, as *pg_query.AlterObjectSchemaStmt) (Result, error) {
	t, r, err := e.alteredRelation(as.ObjectType, as.Relation, as.MissingOk)
	if t == nil || err != nil {
		return r, err
	}
	sc, ok := e.Cat.Schema(as.Newschema)
	if !ok {
		return Result{}, pgerror.New(pgerror.InvalidSchemaName, "schema \"%s\" does not exist", as.Newschema)
	}
	if sc.ID == t.SchemaID {
		return r, nil // PostgreSQL: nothing to do
	}
	if err := e.requireCreate(sc); err != nil {
		return Result{}, err
	}
	ids, err := MoveRelation(e.Cat.Clone(), e.Cat, e.Types, t, sc.ID, t.Name)
	if err != nil {
		return Result{}, err
	}
	r.Changed, r.SameQueries = ids, true
	return r, nil
}

// alteredRelation resolves the relation an ALTER … RENAME TO / SET SCHEMA
// names and checks its kind and owner. A missing one under IF EXISTS is
// (nil, the statement's result with a notice, nil).
func (e *Env) alteredRelation(kind pg_query.ObjectType, rv *pg_query.RangeVar, missingOk bool) (*catalog.Table, Result, error) {
	r := Result{Tag: relationTags[kind]}
	t, err := e.Cat.Resolve(parse.RangeVarParts(rv), e.SearchPath)
	if err != nil {
		if missingOk {
			e.notice("relation \"%s\" does not exist, skipping", rv.Relname)
			return nil, r, nil
		}
		return nil, r, err
	}
	if catalog.IsSystem(t) {
		return nil, r, pgerror.New(pgerror.InsufficientPrivilege, "permission denied: \"%s\" is a system catalog", t.Name)
	}
	word := relationKinds[kind]
	switch {
	case kind == pg_query.ObjectType_OBJECT_VIEW && t.Kind != catalog.KindView,
		kind == pg_query.ObjectType_OBJECT_MATVIEW && !t.IsDataset():
		return nil, r, pgerror.New(pgerror.WrongObjectType, "\"%s\" is not %s", t.Name, word)
	}
	if !e.Cat.Owns(e.Subject, t) {
		return nil, r, catalog.NotOwner(t)
	}
	return t, r, nil
}

// MoveRelation renames t to name in schema schemaID in c (a clone of
// before, the catalog the statement started from) and rewrites the stored
// queries that name it. It returns the ids of every object it changed: t,
// the sequences t owns (they move with it on SET SCHEMA, as in
// PostgreSQL) and the rewritten views. A view whose rewritten query does
// not bind to the same relation and columns fails the statement with
// 0A000 before anything changed.
func MoveRelation(before, c *catalog.Catalog, env *types.Env, t *catalog.Table, schemaID uint32, name string) ([]uint32, error) {
	from, ok := before.SchemaByID(t.SchemaID)
	if !ok {
		return nil, pgerror.New(pgerror.InternalError, "relation %s has no schema", t.Name)
	}
	to, ok := before.SchemaByID(schemaID)
	if !ok {
		return nil, pgerror.New(pgerror.InternalError, "no schema with id %d", schemaID)
	}
	moving := schemaID != t.SchemaID
	if moving && (catalog.IsTempSchema(from.Name) || catalog.IsTempSchema(to.Name)) {
		return nil, pgerror.New(pgerror.FeatureNotSupported, "cannot move objects into or out of temporary schemas")
	}
	if other, ok := before.LookupTable(schemaID, name); ok && other.ID != t.ID {
		if moving {
			return nil, pgerror.New(pgerror.DuplicateTable, "relation \"%s\" already exists in schema \"%s\"", name, to.Name)
		}
		return nil, pgerror.New(pgerror.DuplicateTable, "relation \"%s\" already exists", name)
	}
	if !moving && before.IndexNameTaken(schemaID, name) {
		return nil, pgerror.New(pgerror.DuplicateTable, "relation \"%s\" already exists", name)
	}
	nt := t.Clone()
	nt.Name, nt.SchemaID = name, schemaID
	ids := []uint32{nt.ID}
	if moving {
		for _, ix := range t.Indexes {
			if before.NameTaken(schemaID, ix.Name) {
				return nil, pgerror.New(pgerror.DuplicateTable, "relation \"%s\" already exists in schema \"%s\"", ix.Name, to.Name)
			}
		}
		for _, seq := range before.OwnedSequences(t.ID) {
			if before.NameTaken(schemaID, seq.Name) {
				return nil, pgerror.New(pgerror.DuplicateTable, "relation \"%s\" already exists in schema \"%s\"", seq.Name, to.Name)
			}
			ns := seq.Clone()
			ns.SchemaID = schemaID
			c.PutTable(ns)
			ids = append(ids, ns.ID)
			qualifySequenceDefaults(nt, seq.Name, to.Name)
		}
	}
	c.PutTable(nt)
	for _, d := range before.Dependents(t.ID) {
		nd, err := followMove(before, c, env, d, t, nt, to.Name, moving)
		if err != nil {
			return nil, err
		}
		if nd != nil {
			c.PutTable(nd)
			ids = append(ids, nd.ID)
		}
	}
	return ids, nil
}

// followMove is d with its query naming nt where it named t (nil when
// the query does not name it), bound in after to check it still reads
// the same relations and columns. A bare name stays bare on a rename
// unless that would find another relation; a moved one is qualified.
func followMove(before, after *catalog.Catalog, env *types.Env, d, t, nt *catalog.Table, schema string, moving bool) (*catalog.Table, error) {
	sq, err := plan.BindStoredQuery(before, d, env)
	if err != nil {
		return nil, nil // already broken: it answers for itself when read
	}
	named := 0
	for _, u := range sq.Relations {
		if u.Table == t.ID && u.From != nil {
			named++
		}
	}
	if named == 0 {
		return nil, nil
	}
	for _, qualify := range []bool{moving, true} {
		sq, _ := plan.BindStoredQuery(before, d, env) // a fresh tree each try
		renameRelationRefs(sq.Relations, t, nt.Name, schema, qualify)
		text, err := parse.Deparse(sq.Stmt.AST)
		if err != nil {
			return nil, err
		}
		nd := d.Clone()
		nd.Query = text
		if nd.Dataset != nil {
			nd.Dataset.QueryText = "" // the text as written no longer is the query
		}
		if sameRelations(after, env, nd, sq, t.ID, named) {
			return nd, nil
		}
	}
	return nil, pgerror.New(pgerror.FeatureNotSupported, "cannot rename %s: the definition of %s %s cannot be rewritten to follow it", t.Name, relationKindWord(d), d.Name).
		WithHint("Drop the view, rename the relation and create the view again.")
}

// renameRelationRefs points the uses of t at name (in schema when qualify,
// or when the use was qualified already).
func renameRelationRefs(uses []plan.RelationUse, t *catalog.Table, name, schema string, qualify bool) {
	for _, u := range uses {
		if u.Table != t.ID {
			continue
		}
		switch {
		case u.From != nil:
			u.From.Relname = name
			if qualify || u.From.Schemaname != "" {
				u.From.Schemaname = schema
			}
		case u.Qualifier != nil:
			f := u.Qualifier.Fields
			if len(f) < 2 {
				continue
			}
			f[len(f)-2] = pg_query.MakeStrNode(name)
			if len(f) >= 3 {
				f[len(f)-3] = pg_query.MakeStrNode(schema)
			}
		}
	}
}

// sameRelations reports whether nd's query binds in cat to the columns
// (names and types) of the old query sq and names relation id as often.
func sameRelations(cat *catalog.Catalog, env *types.Env, nd *catalog.Table, sq *plan.StoredQuery, id uint32, named int) bool {
	nsq, err := plan.BindStoredQuery(cat, nd, env)
	if err != nil || len(nsq.Cols) != len(sq.Cols) {
		return false
	}
	for i, c := range nsq.Cols {
		if c.Name != sq.Cols[i].Name || c.T.String() != sq.Cols[i].T.String() {
			return false
		}
	}
	n := 0
	for _, u := range nsq.Relations {
		if u.Table == id && u.From != nil {
			n++
		}
	}
	return n == named
}

// qualifySequenceDefaults makes t's defaults that call nextval on the
// sequence seq name it in schema, which it moves to with t.
func qualifySequenceDefaults(t *catalog.Table, seq, schema string) {
	bare := "nextval('" + strings.ReplaceAll(seq, "'", "''") + "'"
	for i := range t.Columns {
		if def := t.Columns[i].Default; strings.Contains(def, bare) {
			t.Columns[i].Default = strings.Replace(def, bare, "nextval('"+strings.ReplaceAll(funcs.QuoteIdent(schema)+"."+funcs.QuoteIdent(seq), "'", "''")+"'", 1)
		}
	}
}
