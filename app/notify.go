package app

import (
	"encoding/json"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/notify"
	"github.com/mvserver/mvserver/refresh"
)

// RefreshChannel is the LISTEN channel refresh events are published on (R-S7).
const RefreshChannel = "mv_refresh"

// refreshPayload is the JSON payload of one refresh event.
type refreshPayload struct {
	Event      string `json:"event"` // start, success, failure
	View       string `json:"view"`
	RunID      string `json:"run_id,omitempty"`
	Status     string `json:"status"`
	Cause      string `json:"cause,omitempty"`
	Technique  string `json:"technique,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	Error      string `json:"error,omitempty"`
}

// publishRefreshEvents returns the Runner.OnRun hook that publishes the
// events a view's pipelines.notifications asks for (default: failures).
func publishRefreshEvents(hub *notify.Hub) func(refresh.RunEvent) {
	return func(ev refresh.RunEvent) {
		if !ev.Wants() {
			return
		}
		p := refreshPayload{Event: ev.Kind, View: ev.ViewName, RunID: ev.RunID, Status: ev.Status,
			Cause: ev.Cause, Technique: string(ev.Technique), DurationMS: ev.Duration.Milliseconds(), Error: ev.Err}
		payload := encodePayload(p)
		if ev.Err == "" {
			hub.Publish(RefreshChannel, payload, 0)
			return
		}
		// An error can quote the data that failed: listeners whose role
		// may not see the view's details get its SQLSTATE only (the
		// session delivering it decides, catalog.MaySeeDetails).
		p.Error = catalog.RedactedError(ev.ErrCode)
		hub.PublishRestricted(RefreshChannel, payload, encodePayload(p), ev.View)
	}
}

// encodePayload is p as JSON within NOTIFY's limit: a long error message
// must not lose the event.
func encodePayload(p refreshPayload) string {
	b, _ := json.Marshal(p)
	if len(b) > notify.MaxPayload {
		p.Error = "(error message too long)"
		b, _ = json.Marshal(p)
	}
	return string(b)
}
