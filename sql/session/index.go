package session

import (
	"context"
	"errors"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/dataset"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// Secondary indexes and UNIQUE constraints (R-T10): CREATE [UNIQUE]
// INDEX, DROP INDEX, ALTER INDEX … RENAME, UNIQUE in CREATE TABLE and
// ALTER TABLE … ADD/DROP CONSTRAINT. The catalog holds each index in its
// table's descriptor; storage keeps the entries (BuildIndex fills a new
// index from the rows in the statement's transaction, DropIndex removes
// one), and every later row write maintains them.

// indexSpec is an index to create.
type indexSpec struct {
	name    string // "" = chosen from the table and columns
	cols    []catalog.IndexColumn
	names   []string // key then INCLUDE column names, for the chosen name
	include []uint32
	unique  bool
	// nullsNotDistinct makes NULLs equal for uniqueness.
	nullsNotDistinct bool
	constraint       bool // a UNIQUE constraint's index
	loc              int32
}

// indexColumn resolves one key or INCLUDE column of an index on t.
func indexColumn(st *parse.Statement, t *catalog.Table, name string, loc int32) (*catalog.Column, error) {
	i := t.ColumnIndex(name)
	if i < 0 {
		return nil, pgerror.New(pgerror.UndefinedColumn, "column \"%s\" does not exist", name)
	}
	col := &t.Columns[i]
	if col.Type.Kind == types.KindJSON || col.Type.Kind == types.KindJSONB {
		return nil, pgerror.New(pgerror.UndefinedObject, "data type %s has no default operator class for access method \"btree\"", col.Type.String()).
			WithHint("You must specify an operator class for the index or define a default operator class for the data type.")
	}
	if !exec.Indexable(col.Type) {
		return nil, st.Errorf(loc, pgerror.FeatureNotSupported, "a column of type %s cannot be part of an index", col.Type.String())
	}
	return col, nil
}

// specFromIndexStmt reads CREATE [UNIQUE] INDEX's columns and options.
func specFromIndexStmt(st *parse.Statement, t *catalog.Table, is *pg_query.IndexStmt) (*indexSpec, error) {
	loc := is.Relation.Location
	switch {
	case is.WhereClause != nil:
		return nil, st.Errorf(loc, pgerror.FeatureNotSupported, "partial indexes (CREATE INDEX … WHERE) are not supported")
	case is.AccessMethod != "" && is.AccessMethod != "btree":
		return nil, st.Errorf(loc, pgerror.FeatureNotSupported, "access method \"%s\" is not supported; indexes are btree", is.AccessMethod)
	case len(is.Options) > 0:
		return nil, st.Errorf(loc, pgerror.FeatureNotSupported, "CREATE INDEX … WITH (storage parameters) is not supported")
	case is.TableSpace != "":
		return nil, st.Errorf(loc, pgerror.FeatureNotSupported, "tablespaces are not supported")
	}
	spec := &indexSpec{name: is.Idxname, unique: is.Unique, nullsNotDistinct: is.NullsNotDistinct, loc: loc}
	for _, n := range is.IndexParams {
		ie := n.GetIndexElem()
		if ie.Expr != nil || ie.Name == "" {
			return nil, st.Errorf(loc, pgerror.FeatureNotSupported, "indexes on expressions are not supported; index columns")
		}
		if len(ie.Opclass) > 0 {
			return nil, st.Errorf(loc, pgerror.FeatureNotSupported, "operator classes in CREATE INDEX are not supported")
		}
		col, err := indexColumn(st, t, ie.Name, loc)
		if err != nil {
			return nil, err
		}
		ic := catalog.IndexColumn{Col: col.ID, Desc: ie.Ordering == pg_query.SortByDir_SORTBY_DESC}
		switch ie.NullsOrdering {
		case pg_query.SortByNulls_SORTBY_NULLS_FIRST:
			ic.NullsFirst = true
		case pg_query.SortByNulls_SORTBY_NULLS_LAST:
			ic.NullsFirst = false
		default:
			ic.NullsFirst = ic.Desc
		}
		spec.cols = append(spec.cols, ic)
		spec.names = append(spec.names, col.Name)
	}
	for _, n := range is.IndexIncludingParams {
		ie := n.GetIndexElem()
		if ie.Expr != nil || ie.Name == "" {
			return nil, st.Errorf(loc, pgerror.FeatureNotSupported, "expressions are not supported in included columns")
		}
		col, err := indexColumn(st, t, ie.Name, loc)
		if err != nil {
			return nil, err
		}
		spec.include = append(spec.include, col.ID)
		spec.names = append(spec.names, col.Name)
	}
	return spec, nil
}

// specFromConstraint reads a UNIQUE constraint (column or table level);
// column is the column it is written on, "" at table level.
func specFromConstraint(st *parse.Statement, t *catalog.Table, con *pg_query.Constraint, column string) (*indexSpec, error) {
	if con.Deferrable || con.Initdeferred {
		return nil, st.Errorf(con.Location, pgerror.FeatureNotSupported, "DEFERRABLE unique constraints are not supported")
	}
	if con.Indexname != "" {
		return nil, st.Errorf(con.Location, pgerror.FeatureNotSupported, "UNIQUE … USING INDEX is not supported")
	}
	if len(con.Options) > 0 || con.Indexspace != "" {
		return nil, st.Errorf(con.Location, pgerror.FeatureNotSupported, "index parameters of a UNIQUE constraint are not supported")
	}
	spec := &indexSpec{name: con.Conname, unique: true, constraint: true, nullsNotDistinct: con.NullsNotDistinct, loc: con.Location}
	keys := []string{column}
	if column == "" {
		keys = keys[:0]
		for _, k := range con.Keys {
			keys = append(keys, strVal(k))
		}
	}
	seen := map[string]bool{}
	for _, k := range keys {
		i := t.ColumnIndex(k)
		if i < 0 {
			return nil, st.Errorf(con.Location, pgerror.UndefinedColumn, "column \"%s\" named in key does not exist", k)
		}
		if seen[k] {
			return nil, st.Errorf(con.Location, pgerror.DuplicateColumn, "column \"%s\" appears twice in unique constraint", k)
		}
		seen[k] = true
		col, err := indexColumn(st, t, k, con.Location)
		if err != nil {
			return nil, err
		}
		spec.cols = append(spec.cols, catalog.IndexColumn{Col: col.ID})
		spec.names = append(spec.names, col.Name)
	}
	for _, n := range con.Including {
		col, err := indexColumn(st, t, strVal(n), con.Location)
		if err != nil {
			return nil, err
		}
		spec.include = append(spec.include, col.ID)
		spec.names = append(spec.names, col.Name)
	}
	return spec, nil
}

// sameIndex reports whether two index specs describe the same index
// (PostgreSQL merges such UNIQUE constraints of one CREATE TABLE).
func sameIndex(a, b *indexSpec) bool {
	return slices.Equal(a.cols, b.cols) && slices.Equal(a.include, b.include) && a.nullsNotDistinct == b.nullsNotDistinct
}

// addIndex adds the index of spec to nt (a clone in c), choosing its name
// and ids. taken names the indexes the statement added before (not yet in
// c). A name in use fails with 42P07.
func addIndex(st *parse.Statement, c *catalog.Catalog, nt *catalog.Table, spec *indexSpec, taken map[string]bool) (*catalog.Index, error) {
	name := spec.name
	if len(name) > 63 {
		name = name[:63]
	}
	if name == "" {
		label := "idx"
		if spec.constraint {
			label = "key"
		}
		name = c.ChooseIndexName(nt, spec.names, label, func(n string) bool { return taken[n] })
	} else if c.NameTaken(nt.SchemaID, name) || taken[name] {
		return nil, pgerror.New(pgerror.DuplicateTable, "relation \"%s\" already exists", name)
	}
	taken[name] = true
	ix := catalog.Index{ID: c.AllocID(), Name: name, Columns: spec.cols, Include: spec.include,
		Unique: spec.unique, NullsNotDistinct: spec.nullsNotDistinct}
	if spec.constraint {
		ix.ConstraintID = c.AllocID()
	}
	nt.Indexes = append(nt.Indexes, ix)
	return &nt.Indexes[len(nt.Indexes)-1], nil
}

// buildIndexes fills the new indexes (by id) of nt from its rows in the
// transaction: a unique one over repeated keys fails with 23505.
func (s *Session) buildIndexes(nt *catalog.Table, ids []uint32) error {
	for _, id := range ids {
		ix := nt.IndexByID(id)
		if err := s.txn.BuildIndex(nt.StorageInfo(), exec.IndexInfo(ix)); err != nil {
			if errors.Is(err, storage.ErrDuplicateKey) {
				return exec.IndexBuildError(nt, ix, err)
			}
			return mapStorageErr(err)
		}
	}
	return nil
}

// createIndex runs CREATE [UNIQUE] INDEX [IF NOT EXISTS] [name] ON table
// (columns) [INCLUDE (…)] [NULLS [NOT] DISTINCT].
func (s *Session) createIndex(ctx context.Context, st *parse.Statement, is *pg_query.IndexStmt) (string, error) {
	b := s.binder(st, nil)
	t, err := b.ResolveTable(is.Relation)
	if err != nil {
		return "", err
	}
	switch t.Kind {
	case catalog.KindTable, catalog.KindMaterializedView:
	case catalog.KindView:
		return "", pgerror.New(pgerror.WrongObjectType, "cannot create index on relation \"%s\"", t.Name).
			WithDetail("This operation is not supported for views.")
	case catalog.KindSequence:
		return "", pgerror.New(pgerror.WrongObjectType, "cannot create index on relation \"%s\"", t.Name).
			WithDetail("This operation is not supported for sequences.")
	default:
		return "", st.Errorf(is.Relation.Location, pgerror.FeatureNotSupported, "indexes on %ss are not supported", dataset.KindName(t.Kind))
	}
	if catalog.IsSystem(t) {
		return "", pgerror.New(pgerror.InsufficientPrivilege, "permission denied: \"%s\" is a system view", t.Name)
	}
	if err := s.requireOwner(t); err != nil {
		return "", err
	}
	spec, err := specFromIndexStmt(st, t, is)
	if err != nil {
		return "", err
	}
	if is.IfNotExists && spec.name != "" && s.cat.NameTaken(t.SchemaID, spec.name) {
		s.noticeCode(pgerror.DuplicateTable, "relation \"%s\" already exists, skipping", spec.name)
		return "CREATE INDEX", nil
	}
	c := s.cat.Clone()
	nt := t.Clone()
	ix, err := addIndex(st, c, nt, spec, map[string]bool{})
	if err != nil {
		return "", err
	}
	id := ix.ID
	c.PutTable(nt)
	if err := s.persist(c, []uint32{nt.ID}, nil); err != nil {
		return "", err
	}
	return "CREATE INDEX", s.buildIndexes(nt, []uint32{id})
}

// noticeCode sends a NOTICE with a SQLSTATE of its own (PostgreSQL's
// "already exists, skipping" carries 42P07).
func (s *Session) noticeCode(code, format string, args ...any) {
	n := pgerror.Notice(format, args...)
	n.Code = code
	s.notices = append(s.notices, n)
}

// dropIndexes runs DROP INDEX [IF EXISTS] name, … [CASCADE | RESTRICT].
func (s *Session) dropIndexes(ds *pg_query.DropStmt) (string, error) {
	c := s.cat.Clone()
	changed := map[uint32]*catalog.Table{}
	var order []uint32
	for _, o := range ds.Objects {
		parts := listParts(o)
		name := strings.Join(parts, ".")
		t, ix, err := c.ResolveIndex(parts, s.resolvePath())
		if err != nil {
			return "", err
		}
		if t == nil {
			if r, err := c.Resolve(parts, s.resolvePath()); err == nil && !catalog.IsSystem(r) {
				return "", pgerror.New(pgerror.WrongObjectType, "\"%s\" is not an index", r.Name).
					WithHint("Use DROP %s to remove a %s.", strings.ToUpper(dataset.KindName(r.Kind)), dataset.KindName(r.Kind))
			}
			if pk := s.primaryKeyIndex(c, parts); pk != nil {
				return "", pgerror.New(pgerror.DependentObjectsStillExist, "cannot drop index %s because constraint %s on table %s requires it", pk.PrimaryKeyName(), pk.PrimaryKeyName(), pk.Name).
					WithHint("You can drop constraint %s on table %s instead.", pk.PrimaryKeyName(), pk.Name)
			}
			if ds.MissingOk {
				s.notice("index \"%s\" does not exist, skipping", name)
				continue
			}
			return "", pgerror.New(pgerror.UndefinedObject, "index \"%s\" does not exist", name)
		}
		if ix.IsConstraint() {
			return "", pgerror.New(pgerror.DependentObjectsStillExist, "cannot drop index %s because constraint %s on table %s requires it", ix.Name, ix.Name, t.Name).
				WithHint("You can drop constraint %s on table %s instead.", ix.Name, t.Name)
		}
		if err := s.requireOwner(t); err != nil {
			return "", err
		}
		nt := changed[t.ID]
		if nt == nil {
			nt = t.Clone()
			changed[t.ID] = nt
			order = append(order, t.ID)
		}
		if err := s.removeIndex(nt, ix.ID); err != nil {
			return "", err
		}
		c.PutTable(nt)
	}
	if len(order) == 0 {
		return "DROP INDEX", nil
	}
	return "DROP INDEX", s.persist(c, order, nil)
}

// primaryKeyIndex finds the table whose primary-key index parts name.
func (s *Session) primaryKeyIndex(c *catalog.Catalog, parts []string) *catalog.Table {
	name := parts[len(parts)-1]
	for _, t := range c.Tables() {
		if len(t.PrimaryKey) > 0 && t.PrimaryKeyName() == name {
			if len(parts) == 1 {
				return t
			}
			if sc, ok := c.SchemaByID(t.SchemaID); ok && sc.Name == parts[len(parts)-2] {
				return t
			}
		}
	}
	return nil
}

// removeIndex takes index id out of nt (a clone) and out of storage.
func (s *Session) removeIndex(nt *catalog.Table, id uint32) error {
	for i := range nt.Indexes {
		if nt.Indexes[i].ID == id {
			nt.Indexes = append(nt.Indexes[:i:i], nt.Indexes[i+1:]...)
			if err := s.txn.DropIndex(storageID(nt), storage.IndexID(id)); err != nil {
				return mapStorageErr(err)
			}
			return nil
		}
	}
	return nil
}

// renameIndex runs ALTER INDEX [IF EXISTS] name RENAME TO new (a UNIQUE
// constraint's index takes the constraint's name along, as in PostgreSQL)
// and ALTER TABLE … RENAME CONSTRAINT of a UNIQUE constraint.
func (s *Session) renameIndex(st *parse.Statement, rs *pg_query.RenameStmt) (string, error) {
	var t *catalog.Table
	var ix *catalog.Index
	tag := "ALTER INDEX"
	if rs.RenameType == pg_query.ObjectType_OBJECT_TABCONSTRAINT {
		tag = "ALTER TABLE"
		b := s.binder(st, nil)
		var err error
		if t, err = b.ResolveTable(rs.Relation); err != nil {
			return "", err
		}
		if ix = t.IndexByName(rs.Subname); ix == nil || !ix.IsConstraint() {
			if len(t.PrimaryKey) > 0 && t.PrimaryKeyName() == rs.Subname {
				return "", pgerror.New(pgerror.FeatureNotSupported, "renaming a primary key constraint is not supported")
			}
			return "", pgerror.New(pgerror.UndefinedObject, "constraint \"%s\" for table \"%s\" does not exist", rs.Subname, t.Name)
		}
	} else {
		var err error
		if t, ix, err = s.cat.ResolveIndex(parse.RangeVarParts(rs.Relation), s.resolvePath()); err != nil {
			return "", err
		}
		if t == nil {
			if rs.MissingOk {
				s.notice("relation \"%s\" does not exist, skipping", rs.Relation.Relname)
				return tag, nil
			}
			return "", pgerror.New(pgerror.UndefinedTable, "relation \"%s\" does not exist", rs.Relation.Relname)
		}
	}
	if err := s.requireOwner(t); err != nil {
		return "", err
	}
	if s.cat.NameTaken(t.SchemaID, rs.Newname) {
		return "", pgerror.New(pgerror.DuplicateTable, "relation \"%s\" already exists", rs.Newname)
	}
	c := s.cat.Clone()
	nt := t.Clone()
	nt.IndexByID(ix.ID).Name = rs.Newname
	c.PutTable(nt)
	return tag, s.persist(c, []uint32{nt.ID}, nil)
}

// carryIndexes gives nt, the new definition of materialized view old
// (CREATE OR REPLACE: new column ids), the indexes of old whose columns it
// still has by name, under their names and ids. It drops every index of
// old from storage; the caller builds the carried ones (buildIndexes).
func (s *Session) carryIndexes(old, nt *catalog.Table) ([]uint32, error) {
	var keep []uint32
	remap := func(id uint32) (uint32, bool) {
		i := old.ColumnByID(id)
		if i < 0 {
			return 0, false
		}
		j := nt.ColumnIndex(old.Columns[i].Name)
		if j < 0 || !exec.Indexable(nt.Columns[j].Type) {
			return 0, false
		}
		return nt.Columns[j].ID, true
	}
	for _, ix := range old.Indexes {
		if err := s.txn.DropIndex(storageID(old), storage.IndexID(ix.ID)); err != nil {
			return nil, mapStorageErr(err)
		}
		n := ix
		n.Columns = append([]catalog.IndexColumn(nil), ix.Columns...)
		n.Include = nil
		ok := true
		for i := range n.Columns {
			n.Columns[i].Col, ok = remap(n.Columns[i].Col)
			if !ok {
				break
			}
		}
		for _, id := range ix.Include {
			var nid uint32
			if nid, ok = remap(id); !ok {
				break
			}
			n.Include = append(n.Include, nid)
		}
		if !ok {
			s.notice("index \"%s\" of materialized view \"%s\" is dropped: the new definition lacks its columns", ix.Name, old.Name)
			continue
		}
		nt.Indexes = append(nt.Indexes, n)
		keep = append(keep, n.ID)
	}
	return keep, nil
}
