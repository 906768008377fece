package session

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/dataset"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/ddl"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// references resolves the relations a query reads (its RangeVars that are
// not CTE names) to their ids, in first-seen order.
func (s *Session) references(q *parse.Statement) ([]uint32, error) {
	ctes := parse.CTENames(q.AST)
	var ids []uint32
	seen := map[uint32]bool{}
	for _, rv := range parse.RangeVars(q.AST) {
		if rv.Schemaname == "" && rv.Catalogname == "" && ctes[rv.Relname] {
			continue
		}
		t, err := s.cat.Resolve(parse.RangeVarParts(rv), s.resolvePath())
		if err != nil {
			return nil, withPosition(err, q, rv.Location)
		}
		if !seen[t.ID] {
			seen[t.ID] = true
			ids = append(ids, t.ID)
		}
	}
	return ids, nil
}

// dependsOnAny reports whether any of ids reads target (a dataset that
// would read itself).
func dependsOnAny(c *catalog.Catalog, ids []uint32, target uint32) bool {
	for _, d := range ids {
		if dependsOnTransitively(c, d, target) {
			return true
		}
	}
	return false
}

// newDataset is the catalog entry of a materialized view or streaming table
// being created: its table clauses, and what the session stores with it
// (search path, time zone, statement timeout, the query as written). The
// caller adds what is its own and applies the dataset clauses.
func (s *Session) newDataset(kind catalog.ObjectKind, schemaID uint32, name, text string, ids []uint32, c *parse.CreateMaterializedView) (*catalog.Table, *catalog.Dataset) {
	t := &catalog.Table{SchemaID: schemaID, Name: name, Kind: kind, Query: text, DependsOn: ids, NextColID: 1,
		PartitionBy: c.Clauses.PartitionedBy, ClusterBy: c.Clauses.ClusterBy, Owner: s.ownerID()}
	if c.Clauses.Comment != nil {
		t.Comment = *c.Clauses.Comment
	}
	ds := &catalog.Dataset{SearchPath: s.searchPath(), QueryText: c.Query.Text, TimeZone: s.setting("TimeZone")}
	if d, err := ParseDuration(s.setting("statement_timeout")); err == nil && d > 0 {
		ds.StatementTimeoutMs = d.Milliseconds()
	}
	t.Dataset = ds
	return t, ds
}

// dependsOnTransitively reports whether relation id reads target, directly
// or through other relations (cycle check, R-M7).
func dependsOnTransitively(c *catalog.Catalog, id, target uint32) bool {
	seen := map[uint32]bool{}
	var walk func(uint32) bool
	walk = func(x uint32) bool {
		if x == target {
			return true
		}
		if seen[x] {
			return false
		}
		seen[x] = true
		t, ok := c.Table(x)
		if !ok {
			return false
		}
		for _, d := range t.DependsOn {
			if walk(d) {
				return true
			}
		}
		return false
	}
	return walk(id)
}

