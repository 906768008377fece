package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/scheduler"
)

func startTest(t *testing.T, cfg Config) *pgx.Conn {
	t.Helper()
	_, c := startTestServer(t, cfg)
	return c
}

// startTestServer starts an in-memory server with cfg's scheduling
// settings and connects to it.
func startTestServer(t *testing.T, cfg Config) (*Server, *pgx.Conn) {
	t.Helper()
	cfg.Logger, cfg.InMemory, cfg.Listen, cfg.Database, cfg.MaxConnections, cfg.TableDefaults = slog.New(slog.DiscardHandler), true, "127.0.0.1:0", "mvserver", 10, catalog.AllOn
	if cfg.Store == "" {
		// MVSERVER_TEST_STORE=tikvmock:// (with -tags tikv): the TiKV
		// engine's in-process mock cluster, as the storage suite reads it.
		cfg.Store = os.Getenv("MVSERVER_TEST_STORE")
	}
	srv, c := startAndConnect(t, cfg)
	t.Cleanup(func() { srv.Shutdown(2 * time.Second) })
	t.Cleanup(func() { c.Close(context.Background()) })
	return srv, c
}

// startAndConnect starts a server with cfg as it is and connects to it;
// the caller closes both.
func startAndConnect(t *testing.T, cfg Config) (*Server, *pgx.Conn) {
	t.Helper()
	srv, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := pgx.Connect(context.Background(), "postgres://t@"+srv.Addr().String()+"/mvserver?sslmode=disable")
	if err != nil {
		srv.Shutdown(time.Second)
		t.Fatal(err)
	}
	return srv, c
}

