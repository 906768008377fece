package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// testServer is a Server on a loopback port with a fake engine.
type testServer struct {
	*Server
	eng  *fakeEngine
	addr string
	done chan error // Serve's result
}

// startServer starts a server for the test and shuts it down at cleanup,
// checking that every session was closed.
func startServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveOn(t, cfg, ln)
}

func serveOn(t testing.TB, cfg Config, ln net.Listener) *testServer {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(testLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	eng := newFakeEngine()
	ts := &testServer{Server: New(cfg, eng), eng: eng, addr: ln.Addr().String(), done: make(chan error, 1)}
	go func() { ts.done <- ts.Serve(ln) }()
	t.Cleanup(func() { ts.shutdown(t) })
	return ts
}

// shutdown stops the server (idempotent) and checks nothing leaked.
func (ts *testServer) shutdown(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ts.Shutdown(ctx)
	select {
	case err := <-ts.done:
		if !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
		ts.done <- err // for a second call
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after Shutdown")
	}
	if o, c := ts.eng.opened.Load(), ts.eng.closed.Load(); o != c {
		t.Errorf("%d sessions opened, %d closed", o, c)
	}
}

func (ts *testServer) connString(extra string) string {
	s := fmt.Sprintf("postgres://test@%s/test?sslmode=disable", ts.addr)
	if extra != "" {
		s += "&" + extra
	}
	return s
}

// connect opens a pgx connection in the given mode.
func (ts *testServer) connect(t testing.TB, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(ts.connString(""))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// pgCode returns the SQLSTATE of a pgx error, "" if it has none.
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func wantCode(t testing.TB, err error, code string) *pgconn.PgError {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("got error %v, want SQLSTATE %s", err, code)
	}
	if pe.Code != code {
		t.Fatalf("got SQLSTATE %s (%s), want %s", pe.Code, pe.Message, code)
	}
	return pe
}

// testLogWriter sends server logs to the test log, shown on failure or -v.
type testLogWriter struct{ t testing.TB }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
