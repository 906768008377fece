package refresh

import (
	"testing"
	"time"

	"github.com/mvserver/mvserver/storage"
)

// TestRunsBetween: a window of one view's history is read by key span,
// newest first, with the transaction's own writes; LatestRun finds the
// newest run however long ago it was.
func TestRunsBetween(t *testing.T) {
	db, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	txn := db.Begin()
	for i := range 10 {
		if err := writeRun(txn, &Run{RunID: string(rune('a' + i)), View: 7, Start: base.Add(time.Duration(i) * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeRun(txn, &Run{RunID: "other view", View: 8, Start: base.Add(5 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	w := newEventWriter(7, "v", "r")
	w.add(base.Add(time.Hour), "update_progress", "INFO", "one", nil, "")
	w.add(base.Add(3*time.Hour), "update_progress", "INFO", "three", nil, "")
	if err := w.write(txn); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	ids := func(runs []Run) string {
		s := ""
		for _, r := range runs {
			s += r.RunID
		}
		return s
	}
	txn = db.Begin()
	defer txn.Rollback()
	for _, c := range []struct {
		from, to time.Time
		want     string
	}{
		{base.Add(3 * time.Hour), base.Add(6 * time.Hour), "fed"},
		{base.Add(8 * time.Hour), time.Time{}, "ji"},
		{time.Time{}, base.Add(2 * time.Hour), "ba"},
		{base.Add(20 * time.Hour), time.Time{}, ""},
	} {
		runs, err := RunsBetween(txn, 7, c.from, c.to)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(runs); got != c.want {
			t.Errorf("RunsBetween(%v, %v) = %q, want %q", c.from, c.to, got, c.want)
		}
	}
	evs, err := EventsBetween(txn, 7, base.Add(2*time.Hour), time.Time{})
	if err != nil || len(evs) != 1 || evs[0].Message != "three" {
		t.Fatalf("EventsBetween: %v %v", evs, err)
	}
	for _, now := range []time.Time{base.Add(9 * time.Hour), base.Add(9*time.Hour + time.Second), base.AddDate(3, 0, 0)} {
		r, err := LatestRun(txn, 7, now)
		if err != nil || r == nil || r.RunID != "j" {
			t.Fatalf("LatestRun at %v: %v %v", now, r, err)
		}
	}
	if r, err := LatestRun(txn, 9, base); err != nil || r != nil {
		t.Fatalf("LatestRun of a view that never ran: %v %v", r, err)
	}
	// The transaction's own writes are read too.
	if err := writeRun(txn, &Run{RunID: "new", View: 7, Start: base.Add(30 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if r, err := LatestRun(txn, 7, base.Add(31*time.Hour)); err != nil || r == nil || r.RunID != "new" {
		t.Fatalf("LatestRun with an own write: %v %v", r, err)
	}
}
