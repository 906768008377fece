package session

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/dataset"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/ddl"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

func storageID(t *catalog.Table) storage.TableID { return storage.TableID(t.ID) }

// persist writes a changed catalog in the current transaction and makes it
// the transaction's catalog.
func (s *Session) persist(c *catalog.Catalog, changed, dropped []uint32) error {
	s.noteDDL(c, changed, dropped)
	if err := s.eng.Catalog.Persist(s.txn, c, changed, dropped); err != nil {
		return err
	}
	s.cat = c
	return nil
}

// applyDDL runs a statement package ddl owns on a clone of the catalog
// and persists what it changed.
func (s *Session) applyDDL(st *parse.Statement, a ddl.Action) (string, error) {
	subject, _ := s.subject()
	e := &ddl.Env{Cat: s.cat.Clone(), SearchPath: s.resolvePath(), Subject: subject, Owner: s.ownerID(), Notice: s.notice, Position: st.Position,
		Types: s.binder(st, nil).Env}
	r, err := a(e)
	if err != nil || len(r.Changed)+len(r.Dropped) == 0 {
		return r.Tag, err
	}
	before := s.cat
	if err := s.persist(e.Cat, r.Changed, r.Dropped); err != nil {
		return "", err
	}
	if r.SameQueries {
		if err := refresh.KeepCheckpoints(s.txn, before, s.cat); err != nil {
			return "", mapStorageErr(err)
		}
	}
	for _, id := range r.Versions {
		if t, ok := s.cat.Table(id); ok {
			if err := s.txn.RecordVersion(t.StorageInfo(), r.Operation, nil); err != nil {
				return "", mapStorageErr(err)
			}
		}
	}
	return r.Tag, nil
}

func listParts(n *pg_query.Node) []string {
	var parts []string
	if l := n.GetList(); l != nil {
		for _, it := range l.Items {
			if sv := it.GetString_(); sv != nil {
				parts = append(parts, sv.Sval)
			}
		}
	}
	if sv := n.GetString_(); sv != nil {
		parts = append(parts, sv.Sval)
	}
	return parts
}

func (s *Session) notice(format string, args ...any) {
	s.notices = append(s.notices, pgerror.Notice(format, args...))
}

func (s *Session) createSchema(st *parse.Statement, cs *pg_query.CreateSchemaStmt) (string, error) {
	if len(cs.SchemaElts) > 0 {
		return "", pgerror.New(pgerror.FeatureNotSupported, "CREATE SCHEMA with elements is not supported")
	}
	name := cs.Schemaname
	if _, ok := s.cat.Schema(name); ok {
		if cs.IfNotExists {
			s.notice("schema \"%s\" already exists, skipping", name)
			return "CREATE SCHEMA", nil
		}
		return "", pgerror.New(pgerror.DuplicateSchema, "schema \"%s\" already exists", name)
	}
	if err := s.requireCreateSchema(); err != nil {
		return "", err
	}
	owner := s.ownerID()
	if cs.Authrole != nil {
		// AUTHORIZATION role: a superuser may give the schema to anyone,
		// another role only to itself (it is a member of no other).
		an, err := s.roleSpecName(cs.Authrole)
		if err != nil {
			return "", err
		}
		r, ok := s.cat.Role(an)
		if !ok {
			return "", roleNotFound(an)
		}
		if _, super := s.subject(); !super && r.ID != owner {
			return "", pgerror.New(pgerror.InsufficientPrivilege, "must be member of role \"%s\"", an)
		}
		owner = r.ID
		if name == "" {
			name = an // CREATE SCHEMA AUTHORIZATION role names it after the role
			if _, ok := s.cat.Schema(name); ok {
				if cs.IfNotExists {
					s.notice("schema \"%s\" already exists, skipping", name)
					return "CREATE SCHEMA", nil
				}
				return "", pgerror.New(pgerror.DuplicateSchema, "schema \"%s\" already exists", name)
			}
		}
	}
	if strings.HasPrefix(name, "pg_") {
		return "", pgerror.New(pgerror.ReservedName, "unacceptable schema name \"%s\"", name).WithDetail("The prefix \"pg_\" is reserved for system schemas.")
	}
	c := s.cat.Clone()
	sc := &catalog.Schema{ID: c.AllocID(), Name: name, Owner: owner}
	c.PutSchema(sc)
	return "CREATE SCHEMA", s.persist(c, []uint32{sc.ID}, nil)
}

