package server

import (
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/mvserver/mvserver/pgerror"
)

// rawConn is a started connection driven message by message.
type rawConn struct {
	t  testing.TB
	nc net.Conn
	fe *pgproto3.Frontend
}

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc, fe: pgproto3.NewFrontend(nc, nc)}
}

// startup sends a StartupMessage and reads until ReadyForQuery.
func (c *rawConn) startup() {
	c.t.Helper()
	c.fe.Send(&pgproto3.StartupMessage{
		ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters:      map[string]string{"user": "test"},
	})
	c.flush()
	c.readUntil("ReadyForQuery")
}

func (c *rawConn) flush() {
	c.t.Helper()
	if err := c.fe.Flush(); err != nil {
		c.t.Fatal(err)
	}
}

// readUntil reads messages until one of type typ (or EOF, returned as
// "EOF") and returns their type names.
func (c *rawConn) readUntil(typ string) ([]string, []pgproto3.BackendMessage) {
	c.t.Helper()
	var types []string
	var msgs []pgproto3.BackendMessage
	for {
		c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		msg, err := c.fe.Receive()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return append(types, "EOF"), msgs
		}
		if err != nil {
			c.t.Fatalf("receive: %v (after %v)", err, types)
		}
		types = append(types, typeName(msg))
		if e, ok := msg.(*pgproto3.ErrorResponse); ok {
			cp := *e
			msg = &cp
		}
		msgs = append(msgs, msg)
		if typeName(msg) == typ {
			return types, msgs
		}
	}
}

// wantFatal reads until EOF and checks the last message before it was a
// FATAL with code.
func (c *rawConn) wantFatal(code string) {
	c.t.Helper()
	types, msgs := c.readUntil("EOF")
	if len(msgs) == 0 || types[len(types)-1] != "EOF" {
		c.t.Fatalf("got %v, want FATAL %s then EOF", types, code)
	}
	e, ok := msgs[len(msgs)-1].(*pgproto3.ErrorResponse)
	if !ok || e.Severity != "FATAL" || e.Code != code {
		c.t.Fatalf("got %v (%+v), want FATAL %s", types, msgs[len(msgs)-1], code)
	}
}

// Shutdown ends idle connections at once, lets a running statement finish,
// then ends its connection and returns nil.
func TestShutdownLetsRunningStatementFinish(t *testing.T) {
	ts := startServer(t, Config{})
	busy := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	idle := dialRaw(t, ts.addr)
	idle.startup()
	ctx := testCtx(t)

	res := make(chan error, 1)
	go func() {
		_, err := busy.Exec(ctx, "block")
		res <- err
	}()
	ts.eng.waitRunning(t, busy.PgConn().PID(), "block")

	shut := make(chan error, 1)
	go func() { shut <- ts.Shutdown(ctx) }()

	idle.wantFatal(pgerror.AdminShutdown)
	// Listeners were closed before connections were told.
	if nc, err := net.Dial("tcp", ts.addr); err == nil {
		nc.Close()
		t.Fatal("a new connection was accepted during shutdown")
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v while a statement was running", err)
	default:
	}

	close(ts.eng.release)
	if err := <-res; err != nil {
		t.Fatalf("running statement: %v", err)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if _, err := busy.Exec(ctx, "select 1"); err == nil {
		t.Fatal("connection still usable after Shutdown")
	}
}

// When the context ends first, running statements are canceled and their
// clients get FATAL 57P01 (not 57014).
func TestShutdownCancelsRunningStatement(t *testing.T) {
	ts := startServer(t, Config{})
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	res := make(chan error, 1)
	go func() {
		_, err := conn.Exec(context.Background(), "sleep")
		res <- err
	}()
	ts.eng.waitRunning(t, conn.PgConn().PID(), "sleep")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ts.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown: %v, want context.Canceled", err)
	}
	pe := wantCode(t, <-res, pgerror.AdminShutdown)
	if pe.Severity != "FATAL" || pe.Message != "terminating connection due to administrator command" {
		t.Fatalf("got %s %q", pe.Severity, pe.Message)
	}
}

