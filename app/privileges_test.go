package app

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestTriggeredRefreshChecksOwner: a refresh the scheduler starts (here a
// TRIGGER ON UPDATE) checks the view owner's SELECT on its sources like a
// manual one: after REVOKE it fails with 42501, recorded in
// refresh_history with its cause, and the view keeps its rows; a streaming
// table's incremental refresh likewise.
func TestTriggeredRefreshChecksOwner(t *testing.T) {
	srv, admin := startTestServer(t, Config{TriggerMinInterval: 10 * time.Millisecond})
	ctx := context.Background()
	mustExec(t, admin, "CREATE ROLE alice LOGIN CREATEDB")
	mustExec(t, admin, "CREATE TABLE src (id INT PRIMARY KEY)")
	mustExec(t, admin, "INSERT INTO src VALUES (1)")
	mustExec(t, admin, "GRANT SELECT ON src TO alice")
	alice := connectAs(t, srv, "alice")
	mustExec(t, alice, "CREATE SCHEMA a")
	mustExec(t, alice, "CREATE MATERIALIZED VIEW a.m TRIGGER ON UPDATE AS SELECT id FROM public.src")
	mustExec(t, alice, "CREATE STREAMING TABLE a.st AS SELECT id FROM STREAM(public.src)")
	mustExec(t, admin, "INSERT INTO src VALUES (2)")
	waitCount(t, admin, "SELECT count(*) FROM a.m", 2)

	mustExec(t, admin, "REVOKE SELECT ON src FROM alice")
	mustExec(t, admin, "INSERT INTO src VALUES (3)")
	waitCount(t, admin, "SELECT count(*) FROM refresh_history WHERE view_name = 'm' AND cause = 'TRIGGER' AND status = 'FAILED' AND error = 'permission denied for table src'", 1)
	waitCount(t, admin, "SELECT count(*) FROM a.m", 2)

	if _, err := admin.Exec(ctx, "REFRESH STREAMING TABLE a.st"); !hasCode(err, "42501") {
		t.Fatalf("streaming refresh after REVOKE: %v, want 42501", err)
	}
	waitCount(t, admin, "SELECT count(*) FROM a.st", 1)
}

// connectAs opens a connection to srv as user (trusted: the test servers
// have no authentication), closed when the test ends.
func connectAs(t *testing.T, srv *Server, user string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), "postgres://"+user+"@"+srv.Addr().String()+"/mvserver?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}
