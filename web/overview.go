package web

import (
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/dataset"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/storage"
)

// datasetRow is one line of the overview.
type datasetRow struct {
	Schema, Name, Qualified string
	URL                     string
	Kind                    string
	Status                  string // of the last run; RUNNING; NEVER
	Technique               refresh.TechniqueName
	Processing              string
	LastRun                 time.Time
	LastError               string
	NextRun                 string
	Refresh                 string // the schedule, the trigger, or "manual"
	Policy                  string
}

type overviewPage struct {
	layout
	Rows     []datasetRow
	Total    int
	Query    string
	Status   string
	Statuses []string
	Current  *actionView
}

// overviewStatuses are the status filter's choices.
var overviewStatuses = []string{"COMPLETED", "FAILED", "CANCELED", "TIMED_OUT", "RUNNING", "NEVER"}

func (c *Console) overview(w http.ResponseWriter, r *http.Request, rq *request) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	status := strings.ToUpper(strings.TrimSpace(r.URL.Query().Get("status")))
	txn := c.be.DB.Begin()
	defer txn.Rollback()
	cat, err := c.be.Catalog.Snapshot(txn)
	if err != nil {
		c.fail(w, r, rq, http.StatusInternalServerError, "Cannot read the catalog: "+err.Error())
		return
	}
	page := overviewPage{layout: layout{Title: "Datasets", User: rq.User, Logout: rq.Logout, Database: c.be.Database, CSRF: rq.CSRF, Nav: "overview", Return: "overview"},
		Query: q, Status: status, Statuses: overviewStatuses}
	canSee := c.canSee(cat, rq.User)
	page.Insights = insightsFor(cat, nil, canSee)
	now := c.now()
	for _, t := range cat.Tables() {
		if !t.IsDataset() || !canSee(t) {
			continue
		}
		page.Total++
		row, err := c.datasetRow(txn, cat, rq.User, t, now)
		if err != nil {
			c.fail(w, r, rq, http.StatusInternalServerError, "Cannot read the refresh history: "+err.Error())
			return
		}
		if q != "" && !strings.Contains(strings.ToLower(row.Qualified), strings.ToLower(q)) {
			continue
		}
		if status != "" && status != row.Status {
			continue
		}
		page.Rows = append(page.Rows, row)
	}
	sort.Slice(page.Rows, func(i, j int) bool { return page.Rows[i].Qualified < page.Rows[j].Qualified })
	if id := r.URL.Query().Get("action"); id != "" {
		if a := c.actions.get(id); a != nil {
			if v := a.viewFor(cat, rq.User, c.be.RequireRoles); v != nil {
				page.Current = v
				page.Poll = v.Running
			}
		}
	}
	c.render(w, http.StatusOK, "overview", page)
}

// datasetRow reads a dataset's state: its newest run (or the one running
// now), its next run and how it is refreshed.
func (c *Console) datasetRow(txn *storage.Txn, cat *catalog.Catalog, user string, t *catalog.Table, now time.Time) (datasetRow, error) {
	row := datasetRow{Schema: schemaName(cat, t), Name: t.Name, Qualified: cat.QualifiedName(t), URL: datasetURL(cat, t),
		Kind: kindLabel(t.Kind), Status: "NEVER", Refresh: "manual"}
	ds := t.Dataset
	if ds != nil {
		row.Policy = ds.Policy
		if s := dataset.ScheduleText(ds); s != "" {
			row.Refresh = "SCHEDULE " + s
		} else if tr := dataset.TriggerText(ds); tr != "" {
			row.Refresh = "TRIGGER " + tr
		}
	}
	if t.Kind == catalog.KindStreamingTable {
		row.Policy = "append (streaming)"
	}
	last, err := refresh.LatestRun(txn, t.ID, now)
	if err != nil {
		return row, err
	}
	if last != nil {
		row.Status, row.Technique, row.LastRun, row.LastError = last.Status, last.Technique, last.End, last.Error
		if !cat.MaySeeDetails(user, c.be.RequireRoles, t) {
			r := *last
			r.Redact()
			row.LastError = r.Error
		}
		if row.LastRun.IsZero() {
			row.LastRun = last.Start
		}
		row.Processing = dataset.ProcessingStatus(last.Technique)
	}
	if _, ok := c.mon.Running(t.ID); ok {
		row.Status = "RUNNING"
	}
	row.NextRun = c.nextRun(t)
	return row, nil
}

// nextRun is the next refresh time as DESCRIBE EXTENDED says it.
func (c *Console) nextRun(t *catalog.Table) string {
	ds := t.Dataset
	if ds == nil || (ds.Schedule == nil && ds.Trigger == nil) {
		return ""
	}
	if c.be.NextRun != nil {
		if at, ok := c.be.NextRun(t.ID); ok {
			return at.UTC().Format("2006-01-02 15:04:05 UTC")
		}
	}
	if ds.Trigger != nil {
		return "when a source changes"
	}
	return "not scheduled"
}
