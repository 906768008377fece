package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mvserver/mvserver/catalog"
)

// startNotifyTest starts a server and opens n connections to it.
func startNotifyTest(t *testing.T, n int) []*pgx.Conn {
	t.Helper()
	cfg := Config{Logger: slog.New(slog.DiscardHandler), InMemory: true, Listen: "127.0.0.1:0", Database: "mvserver", MaxConnections: 10, TableDefaults: catalog.AllOn}
	srv, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(2 * time.Second) })
	var out []*pgx.Conn
	for i := 0; i < n; i++ {
		c, err := pgx.Connect(context.Background(), "postgres://t@"+srv.Addr().String()+"/mvserver?sslmode=disable")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		out = append(out, c)
	}
	return out
}

// waitNote waits for the next notification on c.
func waitNote(t *testing.T, c *pgx.Conn) (channel, payload string, pid uint32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := c.WaitForNotification(ctx)
	if err != nil {
		t.Fatalf("waiting for a notification: %v", err)
	}
	return n.Channel, n.Payload, n.PID
}

// TestListenNotify: LISTEN on one connection, NOTIFY from another arrives
// while the listener is idle; NOTIFY in a rolled back transaction never
// arrives, in a committed one at COMMIT; pg_notify works too (R-S7).
func TestListenNotify(t *testing.T) {
	cs := startNotifyTest(t, 2)
	l, s := cs[0], cs[1]
	ctx := context.Background()
	tag, err := l.Exec(ctx, "LISTEN jobs")
	if err != nil || tag.String() != "LISTEN" {
		t.Fatalf("LISTEN: %q %v", tag, err)
	}
	tag, err = s.Exec(ctx, "NOTIFY jobs, 'hello'")
	if err != nil || tag.String() != "NOTIFY" {
		t.Fatalf("NOTIFY: %q %v", tag, err)
	}
	ch, payload, pid := waitNote(t, l)
	if ch != "jobs" || payload != "hello" || pid != s.PgConn().PID() {
		t.Fatalf("got %q %q %d, want jobs hello %d", ch, payload, pid, s.PgConn().PID())
	}

	mustExec(t, s, "BEGIN")
	mustExec(t, s, "NOTIFY jobs, 'rolled back'")
	mustExec(t, s, "ROLLBACK")
	mustExec(t, s, "BEGIN")
	mustExec(t, s, "NOTIFY jobs, 'committed'")
	mustExec(t, s, "NOTIFY other, 'not listened'")
	mustExec(t, s, "COMMIT")
	if _, payload, _ = waitNote(t, l); payload != "committed" {
		t.Fatalf("after ROLLBACK and COMMIT got %q, want committed", payload)
	}

	var v string
	if err := s.QueryRow(ctx, "SELECT pg_notify('jobs', 'via function')").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if _, payload, _ = waitNote(t, l); payload != "via function" {
		t.Fatalf("pg_notify: got %q", payload)
	}
	// The extended protocol (pgx's default) commits at Sync.
	if _, err := s.Exec(ctx, "SELECT pg_notify($1, $2)", "jobs", "extended"); err != nil {
		t.Fatal(err)
	}
	if _, payload, _ = waitNote(t, l); payload != "extended" {
		t.Fatalf("pg_notify extended: got %q", payload)
	}

	// A session's own notification comes back to it.
	mustExec(t, l, "NOTIFY jobs, 'self'")
	if _, payload, pid = waitNote(t, l); payload != "self" || pid != l.PgConn().PID() {
		t.Fatalf("self: got %q from %d", payload, pid)
	}

	// UNLISTEN: nothing more arrives; a later marker on another channel proves it.
	tag, err = l.Exec(ctx, "UNLISTEN jobs")
	if err != nil || tag.String() != "UNLISTEN" {
		t.Fatalf("UNLISTEN: %q %v", tag, err)
	}
	mustExec(t, l, "LISTEN marker")
	mustExec(t, s, "NOTIFY jobs, 'unheard'")
	mustExec(t, s, "NOTIFY marker")
	if ch, _, _ = waitNote(t, l); ch != "marker" {
		t.Fatalf("after UNLISTEN got a notification on %q", ch)
	}
	mustExec(t, l, "UNLISTEN *")

	// Payload limit.
	long := make([]byte, 8000)
	for i := range long {
		long[i] = 'x'
	}
	if _, err := s.Exec(ctx, "SELECT pg_notify('jobs', $1)", string(long)); err == nil || !hasCode(err, "22023") {
		t.Fatalf("8000-byte payload: %v, want 22023", err)
	}
}

