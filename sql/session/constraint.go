package session

import (
	"context"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/sequence"
	"github.com/mvserver/mvserver/sql/types"
)

// conDef is a constraint of CREATE TABLE; column is the column a column
// constraint is written on ("" at table level).
type conDef struct {
	con    *pg_query.Constraint
	column string
}

// constraintTaken says whether a constraint name is in use in t's schema
// (PostgreSQL picks generated names unused in the namespace).
func constraintTaken(c *catalog.Catalog, t *catalog.Table) func(string) bool {
	return func(name string) bool {
		if t.ConstraintNameTaken(name) {
			return true
		}
		for _, o := range c.Tables() {
			if o.ID != t.ID && o.SchemaID == t.SchemaID && o.ConstraintNameTaken(name) {
				return true
			}
		}
		return false
	}
}

// bindTableConstraints binds the CHECK and FOREIGN KEY constraints and the
// generation expressions of a table being created (binding in sql/plan,
// enforcement in sql/exec).
func bindTableConstraints(b *plan.Binder, c *catalog.Catalog, t *catalog.Table, checks, fks []conDef) error {
	taken := constraintTaken(c, t)
	for _, d := range checks {
		ck, err := b.BindCheck(t, d.con, taken)
		if err != nil {
			return err
		}
		ck.ID, ck.NotValid = c.AllocID(), false // CREATE TABLE checks no rows: valid
		t.Checks = append(t.Checks, *ck)
	}
	if err := b.CheckGenerated(t); err != nil {
		return err
	}
	for _, d := range fks {
		fk, _, err := b.BindForeignKey(t, d.con, d.column, true, taken)
		if err != nil {
			return err
		}
		fk.ID, fk.NotValid = c.AllocID(), false
		t.ForeignKeys = append(t.ForeignKeys, *fk)
	}
	return nil
}

// identityColumn makes col GENERATED ALWAYS / BY DEFAULT AS IDENTITY: a
// sequence owned by it, as PostgreSQL creates one.
func (s *Session) identityColumn(c *catalog.Catalog, t *catalog.Table, col *catalog.Column, con *pg_query.Constraint) (*catalog.Table, error) {
	typ := map[types.Kind]string{types.KindInt2: "smallint", types.KindInt4: "integer", types.KindInt8: "bigint"}[col.Type.Kind]
	if typ == "" {
		return nil, pgerror.New(pgerror.InvalidParameterValue, "identity column type must be smallint, integer, or bigint")
	}
	// SEQUENCE NAME (pg_dump writes it) names the sequence; the other
	// options are CREATE SEQUENCE's.
	var opts []*pg_query.Node
	var seqName string
	for _, o := range con.Options {
		if d := o.GetDefElem(); d != nil && d.Defname == "sequence_name" {
			if parts := listParts(d.Arg); len(parts) > 0 {
				seqName = parts[len(parts)-1]
			}
			continue
		}
		opts = append(opts, o)
	}
	if seqName != "" && c.NameTaken(t.SchemaID, seqName) {
		return nil, pgerror.New(pgerror.DuplicateTable, "relation \"%s\" already exists", seqName)
	}
	seq, err := s.serialColumn(c, t, col, typ)
	if err != nil {
		return nil, err
	}
	if seqName != "" {
		seq.Name = seqName
		col.Default = "nextval('" + strings.ReplaceAll(seqName, "'", "''") + "'::regclass)"
	}
	if _, _, err := sequence.ApplyOptions(seq.Sequence, opts, true); err != nil {
		return nil, err
	}
	col.Identity = 'd'
	if con.GeneratedWhen == "a" {
		col.Identity = 'a'
	}
	return seq, nil
}

// constraintsFor is what the statements of s enforce constraints with.
func (s *Session) constraintsFor(b func() *plan.Binder) *exec.Constraints {
	return &exec.Constraints{Cat: s.cat, Deferred: s.deferredFK,
		Bind: func(t *catalog.Table, text string, typ *types.T) (plan.Expr, error) {
			return b().BindRowExpr(t, text, typ)
		}}
}

// addTableConstraint adds a CHECK or FOREIGN KEY constraint to nt (ALTER
// TABLE … ADD [CONSTRAINT], or on a column added): it returns the check of
// the existing rows to run, nil for NOT VALID.
func addTableConstraint(b *plan.Binder, c *catalog.Catalog, nt *catalog.Table, con *pg_query.Constraint, column string) (func(*exec.Ctx) error, error) {
	taken := constraintTaken(c, nt)
	if con.Contype == pg_query.ConstrType_CONSTR_CHECK {
		ck, err := b.BindCheck(nt, con, taken)
		if err != nil {
			return nil, err
		}
		ck.ID = c.AllocID()
		nt.Checks = append(nt.Checks, *ck)
		if ck.NotValid {
			return nil, nil
		}
		return checkRowsWork(b, nt, *ck), nil
	}
	fk, parent, err := b.BindForeignKey(nt, con, column, false, taken)
	if err != nil {
		return nil, err
	}
	fk.ID = c.AllocID()
	nt.ForeignKeys = append(nt.ForeignKeys, *fk)
	if fk.NotValid {
		return nil, nil
	}
	return func(ec *exec.Ctx) error { return exec.ValidateForeignKey(ec, nt, fk, parent) }, nil
}