// createView runs CREATE [OR REPLACE] VIEW (R-Q4).
func (s *Session) createView(st *parse.Statement, vs *pg_query.ViewStmt) (string, error) {
	if err := refuseModifyingWith(vs.Query.GetSelectStmt(), "views must not contain data-modifying statements in WITH"); err != nil {
		return "", err
	}
	q := &parse.Statement{}
	*q = *st
	q.AST = vs.Query
	ids, err := s.references(q)
	if err != nil {
		return "", err
	}
	b := s.binder(st, nil)
	// As in PostgreSQL, defining a view reads nothing: its owner's rights
	// are checked when it is read (privileges.go), not now.
	b.CheckRead, b.CheckSystem = nil, nil
	b.DefinitionOnly = true
	sel := vs.Query.GetSelectStmt()
	if sel == nil {
		return "", st.Errorf(vs.View.Location, pgerror.FeatureNotSupported, "a view must be defined by a SELECT")
	}
	bq, err := b.BindSelect(sel)
	if err != nil {
		return "", err
	}
	text, err := parse.Deparse(vs.Query)
	if err != nil {
		return "", err
	}
	target := vs.View
	if target.Relpersistence != "t" && s.readsTemp(ids) {
		// As in PostgreSQL, a view over a temporary relation is itself
		// temporary (and goes when the session ends).
		if len(parse.RangeVarParts(target)) > 1 && !s.isTempRef(parse.RangeVarParts(target)) {
			return "", st.Errorf(target.Location, pgerror.InvalidTableDefinition, "cannot create temporary relation in non-temporary schema")
		}
		s.notice("view \"%s\" will be a temporary view", target.Relname)
		target = &pg_query.RangeVar{Catalogname: target.Catalogname, Schemaname: target.Schemaname, Relname: target.Relname, Relpersistence: "t", Location: target.Location}
	}
	cols, err := viewColumns(bq.Cols, vs.Aliases)
	if err != nil {
		return "", err
	}
	c := s.cat.Clone()
	schema, name, tempIDs, err := s.createTarget(c, st, target)
	if err != nil {
		return "", err
	}
	if tempIDs == nil {
		if err := s.requireCreate(schema); err != nil {
			return "", err
		}
	}
	t := &catalog.Table{SchemaID: schema.ID, Name: name, Kind: catalog.KindView, Query: text, DependsOn: ids, NextColID: 1, Owner: s.ownerID(),
		ViewSearchPath: b.SearchPath}
	if old, exists := s.cat.LookupTable(schema.ID, name); exists {
		if !vs.Replace {
			return "", st.Errorf(vs.View.Location, pgerror.DuplicateTable, "relation \"%s\" already exists", name)
		}
		if old.Kind != catalog.KindView {
			return "", st.Errorf(vs.View.Location, pgerror.WrongObjectType, "\"%s\" is not a view", name)
		}
		// Replacing a view needs its ownership; it keeps its owner and
		// grants (PostgreSQL's CREATE OR REPLACE VIEW).
		if err := s.requireOwner(old); err != nil {
			return "", err
		}
		if err := ddl.CheckViewReplace(old, cols); err != nil {
			return "", err
		}
		t.ID, t.Owner, t.ACL = old.ID, old.Owner, old.ACL
		if dependsOnAny(s.cat, ids, old.ID) {
			return "", pgerror.New(pgerror.InvalidObjectDefinition, "view \"%s\" would depend on itself", name)
		}
	} else if s.cat.IndexNameTaken(schema.ID, name) {
		return "", st.Errorf(vs.View.Location, pgerror.DuplicateTable, "relation \"%s\" already exists", name)
	} else {
		t.ID = c.AllocID()
	}
	for _, col := range cols {
		t.Columns = append(t.Columns, catalog.Column{ID: t.NextColID, Name: col.Name, Type: col.T})
		t.NextColID++
	}
	c.PutTable(t)
	return "CREATE VIEW", s.persist(c, append(tempIDs, t.ID), nil)
}

func viewColumns(cols []plan.Column, aliases []*pg_query.Node) ([]plan.Column, error) {
	if len(aliases) > len(cols) {
		return nil, pgerror.New(pgerror.SyntaxError, "CREATE VIEW specifies more column names than columns")
	}
	out := append([]plan.Column(nil), cols...)
	for i, a := range aliases {
		out[i].Name = strVal(a)
	}
	seen := map[string]bool{}
	for _, c := range out {
		if seen[c.Name] {
			return nil, pgerror.New(pgerror.DuplicateColumn, "column \"%s\" specified more than once", c.Name)
		}
		seen[c.Name] = true
	}
	return out, nil
}

// dropRelations drops views or materialized views, with CASCADE through
// their dependents (R-M6).
func (s *Session) dropRelations(kind catalog.ObjectKind, names [][]string, ifExists, cascade bool) (string, error) {
	tag := "DROP " + strings.ToUpper(dataset.KindName(kind))
	what := dataset.KindName(kind)
	c := s.cat.Clone()
	var dropped []uint32
	for _, parts := range names {
		t, err := c.Resolve(parts, s.resolvePath())
		if err != nil {
			if pgerror.Code(err) == pgerror.UndefinedTable {
				if ifExists {
					s.notice("%s \"%s\" does not exist, skipping", what, strings.Join(parts, "."))
					continue
				}
				return "", pgerror.New(pgerror.UndefinedTable, "%s \"%s\" does not exist", what, strings.Join(parts, "."))
			}
			return "", err
		}
		if catalog.IsSystem(t) {
			return "", pgerror.New(pgerror.InsufficientPrivilege, "permission denied: \"%s\" is a system view", t.Name)
		}
		if t.Kind != kind {
			return "", pgerror.New(pgerror.WrongObjectType, "\"%s\" is not a %s", t.Name, what).
				WithHint("Use DROP %s to remove a %s.", strings.ToUpper(dataset.KindName(t.Kind)), dataset.KindName(t.Kind))
		}
		if err := s.requireOwner(t); err != nil {
			return "", err
		}
		ids, err := s.dropCascade(c, t, cascade)
		if err != nil {
			return "", err
		}
		dropped = append(dropped, ids...)
	}
	if len(dropped) == 0 {
		return tag, nil
	}
	return tag, s.persist(c, nil, dropped)
}

