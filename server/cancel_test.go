package server

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/mvserver/mvserver/pgerror"
)

// pgx's CancelRequest opens a second connection with the key from
// BackendKeyData; the sleeping statement fails with 57014 and the connection
// stays usable.
func TestCancelRequestPgx(t *testing.T) {
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		t.Run(mode.String(), func(t *testing.T) {
			ts := startServer(t, Config{})
			conn := ts.connect(t, mode)
			ctx := testCtx(t)

			errc := make(chan error, 1)
			go func() {
				_, err := conn.Exec(ctx, "sleep")
				errc <- err
			}()
			ts.eng.waitRunning(t, conn.PgConn().PID(), "sleep")
			if err := conn.PgConn().CancelRequest(ctx); err != nil {
				t.Fatal(err)
			}
			pe := wantCode(t, <-errc, pgerror.QueryCanceled)
			if pe.Message != "canceling statement due to user request" {
				t.Fatalf("message %q", pe.Message)
			}
			var one int32
			if err := conn.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("after cancel: %d, %v", one, err)
			}
		})
	}
}

// A CancelRequest with the wrong secret, or for an unknown process, does
// nothing: the server closes the cancel connection after deciding, so once
// it is closed the statement is known to be still running.
func TestCancelRequestWrongKey(t *testing.T) {
	ts := startServer(t, Config{})
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	ctx := testCtx(t)
	pid := conn.PgConn().PID()

	errc := make(chan error, 1)
	go func() {
		_, err := conn.Exec(ctx, "sleep")
		errc <- err
	}()
	ts.eng.waitRunning(t, pid, "sleep")

	key := append([]byte(nil), conn.PgConn().SecretKey()...)
	key[0] ^= 0xff
	cancelRequest(t, ts.addr, pid, key)
	cancelRequest(t, ts.addr, pid+1000, conn.PgConn().SecretKey())
	if got := ts.eng.session(pid).running.Load(); got != "sleep" {
		t.Fatalf("statement no longer running (%v) after a bad cancel", got)
	}
	select {
	case err := <-errc:
		t.Fatalf("statement ended after a bad cancel: %v", err)
	default:
	}

	cancelRequest(t, ts.addr, pid, conn.PgConn().SecretKey())
	wantCode(t, <-errc, pgerror.QueryCanceled)
}

// A cancel that arrives while the connection is idle cancels nothing: the
// next statement runs normally.
func TestCancelRequestIdle(t *testing.T) {
	ts := startServer(t, Config{})
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	ctx := testCtx(t)
	if !ts.cancel(conn.PgConn().PID(), conn.PgConn().SecretKey()) {
		t.Fatal("key did not match")
	}
	if _, err := conn.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
}
