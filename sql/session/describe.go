package session

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
)

// processingStatus is the "Incremental processing" column of R-O3 for a
// run's technique.
func processingStatus(technique refresh.TechniqueName) string {
	switch technique {
	case refresh.NoOp:
		return "NO_CHANGES"
	case refresh.FullRecompute:
		return "FULL_RECOMPUTE"
	case "":
		return ""
	}
	return "INCREMENTAL"
}

func scheduleText(ds *catalog.Dataset) string {
	if ds == nil || ds.Schedule == nil {
		return ""
	}
	sc := ds.Schedule
	if sc.Cron != "" {
		tz := sc.TimeZone
		if tz == "" {
			tz = "UTC"
		}
		return fmt.Sprintf("CRON '%s' AT TIME ZONE '%s'", sc.Cron, tz)
	}
	unit := sc.Unit
	if sc.Every != 1 {
		unit += "S"
	}
	return fmt.Sprintf("EVERY %d %s", sc.Every, unit)
}

func triggerText(ds *catalog.Dataset) string {
	if ds == nil || ds.Trigger == nil {
		return ""
	}
	if s := ds.Trigger.AtMostEverySeconds; s > 0 {
		switch {
		case s%3600 == 0:
			return fmt.Sprintf("ON UPDATE AT MOST EVERY INTERVAL %d HOURS", s/3600)
		case s%60 == 0:
			return fmt.Sprintf("ON UPDATE AT MOST EVERY INTERVAL %d MINUTES", s/60)
		}
		return fmt.Sprintf("ON UPDATE AT MOST EVERY INTERVAL %d SECONDS", s)
	}
	return "ON UPDATE"
}

// showDatasets answers SHOW MATERIALIZED VIEWS and SHOW STREAMING TABLES (R-O3).
func (s *Session) showDatasets(x *parse.ShowDatasets) (plan.Node, []plan.Column, error) {
	if x.Streaming {
		return s.showStreamingTables(x)
	}
	cols := []plan.Column{
		{Name: "schema", T: types.Text}, {Name: "name", T: types.Text}, {Name: "refresh_policy", T: types.Text},
		{Name: "schedule", T: types.Text}, {Name: "trigger", T: types.Text},
		{Name: "last_refresh_status", T: types.Text}, {Name: "incremental_processing", T: types.Text},
		{Name: "last_refresh_time", T: types.TimestampTZ},
	}
	var rows [][]types.Datum
	for _, t := range s.cat.Tables() {
		if t.Kind != catalog.KindMaterializedView {
			continue
		}
		sc, _ := s.cat.SchemaByID(t.SchemaID)
		if x.Schema != "" && sc.Name != x.Schema {
			continue
		}
		last, err := refresh.ReadLastRun(s.txn, t.ID)
		if err != nil {
			return nil, nil, err
		}
		row := []types.Datum{types.NewText(sc.Name), types.NewText(t.Name), types.NewText(t.Dataset.Policy),
			textOrNull(scheduleText(t.Dataset)), textOrNull(triggerText(t.Dataset)), types.NullDatum, types.NullDatum, types.NullDatum}
		if last != nil {
			row[5] = types.NewText(last.Status)
			row[6] = types.NewText(processingStatus(last.Technique))
			row[7] = types.NewTimestamp(types.KindTimestampTZ, last.End.UnixMicro())
		}
		rows = append(rows, row)
	}
	return constRows(cols, rows), cols, nil
}

