package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/dataset"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

type kv struct{ Key, Value string }

type columnRow struct {
	Name, Type, Comment string
	NotNull, Key        bool
}

type sourceRow struct {
	Name, URL, Kind string
	Consumed        string // version of the last refresh's checkpoint
	Current         int64
	CDF, RowTrack   bool
	IsTable         bool
}

type blockerRow struct {
	N                             int
	Code, Where, Object, Msg, Fix string
	Permanent                     bool
}

type analysisView struct {
	Err           string
	Shape         []string
	Techniques    []string
	Incremental   bool
	Permanent     bool
	TimeDependent bool
	Blockers      []blockerRow
	Next          refresh.TechniqueName // what the next refresh would do now (EXPLAIN REFRESH)
	NextReason    string
}

type eventRow struct {
	Time    time.Time
	Type    string
	Level   string
	Message string
	Error   string
	Details string
}

type choice struct{ Value, Label string }

// confirmDialog asks before an action runs its statement.
type confirmDialog struct {
	Action, Title, Text, SQL, Button string
}

type datasetPage struct {
	layout
	Row        datasetRow
	IsMV       bool
	Comment    string
	Definition template.HTML
	Columns    []columnRow
	Properties []kv
	TableProps []kv
	Sources    []sourceRow
	Analysis   *analysisView
	Lineage    *lineageGraph
	History    *historyChart
	Recent     []refresh.Run
	Running    *RunningRefresh

	Events       []eventRow
	EventsTotal  int
	EventType    string
	EventLevel   string
	EventWindow  string
	EventTypes   []string
	EventLevels  []string
	EventWindows []choice

	ActionBase string
	// CanRefresh: the user holds MAINTAIN on the dataset (Refresh, Full
	// refresh and Stop are disabled otherwise).
	CanRefresh bool
	Confirms   []confirmDialog
	Current    *actionView
	Actions    []actionView
}

var eventWindows = []struct {
	choice
	d time.Duration
}{{choice{"1h", "last hour"}, time.Hour}, {choice{"48h", "last 48 hours"}, 48 * time.Hour}, {choice{"7d", "last 7 days"}, 7 * 24 * time.Hour}, {choice{"all", "all"}, 0}}

// maxEvents is how many events the page lists (newest first).
const maxEvents = 300

