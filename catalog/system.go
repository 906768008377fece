package catalog

import (
	"sort"

	"github.com/mvserver/mvserver/sql/types"
)

// SystemSchema qualifies the built-in system views (system.refresh_history).
const SystemSchema = "system"

// System views are built in, never stored: plain views over the row
// generators the engine provides (refresh_history R-S6, mv_insights R-I9).
var (
	systemViews     = map[string]*Table{}
	systemViewsByID = map[uint32]*Table{}
)

// Ids of the system views.
const (
	RefreshHistoryID uint32 = 1001
	MVInsightsID     uint32 = 1002
	PgStatActivityID uint32 = 1003
)

func init() {
	addSystemView(RefreshHistoryID, "refresh_history", "SELECT * FROM refresh_history()", []Column{
		{Name: "run_id", Type: types.Text}, {Name: "view_name", Type: types.Text}, {Name: "cause", Type: types.Text},
		{Name: "start_time", Type: types.TimestampTZ}, {Name: "end_time", Type: types.TimestampTZ},
		{Name: "duration_ms", Type: types.Int8}, {Name: "status", Type: types.Text}, {Name: "technique", Type: types.Text},
		{Name: "rows_read", Type: types.Int8}, {Name: "rows_written", Type: types.Int8}, {Name: "error", Type: types.Text},
	})
	// One row per (materialized view, what blocks its incremental refresh).
	addSystemView(MVInsightsID, "mv_insights", "SELECT * FROM mv_insights()", []Column{
		{Name: "view_name", Type: types.Text}, {Name: "source", Type: types.Text}, {Name: "object", Type: types.Text},
		{Name: "problem", Type: types.Text}, {Name: "location", Type: types.Text}, {Name: "message", Type: types.Text},
		{Name: "fix", Type: types.Text}, {Name: "permanent", Type: types.Bool},
	})
	// The server's sessions (R-S5), also as pg_catalog.pg_stat_activity.
	addSystemView(PgStatActivityID, "pg_stat_activity", "SELECT * FROM pg_stat_activity()", []Column{
		{Name: "datname", Type: types.Text}, {Name: "pid", Type: types.Int4}, {Name: "usename", Type: types.Text},
		{Name: "application_name", Type: types.Text}, {Name: "client_addr", Type: types.Text},
		{Name: "backend_start", Type: types.TimestampTZ}, {Name: "query_start", Type: types.TimestampTZ},
		{Name: "state", Type: types.Text}, {Name: "query", Type: types.Text},
	})
}

func addSystemView(id uint32, name, query string, cols []Column) {
	for i := range cols {
		cols[i].ID = uint32(i + 1)
	}
	t := &Table{ID: id, Name: name, Kind: KindView, Query: query, Columns: cols, NextColID: uint32(len(cols) + 1)}
	systemViews[name] = t
	systemViewsByID[id] = t
}

// IsSystem reports whether t is a built-in system view (not droppable).
func IsSystem(t *Table) bool { return t.ID < FirstObjectID }

// systemView returns the system view called name.
func (c *Catalog) systemView(name string) (*Table, bool) {
	t, ok := systemViews[name]
	if !ok {
		return nil, false
	}
	return t, true
}

// SystemViews lists the built-in system views by id.
func SystemViews() []*Table {
	out := make([]*Table, 0, len(systemViewsByID))
	for _, t := range systemViewsByID {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