// A client that stops reading in the middle of a result, with a statement
// that ignores its context, cannot hold Shutdown: writes get a deadline.
func TestShutdownWithClientNotReading(t *testing.T) {
	ts := startServer(t, Config{})
	ts.killGrace = 50 * time.Millisecond
	c := dialRaw(t, ts.addr)
	c.startup()
	c.fe.Send(&pgproto3.Query{String: "flood"})
	c.flush()
	ts.eng.waitRunning(t, ts.nextPID.Load(), "flood")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ts.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown: %v", err)
	}
}

func TestMaxConnections(t *testing.T) {
	ts := startServer(t, Config{MaxConnections: 2})
	ctx := testCtx(t)
	c1 := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	ts.connect(t, pgx.QueryExecModeSimpleProtocol)

	// Connections still in startup hold no slot.
	pending := dialRaw(t, ts.addr)

	_, err := pgx.Connect(ctx, ts.connString(""))
	wantCode(t, err, pgerror.TooManyConnections)

	c1.Close(ctx)
	waitFor(t, "the slot to be released", func() bool { return ts.sessions.Load() == 1 })
	c3, err := pgx.Connect(ctx, ts.connString(""))
	if err != nil {
		t.Fatal(err)
	}
	c3.Close(ctx)
	pending.nc.Close()
}

// A client that connects and sends nothing, or half a startup packet, is
// dropped after StartupTimeout.
func TestStartupTimeout(t *testing.T) {
	ts := startServer(t, Config{StartupTimeout: 100 * time.Millisecond})
	for _, prefix := range [][]byte{nil, {0, 0, 0, 40, 0, 3}} {
		c := dialRaw(t, ts.addr)
		if _, err := c.nc.Write(prefix); err != nil {
			t.Fatal(err)
		}
		c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := c.nc.Read(make([]byte, 64))
		if n != 0 || err != io.EOF {
			t.Fatalf("after %x: read %d bytes, %v; want EOF", prefix, n, err)
		}
	}
}

// ListenAndServe on a path serves a unix socket, where clients are trusted.
func TestUnixSocket(t *testing.T) {
	dir := t.TempDir()
	eng := newFakeEngine()
	srv := New(Config{Listen: filepath.Join(dir, ".s.PGSQL.5432"), Logger: discardLogger()}, eng)
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe() }()
	waitFor(t, "the listener", func() bool { return srv.Addr() != nil })
	if srv.Addr().Network() != "unix" {
		t.Fatalf("network %s", srv.Addr().Network())
	}

	ctx := testCtx(t)
	conn, err := pgx.Connect(ctx, "host="+dir+" port=5432 user=test database=test")
	if err != nil {
		t.Fatal(err)
	}
	var one int32
	if err := conn.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("select 1: %d, %v", one, err)
	}
	conn.Close(ctx)
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrServerClosed) {
		t.Fatalf("ListenAndServe: %v", err)
	}
	// Serve after Shutdown refuses at once.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(ln); !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Serve after Shutdown: %v", err)
	}
}

// The last ReservedConnections slots are kept for superusers: an admin can
// still get in when everyone else is refused.
func TestReservedConnections(t *testing.T) {
	ts := startServer(t, Config{MaxConnections: 3, ReservedConnections: 1, Superuser: func(u string) bool { return u == "admin" }})
	ctx := testCtx(t)
	as := func(user string) (*pgx.Conn, error) {
		return pgx.Connect(ctx, strings.Replace(ts.connString(""), "test@", user+"@", 1))
	}
	for range 2 {
		c, err := as("bob")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
	}
	_, err := as("bob")
	wantCode(t, err, pgerror.TooManyConnections)
	if err == nil || !strings.Contains(err.Error(), "reserved for non-replication superuser connections") {
		t.Fatalf("third ordinary user: %v", err)
	}
	admin, err := as("admin")
	if err != nil {
		t.Fatalf("an admin in the reserve: %v", err)
	}
	defer admin.Close(ctx)
	_, err = as("admin")
	wantCode(t, err, pgerror.TooManyConnections)
}