func (c *Console) dataset(w http.ResponseWriter, r *http.Request, rq *request) {
	txn := c.be.DB.Begin()
	defer txn.Rollback()
	cat, err := c.be.Catalog.Snapshot(txn)
	if err != nil {
		c.fail(w, r, rq, http.StatusInternalServerError, "Cannot read the catalog: "+err.Error())
		return
	}
	canSee := c.canSee(cat, rq.User)
	t, ok := lookupDataset(cat, r.PathValue("schema"), r.PathValue("name"))
	if !ok || !canSee(t) {
		// A dataset the user may not read answers as one that does not
		// exist: its page would show its definition, its data's refresh
		// errors and its history.
		c.fail(w, r, rq, http.StatusNotFound, fmt.Sprintf("There is no materialized view or streaming table %s.%s.", r.PathValue("schema"), r.PathValue("name")))
		return
	}
	now := c.now()
	row, err := c.datasetRow(txn, cat, rq.User, t, now)
	if err != nil {
		c.fail(w, r, rq, http.StatusInternalServerError, "Cannot read the refresh history: "+err.Error())
		return
	}
	p := datasetPage{layout: layout{Title: row.Qualified, User: rq.User, Logout: rq.Logout, Database: c.be.Database, CSRF: rq.CSRF, Nav: "dataset", Return: "dataset"},
		Row: row, IsMV: t.Kind == catalog.KindMaterializedView, Comment: t.Comment, ActionBase: row.URL,
		CanRefresh: cat.Allowed(rq.User, c.be.RequireRoles, t, catalog.PrivMaintain)}
	p.Insights = insightsFor(cat, t, canSee)
	for _, d := range []confirmDialog{
		{Action: "refresh", Title: "Refresh " + row.Qualified + "?", Text: "The refresh policy decides: nothing, an incremental refresh or a full recompute."},
		{Action: "full-refresh", Title: "Fully refresh " + row.Qualified + "?", Text: "The content is recomputed from all of its sources and its checkpoints are reset."},
		{Action: "stop", Title: "Stop the running refresh of " + row.Qualified + "?", Text: "A stopped refresh changes nothing; it is recorded as CANCELED."},
	} {
		d.SQL, d.Button, _ = actionSQL(cat, t, d.Action)
		p.Confirms = append(p.Confirms, d)
	}
	if run, ok := c.mon.Running(t.ID); ok {
		p.Running = &run
		p.Poll = true
	}
	c.describe(txn, cat, t, &p)
	if p.IsMV {
		p.Analysis = analyze(txn, cat, t)
	}
	query := t.Query
	if t.Dataset != nil && t.Dataset.QueryText != "" {
		query = t.Dataset.QueryText
	}
	var marks []sqlMark
	if p.Analysis != nil && p.Analysis.Err == "" {
		if an, err := dataset.Analyze(cat, t); err == nil {
			if an.Query != "" {
				query = an.Query
			}
			for i, b := range an.Relevant {
				if b.Position > 0 {
					marks = append(marks, sqlMark{Pos: b.Position, Label: fmt.Sprint(i + 1), Title: b.Code + ": " + b.Message})
				}
			}
		}
	}
	p.Definition = highlightSQL(query, marks)
	p.Lineage = buildLineage(cat, t, canSee)
	runs, err := refresh.RunsBetween(txn, t.ID, now.Add(-historyWindow), time.Time{})
	if err != nil {
		c.fail(w, r, rq, http.StatusInternalServerError, "Cannot read the refresh history: "+err.Error())
		return
	}
	p.History = buildHistory(runs, now)
	p.Recent = runs[:min(len(runs), 15)]
	if err := c.events(txn, t, r, now, &p); err != nil {
		c.fail(w, r, rq, http.StatusInternalServerError, "Cannot read the event log: "+err.Error())
		return
	}
	current := r.URL.Query().Get("action")
	for _, a := range c.actions.forView(t.ID, 8) {
		v := a.viewFor(cat, rq.User, c.be.RequireRoles)
		if v == nil {
			continue
		}
		if a.ID == current {
			p.Current = v
			p.Poll = p.Poll || v.Running
			continue
		}
		p.Actions = append(p.Actions, *v)
	}
	if a := c.actions.get(current); p.Current == nil && a != nil && a.View == t.ID {
		if v := a.viewFor(cat, rq.User, c.be.RequireRoles); v != nil {
			p.Current, p.Poll = v, p.Poll || v.Running
		}
	}
	c.render(w, http.StatusOK, "dataset", p)
}

// describe fills the columns, properties and sources, as DESCRIBE
// EXTENDED reports them (R-O2).
func (c *Console) describe(txn *storage.Txn, cat *catalog.Catalog, t *catalog.Table, p *datasetPage) {
	pk := map[uint32]bool{}
	for _, id := range t.PrimaryKey {
		pk[id] = true
	}
	for _, col := range t.Columns {
		p.Columns = append(p.Columns, columnRow{Name: col.Name, Type: col.Type.String(), Comment: col.Comment, NotNull: col.NotNull, Key: pk[col.ID]})
	}
	ds := t.Dataset
	add := func(k, v string) {
		if v != "" {
			p.Properties = append(p.Properties, kv{k, v})
		}
	}
	add("Kind", kindLabel(t.Kind))
	if ds != nil {
		add("Refresh policy", ds.Policy)
		if s := dataset.ScheduleText(ds); s != "" {
			add("Schedule", s)
		}
		if tr := dataset.TriggerText(ds); tr != "" {
			add("Trigger", tr)
		}
		if ds.Schedule == nil && ds.Trigger == nil {
			add("Refreshed", "manually (REFRESH)")
		}
		add("Next refresh", p.Row.NextRun)
		add("Statement timeout", dataset.TimeoutText(ds))
		for _, e := range ds.Expectations {
			action := e.Action
			if action == "" {
				action = "keep the row, count it"
			}
			add("Expectation "+e.Name, e.Expr+" — on violation: "+action)
		}
	}
	if len(t.PartitionBy) > 0 {
		add("Partitioned by", strings.Join(t.PartitionBy, ", "))
	}
	if len(t.ClusterBy) > 0 {
		add("Clustered by", strings.Join(t.ClusterBy, ", "))
	}
	if last, err := refresh.ReadLastRun(txn, t.ID); err == nil && last != nil {
		add("Last completed refresh", fmt.Sprintf("%s · %s · %d rows written", last.End.UTC().Format("2006-01-02 15:04:05 UTC"), last.Technique, last.RowsWritten))
		add("Incremental processing", dataset.ProcessingStatus(last.Technique))
		add("Why", last.Reason)
	}
	if n, err := txn.RowCount(storage.TableID(t.ID)); err == nil {
		add("Rows", fmt.Sprint(n))
	}
	for _, prop := range t.Properties {
		p.TableProps = append(p.TableProps, kv{prop.Key, prop.Value})
	}
	ckpt, _ := refresh.ReadCheckpoint(txn, t.ID)
	versions, _ := refresh.SourceVersions(txn, cat, t)
	ids := make([]uint32, 0, len(versions))
	for id := range versions {
		ids = append(ids, id)
	}
	for _, id := range ids {
		src, ok := cat.Table(id)
		if !ok {
			continue
		}
		s := sourceRow{Name: cat.QualifiedName(src), Kind: kindLabel(src.Kind), Current: versions[id], CDF: src.ChangeDataFeed(), RowTrack: src.RowTracking(),
			IsTable: src.Kind == catalog.KindTable, Consumed: "never"}
		if src.IsDataset() {
			s.URL = datasetURL(cat, src)
		}
		if ckpt != nil {
			if v, ok := ckpt.Sources[id]; ok {
				s.Consumed = fmt.Sprint(v)
			}
		}
		p.Sources = append(p.Sources, s)
	}
	sort.Slice(p.Sources, func(i, j int) bool { return p.Sources[i].Name < p.Sources[j].Name })
}