// dropCascade removes t (and, with cascade, everything that reads it) from
// c and from storage; it returns the dropped ids.
func (s *Session) dropCascade(c *catalog.Catalog, t *catalog.Table, cascade bool) ([]uint32, error) {
	deps := c.Dependents(t.ID)
	if len(deps) > 0 && !cascade {
		return nil, pgerror.New(pgerror.DependentObjectsStillExist, "cannot drop %s %s because other objects depend on it", dataset.KindName(t.Kind), t.Name).
			WithDetail("%s %s depends on %s %s", dataset.KindName(deps[0].Kind), deps[0].Name, dataset.KindName(t.Kind), t.Name).
			WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
	}
	var out []uint32
	for _, d := range deps {
		if _, still := c.Table(d.ID); !still {
			continue
		}
		ids, err := s.dropCascade(c, d, true)
		if err != nil {
			return nil, err
		}
		out = append(out, ids...)
	}
	if len(deps) > 0 {
		s.notice("drop cascades to %d other object(s)", len(deps))
	}
	c.DropTable(t.ID)
	out = append(out, t.ID)
	if t.Kind != catalog.KindView {
		if err := s.txn.DropTable(storageID(t)); err != nil {
			return nil, mapStorageErr(err)
		}
	}
	if t.IsDataset() {
		if err := refresh.Forget(s.txn, t.ID); err != nil {
			return nil, err
		}
		s.datasets = append(s.datasets, t.ID)
	}
	return out, nil
}