func (s *Session) createTable(ctx context.Context, st *parse.Statement, cs *pg_query.CreateStmt) (string, error) {
	loc := cs.Relation.Location
	if len(cs.InhRelations) > 0 || cs.Partbound != nil || cs.OfTypename != nil {
		return "", st.Errorf(loc, pgerror.FeatureNotSupported, "table inheritance and typed tables are not supported")
	}
	if cs.Partspec != nil {
		return "", st.Errorf(loc, pgerror.FeatureNotSupported, "PostgreSQL's PARTITION BY is not supported; use PARTITIONED BY (col, …)")
	}
	c := s.cat.Clone()
	tt, exists, err := s.newTableTarget(c, st, cs.Relation, cs.Oncommit, cs.IfNotExists)
	if err != nil {
		return "", err
	}
	if exists {
		return "CREATE TABLE", nil
	}
	schema, name, tempIDs, temp, onCommit := tt.schema, tt.name, tt.tempIDs, tt.temp, tt.onCommit
	t := &catalog.Table{ID: c.AllocID(), SchemaID: schema.ID, Name: name, Kind: catalog.KindTable, NextColID: 1, Owner: s.ownerID(), OnCommit: onCommit}
	if onCommit != "" {
		s.tempOnCommit = true
	}
	b := s.binder(st, nil)
	var pk []string
	pkLoc := int32(-1)
	var serials []uint32 // sequences of serial columns
	var uniques []conDef
	var checks, fks []conDef // bound once every column is known
	for _, elt := range cs.TableElts {
		switch e := elt.Node.(type) {
		case *pg_query.Node_ColumnDef:
			cd := e.ColumnDef
			if t.ColumnIndex(cd.Colname) >= 0 {
				return "", st.Errorf(cd.Location, pgerror.DuplicateColumn, "column \"%s\" specified more than once", cd.Colname)
			}
			tn := cd.TypeName
			typName := strings.ToLower(strVal(tn.Names[len(tn.Names)-1]))
			serial := map[string]string{"smallserial": "smallint", "serial2": "smallint", "serial": "integer",
				"serial4": "integer", "bigserial": "bigint", "serial8": "bigint"}[typName]
			if serial != "" && len(tn.ArrayBounds) > 0 {
				return "", st.Errorf(tn.Location, pgerror.FeatureNotSupported, "array of serial is not implemented")
			}
			typ, err := b.TypeName(tn)
			if err != nil {
				return "", err
			}
			if typ.Kind == types.KindUnknown || typ.Kind == types.KindOid {
				return "", st.Errorf(tn.Location, pgerror.FeatureNotSupported, "columns of type %s are not supported", typ.String())
			}
			col := catalog.Column{ID: t.NextColID, Name: cd.Colname, Type: typ, NotNull: cd.IsNotNull}
			t.NextColID++
			if cd.CollClause != nil {
				// accepted: binary collation only
			}
			if err := plan.ApplyConstraintAttrs(cd.Constraints); err != nil {
				return "", err
			}
			for _, cn := range cd.Constraints {
				con := cn.GetConstraint()
				switch con.Contype {
				case pg_query.ConstrType_CONSTR_NOTNULL:
					col.NotNull = true
				case pg_query.ConstrType_CONSTR_NULL:
					col.NotNull = false
				case pg_query.ConstrType_CONSTR_PRIMARY:
					if pk != nil {
						return "", st.Errorf(con.Location, pgerror.InvalidTableDefinition, "multiple primary keys for table \"%s\" are not allowed", name)
					}
					pk, pkLoc = []string{cd.Colname}, con.Location
				case pg_query.ConstrType_CONSTR_UNIQUE:
					uniques = append(uniques, conDef{con, cd.Colname})
				case pg_query.ConstrType_CONSTR_CHECK:
					checks = append(checks, conDef{con, cd.Colname})
				case pg_query.ConstrType_CONSTR_FOREIGN:
					fks = append(fks, conDef{con, cd.Colname})
				case pg_query.ConstrType_CONSTR_IDENTITY:
					if col.Default != "" || col.Generated != "" || col.Identity != 0 {
						return "", st.Errorf(con.Location, pgerror.SyntaxError, "multiple identity specifications for column \"%s\" of table \"%s\"", cd.Colname, name)
					}
					seq, err := s.identityColumn(c, t, &col, con)
					if err != nil {
						return "", err
					}
					serials = append(serials, seq.ID)
				case pg_query.ConstrType_CONSTR_GENERATED:
					if col.Default != "" || col.Identity != 0 {
						return "", st.Errorf(con.Location, pgerror.SyntaxError, "both default and generation expression specified for column \"%s\" of table \"%s\"", cd.Colname, name)
					}
					text, err := plan.ConstraintExprText(con.RawExpr)
					if err != nil {
						return "", err
					}
					col.Generated = text // bound once every column is known
				case pg_query.ConstrType_CONSTR_ATTR_NOT_DEFERRABLE, pg_query.ConstrType_CONSTR_ATTR_IMMEDIATE,
					pg_query.ConstrType_CONSTR_ATTR_DEFERRABLE, pg_query.ConstrType_CONSTR_ATTR_DEFERRED:
					// parsed into the constraint they follow (a foreign key's)
				case pg_query.ConstrType_CONSTR_DEFAULT:
					if col.Generated != "" || col.Identity != 0 {
						return "", st.Errorf(con.Location, pgerror.SyntaxError, "both default and generation expression specified for column \"%s\" of table \"%s\"", cd.Colname, name)
					}
					text, err := b.DefaultText(con.RawExpr, typ)
					if err != nil {
						return "", err
					}
					col.Default = text
				default:
					return "", st.Errorf(con.Location, pgerror.FeatureNotSupported, "%s constraints are not supported yet", plan.ConstraintKindName(con.Contype))
				}
			}
			if serial != "" {
				if col.Default != "" {
					return "", st.Errorf(cd.Location, pgerror.SyntaxError, "multiple default values specified for column \"%s\" of table \"%s\"", cd.Colname, name)
				}
				seq, err := s.serialColumn(c, t, &col, serial)
				if err != nil {
					return "", err
				}
				serials = append(serials, seq.ID)
			}
			t.Columns = append(t.Columns, col)
		case *pg_query.Node_Constraint:
			con := e.Constraint
			switch con.Contype {
			case pg_query.ConstrType_CONSTR_UNIQUE:
				uniques = append(uniques, conDef{con, ""})
				continue
			case pg_query.ConstrType_CONSTR_CHECK:
				checks = append(checks, conDef{con, ""})
				continue
			case pg_query.ConstrType_CONSTR_FOREIGN:
				fks = append(fks, conDef{con, ""})
				continue
			}
			if con.Contype != pg_query.ConstrType_CONSTR_PRIMARY {
				return "", st.Errorf(con.Location, pgerror.FeatureNotSupported, "%s constraints are not supported yet", plan.ConstraintKindName(con.Contype))
			}
			if pk != nil {
				return "", st.Errorf(con.Location, pgerror.InvalidTableDefinition, "multiple primary keys for table \"%s\" are not allowed", name)
			}
			for _, k := range con.Keys {
				pk = append(pk, strVal(k))
			}
			pkLoc = con.Location
		case *pg_query.Node_TableLikeClause:
			return "", st.Errorf(-1, pgerror.FeatureNotSupported, "CREATE TABLE … LIKE is not supported")
		}
	}
	if len(t.Columns) == 0 {
		return "", st.Errorf(loc, pgerror.FeatureNotSupported, "a table needs at least one column")
	}
	seen := map[string]bool{}
	for _, k := range pk {
		i := t.ColumnIndex(k)
		if i < 0 {
			return "", st.Errorf(pkLoc, pgerror.UndefinedColumn, "column \"%s\" named in key does not exist", k)
		}
		if seen[k] {
			return "", st.Errorf(pkLoc, pgerror.DuplicateColumn, "column \"%s\" appears twice in primary key constraint", k)
		}
		seen[k] = true
		switch t.Columns[i].Type.Kind {
		case types.KindInterval, types.KindJSON, types.KindJSONB:
			return "", st.Errorf(pkLoc, pgerror.FeatureNotSupported, "a column of type %s cannot be part of a primary key", t.Columns[i].Type.String())
		}
		t.Columns[i].NotNull = true
		t.PrimaryKey = append(t.PrimaryKey, t.Columns[i].ID)
	}
	// UNIQUE constraints (R-T10): an index each, named after the primary
	// key's, as PostgreSQL names them.
	taken := map[string]bool{t.Name: true}
	if len(t.PrimaryKey) > 0 {
		taken[t.PrimaryKeyName()] = true
	}
	// As in PostgreSQL, a UNIQUE constraint on the primary key's columns
	// is dropped and repeated ones are merged (the name goes to the first).
	var pkSpec *indexSpec
	if len(t.PrimaryKey) > 0 {
		pkSpec = &indexSpec{}
		for _, id := range t.PrimaryKey {
			pkSpec.cols = append(pkSpec.cols, catalog.IndexColumn{Col: id})
		}
	}
	var specs []*indexSpec
	for _, u := range uniques {
		spec, err := specFromConstraint(st, t, u.con, u.column)
		if err != nil {
			return "", err
		}
		dup := pkSpec != nil && sameIndex(spec, pkSpec)
		for _, prior := range specs {
			if !dup && sameIndex(spec, prior) {
				if prior.name == "" {
					prior.name = spec.name
				}
				dup = true
			}
		}
		if !dup {
			specs = append(specs, spec)
		}
	}
	for _, spec := range specs {
		if _, err := addIndex(st, c, t, spec, taken); err != nil {
			return "", err
		}
	}
	// CHECK and FOREIGN KEY constraints and generated columns, now that
	// every column, the primary key and the unique indexes are known.
	if err := bindTableConstraints(b, c, t, checks, fks); err != nil {
		return "", err
	}
	if ex := st.CreateExtras; ex != nil {
		for _, pc := range ex.PartitionedBy {
			if t.ColumnIndex(pc) < 0 {
				return "", pgerror.New(pgerror.UndefinedColumn, "partition column \"%s\" is not a column of table \"%s\"", pc, name)
			}
		}
		for _, cc := range ex.ClusterBy {
			if t.ColumnIndex(cc) < 0 {
				return "", pgerror.New(pgerror.UndefinedColumn, "clustering column \"%s\" is not a column of table \"%s\"", cc, name)
			}
		}
		t.PartitionBy, t.ClusterBy, t.Comment = ex.PartitionedBy, ex.ClusterBy, ex.Comment
		for _, p := range ex.Properties {
			np, err := catalog.NormalizeProperty(p.Key, p.Value)
			if err != nil {
				return "", err
			}
			t.SetProperty(np)
		}
	}
	if !temp { // a temporary table keeps no change feed or row ids
		t.ApplyDefaults(s.eng.Defaults)
	}
	c.PutTable(t)
	if err := s.persist(c, append(append(tempIDs, t.ID), serials...), nil); err != nil {
		return "", err
	}
	params := map[string]string{"isManaged": "true", "description": t.Comment, "partitionBy": jsonList(t.PartitionBy), "properties": propsJSON(t.Properties)}
	if err := s.txn.CreateTable(t.StorageInfo(), "CREATE TABLE", params); err != nil {
		return "", mapStorageErr(err)
	}
	var ixs []uint32
	for _, ix := range t.Indexes {
		ixs = append(ixs, ix.ID)
	}
	return "CREATE TABLE", s.buildIndexes(t, ixs)
}

