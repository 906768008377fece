package refresh

import (
	"strings"
	"time"

	"github.com/mvserver/mvserver/catalog"
)

// RunEvent describes one refresh run for Runner.OnRun (R-S7 notifications).
type RunEvent struct {
	// Kind is "start", "success" or "failure".
	Kind string
	View uint32
	// ViewName is schema.name.
	ViewName string
	// Notify is the view's pipelines.notifications property (comma list of
	// start, success, failure; "" when unset).
	Notify string
	RunID  string
	// Status is RUNNING, COMPLETED, FAILED, CANCELED or TIMED_OUT.
	Status    string
	Technique TechniqueName
	Cause     string
	Duration  time.Duration
	Err       string
	// ErrCode is Err's SQLSTATE.
	ErrCode string
}

// Wants reports whether the view's pipelines.notifications asks for this
// event; the default is failures only.
func (e RunEvent) Wants() bool {
	list := e.Notify
	if strings.TrimSpace(list) == "" {
		list = "failure"
	}
	for _, k := range strings.Split(list, ",") {
		if strings.EqualFold(strings.TrimSpace(k), e.Kind) {
			return true
		}
	}
	return false
}

// event fills a RunEvent from the view's catalog entry.
func (r *Runner) event(cat *catalog.Catalog, view uint32, kind string) (RunEvent, bool) {
	if r.OnRun == nil || cat == nil {
		return RunEvent{}, false
	}
	v, ok := cat.Table(view)
	if !ok {
		return RunEvent{}, false
	}
	n, _ := v.Property("pipelines.notifications")
	return RunEvent{Kind: kind, View: view, ViewName: cat.QualifiedName(v), Notify: n}, true
}

// Announce tells OnRun of a run that committed as part of another
// statement's transaction (CREATE's first population): a success event,
// sent once that transaction committed (R-S7).
func (r *Runner) Announce(cat *catalog.Catalog, view uint32, res *Result, cause string) {
	ev, ok := r.event(cat, view, "success")
	if !ok || res == nil {
		return
	}
	ev.Status, ev.RunID, ev.Technique, ev.Cause, ev.Duration = "COMPLETED", res.RunID, res.Technique, cause, res.Duration
	r.OnRun(ev)
}
