package web

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/mvserver/mvserver/catalog"
)

// Console actions: each one is a SQL statement run in an internal session
// as the console's user (invariant 2), in the background so that a long
// REFRESH can be stopped from the page. The POST waits a little for it and
// then shows the dataset page with the statement's outcome, or that it is
// still running.

// action is one statement the console ran.
type action struct {
	ID      string
	View    uint32
	Target  string // the dataset, schema.name
	Name    string // what the button said
	SQL     string
	User    string
	Started time.Time
	done    chan struct{}

	mu     sync.Mutex
	ended  time.Time
	result statementResult
}

// actionView is an action as a page shows it.
type actionView struct {
	ID, Target, Name, SQL, User string
	Started, Ended              time.Time
	Running                     bool
	OK                          bool
	Tag                         string
	Notices                     []string
	Error, Code                 string
}

func (a *action) view() actionView {
	a.mu.Lock()
	defer a.mu.Unlock()
	v := actionView{ID: a.ID, Target: a.Target, Name: a.Name, SQL: a.SQL, User: a.User, Started: a.Started, Ended: a.ended}
	select {
	case <-a.done:
	default:
		v.Running = true
		return v
	}
	v.Tag, v.Notices = a.result.Tag, a.result.Notices
	if a.result.Err != nil {
		v.Error, v.Code = a.result.Err.Message, a.result.Err.Code
	} else {
		v.OK = true
	}
	return v
}

// viewFor is the action as user may see it: nil when user neither ran
// it nor may read its dataset's page; its error (which may quote data)
// redacted to the SQLSTATE unless user ran it or may see the dataset's
// details (catalog.MaySeeDetails), as refresh errors are everywhere.
func (a *action) viewFor(cat *catalog.Catalog, user string, requireRoles bool) *actionView {
	v := a.view()
	if a.User == user {
		return &v
	}
	t, ok := cat.Table(a.View)
	if !ok || !cat.Allowed(user, requireRoles, t, catalog.PrivSelect) {
		return nil
	}
	if v.Error != "" && !cat.MaySeeDetails(user, requireRoles, t) {
		v.Error = catalog.RedactedError(v.Code)
	}
	return &v
}

// actionLog keeps the latest actions.
type actionLog struct {
	mu   sync.Mutex
	max  int
	list []*action // oldest first
}

func newActionLog(max int) *actionLog { return &actionLog{max: max} }

func (l *actionLog) add(a *action) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, a)
	if len(l.list) > l.max {
		l.list = append([]*action(nil), l.list[len(l.list)-l.max:]...)
	}
}

func (l *actionLog) get(id string) *action {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, a := range l.list {
		if a.ID == id {
			return a
		}
	}
	return nil
}

// forView lists a view's latest actions, newest first.
func (l *actionLog) forView(view uint32, n int) []*action {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*action
	for i := len(l.list) - 1; i >= 0 && len(out) < n; i-- {
		if l.list[i].View == view {
			out = append(out, l.list[i])
		}
	}
	return out
}

// actionSQL is the statement of a console action on t, and the button's name.
func actionSQL(cat *catalog.Catalog, t *catalog.Table, act string) (stmt, name string, ok bool) {
	target := qualified(schemaName(cat, t), t.Name)
	refresh := "REFRESH MATERIALIZED VIEW "
	if t.Kind == catalog.KindStreamingTable {
		refresh = "REFRESH STREAMING TABLE "
	}
	switch act {
	case "refresh":
		return refresh + target, "Refresh", true
	case "full-refresh":
		return refresh + target + " FULL", "Full refresh", true
	case "stop":
		return "CANCEL REFRESH " + target, "Stop", true
	case "enable-incremental":
		if t.Kind != catalog.KindMaterializedView {
			return "", "", false
		}
		return enableIncrementalSQL(cat, t), "Enable incremental", true
	}
	return "", "", false
}

func (c *Console) action(w http.ResponseWriter, r *http.Request, rq *request) {
	txn := c.be.DB.Begin()
	cat, err := c.be.Catalog.Snapshot(txn)
	txn.Rollback()
	if err != nil {
		c.fail(w, r, rq, http.StatusInternalServerError, "Cannot read the catalog: "+err.Error())
		return
	}
	t, ok := lookupDataset(cat, r.PathValue("schema"), r.PathValue("name"))
	if !ok {
		c.fail(w, r, rq, http.StatusNotFound, "There is no materialized view or streaming table "+r.PathValue("schema")+"."+r.PathValue("name")+".")
		return
	}
	stmt, name, ok := actionSQL(cat, t, r.PathValue("action"))
	if !ok {
		c.fail(w, r, rq, http.StatusNotFound, "There is no action "+r.PathValue("action")+" for "+kindLabel(t.Kind)+" "+cat.QualifiedName(t)+".")
		return
	}
	if need := actionPrivilege(r.PathValue("action")); !cat.Allowed(rq.User, c.be.RequireRoles, t, need) {
		what := "the MAINTAIN (REFRESH) privilege on"
		if need == 0 {
			what = "to own"
		}
		c.fail(w, r, rq, http.StatusForbidden, fmt.Sprintf("%s needs %s %s %s, which %s does not have. Nothing was done.",
			name, what, kindLabel(t.Kind), cat.QualifiedName(t), rq.User))
		return
	}
	if c.closing.Load() {
		c.fail(w, r, rq, http.StatusServiceUnavailable, "The server is shutting down; nothing was done.")
		return
	}
	a := &action{ID: newActionID(), View: t.ID, Target: cat.QualifiedName(t), Name: name, SQL: stmt, User: rq.User, Started: c.now(), done: make(chan struct{})}
	c.actions.add(a)
	remote, _ := net.ResolveTCPAddr("tcp", r.RemoteAddr)
	c.running.Add(1)
	go func() {
		defer c.running.Done()
		res := runStatement(c.ctx, c.be.Engine, c.be.Database, rq.User, tcpAddr(remote), stmt)
		a.mu.Lock()
		a.result, a.ended = res, c.now()
		a.mu.Unlock()
		close(a.done)
		if res.Err != nil {
			c.log.Info("console action failed", "user", rq.User, "sql", stmt, "code", res.Err.Code, "err", res.Err.Message)
		} else {
			c.log.Info("console action", "user", rq.User, "sql", stmt, "tag", res.Tag)
		}
	}()
	select {
	case <-a.done:
	case <-time.After(c.wait):
	case <-r.Context().Done():
	}
	dest := datasetURL(cat, t) + "?action=" + url.QueryEscape(a.ID) + "#actions"
	if r.PostForm.Get("return") == "overview" {
		dest = "/?action=" + url.QueryEscape(a.ID)
	}
	http.Redirect(w, r, dest, http.StatusSeeOther)
}

// tcpAddr keeps a nil *net.TCPAddr from becoming a non-nil net.Addr.
func tcpAddr(a *net.TCPAddr) net.Addr {
	if a == nil {
		return nil
	}
	return a
}

func newActionID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// actionPrivilege is what an action needs on its dataset: MAINTAIN to
// refresh or stop a refresh, ownership (0) to alter it.
func actionPrivilege(action string) byte {
	if action == "enable-incremental" {
		return 0
	}
	return catalog.PrivMaintain
}
