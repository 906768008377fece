package session

import (
	"context"
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/types"
)

// selectInto turns SELECT … INTO [TEMP] t … into CREATE TABLE t AS SELECT
// … (PostgreSQL treats them alike).
func selectInto(sel *pg_query.SelectStmt) *pg_query.CreateTableAsStmt {
	q := proto.Clone(sel).(*pg_query.SelectStmt)
	into := q.IntoClause
	q.IntoClause = nil
	return &pg_query.CreateTableAsStmt{Query: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: q}},
		Into: into, Objtype: pg_query.ObjectType_OBJECT_TABLE}
}

// createTableAs runs CREATE [TEMP] TABLE … AS SELECT … [WITH [NO] DATA]: a
// table with the query's columns, filled with its rows.
func (s *Session) createTableAs(ctx context.Context, st *parse.Statement, cta *pg_query.CreateTableAsStmt) (string, error) {
	into := cta.Into
	sel := cta.Query.GetSelectStmt()
	if cta.Objtype != pg_query.ObjectType_OBJECT_TABLE || into == nil || into.Rel == nil || sel == nil {
		return "", pgerror.New(pgerror.FeatureNotSupported, "this CREATE TABLE AS is not supported")
	}
	if err := refuseModifyingWith(sel, "CREATE TABLE AS must not contain data-modifying statements in WITH"); err != nil {
		return "", err
	}
	b := s.binder(st, nil)
	q, err := b.BindSelect(sel)
	if err != nil {
		return "", err
	}
	if len(into.ColNames) > len(q.Cols) {
		return "", pgerror.New(pgerror.SyntaxError, "too many column names were specified")
	}
	c := s.cat.Clone()
	tt, exists, err := s.newTableTarget(c, st, into.Rel, into.OnCommit, cta.IfNotExists)
	if err != nil {
		return "", err
	}
	if exists {
		return "CREATE TABLE AS", nil
	}
	schema, name, tempIDs, temp, onCommit := tt.schema, tt.name, tt.tempIDs, tt.temp, tt.onCommit
	t := &catalog.Table{ID: c.AllocID(), SchemaID: schema.ID, Name: name, Kind: catalog.KindTable, NextColID: 1, Owner: s.ownerID(), OnCommit: onCommit}
	for i, col := range q.Cols {
		cn := col.Name
		if i < len(into.ColNames) {
			cn = strVal(into.ColNames[i])
		}
		if t.ColumnIndex(cn) >= 0 {
			return "", pgerror.New(pgerror.DuplicateColumn, "column \"%s\" specified more than once", cn)
		}
		typ := col.T
		if typ.Kind == types.KindUnknown { // an untyped literal becomes text, as in PostgreSQL
			typ = types.Text
		}
		t.Columns = append(t.Columns, catalog.Column{ID: t.NextColID, Name: cn, Type: typ})
		t.NextColID++
	}
	if onCommit != "" {
		s.tempOnCommit = true
	}
	if !temp {
		t.ApplyDefaults(s.eng.Defaults)
	}
	c.PutTable(t)
	if err := s.persist(c, append(tempIDs, t.ID), nil); err != nil {
		return "", err
	}
	if err := s.txn.CreateTable(t.StorageInfo(), "CREATE TABLE AS SELECT", map[string]string{"isManaged": "true"}); err != nil {
		return "", mapStorageErr(err)
	}
	if into.SkipData {
		return "CREATE TABLE AS", nil
	}
	// The rows: INSERT INTO schema.name <query>, bound against the new table.
	ins := &pg_query.InsertStmt{Relation: &pg_query.RangeVar{Schemaname: schema.Name, Relname: name, Inh: true, Relpersistence: "p"},
		SelectStmt: cta.Query, Override: pg_query.OverridingKind_OVERRIDING_NOT_SET}
	bi := s.binder(st, nil)
	bi.Optimize = true
	bound, err := bi.BindInsert(ins)
	if err != nil {
		return "", err
	}
	ec, err := s.execCtx(ctx, nil)
	if err != nil {
		return "", err
	}
	s.allowStaging(bound.Table)
	n, err := exec.ExecInsert(ec, bound)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("SELECT %d", n), nil
}