func checkRowsWork(b *plan.Binder, nt *catalog.Table, ck catalog.Check) func(*exec.Ctx) error {
	return func(ec *exec.Ctx) error {
		e, err := b.BindRowExpr(nt, ck.Expr, nil)
		if err != nil {
			return err
		}
		return exec.ValidateCheck(ec, nt, ck.Name, e)
	}
}

// validateConstraint is ALTER TABLE … VALIDATE CONSTRAINT: a NOT VALID
// constraint checks the existing rows and becomes valid.
func validateConstraint(b *plan.Binder, nt *catalog.Table, name string) (func(*exec.Ctx) error, error) {
	if i := nt.CheckByName(name); i >= 0 {
		if !nt.Checks[i].NotValid {
			return nil, nil
		}
		nt.Checks[i].NotValid = false
		return checkRowsWork(b, nt, nt.Checks[i]), nil
	}
	if i := nt.ForeignKeyByName(name); i >= 0 {
		fk := nt.ForeignKeys[i]
		if !fk.NotValid {
			return nil, nil
		}
		nt.ForeignKeys[i].NotValid = false
		parent := nt
		if fk.RefTable != nt.ID {
			p, ok := b.Cat.Table(fk.RefTable)
			if !ok {
				return nil, pgerror.New(pgerror.UndefinedTable, "referenced table of constraint \"%s\" does not exist", name)
			}
			parent = p
		}
		return func(ec *exec.Ctx) error { return exec.ValidateForeignKey(ec, nt, &fk, parent) }, nil
	}
	if nt.ConstraintNameTaken(name) {
		return nil, pgerror.New(pgerror.WrongObjectType, "constraint \"%s\" of relation \"%s\" is not a foreign key or check constraint", name, nt.Name)
	}
	return nil, pgerror.New(pgerror.UndefinedObject, "constraint \"%s\" of relation \"%s\" does not exist", name, nt.Name)
}

// referencedIndex refuses to drop the unique constraint name of t when a
// foreign key of another table needs it (2BP01, as PostgreSQL).
func referencedIndex(cat *catalog.Catalog, t *catalog.Table, ids []uint32, name string, cascade bool) error {
	refs := cat.ReferencedBy(t, func(fk *catalog.ForeignKey) bool {
		return catalog.SameColumnSet(fk.RefCols, ids) && !catalog.SameColumnSet(fk.RefCols, t.PrimaryKey)
	})
	if len(refs) == 0 {
		return nil
	}
	if cascade {
		return pgerror.New(pgerror.FeatureNotSupported, "DROP CONSTRAINT … CASCADE of a key that foreign keys reference is not supported yet: drop constraint %s on table %s first", refs[0].FK.Name, refs[0].Table.Name)
	}
	return pgerror.New(pgerror.DependentObjectsStillExist, "cannot drop constraint %s on table %s because other objects depend on it", name, t.Name).
		WithDetail("constraint %s on table %s depends on index %s", refs[0].FK.Name, refs[0].Table.Name, name).
		WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
}

// dropColumnConstraints removes the CHECK and FOREIGN KEY constraints of
// nt that use column i, as PostgreSQL drops them with the column; a column
// another table's foreign key references needs CASCADE.
func dropColumnConstraints(s *Session, b *plan.Binder, nt *catalog.Table, i int, cascade bool) error {
	id := nt.Columns[i].ID
	refs := s.cat.ReferencedBy(nt, func(fk *catalog.ForeignKey) bool { return slices.Contains(fk.RefCols, id) })
	if len(refs) > 0 {
		if cascade {
			return pgerror.New(pgerror.FeatureNotSupported, "DROP COLUMN … CASCADE of a column that foreign keys reference is not supported yet: drop constraint %s on table %s first", refs[0].FK.Name, refs[0].Table.Name)
		}
		return pgerror.New(pgerror.DependentObjectsStillExist, "cannot drop column %s of table %s because other objects depend on it", nt.Columns[i].Name, nt.Name).
			WithDetail("constraint %s on table %s depends on column %s of table %s", refs[0].FK.Name, refs[0].Table.Name, nt.Columns[i].Name, nt.Name).
			WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
	}
	nt.Checks = slices.DeleteFunc(nt.Checks, func(ck catalog.Check) bool { return b.ExprUsesColumn(nt, ck.Expr, i) })
	nt.ForeignKeys = slices.DeleteFunc(nt.ForeignKeys, func(fk catalog.ForeignKey) bool {
		return slices.Contains(fk.Cols, id) || fk.RefTable == nt.ID && slices.Contains(fk.RefCols, id)
	})
	for _, col := range nt.Columns {
		if col.Generated != "" && col.ID != id && b.ExprUsesColumn(nt, col.Generated, i) {
			if !cascade {
				return pgerror.New(pgerror.DependentObjectsStillExist, "cannot drop column %s of table %s because other objects depend on it", nt.Columns[i].Name, nt.Name).
					WithDetail("column %s of table %s depends on column %s", col.Name, nt.Name, nt.Columns[i].Name).
					WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
			}
			return pgerror.New(pgerror.FeatureNotSupported, "DROP COLUMN … CASCADE of a column a generated column uses is not supported yet")
		}
	}
	return nil
}