// TestRefreshNotifications: a view asking for success and failure events
// publishes a JSON payload on mv_refresh when refreshed (R-S7).
func TestRefreshNotifications(t *testing.T) {
	cs := startNotifyTest(t, 2)
	l, s := cs[0], cs[1]
	mustExec(t, l, "LISTEN mv_refresh")
	mustExec(t, s, "CREATE TABLE src (id BIGINT)")
	mustExec(t, s, "INSERT INTO src VALUES (1), (2)")
	mustExec(t, s, "CREATE MATERIALIZED VIEW quiet AS SELECT id FROM src")
	mustExec(t, s, "CREATE MATERIALIZED VIEW m TBLPROPERTIES ('pipelines.notifications' = 'success,failure') AS SELECT id FROM src")
	// quiet's default is failures only: its successful refresh is silent.
	mustExec(t, s, "REFRESH MATERIALIZED VIEW quiet")
	mustExec(t, s, "REFRESH MATERIALIZED VIEW m")
	ch, payload, pid := waitNote(t, l)
	if ch != "mv_refresh" || pid != 0 {
		t.Fatalf("got channel %q pid %d", ch, pid)
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(payload), &ev); err != nil {
		t.Fatalf("payload %q: %v", payload, err)
	}
	if ev["view"] != "default.m" && ev["view"] != "public.m" {
		t.Fatalf("view %v in %s", ev["view"], payload)
	}
	if ev["status"] != "COMPLETED" || ev["run_id"] == "" || ev["technique"] == nil || ev["duration_ms"] == nil {
		t.Fatalf("payload %s", payload)
	}
}

func hasCode(err error, code string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == code
}

// TestCronNotifies: a one-second cron schedule refreshes the view by itself
// and a LISTENing client hears each run on mv_refresh with cause SCHEDULE
// (R-S2, R-S7).
func TestCronNotifies(t *testing.T) {
	cs := startNotifyTest(t, 2)
	l, s := cs[0], cs[1]
	mustExec(t, l, "LISTEN mv_refresh")
	mustExec(t, s, "CREATE TABLE src (id BIGINT)")
	mustExec(t, s, "CREATE MATERIALIZED VIEW m SCHEDULE CRON '* * * * * ?' TBLPROPERTIES ('pipelines.notifications' = 'success') AS SELECT count(*) AS n FROM src")
	mustExec(t, s, "INSERT INTO src VALUES (1), (2)")
	for {
		_, payload, _ := waitNote(t, l)
		var ev map[string]any
		if err := json.Unmarshal([]byte(payload), &ev); err != nil {
			t.Fatalf("payload %q: %v", payload, err)
		}
		if ev["cause"] != nil && ev["cause"] != "SCHEDULE" {
			continue
		}
		if ev["status"] != "COMPLETED" {
			t.Fatalf("payload %s", payload)
		}
		var n int64
		if err := s.QueryRow(context.Background(), "SELECT n FROM m").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 2 {
			return
		}
	}
}

