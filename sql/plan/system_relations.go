package plan

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// EventLogColumns are the columns of event_log(TABLE(name)) (R-O1).
var EventLogColumns = []Column{
	{Name: "id", T: types.Text},
	{Name: "sequence", T: types.Int8},
	{Name: "origin", T: types.Text},
	{Name: "timestamp", T: types.TimestampTZ},
	{Name: "message", T: types.Text},
	{Name: "level", T: types.Text},
	{Name: "error", T: types.Text},
	{Name: "details", T: types.Text},
	{Name: "event_type", T: types.Text},
}

// RefreshHistoryColumns are the columns of the refresh_history system view (R-S6).
var RefreshHistoryColumns = []Column{
	{Name: "run_id", T: types.Text},
	{Name: "view_name", T: types.Text},
	{Name: "cause", T: types.Text},
	{Name: "start_time", T: types.TimestampTZ},
	{Name: "end_time", T: types.TimestampTZ},
	{Name: "duration_ms", T: types.Int8},
	{Name: "status", T: types.Text},
	{Name: "technique", T: types.Text},
	{Name: "rows_read", T: types.Int8},
	{Name: "rows_written", T: types.Int8},
	{Name: "error", T: types.Text},
}

// MVInsightsColumns are the columns of the mv_insights system view (R-I9).
var MVInsightsColumns = []Column{
	{Name: "view_name", T: types.Text}, {Name: "source", T: types.Text}, {Name: "object", T: types.Text},
	{Name: "problem", T: types.Text}, {Name: "location", T: types.Text}, {Name: "message", T: types.Text},
	{Name: "fix", T: types.Text}, {Name: "permanent", T: types.Bool},
}

// PgStatActivityColumns are the columns of pg_stat_activity (R-S5: the pid
// pg_cancel_backend takes).
var PgStatActivityColumns = []Column{
	{Name: "datname", T: types.Text}, {Name: "pid", T: types.Int4}, {Name: "usename", T: types.Text},
	{Name: "application_name", T: types.Text}, {Name: "client_addr", T: types.Text},
	{Name: "backend_start", T: types.TimestampTZ}, {Name: "query_start", T: types.TimestampTZ},
	{Name: "state", T: types.Text}, {Name: "query", T: types.Text},
}

// SequenceColumns are the columns of a sequence read as a table (SELECT *
// FROM seq): its state, as PostgreSQL shows it.
var SequenceColumns = []Column{
	{Name: "last_value", T: types.Int8}, {Name: "log_cnt", T: types.Int8}, {Name: "is_called", T: types.Bool},
}

// Row generators of the system relations (exec.RegisterRowSource names).
const (
	// GenSequence reads a sequence's state (SequenceColumns); its
	// argument is the sequence's *catalog.Table.
	GenSequence       = "sequence"
	GenEventLog       = "event_log"
	GenRefreshHistory = "refresh_history"
	// GenMVInsights' argument is the catalog snapshot the statement was
	// bound against.
	GenMVInsights = "mv_insights"
	// GenPgStatActivity reads the sessions through funcs.Ctx.Activity.
	GenPgStatActivity = "pg_stat_activity"
)

// GenCatalog generates the rows of a pg_catalog or information_schema
// relation; its argument is a CatalogRelArg.
const GenCatalog = "pg_catalog"

// SystemRelation is a relation of pg_catalog or information_schema (R-P3):
// computed from the catalog snapshot a statement binds against, never
// stored. sql/pgcatalog registers them.
type SystemRelation struct {
	Schema, Name string
	OID          uint32
	Cols         []Column
	// Noun is the relation's kind in messages: "table" or "view".
	Noun string
	// SuperuserOnly: PostgreSQL grants SELECT on it to no role (pg_authid
	// and pg_shadow hold the password verifiers).
	SuperuserOnly bool
}

// CatalogRelArg is the argument of a GenCatalog Rows node.
type CatalogRelArg struct {
	Rel *SystemRelation
	Cat *catalog.Catalog
}

var systemRelations = map[string]*SystemRelation{}

// RegisterSystemRelation makes r readable as schema.name (and, for
// pg_catalog, by its bare name, as pg_catalog is searched first).
func RegisterSystemRelation(r *SystemRelation) {
	for i := range r.Cols {
		r.Cols[i].Table, r.Cols[i].AttrNum = r.OID, int16(i+1)
	}
	systemRelations[r.Schema+"."+r.Name] = r
}

// LookupSystemRelation finds a registered relation.
func LookupSystemRelation(schema, name string) (*SystemRelation, bool) {
	r, ok := systemRelations[schema+"."+name]
	return r, ok
}

// SystemRelations lists every registered relation (any order).
func SystemRelations() []*SystemRelation {
	out := make([]*SystemRelation, 0, len(systemRelations))
	for _, r := range systemRelations {
		out = append(out, r)
	}
	return out
}

// CheckRead fails with PostgreSQL's 42501 when r is for superusers only
// and its reader (the session's role, or the owner of the view reading
// it) is not one.
func (r *SystemRelation) CheckRead(superuser bool) error {
	if !r.SuperuserOnly || superuser {
		return nil
	}
	return pgerror.New(pgerror.InsufficientPrivilege, "permission denied for %s %s", r.Noun, r.Name)
}
