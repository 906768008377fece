package app

import (
	"encoding/json"

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
		b, err := json.Marshal(refreshPayload{Event: ev.Kind, View: ev.ViewName, RunID: ev.RunID, Status: ev.Status,
			Cause: ev.Cause, Technique: ev.Technique, DurationMS: ev.Duration.Milliseconds(), Error: ev.Err})
		if err != nil {
			return
		}
		payload := string(b)
		if len(payload) > notify.MaxPayload {
			// A long error message must not lose the event.
			p := refreshPayload{Event: ev.Kind, View: ev.ViewName, RunID: ev.RunID, Status: ev.Status,
				Cause: ev.Cause, Technique: ev.Technique, DurationMS: ev.Duration.Milliseconds(), Error: "(error message too long)"}
			b, _ = json.Marshal(p)
			payload = string(b)
		}
		hub.Publish(RefreshChannel, payload, 0)
	}
}
