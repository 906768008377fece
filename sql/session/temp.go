package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/storage"
)

// Temporary tables (catalog/temp.go): each session has a schema
// pg_temp_N, created with its first temporary table, searched before the
// search path, and dropped with everything in it when the session ends
// (Close) or, after a crash, when the server starts (DropTempSchemas).

// tempSchemaName is the name of the session's temporary schema: pg_temp_
// and the backend process id, unique among live sessions.
func (s *Session) tempSchemaName() string {
	if s.tempName == "" {
		id := uint64(s.info.ProcessID)
		if id == 0 { // a session without a connection (tests)
			id = 1<<32 + uint64(s.eng.tempSeq.Add(1))
		}
		s.tempName = fmt.Sprintf("%s%d", catalog.TempSchemaPrefix, id)
	}
	return s.tempName
}

// resolvePath is the path names are resolved along: the session's
// temporary schema first (PostgreSQL searches it implicitly before the
// search path), then search_path with pg_temp standing for that schema.
// Objects are created along searchPath (catalog.TargetSchema never puts
// an unqualified name in a temporary schema).
func (s *Session) resolvePath() []string {
	own := s.tempSchemaName()
	path := s.searchPath()
	out := make([]string, 0, len(path)+1)
	out = append(out, own)
	for _, p := range path {
		if p == catalog.TempAlias || p == own {
			continue
		}
		out = append(out, p)
	}
	return out
}

// isTempRef reports whether a qualified name names the session's
// temporary schema.
func (s *Session) isTempRef(parts []string) bool {
	if len(parts) < 2 {
		return false
	}
	sc := parts[len(parts)-2]
	return sc == catalog.TempAlias || sc == s.tempSchemaName()
}

// tempSchema returns the session's temporary schema in c, adding it (and
// reporting its id to persist) when this is the session's first
// temporary object.
func (s *Session) tempSchema(c *catalog.Catalog) (*catalog.Schema, []uint32) {
	name := s.tempSchemaName()
	s.tempUsed = true
	if sc, ok := c.Schema(name); ok {
		return sc, nil
	}
	sc := &catalog.Schema{ID: c.AllocID(), Name: name}
	c.PutSchema(sc)
	return sc, []uint32{sc.ID}
}

// dropTempRelations removes relations of a temporary schema from c and
// their rows from the transaction, returning the dropped ids.
func (s *Session) dropTempRelations(c *catalog.Catalog, ts []*catalog.Table) ([]uint32, error) {
	var dropped []uint32
	for _, t := range ts {
		if _, ok := c.Table(t.ID); !ok {
			continue
		}
		// Views over it go with it (they can only be temporary ones).
		for _, d := range c.Dependents(t.ID) {
			more, err := s.dropTempRelations(c, []*catalog.Table{d})
			if err != nil {
				return nil, err
			}
			dropped = append(dropped, more...)
		}
		if t.Kind == catalog.KindTable {
			for _, seq := range c.OwnedSequences(t.ID) {
				if err := s.dropSequence(c, seq); err != nil {
					return nil, err
				}
				dropped = append(dropped, seq.ID)
			}
		}
		dropped = append(dropped, t.ID)
		if t.Kind == catalog.KindSequence {
			if err := s.dropSequence(c, t); err != nil {
				return nil, err
			}
			continue
		}
		c.DropTable(t.ID)
		if t.Kind != catalog.KindView {
			if err := s.txn.DropTable(storageID(t)); err != nil {
				return nil, mapStorageErr(err)
			}
		}
	}
	return dropped, nil
}

// onCommitTemp runs the ON COMMIT actions of the session's temporary
// tables in the committing transaction: DELETE ROWS empties them, DROP
// drops them.
func (s *Session) onCommitTemp() error {
	if !s.tempOnCommit || s.cat == nil {
		return nil
	}
	sc, ok := s.cat.Schema(s.tempSchemaName())
	if !ok {
		return nil
	}
	var drop []*catalog.Table
	for _, t := range s.cat.SchemaTables(sc.ID) {
		switch t.OnCommit {
		case catalog.OnCommitDeleteRows:
			// Every commit that wrote rows empties it, so one that wrote
			// none has nothing to empty.
			if !s.txn.WritesTable(storageID(t)) {
				continue
			}
			if err := s.txn.Truncate(t.StorageInfo()); err != nil {
				return mapStorageErr(err)
			}
		case catalog.OnCommitDrop:
			drop = append(drop, t)
		}
	}
	if len(drop) == 0 {
		return nil
	}
	c := s.cat.Clone()
	dropped, err := s.dropTempRelations(c, drop)
	if err != nil {
		return err
	}
	return s.persist(c, nil, dropped)
}