// createMaterializedView runs CREATE … MATERIALIZED VIEW (R-M1) and its
// first refresh, in the statement's transaction.
func (s *Session) createMaterializedView(ctx context.Context, c *parse.CreateMaterializedView) (string, error) {
	if c.Streaming {
		return s.createStreamingTable(ctx, c)
	}
	if c.Explain {
		return "", pgerror.New(pgerror.FeatureNotSupported, "EXPLAIN CREATE MATERIALIZED VIEW is not supported yet")
	}
	if c.Query != nil && c.Query.AST != nil {
		if err := refuseModifyingWith(c.Query.AST.GetSelectStmt(), "materialized views must not use data-modifying statements in WITH"); err != nil {
			return "", err
		}
	}
	const tag = "CREATE MATERIALIZED VIEW"
	schema, name, old, skip, err := s.datasetTarget(c, catalog.KindMaterializedView, "")
	if err != nil {
		return "", err
	}
	if skip {
		return tag, nil
	}
	exists := old != nil
	ids, err := s.references(c.Query)
	if err != nil {
		return "", err
	}
	if err := s.refuseTemp(schema, ids); err != nil {
		return "", err
	}
	b := s.binder(c.Query, nil)
	b.DefinitionOnly = c.NoData
	q, err := b.BindSelect(c.Query.AST.GetSelectStmt())
	if err != nil {
		return "", err
	}
	if len(b.Params) > 0 {
		return "", pgerror.New(pgerror.FeatureNotSupported, "a materialized view's query cannot have parameters")
	}
	if c.NoData && c.Mode == parse.CreateOrRefresh {
		return "", pgerror.New(pgerror.SyntaxError, "WITH NO DATA cannot be combined with CREATE OR REFRESH")
	}
	text, err := parse.Deparse(c.Query.AST)
	if err != nil {
		return "", err
	}
	if exists && dependsOnAny(s.cat, ids, old.ID) {
		return "", pgerror.New(pgerror.InvalidObjectDefinition, "materialized view \"%s\" would depend on itself", name)
	}
	t, ds := s.newDataset(catalog.KindMaterializedView, schema.ID, name, text, ids, c)
	ds.Policy = string(parse.PolicyAuto)
	ds.Unpopulated = c.NoData
	// populate is the first refresh, none for WITH NO DATA.
	populate := func(id uint32) error {
		if c.NoData {
			return nil
		}
		return s.refreshInTxn(ctx, id, false)
	}
	dataset.ClausesToCatalog(&c.Clauses, ds)
	if err := s.datasetDefinition(t, c, q.Cols, tag); err != nil {
		return "", err
	}
	// R-I7: REFRESH POLICY INCREMENTAL [STRICT] needs a query that can be
	// maintained incrementally; what blocks it now or later is said in
	// NOTICEs after the first refresh (R-I9).
	va := s.analyzeNew(t, c.Query, q.Root, ids)
	if err := dataset.CheckIncrementalPolicy(name, ds.Policy, va, c.Query); err != nil {
		return "", err
	}
	cat := s.cat.Clone()
	if exists {
		t.ID = old.ID
	}
	if s.eng.ValidateDataset != nil {
		if err := s.eng.ValidateDataset(s.cat, t); err != nil {
			return "", err
		}
	}
	// done follows the first refresh with the blockers' NOTICEs.
	done := func(err error) (string, error) {
		if err != nil {
			return "", err
		}
		s.blockerNotices(name, ds.Policy, va)
		if c.Mode == parse.CreatePlain && !c.NoData && len(s.createRuns) > 0 {
			// PostgreSQL's tag of a populated CREATE MATERIALIZED VIEW,
			// as of CREATE TABLE AS: SELECT and the rows it holds.
			return fmt.Sprintf("SELECT %d", s.createRuns[len(s.createRuns)-1].res.Stats.RowsWritten), nil
		}
		return tag, nil
	}
	// CREATE OR REFRESH keeps an unchanged definition and refreshes it,
	// which needs REFRESH (MAINTAIN) only; a changed one (and CREATE OR
	// REPLACE) replaces the view, which needs CREATE on the schema and
	// ownership of the view (it keeps its owner and grants).
	if exists && c.Mode == parse.CreateOrRefresh && sameDefinition(old, t) {
		if err := s.require(old, catalog.PrivMaintain); err != nil {
			return "", err
		}
		return done(s.refreshInTxn(ctx, old.ID, false))
	}
	if err := s.requireCreate(schema); err != nil {
		return "", err
	}
	if exists {
		if err := s.requireOwner(old); err != nil {
			return "", err
		}
		t.Owner, t.ACL = old.Owner, old.ACL
		s.datasets = append(s.datasets, t.ID)
		t.NextColID = old.NextColID + t.NextColID // never reuse column ids
		for i := range t.Columns {
			t.Columns[i].ID = old.NextColID + uint32(i)
		}
		kept, err := s.carryIndexes(old, t)
		if err != nil {
			return "", err
		}
		cat.PutTable(t)
		if err := s.persist(cat, []uint32{t.ID}, nil); err != nil {
			return "", err
		}
		if err := s.txn.RecordVersion(t.StorageInfo(), "CREATE OR REPLACE MATERIALIZED VIEW", nil); err != nil {
			return "", mapStorageErr(err)
		}
		if err := s.buildIndexes(t, kept); err != nil {
			return "", err
		}
		if err := s.logUserAction(t, "replaced"); err != nil {
			return "", err
		}
		if c.NoData {
			if err := refresh.Unpopulate(s.txn, t); err != nil {
				return "", mapStorageErr(err)
			}
		}
		return done(populate(t.ID))
	}
	if err := s.storeNewDataset(cat, t, tag); err != nil {
		return "", err
	}
	return done(populate(t.ID))
}

// storeNewDataset gives the new materialized view or streaming table t an
// id in cat, stores cat and creates t's storage, recording version 0 with
// the statement tag and t's query.
func (s *Session) storeNewDataset(cat *catalog.Catalog, t *catalog.Table, tag string) error {
	t.ID = cat.AllocID()
	s.datasets = append(s.datasets, t.ID)
	cat.PutTable(t)
	if err := s.persist(cat, []uint32{t.ID}, nil); err != nil {
		return err
	}
	if err := s.logUserAction(t, "created"); err != nil {
		return err
	}
	if err := s.txn.CreateTable(t.StorageInfo(), tag, map[string]string{"query": t.Query}); err != nil {
		return mapStorageErr(err)
	}
	return nil
}