// showStreamingTables answers SHOW STREAMING TABLES: each table's streams,
// schedule or trigger and last refresh (R-O3).
func (s *Session) showStreamingTables(x *parse.ShowDatasets) (plan.Node, []plan.Column, error) {
	cols := []plan.Column{
		{Name: "schema", T: types.Text}, {Name: "name", T: types.Text}, {Name: "streams", T: types.Text},
		{Name: "schedule", T: types.Text}, {Name: "trigger", T: types.Text},
		{Name: "last_refresh_status", T: types.Text}, {Name: "last_refresh_technique", T: types.Text},
		{Name: "last_refresh_time", T: types.TimestampTZ},
	}
	var rows [][]types.Datum
	for _, t := range s.cat.Tables() {
		if t.Kind != catalog.KindStreamingTable {
			continue
		}
		sc, _ := s.cat.SchemaByID(t.SchemaID)
		if x.Schema != "" && sc.Name != x.Schema {
			continue
		}
		last, err := refresh.ReadLastRun(s.txn, t.ID)
		if err != nil {
			return nil, nil, err
		}
		row := []types.Datum{types.NewText(sc.Name), types.NewText(t.Name), types.NewText(s.streamNames(t)),
			textOrNull(scheduleText(t.Dataset)), textOrNull(triggerText(t.Dataset)), types.NullDatum, types.NullDatum, types.NullDatum}
		if last != nil {
			row[5] = types.NewText(last.Status)
			row[6] = types.NewText(string(last.Technique))
			row[7] = types.NewTimestamp(types.KindTimestampTZ, last.End.UnixMicro())
		}
		rows = append(rows, row)
	}
	return constRows(cols, rows), cols, nil
}

// streamNames lists a streaming table's streams, qualified, comma-separated.
func (s *Session) streamNames(t *catalog.Table) string {
	var names []string
	for _, id := range t.Dataset.Streams {
		if src, ok := s.cat.Table(id); ok {
			names = append(names, s.cat.QualifiedName(src))
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func textOrNull(s string) types.Datum {
	if s == "" {
		return types.NullDatum
	}
	return types.NewText(s)
}

// describeDataset adds the materialized-view or streaming-table rows of
// DESCRIBE EXTENDED (R-O2).
func (s *Session) describeDataset(t *catalog.Table) ([][]types.Datum, error) {
	ds := t.Dataset
	kv := func(k, v string) []types.Datum {
		return []types.Datum{types.NewText(k), textOrNull(v), types.NullDatum}
	}
	var rows [][]types.Datum
	rows = append(rows, kv("View Text", ds.QueryText), kv("View Original Text", t.Query))
	if t.Kind == catalog.KindStreamingTable {
		rows = append(rows, kv("Streams", s.streamNames(t)))
	} else {
		rows = append(rows, kv("Refresh Policy", ds.Policy))
	}
	if st := scheduleText(ds); st != "" {
		rows = append(rows, kv("Schedule", st))
	}
	if tr := triggerText(ds); tr != "" {
		rows = append(rows, kv("Trigger", tr))
	}
	timeout := "2d (default)"
	if ds.StatementTimeoutMs > 0 {
		timeout = (time.Duration(ds.StatementTimeoutMs) * time.Millisecond).String()
	}
	rows = append(rows, kv("Statement Timeout", timeout))
	last, err := refresh.ReadLastRun(s.txn, t.ID)
	if err != nil {
		return nil, err
	}
	if last != nil {
		rows = append(rows,
			kv("Last Refresh", last.End.UTC().Format("2006-01-02 15:04:05.999999Z07:00")),
			kv("Last Refresh Status", last.Status),
			kv("Last Refresh Technique", string(last.Technique)),
			kv("Incremental Processing", processingStatus(last.Technique)))
	}
	if ds.Schedule != nil || ds.Trigger != nil {
		next := "when a source changes"
		if ds.Trigger != nil && ds.Trigger.AtMostEverySeconds > 0 {
			next = fmt.Sprintf("when a source changes, at most every %ds", ds.Trigger.AtMostEverySeconds)
		}
		if s.eng.NextRun != nil {
			if at, ok := s.eng.NextRun(t.ID); ok {
				next = at.UTC().Format("2006-01-02 15:04:05Z07:00")
			}
		} else if ds.Schedule != nil {
			next = "not scheduled: the scheduler is not running"
		}
		rows = append(rows, kv("Next Refresh", next))
	}
	ckpt, err := refresh.ReadCheckpoint(s.txn, t.ID)
	if err != nil {
		return nil, err
	}
	if ckpt != nil {
		var parts []string
		for id, v := range ckpt.Sources {
			name := fmt.Sprint(id)
			if src, ok := s.cat.Table(id); ok {
				name = s.cat.QualifiedName(src)
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