// dropForeignKeysTo handles the foreign keys of other tables that
// reference t, being dropped: 2BP01 without CASCADE; with it, each such
// constraint is dropped (PostgreSQL's "drop cascades to constraint …").
// Tables dropped in the same statement are not asked. It returns the ids
// of the tables changed in c.
func (s *Session) dropForeignKeysTo(c *catalog.Catalog, t *catalog.Table, dropping map[uint32]bool, cascade bool) ([]uint32, error) {
	var changed []uint32
	for _, ref := range c.Referencing(t.ID) {
		if ref.Table.ID == t.ID || dropping[ref.Table.ID] {
			continue
		}
		if !cascade {
			return nil, pgerror.New(pgerror.DependentObjectsStillExist, "cannot drop table %s because other objects depend on it", t.Name).
				WithDetail("constraint %s on table %s depends on table %s", ref.FK.Name, ref.Table.Name, t.Name).
				WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
		}
		child, _ := c.Table(ref.Table.ID)
		nc := child.Clone()
		name := ref.FK.Name
		nc.ForeignKeys = slices.DeleteFunc(nc.ForeignKeys, func(fk catalog.ForeignKey) bool { return fk.ID == ref.FK.ID })
		c.PutTable(nc)
		s.notice("drop cascades to constraint %s on table %s", name, nc.Name)
		changed = append(changed, nc.ID)
	}
	return changed, nil
}

// truncateReferencing applies PostgreSQL's TRUNCATE rule for foreign keys:
// a table referenced from a table not truncated with it is refused
// (0A000); with CASCADE the referencing tables are truncated too.
func truncateReferencing(s *Session, tables []*catalog.Table, cascade bool) ([]*catalog.Table, error) {
	in := map[uint32]bool{}
	for _, t := range tables {
		in[t.ID] = true
	}
	for i := 0; i < len(tables); i++ {
		t := tables[i]
		for _, ref := range s.cat.Referencing(t.ID) {
			if in[ref.Table.ID] {
				continue
			}
			if !cascade {
				return nil, pgerror.New(pgerror.FeatureNotSupported, "cannot truncate a table referenced in a foreign key constraint").
					WithDetail("Table \"%s\" references \"%s\".", ref.Table.Name, t.Name).
					WithHint("Truncate table \"%s\" at the same time, or use TRUNCATE ... CASCADE.", ref.Table.Name)
			}
			s.notice("truncate cascades to table \"%s\"", ref.Table.Name)
			in[ref.Table.ID] = true
			tables = append(tables, ref.Table)
		}
	}
	return tables, nil
}

// setConstraints is SET CONSTRAINTS { ALL | name, … } { DEFERRED |
// IMMEDIATE } for the transaction's deferrable foreign keys.
func (s *Session) setConstraints(ctx context.Context, cs *pg_query.ConstraintsSetStmt) (string, error) {
	if !s.explicit {
		s.notices = append(s.notices, &pgerror.Error{Severity: pgerror.SeverityWarning, Code: pgerror.NoActiveSQLTransaction,
			Message: "SET CONSTRAINTS can only be used in transaction blocks"})
	}
	var ids []uint32
	if len(cs.Constraints) > 0 {
		ids = []uint32{}
		for _, n := range cs.Constraints {
			rv := n.GetRangeVar()
			found := false
			for _, t := range s.cat.Tables() {
				if rv.Schemaname != "" {
					if sc, ok := s.cat.SchemaByID(t.SchemaID); !ok || sc.Name != rv.Schemaname {
						continue
					}
				}
				if i := t.ForeignKeyByName(rv.Relname); i >= 0 {
					if !t.ForeignKeys[i].Deferrable {
						return "", pgerror.New(pgerror.WrongObjectType, "constraint \"%s\" is not deferrable", rv.Relname)
					}
					ids, found = append(ids, t.ForeignKeys[i].ID), true
				} else if t.ConstraintNameTaken(rv.Relname) {
					return "", pgerror.New(pgerror.WrongObjectType, "constraint \"%s\" is not deferrable", rv.Relname)
				}
			}
			if !found {
				return "", pgerror.New(pgerror.UndefinedObject, "constraint \"%s\" does not exist", rv.Relname)
			}
		}
	}
	ec, err := s.execCtx(ctx, nil)
	if err != nil {
		return "", err
	}
	return "SET CONSTRAINTS", s.deferredFK.SetMode(ec, ids, cs.Deferred)
}
