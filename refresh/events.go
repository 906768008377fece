package refresh

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/storage"
)

// Event is one entry of a dataset's event log (R-O1), with the columns of
// event_log().
type Event struct {
	ID        string    `json:"id"`
	Sequence  int64     `json:"sequence"`
	Origin    string    `json:"origin"`
	Timestamp time.Time `json:"timestamp"`
	Message   string    `json:"message"`
	Level     string    `json:"level"`
	Error     string    `json:"error,omitempty"`
	// ErrorCode is the SQLSTATE of a failure's Error ("" before codes were
	// recorded, and for events that are no failure).
	ErrorCode string `json:"error_code,omitempty"`
	Details   string `json:"details"`
	EventType string `json:"event_type"`
}

// Run is one refresh run (R-S6), a row of refresh_history.
type Run struct {
	RunID       string        `json:"run_id"`
	View        uint32        `json:"view"`
	ViewName    string        `json:"view_name"`
	Cause       string        `json:"cause"` // CREATE, MANUAL, SCHEDULE, TRIGGER, STARTUP_CATCHUP
	Start       time.Time     `json:"start"`
	End         time.Time     `json:"end"`
	Status      string        `json:"status"` // COMPLETED, FAILED, CANCELED, TIMED_OUT, SKIPPED
	Technique   TechniqueName `json:"technique,omitempty"`
	RowsRead    int64         `json:"rows_read"`
	RowsWritten int64         `json:"rows_written"`
	Error       string        `json:"error,omitempty"`
	// ErrorCode is the SQLSTATE of a failed, canceled or timed-out run's
	// Error ("" for runs recorded before codes were).
	ErrorCode string `json:"error_code,omitempty"`
}

// Redact replaces a failure's message, which can quote the data that
// failed (invalid input syntax for type integer: "…"), with its SQLSTATE
// and class: what a reader that may not see the view's details
// (catalog.MaySeeDetails) is shown. Other runs are left alone.
func (r *Run) Redact() {
	if r.Error != "" && (r.ErrorCode != "" || r.Status != "SKIPPED") {
		r.Error = catalog.RedactedError(r.ErrorCode)
	}
}

// Redact is Run.Redact for an event: a failure event's error.
func (e *Event) Redact() {
	if e.Error != "" && (e.ErrorCode != "" || e.Level == "ERROR") {
		e.Error = catalog.RedactedError(e.ErrorCode)
	}
}

const (
	eventPrefix = "r/ev/"
	runPrefix   = "r/run/"
)

// newID returns a random 16-byte hex id.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// timeKey is prefix | view | time | random: unique and ordered by time
// without a shared counter, so writers of different events never conflict.
func timeKey(prefix string, view uint32, at time.Time) []byte {
	k := binary.BigEndian.AppendUint32([]byte(prefix), view)
	k = binary.BigEndian.AppendUint64(k, uint64(at.UnixNano()))
	var r [4]byte
	_, _ = rand.Read(r[:])
	return append(k, r[:]...)
}

// eventWriter collects a run's events and writes them in the run's commit.
type eventWriter struct {
	view   uint32
	origin string
	seq    int64
	events []Event
}

func newEventWriter(view uint32, name string, runID string) *eventWriter {
	o, _ := json.Marshal(map[string]string{"dataset_name": name, "flow_name": name, "update_id": runID})
	return &eventWriter{view: view, origin: string(o)}
}

func (w *eventWriter) add(at time.Time, typ, level, msg string, details any, errText string) {
	d, _ := json.Marshal(details)
	w.seq++
	w.events = append(w.events, Event{ID: newID(), Sequence: w.seq, Origin: w.origin, Timestamp: at, Message: msg, Level: level, Error: errText, Details: string(d), EventType: typ})
}

func (w *eventWriter) write(txn *storage.Txn) error {
	for i := range w.events {
		e := &w.events[i]
		if err := putJSON(txn, timeKey(eventPrefix, w.view, e.Timestamp.Add(time.Duration(i))), e); err != nil {
			return err
		}
	}
	return nil
}

// LogUserAction records a create/alter/drop of a dataset (event type
// user_action) in txn.
func LogUserAction(txn *storage.Txn, view uint32, name, action, user string, at time.Time) error {
	w := newEventWriter(view, name, "")
	w.add(at, "user_action", "INFO", fmt.Sprintf("User %s %s '%s'.", user, action, name), map[string]any{"user_action": map[string]string{"action": action, "user_name": user}}, "")
	return w.write(txn)
}

// Events returns a view's event log, oldest first, as txn sees it.
func Events(txn *storage.Txn, view uint32) ([]Event, error) {
	var out []Event
	it := txn.ScanMeta(binary.BigEndian.AppendUint32([]byte(eventPrefix), view))
	defer it.Close()
	for it.Next() {
		var e Event
		if err := json.Unmarshal(it.Row().Value, &e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, it.Err()
}

// Runs returns the refresh runs of every view (view 0) or of one, newest
// first.
func Runs(txn *storage.Txn, view uint32) ([]Run, error) {
	prefix := []byte(runPrefix)
	if view != 0 {
		prefix = binary.BigEndian.AppendUint32(prefix, view)
	}
	var out []Run
	it := txn.ScanMeta(prefix)
	defer it.Close()
	for it.Next() {
		var r Run
		if err := json.Unmarshal(it.Row().Value, &r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.After(out[j].Start) })
	return out, nil
}

func writeRun(txn *storage.Txn, r *Run) error {
	return putJSON(txn, timeKey(runPrefix, r.View, r.Start), r)
}

// forgetLog deletes a view's events and runs (DROP).
func forgetLog(txn *storage.Txn, view uint32) error {
	for _, p := range []string{eventPrefix, runPrefix} {
		prefix := binary.BigEndian.AppendUint32([]byte(p), view)
		if err := txn.DeleteMetaRange(prefix, storage.PrefixEnd(prefix)); err != nil {
			return err
		}
	}
	return nil
}

// DefaultHistoryRetention is how long a view's events and run records are
// kept (Runner.HistoryRetention; 0 there means this).
const DefaultHistoryRetention = 30 * 24 * time.Hour

// pruneLog deletes a view's events and runs from before cutoff. Keys are
// ordered by time, so only the expired span is read.
func pruneLog(txn *storage.Txn, view uint32, cutoff time.Time) error {
	if cutoff.UnixNano() <= 0 {
		return nil
	}
	for _, p := range []string{eventPrefix, runPrefix} {
		start := binary.BigEndian.AppendUint32([]byte(p), view)
		end := binary.BigEndian.AppendUint64(append([]byte(nil), start...), uint64(cutoff.UnixNano()))
		if err := txn.DeleteMetaRange(start, end); err != nil {
			return err
		}
	}
	return nil
}