// datasetTarget resolves the name a CREATE of a materialized view or
// streaming table (kind) gives: its schema, the name, and the dataset of
// that kind the name holds already (nil: none). skip is true for IF NOT
// EXISTS over an existing one, whose NOTICE is sent. Another relation or
// index of that name, or an existing dataset under a plain CREATE (with
// existsHint, if any), is 42P07.
func (s *Session) datasetTarget(c *parse.CreateMaterializedView, kind catalog.ObjectKind, existsHint string) (schema *catalog.Schema, name string, old *catalog.Table, skip bool, err error) {
	schema, name, err = s.cat.TargetSchema(c.Name.Parts, s.resolvePath())
	if err != nil {
		return nil, "", nil, false, withPos(err, c.Name.Pos)
	}
	old, exists := s.cat.LookupTable(schema.ID, name)
	taken := func() error {
		return pgerror.New(pgerror.DuplicateTable, "relation \"%s\" already exists", name).WithPosition(c.Name.Pos)
	}
	switch {
	case !exists && s.cat.IndexNameTaken(schema.ID, name), exists && old.Kind != kind:
		return nil, "", nil, false, taken()
	case !exists:
		return schema, name, nil, false, nil
	}
	noun := dataset.KindName(kind)
	switch c.Mode {
	case parse.CreatePlain:
		e := pgerror.New(pgerror.DuplicateTable, "%s \"%s\" already exists", noun, name).WithPosition(c.Name.Pos)
		if existsHint != "" {
			e = e.WithHint("%s", existsHint)
		}
		return nil, "", nil, false, e
	case parse.CreateIfNotExists:
		s.notice("%s \"%s\" already exists, skipping", noun, name)
		return nil, "", nil, true, nil
	}
	return schema, name, old, false, nil
}

// datasetDefinition completes a new materialized view or streaming table
// t from its CREATE statement (stmt is its tag): its columns, its
// partition columns, which must be among them, its properties and the
// server's default properties.
func (s *Session) datasetDefinition(t *catalog.Table, c *parse.CreateMaterializedView, qcols []plan.Column, stmt string) error {
	if err := s.datasetColumns(t, c, qcols, stmt); err != nil {
		return err
	}
	for _, pc := range t.PartitionBy {
		if t.ColumnIndex(pc) < 0 {
			return pgerror.New(pgerror.UndefinedColumn, "partition column \"%s\" is not a column of %s \"%s\"", pc, dataset.KindName(t.Kind), t.Name)
		}
	}
	for _, p := range c.Clauses.Properties {
		np, err := catalog.NormalizeProperty(p.Key, p.Value)
		if err != nil {
			return err
		}
		t.SetProperty(np)
	}
	t.ApplyDefaults(s.eng.Defaults)
	return nil
}

// datasetColumns gives a new materialized view or streaming table t its
// columns — the query's, renamed and typed by the column list — and its
// expectations, bound over those columns (R-M2); errors point at them.
func (s *Session) datasetColumns(t *catalog.Table, c *parse.CreateMaterializedView, qcols []plan.Column, stmt string) error {
	ds := t.Dataset
	if len(c.Columns) > len(qcols) {
		return pgerror.New(pgerror.SyntaxError, "%s specifies more column names than columns", stmt)
	}
	for i, qc := range qcols {
		col := catalog.Column{ID: t.NextColID, Name: qc.Name, Type: qc.T}
		if col.Type.Kind == types.KindUnknown || col.Type.Kind == types.KindNull {
			col.Type = types.Text
		}
		t.NextColID++
		if i < len(c.Columns) {
			spec := c.Columns[i]
			col.Name, col.NotNull, col.Comment = spec.Name, spec.NotNull, spec.Comment
			if spec.Type != "" {
				typ, err := s.parseTypeText(spec.Type)
				if err != nil {
					return err
				}
				col.Type = typ
			}
		}
		if t.ColumnIndex(col.Name) >= 0 {
			return pgerror.New(pgerror.DuplicateColumn, "column \"%s\" specified more than once", col.Name).
				WithHint("Give the columns distinct names with AS or a column list.")
		}
		t.Columns = append(t.Columns, col)
	}
	viewCols := make([]plan.Column, len(t.Columns))
	for i, col := range t.Columns {
		viewCols[i] = plan.Column{Name: col.Name, T: col.Type}
	}
	for _, e := range c.Expectations {
		ce := catalog.Expectation{Name: e.Name, Expr: e.Expr, Action: e.Action}
		if _, err := refresh.BindExpectation(s.cat, viewCols, ce, s.env); err != nil {
			return withPos(err, e.Pos)
		}
		ds.Expectations = append(ds.Expectations, ce)
	}
	return nil
}