// dropTempSchemas drops the temporary schemas named (all of them when
// names is nil) with their relations, in a transaction of its own,
// retrying when concurrent DDL commits first.
func (e *Engine) dropTempSchemas(names []string) error {
	var err error
	for range 20 {
		if err = e.dropTempSchemasOnce(names); !errors.Is(err, storage.ErrSerialization) && pgerror.Code(err) != pgerror.SerializationFailure {
			return err
		}
	}
	return err
}

func (e *Engine) dropTempSchemasOnce(names []string) error {
	s := &Session{eng: e, vals: map[string]string{}}
	if err := s.ensureTxn(); err != nil {
		return err
	}
	defer s.rollback()
	c := s.cat.Clone()
	var dropped []uint32
	for _, sc := range s.cat.TempSchemas() {
		if names != nil && !slices.Contains(names, sc.Name) {
			continue
		}
		ids, err := s.dropTempRelations(c, c.SchemaTables(sc.ID))
		if err != nil {
			return err
		}
		ids = append(ids, c.DropSchema(sc)...)
		dropped = append(append(dropped, ids...), sc.ID)
	}
	if len(dropped) == 0 {
		return nil
	}
	if err := s.persist(c, nil, dropped); err != nil {
		return err
	}
	txn := s.txn
	s.txn, s.cat = nil, nil
	return txn.Commit()
}

// DropTempSchemas drops every session's temporary schema and what is in
// it: the server calls it when it starts, before any session, to remove
// what sessions a crash ended left behind.
func (e *Engine) DropTempSchemas() error {
	return e.dropTempSchemas(nil)
}

// dropOwnTemp drops the session's temporary schema when the session ends.
func (s *Session) dropOwnTemp() {
	if !s.tempUsed {
		return
	}
	if err := s.eng.dropTempSchemas([]string{s.tempName}); err != nil && s.eng.Logger != nil {
		s.eng.Logger.Warn("dropping temporary tables at session end", "schema", s.tempName, "err", err)
	}
}

// refuseTemp refuses a materialized view or streaming table that reads a
// temporary relation, as PostgreSQL refuses one.
func (s *Session) refuseTemp(schema *catalog.Schema, ids []uint32) error {
	if catalog.IsTempSchema(schema.Name) {
		return pgerror.New(pgerror.FeatureNotSupported, "materialized views and streaming tables cannot be temporary")
	}
	for _, id := range ids {
		if t, ok := s.cat.Table(id); ok && s.cat.IsTemp(t) {
			return pgerror.New(pgerror.FeatureNotSupported, "materialized views must not use temporary tables or views")
		}
	}
	return nil
}

// readsTemp reports whether any of ids is a temporary relation.
func (s *Session) readsTemp(ids []uint32) bool {
	for _, id := range ids {
		if t, ok := s.cat.Table(id); ok && s.cat.IsTemp(t) {
			return true
		}
	}
	return false
}

// createTarget is the schema and name a new table named rv goes to: the
// session's temporary schema (added to c when new; its id returned to
// persist, non-nil) for CREATE TEMP or a name qualified with pg_temp,
// else the first schema of the search path or the named one.
func (s *Session) createTarget(c *catalog.Catalog, st *parse.Statement, rv *pg_query.RangeVar) (*catalog.Schema, string, []uint32, error) {
	parts := parse.RangeVarParts(rv)
	if rv.Relpersistence != "t" && !s.isTempRef(parts) {
		schema, name, err := c.TargetSchema(parts, s.resolvePath())
		if err != nil {
			return nil, "", nil, withPosition(err, st, rv.Location)
		}
		return schema, name, nil, nil
	}
	if len(parts) > 1 && !s.isTempRef(parts) {
		return nil, "", nil, st.Errorf(rv.Location, pgerror.InvalidTableDefinition, "cannot create temporary relation in non-temporary schema")
	}
	if len(parts) == 3 && parts[0] != c.Database {
		return nil, "", nil, st.Errorf(rv.Location, pgerror.FeatureNotSupported, "cross-database references are not implemented: \"%s\"", strings.Join(parts, "."))
	}
	sc, ids := s.tempSchema(c)
	if ids == nil {
		ids = []uint32{}
	}
	return sc, parts[len(parts)-1], ids, nil
}

// tableTarget is where CREATE TABLE [AS] puts its table.
type tableTarget struct {
	schema   *catalog.Schema
	name     string   // cut to 63 bytes
	tempIDs  []uint32 // non-nil: the session's temp schema (createTarget)
	temp     bool
	onCommit string
}