func mustExec(t *testing.T, c *pgx.Conn, q string) {
	t.Helper()
	if _, err := c.Exec(context.Background(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// waitCount polls a count until it equals want, within a deadline.
func waitCount(t *testing.T, c *pgx.Conn, q string, want int64) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var got int64
	for time.Now().Before(deadline) {
		if err := c.QueryRow(context.Background(), q).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got == want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s: %d, want %d (deadline passed)", q, got, want)
}

// TestTriggerOnUpdate: a TRIGGER ON UPDATE view refreshes by itself after a
// source commit, through the storage commit hook (R-S3), and chains to a
// view above it.
func TestTriggerOnUpdate(t *testing.T) {
	c := startTest(t, Config{TriggerMinInterval: 10 * time.Millisecond})
	mustExec(t, c, `CREATE TABLE src (id INT PRIMARY KEY)`)
	mustExec(t, c, `CREATE MATERIALIZED VIEW a TRIGGER ON UPDATE AS SELECT id FROM src`)
	mustExec(t, c, `CREATE MATERIALIZED VIEW b TRIGGER ON UPDATE AS SELECT count(*) AS n FROM a`)
	mustExec(t, c, `INSERT INTO src VALUES (1), (2), (3)`)
	waitCount(t, c, `SELECT count(*) FROM a`, 3)
	waitCount(t, c, `SELECT n FROM b`, 3)
	mustExec(t, c, `DELETE FROM src WHERE id = 1`)
	waitCount(t, c, `SELECT n FROM b`, 2)
	// Without its trigger, a follows its source only when refreshed by
	// hand; b still follows a.
	mustExec(t, c, `ALTER MATERIALIZED VIEW a DROP TRIGGER ON UPDATE`)
	mustExec(t, c, `INSERT INTO src VALUES (9)`)
	mustExec(t, c, `REFRESH MATERIALIZED VIEW a`)
	waitCount(t, c, `SELECT n FROM b`, 3)
}

// TestCronSchedule: a one-second Quartz schedule refreshes the view (R-S2).
func TestCronSchedule(t *testing.T) {
	c := startTest(t, Config{})
	mustExec(t, c, `CREATE TABLE src (id INT PRIMARY KEY)`)
	mustExec(t, c, `CREATE MATERIALIZED VIEW m SCHEDULE CRON '* * * * * ?' AS SELECT id FROM src`)
	mustExec(t, c, `INSERT INTO src VALUES (1), (2)`)
	waitCount(t, c, `SELECT count(*) FROM m`, 2)
}

// TestAtMostEveryMinimum: AT MOST EVERY below the server's minimum is an error.
func TestAtMostEveryMinimum(t *testing.T) {
	c := startTest(t, Config{})
	mustExec(t, c, `CREATE TABLE src (id INT PRIMARY KEY)`)
	_, err := c.Exec(context.Background(), `CREATE MATERIALIZED VIEW m TRIGGER ON UPDATE AT MOST EVERY INTERVAL 10 SECONDS AS SELECT id FROM src`)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "22023" {
		t.Fatalf("want 22023, got %v", err)
	}
	mustExec(t, c, `CREATE MATERIALIZED VIEW m TRIGGER ON UPDATE AT MOST EVERY INTERVAL 2 MINUTES AS SELECT id FROM src`)
}

// TestCancelRefresh: CANCEL REFRESH from another session stops a running
// refresh; it changes nothing and is recorded CANCELED (R-S5).
func TestCancelRefresh(t *testing.T) {
	c := startTest(t, Config{})
	ctx := context.Background()
	mustExec(t, c, `CREATE TABLE big (i INT)`)
	mustExec(t, c, `INSERT INTO big VALUES (0)`)
	mustExec(t, c, `CREATE MATERIALIZED VIEW slow AS SELECT count(*) AS n FROM big a, big b`)
	var sb strings.Builder
	sb.WriteString("INSERT INTO big VALUES (1)")
	for i := 2; i < 4000; i++ {
		fmt.Fprintf(&sb, ",(%d)", i)
	}
	mustExec(t, c, sb.String())
	other, err := pgx.Connect(ctx, c.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	done := make(chan error, 1)
	go func() {
		// 16M joined rows: only a cancel ends it quickly.
		_, err := other.Exec(ctx, `REFRESH MATERIALIZED VIEW slow`)
		done <- err
	}()
	deadline := time.Now().Add(20 * time.Second)
	var rerr error
wait:
	for time.Now().Before(deadline) {
		mustExec(t, c, `CANCEL REFRESH slow`)
		select {
		case rerr = <-done:
			break wait
		case <-time.After(20 * time.Millisecond):
		}
	}
	var pe *pgconn.PgError
	if !errors.As(rerr, &pe) || pe.Code != "57014" {
		t.Fatalf("the canceled REFRESH returned %v, want 57014", rerr)
	}
	var n int64
	if err := c.QueryRow(ctx, `SELECT n FROM slow`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the view changed: %d %v", n, err)
	}
	var status string
	if err := c.QueryRow(ctx, `SELECT status FROM refresh_history WHERE view_name = 'slow' ORDER BY start_time DESC LIMIT 1`).Scan(&status); err != nil || status != "CANCELED" {
		t.Fatalf("history: %q %v", status, err)
	}
}

// TestSkippedRecorded: a scheduled run coalesced into a running refresh is
// recorded in refresh_history as SKIPPED with its event (R-S6). The
// scheduler's own tests (fake clock) prove when it calls Skipped; this
// checks the wiring writes the record.
func TestSkippedRecorded(t *testing.T) {
	srv, c := startTestServer(t, Config{})
	mustExec(t, c, `CREATE TABLE s (id INT)`)
	mustExec(t, c, `CREATE MATERIALIZED VIEW v SCHEDULE EVERY 1 HOUR AS SELECT id FROM s`)
	txn := srv.db.Begin()
	cat, err := srv.sched.cat.Snapshot(txn)
	txn.Rollback()
	if err != nil {
		t.Fatal(err)
	}
	v, err := cat.Resolve([]string{"v"}, []string{"public"})
	if err != nil {
		t.Fatal(err)
	}
	due := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	srv.sched.skipped(v.ID, scheduler.CauseSchedule, due)
	var status, cause, msg string
	if err := c.QueryRow(context.Background(), `SELECT status, cause, error FROM refresh_history WHERE view_name = 'v' AND status = 'SKIPPED'`).Scan(&status, &cause, &msg); err != nil {
		t.Fatal(err)
	}
	if cause != "SCHEDULE" || !strings.Contains(msg, "2026-01-02T03:00:00Z") {
		t.Fatalf("skipped run: %s %s %q", status, cause, msg)
	}
	var n int
	if err := c.QueryRow(context.Background(), `SELECT count(*) FROM event_log('v') WHERE message LIKE '%SKIPPED%'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("skipped events: %d, %v", n, err)
	}
}

// TestPgCancelBackend: pg_cancel_backend(pid) from another session stops a
// running statement — a manual REFRESH included — with 57014, and the
// refresh is recorded CANCELED with nothing changed (R-S5).
func TestPgCancelBackend(t *testing.T) {
	c1 := startTest(t, Config{})
	ctx := context.Background()
	mustExec(t, c1, `CREATE TABLE big (id INT)`)
	var vals []string
	for i := 0; i < 3000; i++ {
		vals = append(vals, fmt.Sprintf("(%d)", i))
	}
	mustExec(t, c1, `INSERT INTO big VALUES `+strings.Join(vals, ", "))
	// Created over an empty table (instant); the refresh below then
	// recomputes over 3000 rows: a 9M-row join, seconds of work.
	mustExec(t, c1, `CREATE TABLE big0 (id INT)`)
	mustExec(t, c1, `CREATE MATERIALIZED VIEW slow AS SELECT count(*) AS n FROM big0 a, big0 b, big0 c WHERE a.id + b.id = c.id`)
	mustExec(t, c1, `INSERT INTO big0 SELECT id FROM big`)
	c2, err := pgx.Connect(ctx, c1.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close(ctx)
	var pid int32
	if err := c1.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	// pg_stat_activity lists both sessions, the other one idle.
	var n int
	var state string
	if err := c2.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("pg_stat_activity: %d sessions, %v", n, err)
	}
	if err := c2.QueryRow(ctx, fmt.Sprintf(`SELECT state FROM pg_catalog.pg_stat_activity WHERE pid = %d`, pid)).Scan(&state); err != nil || state != "idle" {
		t.Fatalf("state of %d: %q, %v", pid, state, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c1.Exec(ctx, `REFRESH MATERIALIZED VIEW slow FULL`)
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	var query string
	if err := c2.QueryRow(ctx, fmt.Sprintf(`SELECT state, query FROM pg_stat_activity WHERE pid = %d`, pid)).Scan(&state, &query); err != nil || state != "active" || !strings.Contains(query, "REFRESH") {
		t.Fatalf("running session: %q %q, %v", state, query, err)
	}
	var ok bool
	if err := c2.QueryRow(ctx, fmt.Sprintf(`SELECT pg_cancel_backend(%d)`, pid)).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_cancel_backend: %v, %v", ok, err)
	}
	select {
	case err := <-done:
		if !hasCode(err, "57014") {
			t.Fatalf("REFRESH after pg_cancel_backend: %v, want 57014", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("REFRESH not canceled")
	}
	var status string
	if err := c2.QueryRow(ctx, `SELECT status FROM refresh_history WHERE view_name = 'slow' ORDER BY start_time DESC LIMIT 1`).Scan(&status); err != nil || status != "CANCELED" {
		t.Fatalf("last run: %s, %v", status, err)
	}
	if err := c2.QueryRow(ctx, `SELECT pg_cancel_backend(999999)`).Scan(&ok); err != nil || ok {
		t.Fatalf("unknown pid: %v, %v", ok, err)
	}
}

// TestAtMostEveryBurst: a burst of 50 commits inside one AT MOST EVERY
// window makes few triggered refreshes, not fifty — the changes are
// coalesced into a refresh at the window's end — and the view ends equal to
// its query (R-S3).
func TestAtMostEveryBurst(t *testing.T) {
	c := startTest(t, Config{TriggerMinInterval: time.Second})
	ctx := context.Background()
	mustExec(t, c, `CREATE TABLE src (id INT PRIMARY KEY, v INT)`)
	mustExec(t, c, `CREATE MATERIALIZED VIEW m TRIGGER ON UPDATE AT MOST EVERY INTERVAL 2 SECONDS AS SELECT count(*) AS n, sum(v) AS s FROM src`)
	start := time.Now()
	for i := 0; i < 50; i++ {
		mustExec(t, c, fmt.Sprintf(`INSERT INTO src VALUES (%d, %d)`, i, i))
	}
	burst := time.Since(start)
	waitCount(t, c, `SELECT n FROM m`, 50)
	var s int64
	if err := c.QueryRow(ctx, `SELECT s FROM m`).Scan(&s); err != nil || s != 49*50/2 {
		t.Fatalf("sum %d, %v", s, err)
	}
	var runs int64
	if err := c.QueryRow(ctx, `SELECT count(*) FROM refresh_history WHERE view_name = 'm' AND cause = 'TRIGGER'`).Scan(&runs); err != nil {
		t.Fatal(err)
	}
	// One window of 2 s covers a burst this short; at most one refresh per
	// started window, plus the window in progress when the burst began.
	limit := int64(burst/(2*time.Second)) + 2
	if runs < 1 || runs > limit {
		t.Fatalf("%d triggered refreshes for 50 commits in %v, want 1..%d", runs, burst, limit)
	}
}

// TestRestartCatchUp: a scheduled time missed while the server was down runs
// once at start-up (R-S8), recorded with cause STARTUP_CATCHUP; schedules
// survive the restart and keep firing.
func TestRestartCatchUp(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Logger: slog.New(slog.DiscardHandler), DataDir: dir, Listen: "127.0.0.1:0", Database: "mvserver", MaxConnections: 10, TableDefaults: catalog.AllOn}
	ctx := context.Background()
	open := func() (*Server, *pgx.Conn) { return startAndConnect(t, cfg) }
	srv, c := open()
	mustExec(t, c, `CREATE TABLE src (id INT)`)
	mustExec(t, c, `CREATE MATERIALIZED VIEW m SCHEDULE CRON '* * * * * ?' AS SELECT count(*) AS n FROM src`)
	mustExec(t, c, `INSERT INTO src VALUES (1)`)
	waitCount(t, c, `SELECT n FROM m`, 1)
	c.Close(ctx)
	srv.Shutdown(2 * time.Second)
	// Down for a few seconds: several occurrences are missed.
	time.Sleep(2500 * time.Millisecond)
	srv, c = open()
	defer func() { c.Close(ctx); srv.Shutdown(2 * time.Second) }()
	waitCount(t, c, `SELECT count(*) FROM refresh_history WHERE view_name = 'm' AND cause = 'STARTUP_CATCHUP'`, 1)
	// The schedule keeps firing after the catch-up.
	mustExec(t, c, `INSERT INTO src VALUES (2)`)
	waitCount(t, c, `SELECT n FROM m`, 2)
	var catchups int64
	if err := c.QueryRow(ctx, `SELECT count(*) FROM refresh_history WHERE view_name = 'm' AND cause = 'STARTUP_CATCHUP'`).Scan(&catchups); err != nil || catchups != 1 {
		t.Fatalf("catch-up runs: %d, %v (missed occurrences make one run)", catchups, err)
	}
}

// TestTriggeredTimeout: the statement_timeout in force at CREATE bounds the
// view's triggered refreshes (R-S4): a slow one is stopped, recorded
// TIMED_OUT, and the view keeps its previous content.
func TestTriggeredTimeout(t *testing.T) {
	c := startTest(t, Config{TriggerMinInterval: 10 * time.Millisecond})
	ctx := context.Background()
	mustExec(t, c, `CREATE TABLE big0 (id INT)`)
	mustExec(t, c, `SET statement_timeout = '300ms'`)
	mustExec(t, c, `CREATE MATERIALIZED VIEW slow TRIGGER ON UPDATE AS SELECT count(*) AS n FROM big0 a, big0 b, big0 c WHERE a.id + b.id = c.id`)
	mustExec(t, c, `RESET statement_timeout`)
	var vals []string
	for i := 0; i < 3000; i++ {
		vals = append(vals, fmt.Sprintf("(%d)", i))
	}
	mustExec(t, c, `INSERT INTO big0 VALUES `+strings.Join(vals, ", "))
	waitCount(t, c, `SELECT count(*) FROM refresh_history WHERE view_name = 'slow' AND status = 'TIMED_OUT'`, 1)
	var n int64
	if err := c.QueryRow(ctx, `SELECT n FROM slow`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("view after a timed-out refresh: %d, %v (want its previous content, 0)", n, err)
	}
}

// TestHistoryRetention: each refresh of a view deletes its event log and
// run records older than the retention.
func TestHistoryRetention(t *testing.T) {
	c := startTest(t, Config{HistoryRetention: time.Second})
	ctx := context.Background()
	mustExec(t, c, `CREATE TABLE s (id INT)`)
	mustExec(t, c, `CREATE MATERIALIZED VIEW m AS SELECT count(*) AS n FROM s`)
	mustExec(t, c, `REFRESH MATERIALIZED VIEW m`)
	var runs, events int64
	if err := c.QueryRow(ctx, `SELECT count(*) FROM refresh_history WHERE view_name = 'm'`).Scan(&runs); err != nil || runs != 2 {
		t.Fatalf("runs %d, %v", runs, err)
	}
	time.Sleep(1100 * time.Millisecond)
	mustExec(t, c, `REFRESH MATERIALIZED VIEW m`)
	if err := c.QueryRow(ctx, `SELECT count(*) FROM refresh_history WHERE view_name = 'm'`).Scan(&runs); err != nil || runs != 1 {
		t.Fatalf("runs after the retention: %d, %v (want only the latest)", runs, err)
	}
	if err := c.QueryRow(ctx, `SELECT count(*) FROM event_log('m') WHERE timestamp < now() - INTERVAL 1 SECOND`).Scan(&events); err != nil || events != 0 {
		t.Fatalf("events older than the retention: %d, %v", events, err)
	}
}