// analyze is the incrementality analysis of a materialized view (R-I8):
// what mv_insights and EXPLAIN REFRESH say.
func analyze(txn *storage.Txn, cat *catalog.Catalog, t *catalog.Table) *analysisView {
	av := &analysisView{}
	an, err := dataset.Analyze(cat, t)
	if err != nil {
		av.Err = pgerror.Convert(err).Message
		return av
	}
	av.Shape, av.Techniques, av.Incremental, av.Permanent, av.TimeDependent = refresh.NameStrings(an.Shape), refresh.NameStrings(an.Techniques), an.Incremental(), an.Permanent(), an.TimeDependent
	for i, b := range an.Relevant {
		av.Blockers = append(av.Blockers, blockerRow{N: i + 1, Code: b.Code, Where: an.Where[i], Object: b.Object, Msg: b.Message, Fix: b.Fix, Permanent: b.Permanent})
	}
	if ex, err := refresh.Explain(txn, cat, t.ID, refresh.Options{Env: &types.Env{Loc: time.UTC}}); err == nil {
		av.Next, av.NextReason = ex.Technique, ex.Reason
	} else {
		av.Next, av.NextReason = "—", pgerror.Convert(err).Message
	}
	return av
}

// events fills the event log section with its filters (R-O1).
func (c *Console) events(txn *storage.Txn, t *catalog.Table, r *http.Request, now time.Time, p *datasetPage) error {
	q := r.URL.Query()
	p.EventType, p.EventLevel, p.EventWindow = q.Get("type"), strings.ToUpper(q.Get("level")), q.Get("window")
	from := time.Time{}
	found := false
	for _, w := range eventWindows {
		p.EventWindows = append(p.EventWindows, w.choice)
		if w.Value == p.EventWindow {
			found = true
			if w.d > 0 {
				from = now.Add(-w.d)
			}
		}
	}
	if !found {
		p.EventWindow, from = "48h", now.Add(-48*time.Hour)
	}
	evs, err := refresh.EventsBetween(txn, t.ID, from, time.Time{})
	if err != nil {
		return err
	}
	typeSet := map[string]bool{"create_update": true, "update_progress": true, "flow_progress": true, "planning_information": true, "user_action": true}
	levels := map[string]bool{"INFO": true, "WARN": true, "ERROR": true, "METRICS": true}
	for i := len(evs) - 1; i >= 0; i-- {
		e := evs[i]
		typeSet[e.EventType], levels[e.Level] = true, true
		if (p.EventType != "" && e.EventType != p.EventType) || (p.EventLevel != "" && e.Level != p.EventLevel) {
			continue
		}
		p.EventsTotal++
		if len(p.Events) < maxEvents {
			p.Events = append(p.Events, eventRow{Time: e.Timestamp, Type: e.EventType, Level: e.Level, Message: e.Message, Error: e.Error, Details: prettyJSON(e.Details)})
		}
	}
	for k := range typeSet {
		p.EventTypes = append(p.EventTypes, k)
	}
	for k := range levels {
		p.EventLevels = append(p.EventLevels, k)
	}
	sort.Strings(p.EventTypes)
	sort.Strings(p.EventLevels)
	return nil
}

func prettyJSON(s string) string {
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(s), "", "  "); err != nil {
		return s
	}
	return b.String()
}
