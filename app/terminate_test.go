package app

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func backendPID(t *testing.T, c *pgx.Conn) int32 {
	t.Helper()
	var pid int32
	if err := c.QueryRow(context.Background(), `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	return pid
}

// terminated waits for c's connection to be ended by the server with
// FATAL 57P01, as PostgreSQL ends a backend pg_terminate_backend signals.
func terminated(t *testing.T, c *pgx.Conn) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := c.Exec(context.Background(), "SELECT 1")
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "57P01" && pe.Severity == "FATAL" {
			return
		}
		if c.IsClosed() {
			return // the FATAL arrived while idle; pgx closed the connection
		}
		if time.Now().After(deadline) {
			t.Fatalf("connection still alive after pg_terminate_backend: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTerminateBackend: pg_terminate_backend ends another session's
// connection (idle or running a statement) with FATAL 57P01, with
// PostgreSQL 15's permission rules: a role may end its own role's
// backends, a member of pg_signal_backend any non-superuser's, nobody but
// a superuser a superuser's. Before, the function did not exist.
func TestTerminateBackend(t *testing.T) {
	srv, admin := startTestServer(t, Config{})
	ctx := context.Background()
	mustExec(t, admin, "CREATE ROLE alice LOGIN")
	mustExec(t, admin, "CREATE ROLE bob LOGIN")
	mustExec(t, admin, "CREATE ROLE carol LOGIN")
	alice1, alice2 := connectAs(t, srv, "alice"), connectAs(t, srv, "alice")
	bob, carol := connectAs(t, srv, "bob"), connectAs(t, srv, "carol")
	adminPID, alice2PID, carolPID := backendPID(t, admin), backendPID(t, alice2), backendPID(t, carol)

	q := func(c *pgx.Conn, sql string) (bool, error) {
		var ok bool
		err := c.QueryRow(ctx, sql).Scan(&ok)
		return ok, err
	}
	// No privilege: 42501 with PostgreSQL's messages.
	if _, err := q(bob, fmt.Sprintf("SELECT pg_terminate_backend(%d)", alice2PID)); !hasCode(err, "42501") {
		t.Fatalf("bob terminates alice: %v, want 42501", err)
	}
	if _, err := q(bob, fmt.Sprintf("SELECT pg_terminate_backend(%d)", adminPID)); !hasCode(err, "42501") {
		t.Fatalf("bob terminates the superuser: %v, want 42501", err)
	}
	// Its own role's other backend, idle: it ends with 57P01.
	if ok, err := q(alice1, fmt.Sprintf("SELECT pg_terminate_backend(%d, 5000)", alice2PID)); err != nil || !ok {
		t.Fatalf("alice terminates her other session: %v %v", ok, err)
	}
	terminated(t, alice2)

	// pg_signal_backend: any non-superuser's backend, also a running one,
	// but still not a superuser's.
	mustExec(t, admin, "GRANT pg_signal_backend TO bob")
	done := make(chan error, 1)
	go func() {
		_, err := carol.Exec(ctx, "SELECT count(*) FROM generate_series(1, 2000000000)")
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if ok, err := q(bob, fmt.Sprintf("SELECT pg_terminate_backend(%d)", carolPID)); err != nil || !ok {
		t.Fatalf("pg_signal_backend member terminates carol: %v %v", ok, err)
	}
	select {
	case err := <-done:
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "57P01" || pe.Severity != "FATAL" {
			t.Fatalf("carol's running statement: %v, want FATAL 57P01", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("carol's statement still runs after pg_terminate_backend")
	}
	if _, err := q(bob, fmt.Sprintf("SELECT pg_terminate_backend(%d)", adminPID)); !hasCode(err, "42501") {
		t.Fatalf("pg_signal_backend member terminates the superuser: %v, want 42501", err)
	}
	// REVOKE takes it away again.
	mustExec(t, admin, "REVOKE pg_signal_backend FROM bob")
	alice3 := connectAs(t, srv, "alice")
	if _, err := q(bob, fmt.Sprintf("SELECT pg_terminate_backend(%d)", backendPID(t, alice3))); !hasCode(err, "42501") {
		t.Fatalf("bob after REVOKE pg_signal_backend: %v, want 42501", err)
	}
	// A superuser ends anyone's; the admin is still connected.
	if ok, err := q(admin, fmt.Sprintf("SELECT pg_terminate_backend(%d)", backendPID(t, alice3))); err != nil || !ok {
		t.Fatalf("superuser terminates alice: %v %v", ok, err)
	}
	terminated(t, alice3)
	mustExec(t, admin, "SELECT 1")
}
