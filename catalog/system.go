package catalog

import (
	"strings"

	"github.com/mvserver/mvserver/sql/types"
)

// SystemSchema qualifies the built-in system views (system.refresh_history).
const SystemSchema = "system"

// System views are built in, never stored: plain views over the row
// generators the engine provides (R-S6), or computed views whose rows are
// made from the catalog snapshot a statement is bound against (mv_insights,
// R-I9).
var (
	systemViews     = map[string]*Table{}
	systemViewsByID = map[uint32]*Table{}
	computedViews   = map[string]func(c *Catalog) [][]types.Datum{}
)

// Ids of the system views.
const (
	RefreshHistoryID uint32 = 1001
	MVInsightsID     uint32 = 1002
)

func init() {
	addSystemView(RefreshHistoryID, "refresh_history", "SELECT * FROM refresh_history()", []Column{
		{Name: "run_id", Type: types.Text}, {Name: "view_name", Type: types.Text}, {Name: "cause", Type: types.Text},
		{Name: "start_time", Type: types.TimestampTZ}, {Name: "end_time", Type: types.TimestampTZ},
		{Name: "duration_ms", Type: types.Int8}, {Name: "status", Type: types.Text}, {Name: "technique", Type: types.Text},
		{Name: "rows_read", Type: types.Int8}, {Name: "rows_written", Type: types.Int8}, {Name: "error", Type: types.Text},
	})
	// One row per (materialized view, what blocks its incremental refresh);
	// the rows come from the function the session registers with
	// SetComputedRows.
	addSystemView(MVInsightsID, "mv_insights", "", []Column{
		{Name: "view_name", Type: types.Text}, {Name: "source", Type: types.Text}, {Name: "object", Type: types.Text},
		{Name: "problem", Type: types.Text}, {Name: "location", Type: types.Text}, {Name: "message", Type: types.Text},
		{Name: "fix", Type: types.Text}, {Name: "permanent", Type: types.Bool},
	})
	t := systemViews["mv_insights"]
	t.Query = rowsQuery(t.Columns, nil)
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

// SetComputedRows makes the system view name a computed one: resolving it
// in a catalog gives a view whose query lists rows(c), each row one value
// per column (NULL or of the column's type). Call it from init.
func SetComputedRows(name string, rows func(c *Catalog) [][]types.Datum) {
	computedViews[name] = rows
}

// systemView returns the system view called name as seen from c: a
// computed view gets the rows of c's snapshot (the session binds every
// statement again at each execution, so a prepared statement never reads
// stale rows).
func (c *Catalog) systemView(name string) (*Table, bool) {
	t, ok := systemViews[name]
	if !ok {
		return nil, false
	}
	if rows := computedViews[name]; rows != nil {
		ct := *t
		ct.Query = rowsQuery(t.Columns, rows(c))
		return &ct, true
	}
	return t, true
}

// rowsQuery is a SELECT that returns rows as cols: a VALUES list with every
// value cast to its column's type (a SELECT … WHERE false when there are
// none, so the columns keep their types).
func rowsQuery(cols []Column, rows [][]types.Datum) string {
	lit := func(d types.Datum, t types.T) string {
		switch {
		case d.IsNull():
			return "CAST(NULL AS " + t.String() + ")"
		case t.Kind == types.KindBool:
			if d.I != 0 {
				return "TRUE"
			}
			return "FALSE"
		}
		s := string(types.AppendText(nil, d, nil))
		return "CAST('" + strings.ReplaceAll(s, "'", "''") + "' AS " + t.String() + ")"
	}
	var b strings.Builder
	if len(rows) == 0 {
		b.WriteString("SELECT ")
		for i, col := range cols {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(lit(types.NullDatum, col.Type) + ` AS "` + col.Name + `"`)
		}
		b.WriteString(" WHERE false")
		return b.String()
	}
	b.WriteString("SELECT * FROM (VALUES ")
	for i, r := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(")
		for j, col := range cols {
			if j > 0 {
				b.WriteString(", ")
			}
			d := types.NullDatum
			if j < len(r) {
				d = r[j]
			}
			b.WriteString(lit(d, col.Type))
		}
		b.WriteString(")")
	}
	b.WriteString(") AS v(")
	for i, col := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`"` + col.Name + `"`)
	}
	b.WriteString(")")
	return b.String()
}
