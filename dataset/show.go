package dataset

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// SHOW MATERIALIZED VIEWS, SHOW STREAMING TABLES and DESCRIBE EXTENDED's
// dataset rows, over a catalog snapshot and the transaction that read it.

// Show answers SHOW MATERIALIZED VIEWS and SHOW STREAMING TABLES (R-O3):
// each dataset of the kind, with its refresh policy (a materialized view)
// or its streams (a streaming table), schedule or trigger, and last
// refresh — its incremental processing for a view, its technique for a
// streaming table.
func Show(cat *catalog.Catalog, txn *storage.Txn, x *parse.ShowDatasets) (plan.Node, []plan.Column, error) {
	kind, third, seventh := catalog.KindMaterializedView, "refresh_policy", "incremental_processing"
	if x.Streaming {
		kind, third, seventh = catalog.KindStreamingTable, "streams", "last_refresh_technique"
	}
	cols := []plan.Column{
		{Name: "schema", T: types.Text}, {Name: "name", T: types.Text}, {Name: third, T: types.Text},
		{Name: "schedule", T: types.Text}, {Name: "trigger", T: types.Text},
		{Name: "last_refresh_status", T: types.Text}, {Name: seventh, T: types.Text},
		{Name: "last_refresh_time", T: types.TimestampTZ},
	}
	var rows [][]types.Datum
	for _, t := range cat.Tables() {
		if t.Kind != kind {
			continue
		}
		sc, _ := cat.SchemaByID(t.SchemaID)
		if x.Schema != "" && sc.Name != x.Schema {
			continue
		}
		last, err := refresh.ReadLastRun(txn, t.ID)
		if err != nil {
			return nil, nil, err
		}
		what := t.Dataset.Policy
		if x.Streaming {
			what = StreamNames(cat, t)
		}
		row := []types.Datum{types.NewText(sc.Name), types.NewText(t.Name), types.NewText(what),
			TextOrNull(ScheduleText(t.Dataset)), TextOrNull(TriggerText(t.Dataset)), types.NullDatum, types.NullDatum, types.NullDatum}
		if last != nil {
			row[5] = types.NewText(last.Status)
			row[6] = types.NewText(ProcessingStatus(last.Technique))
			if x.Streaming {
				row[6] = types.NewText(string(last.Technique))
			}
			row[7] = types.NewTimestamp(types.KindTimestampTZ, last.End.UnixMicro())
		}
		rows = append(rows, row)
	}
	return plan.ValuesOf(cols, rows), cols, nil
}

// StreamNames lists a streaming table's streams, qualified, comma-separated.
func StreamNames(cat *catalog.Catalog, t *catalog.Table) string {
	var names []string
	for _, id := range t.Dataset.Streams {
		if src, ok := cat.Table(id); ok {
			names = append(names, cat.QualifiedName(src))
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// TextOrNull is s as text, NULL when empty.
func TextOrNull(s string) types.Datum {
	if s == "" {
		return types.NullDatum
	}
	return types.NewText(s)
}

// DescribeRows are the materialized-view or streaming-table rows of
// DESCRIBE EXTENDED (R-O2); nextRun is the scheduler's next run of a view
// (nil when the scheduler is not running).
func DescribeRows(cat *catalog.Catalog, txn *storage.Txn, nextRun func(view uint32) (time.Time, bool), t *catalog.Table) ([][]types.Datum, error) {
	ds := t.Dataset
	kv := func(k, v string) []types.Datum {
		return []types.Datum{types.NewText(k), TextOrNull(v), types.NullDatum}
	}
	var rows [][]types.Datum
	rows = append(rows, kv("View Text", ds.QueryText), kv("View Original Text", t.Query))
	if t.Kind == catalog.KindStreamingTable {
		rows = append(rows, kv("Streams", StreamNames(cat, t)))
	} else {
		rows = append(rows, kv("Refresh Policy", ds.Policy))
	}
	if st := ScheduleText(ds); st != "" {
		rows = append(rows, kv("Schedule", st))
	}
	if tr := TriggerText(ds); tr != "" {
		rows = append(rows, kv("Trigger", tr))
	}
	rows = append(rows, kv("Statement Timeout", TimeoutText(ds)))
	last, err := refresh.ReadLastRun(txn, t.ID)
	if err != nil {
		return nil, err
	}
	if last != nil {
		rows = append(rows,
			kv("Last Refresh", last.End.UTC().Format("2006-01-02 15:04:05.999999Z07:00")),
			kv("Last Refresh Status", last.Status),
			kv("Last Refresh Technique", string(last.Technique)),
			kv("Incremental Processing", ProcessingStatus(last.Technique)))
	}
	if ds.Schedule != nil || ds.Trigger != nil {
		next := "when a source changes"
		if ds.Trigger != nil && ds.Trigger.AtMostEverySeconds > 0 {
			next = fmt.Sprintf("when a source changes, at most every %ds", ds.Trigger.AtMostEverySeconds)
		}
		if nextRun != nil {
			if at, ok := nextRun(t.ID); ok {
				next = at.UTC().Format("2006-01-02 15:04:05Z07:00")
			}
		} else if ds.Schedule != nil {
			next = "not scheduled: the scheduler is not running"
		}
		rows = append(rows, kv("Next Refresh", next))
	}
	ckpt, err := refresh.ReadCheckpoint(txn, t.ID)
	if err != nil {
		return nil, err
	}
	if ckpt != nil {
		var parts []string
		for id, v := range ckpt.Sources {
			name := fmt.Sprint(id)
			if src, ok := cat.Table(id); ok {
				name = cat.QualifiedName(src)
			}
			parts = append(parts, fmt.Sprintf("%s@v%d", name, v))
		}
		sort.Strings(parts)
		label := "Sources"
		if t.Kind == catalog.KindStreamingTable {
			// A streaming table's checkpoint: the last version of each
			// stream it processed (R-ST2).
			label = "Stream Checkpoints"
		}
		rows = append(rows, kv(label, strings.Join(parts, ", ")))
	}
	if len(ds.Expectations) > 0 {
		b, _ := json.Marshal(ds.Expectations)
		rows = append(rows, kv("Expectations", string(b)))
	}
	return rows, nil
}
