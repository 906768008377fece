package catalog

import "github.com/mvserver/mvserver/sql/types"

// SystemSchema qualifies the built-in system views (system.refresh_history).
const SystemSchema = "system"

// System views are built in, never stored: plain views over the row
// generators the engine provides (R-S6).
var (
	systemViews     = map[string]*Table{}
	systemViewsByID = map[uint32]*Table{}
)

func init() {
	addSystemView(1001, "refresh_history", "SELECT * FROM refresh_history()", []Column{
		{Name: "run_id", Type: types.Text}, {Name: "view_name", Type: types.Text}, {Name: "cause", Type: types.Text},
		{Name: "start_time", Type: types.TimestampTZ}, {Name: "end_time", Type: types.TimestampTZ},
		{Name: "duration_ms", Type: types.Int8}, {Name: "status", Type: types.Text}, {Name: "technique", Type: types.Text},
		{Name: "rows_read", Type: types.Int8}, {Name: "rows_written", Type: types.Int8}, {Name: "error", Type: types.Text},
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