func sameDefinition(a, b *catalog.Table) bool {
	if a.Query != b.Query || len(a.Columns) != len(b.Columns) {
		return false
	}
	for i := range a.Columns {
		if a.Columns[i].Name != b.Columns[i].Name || a.Columns[i].Type != b.Columns[i].Type || a.Columns[i].NotNull != b.Columns[i].NotNull {
			return false
		}
	}
	return true
}

func withPos(err error, pos int32) error {
	if pe, ok := err.(*pgerror.Error); ok && pe.Position == 0 {
		pe.Position = pos
	}
	return err
}

// parseTypeText resolves a type written in a column list.
func (s *Session) parseTypeText(text string) (types.T, error) {
	st, err := parse.ParseOne("SELECT NULL::" + text)
	if err != nil {
		return types.T{}, pgerror.New(pgerror.SyntaxError, "invalid type \"%s\"", text)
	}
	tc := st.AST.GetSelectStmt().TargetList[0].GetResTarget().Val.GetTypeCast()
	if tc == nil {
		return types.T{}, pgerror.New(pgerror.SyntaxError, "invalid type \"%s\"", text)
	}
	return s.binder(st, nil).TypeName(tc.TypeName)
}

func (s *Session) refreshOptions(full bool, cause string) refresh.Options {
	return refresh.Options{Full: full, OptimalRefreshOff: s.eng.OptimalRefreshOff || s.setting("optimal_refresh") == "off", Env: s.env, Funcs: s.funcCtx(), Cause: cause}
}

// refreshInTxn runs a refresh inside the statement's transaction (CREATE).
func (s *Session) refreshInTxn(ctx context.Context, id uint32, full bool) error {
	opt := s.refreshOptions(full, "CREATE")
	// Later statements of a transaction block may read the view: its rows
	// stay in the transaction (refresh/rewrite.go).
	opt.InTransactionBlock = s.explicit
	res, err := s.eng.Refresher.RefreshIn(ctx, s.txn, s.cat, id, opt)
	if err != nil {
		return mapStorageErr(err)
	}
	s.createRuns = append(s.createRuns, createRun{cat: s.cat, view: id, res: res})
	s.refreshNotice(res)
	return nil
}

// unpopulate runs REFRESH MATERIALIZED VIEW … WITH NO DATA in the
// statement's transaction: the view keeps its definition and loses its
// rows, and reads fail with 55000 until the next refresh.
func (s *Session) unpopulate(t *catalog.Table) error {
	if err := refresh.Unpopulate(s.txn, t); err != nil {
		return mapStorageErr(err)
	}
	if t.Dataset.Unpopulated {
		return nil
	}
	cat := s.cat.Clone()
	nt := t.Clone()
	nt.Dataset.Unpopulated = true
	cat.PutTable(nt)
	s.datasets = append(s.datasets, t.ID)
	return s.persist(cat, []uint32{t.ID}, nil)
}

// reloadCatalog takes s.cat again from the transaction, after a write of
// the catalog that did not go through persist (a refresh's).
func (s *Session) reloadCatalog() error {
	cat, err := s.eng.Catalog.Snapshot(s.txn)
	if err != nil {
		return err
	}
	s.cat = cat
	return nil
}

// createRun is a refresh run inside a CREATE or a transaction block,
// announced at commit.
type createRun struct {
	cat  *catalog.Catalog
	view uint32
	res  *refresh.Result
	// manual: REFRESH in a transaction block, whose commit the runner's
	// listeners hear of as a manual run (chains start from it).
	manual bool
}

