package refresh

import (
	"fmt"
	"time"
)

// RecordSkipped records a scheduled run that fell due while the view was
// still refreshing and was coalesced into that run: a refresh_history row
// with status SKIPPED and an update_progress event, in their own commit
// (R-S6). Errors are returned for the caller to log.
func (r *Runner) RecordSkipped(view uint32, cause string, due time.Time) error {
	txn := r.DB.Begin()
	defer txn.Rollback()
	cat, err := r.Catalog.Snapshot(txn)
	if err != nil {
		return err
	}
	v, ok := cat.Table(view)
	if !ok {
		return nil // dropped meanwhile: nothing to record
	}
	runID := newID()
	now := r.now()
	msg := fmt.Sprintf("the %s run due at %s was coalesced into the refresh already running", cause, due.UTC().Format(time.RFC3339))
	w := newEventWriter(view, v.Name, runID)
	w.add(now, "update_progress", "INFO", fmt.Sprintf("Update %s is SKIPPED.", runID[:6]), map[string]any{"update_progress": map[string]string{"state": "SKIPPED"}}, msg)
	if err := w.write(txn); err != nil {
		return err
	}
	if err := writeRun(txn, &Run{RunID: runID, View: view, ViewName: v.Name, Cause: cause, Start: due, End: now, Status: "SKIPPED", Error: msg}); err != nil {
		return err
	}
	return txn.Commit()
}