// newTableTarget resolves and checks CREATE TABLE [AS]'s target: its
// schema and name, its ON COMMIT action, that the name is free and that
// the user may create there. exists is true when IF NOT EXISTS found the
// name taken (the NOTICE is sent; nothing is to be created).
func (s *Session) newTableTarget(c *catalog.Catalog, st *parse.Statement, rv *pg_query.RangeVar, oc pg_query.OnCommitAction, ifNotExists bool) (tt tableTarget, exists bool, err error) {
	if tt.schema, tt.name, tt.tempIDs, err = s.createTarget(c, st, rv); err != nil {
		return tt, false, err
	}
	tt.temp = tt.tempIDs != nil || catalog.IsTempSchema(tt.schema.Name)
	if tt.onCommit, err = onCommitAction(oc, tt.temp); err != nil {
		return tt, false, err
	}
	if len(tt.name) > 63 {
		tt.name = tt.name[:63]
	}
	if c.NameTaken(tt.schema.ID, tt.name) {
		if ifNotExists {
			s.notice("relation \"%s\" already exists, skipping", tt.name)
			return tt, true, nil
		}
		return tt, false, st.Errorf(rv.Location, pgerror.DuplicateTable, "relation \"%s\" already exists", tt.name)
	}
	if !tt.temp {
		if err := s.requireCreate(tt.schema); err != nil {
			return tt, false, err
		}
	}
	return tt, false, nil
}

// onCommitAction is a table's ON COMMIT clause as catalog.Table.OnCommit.
func onCommitAction(a pg_query.OnCommitAction, temp bool) (string, error) {
	if a == pg_query.OnCommitAction_ONCOMMIT_NOOP || a == pg_query.OnCommitAction_ON_COMMIT_ACTION_UNDEFINED {
		return "", nil
	}
	if !temp {
		return "", pgerror.New(pgerror.InvalidTableDefinition, "ON COMMIT can only be used on temporary tables")
	}
	switch a {
	case pg_query.OnCommitAction_ONCOMMIT_DELETE_ROWS:
		return catalog.OnCommitDeleteRows, nil
	case pg_query.OnCommitAction_ONCOMMIT_DROP:
		return catalog.OnCommitDrop, nil
	}
	return "", nil
}

// ddlScope is what a transaction's DDL changed so far.
type ddlScope uint8

const (
	ddlNone     ddlScope = iota
	ddlTempOnly          // only temporary relations and temporary schemas
	ddlOther             // some permanent object
)

// noteDDL records whether a persist changes only temporary objects (looked
// up in the new catalog c, dropped ones in the transaction's current one).
func (s *Session) noteDDL(c *catalog.Catalog, changed, dropped []uint32) {
	temp := func(cat *catalog.Catalog, id uint32) bool {
		if sc, ok := cat.SchemaByID(id); ok {
			return catalog.IsTempSchema(sc.Name)
		}
		t, ok := cat.Table(id)
		return ok && cat.IsTemp(t)
	}
	scope := ddlTempOnly
	for _, id := range changed {
		if !temp(c, id) {
			scope = ddlOther
		}
	}
	for _, id := range dropped {
		if !temp(s.cat, id) {
			scope = ddlOther
		}
	}
	if s.ddl == ddlNone || scope == ddlOther {
		s.ddl = scope
	}
}

// commitTempDDL commits a lone statement of its own implicit transaction
// that changed only temporary objects, running it again on a fresh
// snapshot when concurrent DDL of another session committed first: every
// DDL writes the catalog generation, so two sessions' temporary tables
// would otherwise conflict where PostgreSQL's never do.
func (s *Session) commitTempDDL(ctx context.Context, st *parse.Statement, tag string) (string, error) {
	notices := len(s.notices)
	for attempt := 0; ; attempt++ {
		err := s.commit()
		if err == nil || pgerror.Code(err) != pgerror.SerializationFailure || attempt == 20 {
			return tag, err
		}
		s.notices = s.notices[:notices]
		if err := s.ensureTxn(); err != nil {
			return "", err
		}
		p, err := s.prepare(st, nil)
		if err != nil {
			return "", err
		}
		if tag, err = p.action(ctx, nil); err != nil {
			return "", mapStorageErr(err)
		}
		if s.ddl != ddlTempOnly {
			return tag, nil // the statement's own transaction commits it
		}
	}
}

// otherSessionsTemp reports whether t is another session's temporary
// relation.
func (s *Session) otherSessionsTemp(t *catalog.Table) bool {
	sc, ok := s.cat.SchemaByID(t.SchemaID)
	return ok && catalog.IsTempSchema(sc.Name) && sc.Name != s.tempSchemaName()
}