// TestCancelRequestStopsRefresh: the PostgreSQL cancel request (Ctrl-C in
// psql) stops a manual REFRESH with 57014; nothing changes and the run is
// recorded CANCELED (R-S5).
func TestCancelRequestStopsRefresh(t *testing.T) {
	cs := startNotifyTest(t, 2)
	c, other := cs[0], cs[1]
	ctx := context.Background()
	mustExec(t, c, "CREATE TABLE big0 (id INT)")
	mustExec(t, c, "CREATE MATERIALIZED VIEW slow AS SELECT count(*) AS n FROM big0 a, big0 b, big0 c WHERE a.id + b.id = c.id")
	var vals []string
	for i := 0; i < 3000; i++ {
		vals = append(vals, fmt.Sprintf("(%d)", i))
	}
	mustExec(t, c, "INSERT INTO big0 VALUES "+strings.Join(vals, ", "))
	done := make(chan error, 1)
	go func() {
		_, err := c.Exec(ctx, "REFRESH MATERIALIZED VIEW slow FULL")
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	if err := c.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !hasCode(err, "57014") {
			t.Fatalf("REFRESH after a cancel request: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("REFRESH not canceled")
	}
	var status string
	var n int64
	if err := other.QueryRow(ctx, "SELECT status FROM refresh_history WHERE view_name = 'slow' ORDER BY start_time DESC LIMIT 1").Scan(&status); err != nil || status != "CANCELED" {
		t.Fatalf("last run %q, %v", status, err)
	}
	if err := other.QueryRow(ctx, "SELECT n FROM slow").Scan(&n); err != nil || n != 0 {
		t.Fatalf("view after cancel: %d, %v", n, err)
	}
}

// TestCreateNotifies: the first population that CREATE runs is a refresh
// like any other for mv_refresh listeners — announced once the CREATE's
// transaction commits, never for one that rolls back (R-S7).
func TestCreateNotifies(t *testing.T) {
	cs := startNotifyTest(t, 2)
	l, s := cs[0], cs[1]
	mustExec(t, l, "LISTEN mv_refresh")
	mustExec(t, s, "CREATE TABLE src (id BIGINT)")
	mustExec(t, s, "BEGIN")
	mustExec(t, s, "CREATE MATERIALIZED VIEW gone TBLPROPERTIES ('pipelines.notifications' = 'success') AS SELECT id FROM src")
	mustExec(t, s, "ROLLBACK")
	mustExec(t, s, "CREATE MATERIALIZED VIEW m TBLPROPERTIES ('pipelines.notifications' = 'success') AS SELECT id FROM src")
	_, payload, _ := waitNote(t, l)
	var ev map[string]any
	if err := json.Unmarshal([]byte(payload), &ev); err != nil {
		t.Fatalf("payload %q: %v", payload, err)
	}
	if ev["view"] != "public.m" || ev["status"] != "COMPLETED" {
		t.Fatalf("payload %s (the rolled-back CREATE must not be announced)", payload)
	}
}

// TestRefreshErrorNotificationsPerListener: a refresh error quoting data
// reaches, on mv_refresh, the listeners whose role may see the view's
// details (the owner's superuser session, a role granted SELECT on it) in
// full, and every other listener with its SQLSTATE only.
func TestRefreshErrorNotificationsPerListener(t *testing.T) {
	cfg := Config{Logger: slog.New(slog.DiscardHandler), InMemory: true, Listen: "127.0.0.1:0", Database: "mvserver", MaxConnections: 10, TableDefaults: catalog.AllOn}
	srv, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(2 * time.Second) })
	as := func(user string) *pgx.Conn { return connectAs(t, srv, user) }
	admin := as("t") // no role: a superuser without authentication
	mustExec(t, admin, "CREATE ROLE granted LOGIN")
	mustExec(t, admin, "CREATE ROLE stranger LOGIN")
	mustExec(t, admin, "CREATE TABLE raw (k INT PRIMARY KEY, v TEXT)")
	mustExec(t, admin, "INSERT INTO raw VALUES (1, '42')")
	mustExec(t, admin, "CREATE MATERIALIZED VIEW parsed AS SELECT k, v::int AS n FROM raw")
	mustExec(t, admin, "GRANT SELECT ON parsed TO granted")
	granted, stranger := as("granted"), as("stranger")
	for _, c := range []*pgx.Conn{admin, granted, stranger} {
		mustExec(t, c, "LISTEN mv_refresh")
	}
	mustExec(t, admin, "INSERT INTO raw VALUES (2, 'TOPSECRET-4242')")
	if _, err := admin.Exec(context.Background(), "REFRESH MATERIALIZED VIEW parsed"); !hasCode(err, "22P02") {
		t.Fatalf("refresh: %v, want 22P02", err)
	}
	errorOf := func(c *pgx.Conn) string {
		t.Helper()
		_, payload, _ := waitNote(t, c)
		var ev map[string]any
		if err := json.Unmarshal([]byte(payload), &ev); err != nil {
			t.Fatalf("payload %q: %v", payload, err)
		}
		if ev["status"] != "FAILED" {
			t.Fatalf("payload %s", payload)
		}
		s, _ := ev["error"].(string)
		return s
	}
	for name, c := range map[string]*pgx.Conn{"superuser": admin, "granted": granted} {
		if got := errorOf(c); !strings.Contains(got, "TOPSECRET-4242") {
			t.Errorf("%s listener got error %q, want the full message", name, got)
		}
	}
	if got := errorOf(stranger); strings.Contains(got, "TOPSECRET") || !strings.Contains(got, "22P02") {
		t.Errorf("stranger got error %q, want the SQLSTATE without the data", got)
	}
}