// refreshInBlock runs REFRESH inside the session's transaction, as
// PostgreSQL does: it reads the transaction's snapshot and own writes, and
// its effect commits or rolls back with the transaction. A concurrent
// refresh of the same view that commits first makes this commit fail with
// 40001 (both write the view's checkpoint: first committer wins). A
// failure aborts the transaction and is not recorded in refresh_history:
// nothing of the transaction is.
func (s *Session) refreshInBlock(ctx context.Context, r *parse.RefreshDataset, t *catalog.Table) error {
	opt := s.refreshOptions(r.Full, "MANUAL")
	// Later statements of the block may read the view: its rows stay in
	// the transaction (refresh/rewrite.go).
	opt.InTransactionBlock = true
	opt.ResetCheckpoints = r.ResetCheckpoints
	res, err := s.eng.Refresher.RefreshIn(ctx, s.txn, s.cat, t.ID, opt)
	if err != nil {
		return mapStorageErr(err)
	}
	if t.Dataset != nil && t.Dataset.Unpopulated {
		// The refresh populated the view: its catalog changed in s.txn.
		if err := s.reloadCatalog(); err != nil {
			return err
		}
	}
	if r.Streaming {
		s.streamRefreshes = append(s.streamRefreshes, t.Name)
	}
	s.createRuns = append(s.createRuns, createRun{cat: s.cat, view: t.ID, res: res, manual: true})
	s.refreshNotice(res)
	if t.Kind == catalog.KindMaterializedView {
		s.storedNotices(t)
	}
	return nil
}

// refreshNotice tells the client what the refresh did.
func (s *Session) refreshNotice(res *refresh.Result) {
	s.notice("refresh planned as %s: %s", res.Technique, res.Reason)
}

// logUserAction records a create/alter/drop in the dataset's event log.
func (s *Session) logUserAction(t *catalog.Table, action string) error {
	return refresh.LogUserAction(s.txn, t.ID, t.Name, action, s.currentUser(), s.eng.now())
}

// refreshDataset runs REFRESH MATERIALIZED VIEW (R-M4): alone, in a
// transaction of its own that holds the view's refresh lock; inside a
// transaction block (or after a write of the same implicit transaction),
// in that transaction (refreshInBlock, R-Q5).
func (s *Session) refreshDataset(ctx context.Context, r *parse.RefreshDataset) (string, error) {
	stmt := "REFRESH MATERIALIZED VIEW"
	if r.Streaming {
		stmt = "REFRESH STREAMING TABLE"
	}
	if r.Explain {
		return "", pgerror.New(pgerror.FeatureNotSupported, "EXPLAIN REFRESH STREAMING TABLE is not supported").
			WithHint("DESCRIBE EXTENDED shows the versions of each stream the table consumed; DESCRIBE HISTORY of a stream shows what was committed since.")
	}
	t, err := s.resolve(r.Name)
	if err != nil {
		return "", err
	}
	if err := dataset.KindOf(t, r.Streaming, r.Name); err != nil {
		if !r.Streaming && t.Kind != catalog.KindStreamingTable {
			return "", dataset.NotRefreshable(t)
		}
		return "", err
	}
	if err := s.require(t, catalog.PrivMaintain); err != nil {
		return "", err
	}
	if r.Concurrently {
		if err := refresh.CheckConcurrently(s.cat, t, r.NoData); err != nil {
			return "", err
		}
	}
	if r.NoData {
		return stmt, s.unpopulate(t)
	}
	if s.explicit || (s.txn != nil && !s.txn.ReadOnly()) {
		return stmt, s.refreshInBlock(ctx, r, t)
	}
	// The refresh takes its own snapshot once it holds the view's lock.
	s.rollback()
	defer s.ensureTxn()
	opt := s.refreshOptions(r.Full, "MANUAL")
	opt.ResetCheckpoints = r.ResetCheckpoints
	res, err := s.eng.Refresher.Refresh(ctx, t.ID, opt)
	if err != nil {
		return "", mapStorageErr(err)
	}
	if s.eng.Refreshed != nil {
		s.eng.Refreshed(t.ID, res)
	}
	s.refreshNotice(res)
	// What blocks incremental refresh, as of the catalog after the refresh
	// (R-I9). A query the refresh found no blocker in has none to report:
	// it is not bound and analysed a second time.
	if res.Analysis != nil && len(res.Analysis.Blockers) == 0 {
		return stmt, nil
	}
	if err := s.ensureTxn(); err == nil {
		if v, ok := s.cat.Table(t.ID); ok && v.Kind == catalog.KindMaterializedView {
			s.storedNotices(v)
		}
	}
	return stmt, nil
}