func jsonList(v []string) string {
	if v == nil {
		v = []string{}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func propsJSON(ps []catalog.Property) string {
	m := map[string]string{}
	for _, p := range ps {
		m[p.Key] = p.Value
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func strVal(n *pg_query.Node) string {
	if s := n.GetString_(); s != nil {
		return s.Sval
	}
	return ""
}

func withPosition(err error, st *parse.Statement, loc int32) error {
	if pe, ok := err.(*pgerror.Error); ok && pe.Position == 0 && loc >= 0 {
		pe.Position = st.Position(loc)
	}
	return err
}

func (s *Session) drop(st *parse.Statement, ds *pg_query.DropStmt) (string, error) {
	switch ds.RemoveType {
	case pg_query.ObjectType_OBJECT_VIEW, pg_query.ObjectType_OBJECT_MATVIEW:
		kind := catalog.KindView
		if ds.RemoveType == pg_query.ObjectType_OBJECT_MATVIEW {
			kind = catalog.KindMaterializedView
		}
		var names [][]string
		for _, o := range ds.Objects {
			names = append(names, listParts(o))
		}
		return s.dropRelations(kind, names, ds.MissingOk, ds.Behavior == pg_query.DropBehavior_DROP_CASCADE)
	case pg_query.ObjectType_OBJECT_TABLE:
		c := s.cat.Clone()
		var dropped, changed []uint32
		targets := map[uint32]bool{} // a foreign key between them goes with them
		for _, o := range ds.Objects {
			if t, err := c.Resolve(listParts(o), s.resolvePath()); err == nil {
				targets[t.ID] = true
			}
		}
		for _, o := range ds.Objects {
			parts := listParts(o)
			t, err := c.Resolve(parts, s.resolvePath())
			if err != nil {
				if ds.MissingOk && pgerror.Code(err) == pgerror.UndefinedTable {
					s.notice("table \"%s\" does not exist, skipping", strings.Join(parts, "."))
					continue
				}
				if pgerror.Code(err) == pgerror.UndefinedTable {
					return "", pgerror.New(pgerror.UndefinedTable, "table \"%s\" does not exist", strings.Join(parts, "."))
				}
				return "", err
			}
			if t.Kind != catalog.KindTable {
				return "", pgerror.New(pgerror.WrongObjectType, "\"%s\" is not a table", t.Name).
					WithHint("Use DROP %s to remove a %s.", strings.ToUpper(dataset.KindName(t.Kind)), dataset.KindName(t.Kind))
			}
			if err := s.requireOwner(t); err != nil {
				return "", err
			}
			ch, err := s.dropForeignKeysTo(c, t, targets, ds.Behavior == pg_query.DropBehavior_DROP_CASCADE)
			if err != nil {
				return "", err
			}
			changed = append(changed, ch...)
			ids, err := s.dropCascade(c, t, ds.Behavior == pg_query.DropBehavior_DROP_CASCADE)
			if err != nil {
				return "", err
			}
			dropped = append(dropped, ids...)
			// A table takes the sequences it owns (its serial columns') along.
			for _, seq := range c.OwnedSequences(t.ID) {
				if err := s.dropSequence(c, seq); err != nil {
					return "", err
				}
				dropped = append(dropped, seq.ID)
			}
		}
		if len(dropped) == 0 {
			return "DROP TABLE", nil
		}
		changed = slices.DeleteFunc(changed, func(id uint32) bool { return slices.Contains(dropped, id) })
		return "DROP TABLE", s.persist(c, changed, dropped)
	case pg_query.ObjectType_OBJECT_SEQUENCE:
		return s.dropSequences(ds)
	case pg_query.ObjectType_OBJECT_INDEX:
		return s.dropIndexes(ds)
	case pg_query.ObjectType_OBJECT_SCHEMA:
		c := s.cat.Clone()
		var dropped []uint32
		for _, o := range ds.Objects {
			name := strVal(o)
			sc, ok := c.Schema(name)
			if !ok {
				if ds.MissingOk {
					s.notice("schema \"%s\" does not exist, skipping", name)
					continue
				}
				return "", pgerror.New(pgerror.UndefinedSchema, "schema \"%s\" does not exist", name)
			}
			// The schema's owner drops it and, with CASCADE, every object
			// in it, whoever owns them (PostgreSQL's rule).
			if err := s.requireSchemaOwner(sc); err != nil {
				return "", err
			}
			var inSchema []*catalog.Table
			for _, t := range c.Tables() {
				if t.SchemaID == sc.ID {
					inSchema = append(inSchema, t)
				}
			}
			if len(inSchema) > 0 && ds.Behavior != pg_query.DropBehavior_DROP_CASCADE {
				return "", pgerror.New(pgerror.DependentObjectsStillExist, "cannot drop schema %s because other objects depend on it", name).
					WithDetail("table %s.%s depends on schema %s", name, inSchema[0].Name, name).
					WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
			}
			for _, t := range inSchema {
				if _, still := c.Table(t.ID); !still {
					continue // went with an object it depends on
				}
				if t.Kind == catalog.KindSequence {
					if err := s.dropSequence(c, t); err != nil {
						return "", err
					}
					dropped = append(dropped, t.ID)
					continue
				}
				// What reads it goes too, in this schema or another, and a
				// dataset's refresh state and schedule with it.
				ids, err := s.dropCascade(c, t, true)
				if err != nil {
					return "", err
				}
				dropped = append(dropped, ids...)
			}
			dropped = append(dropped, c.DropSchema(sc)...)
			dropped = append(dropped, sc.ID)
		}
		if len(dropped) == 0 {
			return "DROP SCHEMA", nil
		}
		return "DROP SCHEMA", s.persist(c, nil, dropped)
	}
	return "", pgerror.New(pgerror.FeatureNotSupported, "this DROP statement is not supported yet")
}

func (s *Session) truncate(st *parse.Statement, ts *pg_query.TruncateStmt) (string, error) {
	var tables []*catalog.Table
	for _, r := range ts.Relations {
		rv := r.GetRangeVar()
		b := s.binder(st, nil)
		t, err := b.ResolveTable(rv)
		if err != nil {
			return "", err
		}
		if t.Kind != catalog.KindTable {
			return "", st.Errorf(rv.Location, pgerror.WrongObjectType, "\"%s\" is not a table", t.Name)
		}
		tables = append(tables, t)
	}
	tables, err := truncateReferencing(s, tables, ts.Behavior == pg_query.DropBehavior_DROP_CASCADE)
	if err != nil {
		return "", err
	}
	for _, t := range tables {
		if err := s.require(t, catalog.PrivTruncate); err != nil {
			return "", err
		}
		s.txn.CheckUnchanged(catalog.DescriptorKey(t.ID))
		if err := s.txn.Truncate(t.StorageInfo()); err != nil {
			return "", mapStorageErr(err)
		}
	}
	return "TRUNCATE TABLE", nil
}

func (s *Session) alterTblProperties(a *parse.AlterTblProperties) (string, error) {
	t, err := s.resolve(a.Name)
	if err != nil {
		return "", err
	}
	if err := s.requireOwner(t); err != nil {
		return "", err
	}
	nt := t.Clone()
	op := "SET TBLPROPERTIES"
	params := map[string]string{}
	if a.Set != nil {
		set := map[string]string{}
		for _, p := range a.Set {
			np, err := catalog.NormalizeProperty(p.Key, p.Value)
			if err != nil {
				return "", err
			}
			nt.SetProperty(np)
			set[np.Key] = np.Value
		}
		b, _ := json.Marshal(set)
		params["properties"] = string(b)
	} else {
		op = "UNSET TBLPROPERTIES"
		for _, k := range a.Unset {
			if !nt.UnsetProperty(k) && !a.IfExists {
				return "", pgerror.New(pgerror.UndefinedObject, "table property \"%s\" is not set on table %s", k, t.Name).
					WithHint("Use UNSET TBLPROPERTIES IF EXISTS to ignore missing keys.")
			}
		}
		params["properties"] = jsonList(a.Unset)
	}
	c := s.cat.Clone()
	c.PutTable(nt)
	if err := s.persist(c, []uint32{nt.ID}, nil); err != nil {
		return "", err
	}
	if err := s.txn.RecordVersion(nt.StorageInfo(), op, params); err != nil {
		return "", mapStorageErr(err)
	}
	return "ALTER TABLE", nil
}

// alterTable handles ALTER TABLE … ADD/DROP COLUMN (R-T1).
func (s *Session) alterTable(ctx context.Context, st *parse.Statement, at *pg_query.AlterTableStmt) (string, error) {
	b := s.binder(st, nil)
	t, err := b.ResolveTable(at.Relation)
	if err != nil {
		if at.MissingOk && pgerror.Code(err) == pgerror.UndefinedTable {
			s.notice("relation \"%s\" does not exist, skipping", at.Relation.Relname)
			return "ALTER TABLE", nil
		}
		return "", err
	}
	if len(at.Cmds) == 1 && at.Cmds[0].GetAlterTableCmd().GetSubtype() == pg_query.AlterTableType_AT_ChangeOwner {
		return s.alterTableOwner(t, at, at.Cmds[0].GetAlterTableCmd().Newowner) // owner.go
	}
	if t.Kind != catalog.KindTable {
		return "", st.Errorf(at.Relation.Location, pgerror.WrongObjectType, "\"%s\" is not a table", t.Name)
	}
	if err := s.requireOwner(t); err != nil {
		return "", err
	}
	nt := t.Clone()
	c := s.cat.Clone()
	var ops []string
	var notNull []int // columns SET NOT NULL: existing rows are checked
	// post are the row work of the changes (filling added columns,
	// validating added constraints), run in order once nt is complete.
	var post []func(ec *exec.Ctx) error
	addPK := false
	var seqIDs []uint32 // sequences of identity columns added
	// Indexes of UNIQUE constraints added (built once the catalog is
	// written) and indexes dropped (R-T10).
	var newIdx, dropIdx []uint32
	taken := map[string]bool{}
	dropIndex := func(id uint32) {
		for i := range nt.Indexes {
			if nt.Indexes[i].ID == id {
				nt.Indexes = append(nt.Indexes[:i:i], nt.Indexes[i+1:]...)
				break
			}
		}
		if i := slices.Index(newIdx, id); i >= 0 {
			newIdx = slices.Delete(newIdx, i, i+1)
			return
		}
		dropIdx = append(dropIdx, id)
	}
	for _, cn := range at.Cmds {
		cmd := cn.GetAlterTableCmd()
		colIdx := func() (int, error) {
			i := nt.ColumnIndex(cmd.Name)
			if i < 0 {
				return 0, pgerror.New(pgerror.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", cmd.Name, t.Name)
			}
			return i, nil
		}
		switch cmd.Subtype {
		case pg_query.AlterTableType_AT_AddConstraint:
			con := cmd.Def.GetConstraint()
			if con.Contype == pg_query.ConstrType_CONSTR_CHECK || con.Contype == pg_query.ConstrType_CONSTR_FOREIGN {
				work, err := addTableConstraint(b, c, nt, con, "")
				if err != nil {
					return "", err
				}
				if work != nil {
					post = append(post, work)
				}
				ops = append(ops, "ADD CONSTRAINT")
				continue
			}
			if con.Contype == pg_query.ConstrType_CONSTR_UNIQUE {
				spec, err := specFromConstraint(st, nt, con, "")
				if err != nil {
					return "", err
				}
				ix, err := addIndex(st, c, nt, spec, taken)
				if err != nil {
					return "", err
				}
				newIdx = append(newIdx, ix.ID)
				ops = append(ops, "ADD CONSTRAINT")
				continue
			}
			if con.Contype != pg_query.ConstrType_CONSTR_PRIMARY {
				return "", st.Errorf(con.Location, pgerror.FeatureNotSupported, "%s constraints are not supported yet", plan.ConstraintKindName(con.Contype))
			}
			if len(nt.PrimaryKey) > 0 {
				return "", st.Errorf(con.Location, pgerror.InvalidTableDefinition, "multiple primary keys for table \"%s\" are not allowed", t.Name)
			}
			if len(at.Cmds) > 1 {
				return "", st.Errorf(con.Location, pgerror.FeatureNotSupported, "ADD PRIMARY KEY must be the only change of its ALTER TABLE")
			}
			for _, k := range con.Keys {
				name := strVal(k)
				i := nt.ColumnIndex(name)
				if i < 0 {
					return "", st.Errorf(con.Location, pgerror.UndefinedColumn, "column \"%s\" named in key does not exist", name)
				}
				for _, id := range nt.PrimaryKey {
					if id == nt.Columns[i].ID {
						return "", st.Errorf(con.Location, pgerror.DuplicateColumn, "column \"%s\" appears twice in primary key constraint", name)
					}
				}
				switch nt.Columns[i].Type.Kind {
				case types.KindInterval, types.KindJSON, types.KindJSONB:
					return "", st.Errorf(con.Location, pgerror.FeatureNotSupported, "a column of type %s cannot be part of a primary key", nt.Columns[i].Type.String())
				}
				nt.Columns[i].NotNull = true
				nt.PrimaryKey = append(nt.PrimaryKey, nt.Columns[i].ID)
			}
			addPK = true
			ops = append(ops, "ADD CONSTRAINT")
		case pg_query.AlterTableType_AT_DropConstraint:
			ix := nt.IndexByName(cmd.Name)
			switch {
			case nt.CheckByName(cmd.Name) >= 0:
				i := nt.CheckByName(cmd.Name)
				nt.Checks = slices.Delete(nt.Checks, i, i+1)
			case nt.ForeignKeyByName(cmd.Name) >= 0:
				i := nt.ForeignKeyByName(cmd.Name)
				nt.ForeignKeys = slices.Delete(nt.ForeignKeys, i, i+1)
			case ix != nil && ix.IsConstraint():
				if err := referencedIndex(s.cat, nt, ix.ColumnIDs(), ix.Name, cmd.Behavior == pg_query.DropBehavior_DROP_CASCADE); err != nil {
					return "", err
				}
				dropIndex(ix.ID)
			case len(nt.PrimaryKey) > 0 && nt.PrimaryKeyName() == cmd.Name:
				return "", pgerror.New(pgerror.FeatureNotSupported, "dropping the primary key of table %s is not supported: the primary key is the table's storage key", t.Name)
			case cmd.MissingOk:
				s.notice("constraint \"%s\" of relation \"%s\" does not exist, skipping", cmd.Name, t.Name)
				continue
			default:
				return "", pgerror.New(pgerror.UndefinedObject, "constraint \"%s\" of relation \"%s\" does not exist", cmd.Name, t.Name)
			}
			ops = append(ops, "DROP CONSTRAINT")
		case pg_query.AlterTableType_AT_AddIdentity:
			// ALTER COLUMN … ADD GENERATED … AS IDENTITY (as pg_dump
			// restores identity columns): the rows keep their values.
			i, err := colIdx()
			if err != nil {
				return "", err
			}
			col := &nt.Columns[i]
			switch k := col.Type.Kind; {
			case k != types.KindInt2 && k != types.KindInt4 && k != types.KindInt8:
				return "", pgerror.New(pgerror.InvalidParameterValue, "identity column type must be smallint, integer, or bigint")
			case col.Identity != 0:
				return "", pgerror.New(pgerror.ObjectNotInPrerequisiteState, "column \"%s\" of relation \"%s\" is already an identity column", col.Name, t.Name)
			case col.Default != "":
				return "", pgerror.New(pgerror.ObjectNotInPrerequisiteState, "column \"%s\" of relation \"%s\" already has a default value", col.Name, t.Name)
			case !col.NotNull:
				return "", pgerror.New(pgerror.ObjectNotInPrerequisiteState, "column \"%s\" of relation \"%s\" must be declared NOT NULL before identity can be added", col.Name, t.Name)
			}
			seq, err := s.identityColumn(c, nt, col, cmd.Def.GetConstraint())
			if err != nil {
				return "", err
			}
			seqIDs = append(seqIDs, seq.ID)
			ops = append(ops, "CHANGE COLUMN")
		case pg_query.AlterTableType_AT_ValidateConstraint:
			work, err := validateConstraint(b, nt, cmd.Name)
			if err != nil {
				return "", err
			}
			if work != nil {
				post = append(post, work)
			}
			ops = append(ops, "ADD CONSTRAINT")
		case pg_query.AlterTableType_AT_ColumnDefault:
			i, err := colIdx()
			if err != nil {
				return "", err
			}
			nt.Columns[i].Default = ""
			if cmd.Def != nil {
				if nt.Columns[i].Default, err = b.DefaultText(cmd.Def, nt.Columns[i].Type); err != nil {
					return "", err
				}
			}
			ops = append(ops, "CHANGE COLUMN")
		case pg_query.AlterTableType_AT_SetNotNull:
			i, err := colIdx()
			if err != nil {
				return "", err
			}
			if !nt.Columns[i].NotNull {
				nt.Columns[i].NotNull = true
				notNull = append(notNull, i)
			}
			ops = append(ops, "CHANGE COLUMN")
		case pg_query.AlterTableType_AT_DropNotNull:
			i, err := colIdx()
			if err != nil {
				return "", err
			}
			for _, id := range nt.PrimaryKey {
				if id == nt.Columns[i].ID {
					return "", pgerror.New(pgerror.InvalidTableDefinition, "column \"%s\" is in a primary key", cmd.Name)
				}
			}
			nt.Columns[i].NotNull = false
			ops = append(ops, "CHANGE COLUMN")
		case pg_query.AlterTableType_AT_AddColumn:
			cd := cmd.Def.GetColumnDef()
			if nt.ColumnIndex(cd.Colname) >= 0 {
				if cmd.MissingOk {
					s.notice("column \"%s\" of relation \"%s\" already exists, skipping", cd.Colname, t.Name)
					continue
				}
				return "", st.Errorf(cd.Location, pgerror.DuplicateColumn, "column \"%s\" of relation \"%s\" already exists", cd.Colname, t.Name)
			}
			typ, err := b.TypeName(cd.TypeName)
			if err != nil {
				return "", err
			}
			col := catalog.Column{ID: nt.NextColID, Name: cd.Colname, Type: typ, NotNull: cd.IsNotNull}
			nt.NextColID++
			var later []*pg_query.Constraint // CHECK and REFERENCES, once the column is in
			var newSeqs []uint32
			if err := plan.ApplyConstraintAttrs(cd.Constraints); err != nil {
				return "", err
			}
			for _, c0 := range cd.Constraints {
				con := c0.GetConstraint()
				switch con.Contype {
				case pg_query.ConstrType_CONSTR_NULL:
					col.NotNull = false
				case pg_query.ConstrType_CONSTR_NOTNULL:
					col.NotNull = true
				case pg_query.ConstrType_CONSTR_DEFAULT:
					if col.Default, err = b.DefaultText(con.RawExpr, typ); err != nil {
						return "", err
					}
				case pg_query.ConstrType_CONSTR_IDENTITY:
					seq, err := s.identityColumn(c, nt, &col, con)
					if err != nil {
						return "", err
					}
					newSeqs = append(newSeqs, seq.ID)
				case pg_query.ConstrType_CONSTR_GENERATED:
					if col.Generated, err = plan.ConstraintExprText(con.RawExpr); err != nil {
						return "", err
					}
				case pg_query.ConstrType_CONSTR_CHECK, pg_query.ConstrType_CONSTR_FOREIGN:
					later = append(later, con)
				case pg_query.ConstrType_CONSTR_ATTR_NOT_DEFERRABLE, pg_query.ConstrType_CONSTR_ATTR_IMMEDIATE,
					pg_query.ConstrType_CONSTR_ATTR_DEFERRABLE, pg_query.ConstrType_CONSTR_ATTR_DEFERRED:
				default:
					return "", st.Errorf(con.Location, pgerror.FeatureNotSupported, "%s constraints on ADD COLUMN are not supported yet", plan.ConstraintKindName(con.Contype))
				}
			}
			seqIDs = append(seqIDs, newSeqs...)
			nt.Columns = append(nt.Columns, col)
			ci := len(nt.Columns) - 1
			if col.Generated != "" {
				if err := b.CheckGenerated(nt); err != nil {
					return "", err
				}
			}
			// Existing rows get the default (a volatile one per row), the
			// identity's next values or the generated value, as PostgreSQL
			// rewrites the table; a NOT NULL column without one fails on
			// a table with rows.
			if fill := col.Generated; fill != "" || col.Default != "" || col.NotNull {
				if fill == "" {
					fill = col.Default
				}
				tbl, typ := nt, col.Type
				post = append(post, func(ec *exec.Ctx) error {
					e := plan.Expr(&plan.Const{D: types.NullDatum, T: typ})
					if fill != "" {
						var err error
						if e, err = s.binder(nil, nil).BindRowExpr(tbl, fill, &typ); err != nil {
							return err
						}
					}
					return exec.FillColumn(ec, tbl, ci, e)
				})
			}
			for _, con := range later {
				work, err := addTableConstraint(b, c, nt, con, col.Name)
				if err != nil {
					return "", err
				}
				if work != nil {
					post = append(post, work)
				}
			}
			ops = append(ops, "ADD COLUMNS")
		case pg_query.AlterTableType_AT_DropColumn:
			i := nt.ColumnIndex(cmd.Name)
			if i < 0 {
				if cmd.MissingOk {
					s.notice("column \"%s\" of relation \"%s\" does not exist, skipping", cmd.Name, t.Name)
					continue
				}
				return "", pgerror.New(pgerror.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", cmd.Name, t.Name)
			}
			for _, id := range nt.PrimaryKey {
				if id == nt.Columns[i].ID {
					return "", pgerror.New(pgerror.FeatureNotSupported, "dropping primary-key column %s of table %s is not supported: the primary key is the table's storage key", cmd.Name, t.Name)
				}
			}
			for _, pc := range nt.PartitionBy {
				if pc == cmd.Name {
					return "", pgerror.New(pgerror.DependentObjectsStillExist, "cannot drop partition column %s of table %s", cmd.Name, t.Name)
				}
			}
			// CHECK and FOREIGN KEY constraints on the column go with it;
			// a column another table's foreign key references needs
			// CASCADE.
			if err := dropColumnConstraints(s, b, nt, i, cmd.Behavior == pg_query.DropBehavior_DROP_CASCADE); err != nil {
				return "", err
			}
			// Indexes and UNIQUE constraints on the column go with it.
			var gone []uint32
			for _, ix := range nt.Indexes {
				if ix.Uses(nt.Columns[i].ID) {
					gone = append(gone, ix.ID)
				}
			}
			for _, id := range gone {
				dropIndex(id)
			}
			nt.Columns = append(nt.Columns[:i:i], nt.Columns[i+1:]...)
			if ti := t.ColumnIndex(cmd.Name); ti >= 0 {
				without := s.cat.Clone()
				without.PutTable(nt.Clone())
				if users := ddl.ColumnUsers(s.cat, without, b.Env, t, ti); len(users) > 0 {
					if cmd.Behavior != pg_query.DropBehavior_DROP_CASCADE {
						return "", ddl.DependentObjectsError(t, cmd.Name, users)
					}
					if len(at.Cmds) != 1 {
						return "", pgerror.New(pgerror.FeatureNotSupported, "DROP COLUMN … CASCADE of a column a view uses, together with other ALTER TABLE actions, is not supported yet; run it as a statement of its own")
					}
					// The views go first (with what reads them), in this
					// transaction; then the column, as without them.
					if err := s.dropColumnUsers(users); err != nil {
						return "", err
					}
					return s.alterTable(ctx, st, at)
				}
			}
			ops = append(ops, "DROP COLUMNS")
		case pg_query.AlterTableType_AT_AlterColumnType:
			i, err := colIdx()
			if err != nil {
				return "", err
			}
			cd := cmd.Def.GetColumnDef()
			typ, err := b.TypeName(cd.TypeName)
			if err != nil {
				return "", err
			}
			e, err := ddl.ColumnTypeChange(b, s.cat, t, i, typ, cd.RawDefault)
			if err != nil {
				return "", err
			}
			if e == nil {
				continue // the type it has
			}
			if len(at.Cmds) != 1 {
				return "", pgerror.New(pgerror.FeatureNotSupported, "ALTER COLUMN … TYPE together with other ALTER TABLE actions is not supported yet; run it as a statement of its own")
			}
			nt.Columns[i].Type = typ
			// Indexes over the column are rebuilt from the rewritten rows
			// as new indexes; the rewrite writes the table without them.
			to, oldIx, built := ddl.SwapRetypedIndexes(c, nt, i)
			newIdx = append(newIdx, built...)
			from := t
			post = append(post, func(ec *exec.Ctx) error {
				for _, id := range oldIx {
					if err := s.txn.DropIndex(storageID(to), storage.IndexID(id)); err != nil {
						return err
					}
				}
				return exec.RetypeColumn(ec, from, to, i, e)
			})
			// CHECKs over the column hold for the new values too.
			for _, ck := range ddl.RetypedChecks(nt, i) {
				post = append(post, checkRowsWork(b, nt, ck))
			}
			ops = append(ops, "CHANGE COLUMN")
		default:
			return "", pgerror.New(pgerror.FeatureNotSupported, "this ALTER TABLE form is not supported yet")
		}
	}
	if len(ops) == 0 {
		return "ALTER TABLE", nil
	}
	if addPK || len(notNull) > 0 {
		ec, err := s.execCtx(ctx, nil)
		if err != nil {
			return "", err
		}
		s.txn.CheckUnchanged(catalog.DescriptorKey(t.ID))
		for _, i := range notNull {
			if err := exec.CheckNotNull(ec, t, i); err != nil {
				return "", err
			}
		}
		if addPK {
			if err := exec.AddPrimaryKey(ec, t, nt); err != nil {
				return "", mapStorageErr(err)
			}
		}
	}
	c.PutTable(nt)
	if err := s.persist(c, append([]uint32{nt.ID}, seqIDs...), nil); err != nil {
		return "", err
	}
	// The row work runs against the new catalog (an added identity
	// column's sequence is in it); an error fails the statement, and with
	// it the transaction that holds the change.
	if len(post) > 0 {
		s.txn.CheckUnchanged(catalog.DescriptorKey(t.ID))
		ec, err := s.execCtx(ctx, nil)
		if err != nil {
			return "", err
		}
		for _, work := range post {
			if err := work(ec); err != nil {
				return "", mapStorageErr(err)
			}
		}
	}
	for _, id := range dropIdx {
		if err := s.txn.DropIndex(storageID(nt), storage.IndexID(id)); err != nil {
			return "", mapStorageErr(err)
		}
	}
	if err := s.buildIndexes(nt, newIdx); err != nil {
		return "", err
	}
	op := ops[0]
	if err := s.txn.RecordVersion(nt.StorageInfo(), op, nil); err != nil {
		return "", mapStorageErr(err)
	}
	return "ALTER TABLE", nil
}

// rename handles ALTER TABLE … RENAME COLUMN … TO … and index renames (R-T1).
func (s *Session) rename(st *parse.Statement, rs *pg_query.RenameStmt) (string, error) {
	if rs.RenameType == pg_query.ObjectType_OBJECT_INDEX || rs.RenameType == pg_query.ObjectType_OBJECT_TABCONSTRAINT {
		return s.renameIndex(st, rs)
	}
	if rs.RenameType != pg_query.ObjectType_OBJECT_COLUMN {
		// ALTER … RENAME TO of a relation is sql/ddl's (relation_move.go).
		return "", pgerror.New(pgerror.FeatureNotSupported, "this RENAME is not supported yet")
	}
	b := s.binder(st, nil)
	t, err := b.ResolveTable(rs.Relation)
	if err != nil {
		return "", err
	}
	if err := s.requireOwner(t); err != nil {
		return "", err
	}
	nt := t.Clone()
	i := nt.ColumnIndex(rs.Subname)
	if i < 0 {
		return "", pgerror.New(pgerror.UndefinedColumn, "column \"%s\" does not exist", rs.Subname)
	}
	if nt.ColumnIndex(rs.Newname) >= 0 {
		return "", pgerror.New(pgerror.DuplicateColumn, "column \"%s\" of relation \"%s\" already exists", rs.Newname, t.Name)
	}
	for j, pc := range nt.PartitionBy {
		if pc == rs.Subname {
			nt.PartitionBy[j] = rs.Newname
		}
	}
	nt.Columns[i].Name = rs.Newname
	plan.RenameColumnRefs(nt, rs.Subname, rs.Newname) // CHECK and generation texts
	c := s.cat.Clone()
	c.PutTable(nt)
	ids := []uint32{nt.ID}
	// The views over the column follow it (their query text changes).
	views, err := ddl.RenameColumnInViews(s.cat, c, b.Env, t, t.ColumnIndex(rs.Subname), rs.Newname)
	if err != nil {
		return "", err
	}
	for _, v := range views {
		c.PutTable(v)
		ids = append(ids, v.ID)
	}
	if err := s.persist(c, ids, nil); err != nil {
		return "", err
	}
	if err := s.txn.RecordVersion(nt.StorageInfo(), "RENAME COLUMN", nil); err != nil {
		return "", mapStorageErr(err)
	}
	return "ALTER TABLE", nil
}

// dropColumnUsers drops the views and materialized views that use a column
// ALTER TABLE … DROP COLUMN … CASCADE drops, and what reads them, with
// PostgreSQL's notice.
func (s *Session) dropColumnUsers(users []*catalog.Table) error {
	c := s.cat.Clone()
	var dropped []uint32
	for _, u := range users {
		if _, still := c.Table(u.ID); !still {
			continue
		}
		s.notice("drop cascades to %s %s", dataset.KindName(u.Kind), u.Name)
		ids, err := s.dropCascade(c, u, true)
		if err != nil {
			return err
		}
		dropped = append(dropped, ids...)
	}
	return s.persist(c, nil, dropped)
}