// alterDataset runs ALTER MATERIALIZED VIEW (R-M6).
func (s *Session) alterDataset(a *parse.AlterDataset) (string, error) {
	t, err := s.resolve(a.Name)
	if err != nil {
		return "", err
	}
	if err := dataset.KindOf(t, a.Streaming, a.Name); err != nil {
		return "", err
	}
	if err := s.requireOwner(t); err != nil {
		return "", err
	}
	if a.Streaming && a.EnableIncremental {
		return "", pgerror.New(pgerror.FeatureNotSupported, "ENABLE INCREMENTAL does not apply to streaming tables: their refreshes are always incremental").
			WithHint("A stream's change data feed must be on; ALTER TABLE … SET TBLPROPERTIES (delta.enableChangeDataFeed = true) turns it on.")
	}
	tag := "ALTER " + strings.ToUpper(dataset.KindName(t.Kind))
	switch {
	case a.EnableIncremental:
		return s.enableIncremental(t)
	case a.SetOwner != "":
		return s.alterOwner(t, s.ownerName(a.SetOwner), tag) // owner.go
	}
	nt, err := dataset.Alter(t, a)
	if err != nil {
		return "", err
	}
	if a.SetPolicy == parse.PolicyIncremental || a.SetPolicy == parse.PolicyIncrementalStrict {
		va, err := dataset.AnalyzeStored(s.cat, nt, s.env)
		if err != nil {
			return "", err
		}
		if err := dataset.CheckIncrementalPolicy(t.Name, nt.Dataset.Policy, va, nil); err != nil {
			return "", err
		}
		s.blockerNotices(t.Name, nt.Dataset.Policy, va)
	}
	if s.eng.ValidateDataset != nil {
		if err := s.eng.ValidateDataset(s.cat, nt); err != nil {
			return "", err
		}
	}
	c := s.cat.Clone()
	c.PutTable(nt)
	s.datasets = append(s.datasets, nt.ID)
	if err := s.logUserAction(nt, "altered"); err != nil {
		return "", err
	}
	return tag, s.persist(c, []uint32{nt.ID}, nil)
}

// enableIncremental turns the change data feed and row tracking on, in the
// statement's one transaction, for every source of a view (through plain
// views) that lacks them (R-I9, Fabric's "Enable CDF"). A query that can
// never be incremental is an error and changes nothing.
func (s *Session) enableIncremental(v *catalog.Table) (string, error) {
	va, err := dataset.AnalyzeStored(s.cat, v, s.env)
	if err != nil {
		return "", err
	}
	if va.Permanent() {
		return "", va.NeverIncremental(v.Name, "ENABLE INCREMENTAL", nil)
	}
	c := s.cat.Clone()
	var changed []uint32
	for _, fc := range dataset.EnableIncrementalChanges(s.cat, v) {
		t, _ := c.Table(fc.ID)
		// Setting a source's properties is ALTER TABLE: its owner's.
		if err := s.requireOwner(t); err != nil {
			return "", err
		}
		nt := t.Clone()
		set := map[string]string{}
		for _, k := range fc.Keys {
			nt.SetProperty(catalog.Property{Key: k, Value: "true"})
			set[k] = "true"
		}
		c.PutTable(nt)
		changed = append(changed, nt.ID)
		props, _ := json.Marshal(set)
		if err := s.txn.RecordVersion(nt.StorageInfo(), "SET TBLPROPERTIES", map[string]string{"properties": string(props)}); err != nil {
			return "", mapStorageErr(err)
		}
		s.notice("set %s on %s %s", strings.Join(assignments(fc.Keys), ", "), fc.Kind, fc.Table)
	}
	if err := s.logUserAction(v, "enabled incremental refresh on"); err != nil {
		return "", err
	}
	if len(changed) == 0 {
		s.notice("every source of %s already has the change data feed and row tracking", v.Name)
		return "ALTER MATERIALIZED VIEW", nil
	}
	return "ALTER MATERIALIZED VIEW", s.persist(c, changed, nil)
}

// assignments spells property keys as "key = true".
func assignments(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + " = true"
	}
	return out
}
