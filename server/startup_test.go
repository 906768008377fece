package server

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/mvserver/mvserver/pgerror"
)

// libpq sends SSLRequest (and GSSENCRequest) first; after 'N' it goes on in
// plain text on the same socket.
func TestSSLAndGSSRequestDeclined(t *testing.T) {
	ts := startServer(t, Config{})
	c := dialRaw(t, ts.addr)
	for _, code := range []uint32{sslRequestCode, gssEncRequestCode} {
		var pkt [8]byte
		binary.BigEndian.PutUint32(pkt[0:], 8)
		binary.BigEndian.PutUint32(pkt[4:], code)
		if _, err := c.nc.Write(pkt[:]); err != nil {
			t.Fatal(err)
		}
		var answer [1]byte
		c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.nc.Read(answer[:]); err != nil || answer[0] != 'N' {
			t.Fatalf("answer to %d: %q, %v", code, answer[0], err)
		}
	}
	c.startup()
	c.fe.Send(&pgproto3.Query{String: "select 1"})
	c.flush()
	if types, _ := c.readUntil("ReadyForQuery"); len(types) != 4 {
		t.Fatalf("select 1 after negotiation: %v", types)
	}
}

// pgx with sslmode=prefer gets 'N' and falls back to plain text; with
// max_protocol_version=3.2 it gets NegotiateProtocolVersion and speaks 3.0.
func TestPgxNegotiation(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := testCtx(t)
	for _, cs := range []string{
		"postgres://test@" + ts.addr + "/test?sslmode=prefer",
		ts.connString("max_protocol_version=3.2"),
	} {
		conn, err := pgx.Connect(ctx, cs)
		if err != nil {
			t.Fatalf("%s: %v", cs, err)
		}
		var one int32
		if err := conn.QueryRow(ctx, "select 1").Scan(&one); err != nil {
			t.Fatalf("%s: %v", cs, err)
		}
		conn.Close(ctx)
	}
}

func TestStartupRefusals(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := testCtx(t)
	_, err := pgx.Connect(ctx, "postgres://test@"+ts.addr+"/nodb?sslmode=disable")
	wantCode(t, err, pgerror.InvalidCatalogName)

	// Malformed startup packets are FATAL 08P01.
	for _, pkt := range [][]byte{
		{0, 0, 0, 8, 0, 3, 0, 0},                         // no terminator
		{0, 0, 0, 13, 0, 3, 0, 0, 'u', 's', 'e', 'r', 0}, // name without value
		{0, 0, 0, 4}, // too short
	} {
		c := dialRaw(t, ts.addr)
		if _, err := c.nc.Write(pkt); err != nil {
			t.Fatal(err)
		}
		c.wantFatal(pgerror.ProtocolViolation)
	}
}

// remoteListener makes every accepted connection look as if it came from
// addr.
type remoteListener struct {
	net.Listener
	addr net.Addr
}

func (l remoteListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return remoteConn{c, l.addr}, nil
}

type remoteConn struct {
	net.Conn
	remote net.Addr
}

func (c remoteConn) RemoteAddr() net.Addr { return c.remote }

// The default authenticator refuses clients from other hosts as a
// pg_hba.conf without a matching line would.
func TestNonLoopbackRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	remote := &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 40000}
	ts := serveOn(t, Config{}, remoteListener{ln, remote})
	_, err = pgx.Connect(testCtx(t), ts.connString(""))
	pe := wantCode(t, err, pgerror.InvalidAuthorizationSpec)
	if want := `no pg_hba.conf entry for host "10.1.2.3", user "test", database "test"`; pe.Message != want {
		t.Fatalf("message %q, want %q", pe.Message, want)
	}
	if ts.eng.opened.Load() != 0 {
		t.Fatal("a session was created for a refused client")
	}
}

// A password Authenticator exercises the AuthExchange: the request goes out,
// the 'p' answer is decoded as a password.
func TestPasswordAuthenticator(t *testing.T) {
	auth := func(ctx context.Context, info StartupInfo, ex AuthExchange) error {
		if err := ex.Send(&pgproto3.AuthenticationCleartextPassword{}); err != nil {
			return err
		}
		msg, err := ex.Receive()
		if err != nil {
			return err
		}
		pw, ok := msg.(*pgproto3.PasswordMessage)
		if !ok || pw.Password != "secret" {
			return pgerror.New(pgerror.InvalidPassword, `password authentication failed for user "%s"`, info.User)
		}
		return nil
	}
	ts := startServer(t, Config{Authenticator: auth})
	ctx := testCtx(t)

	conn, err := pgx.Connect(ctx, ts.connString("password=secret"))
	if err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	_, err = pgx.Connect(ctx, ts.connString("password=wrong"))
	wantCode(t, err, pgerror.InvalidPassword)

	// A client that never answers the request is dropped at the startup
	// deadline, with PostgreSQL's message.
	ts = startServer(t, Config{Authenticator: auth, StartupTimeout: 100 * time.Millisecond})
	c := dialRaw(t, ts.addr)
	c.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "test"}})
	c.flush()
	c.wantFatal(pgerror.QueryCanceled)
}

func TestParseStartupParams(t *testing.T) {
	params, unrecognized, err := parseStartupParams([]byte("user\x00u\x00database\x00\x00_pq_.x\x00y\x00\x00"))
	if err != nil {
		t.Fatal(err)
	}
	if params["user"] != "u" || params["database"] != "" || len(params) != 2 {
		t.Fatalf("params %v", params)
	}
	if len(unrecognized) != 1 || unrecognized[0] != "_pq_.x" {
		t.Fatalf("unrecognized %v", unrecognized)
	}
	for _, bad := range []string{"", "user", "user\x00u", "user\x00u\x00", "user\x00u\x00\x00x"} {
		_, _, err := parseStartupParams([]byte(bad))
		var fe *fatalError
		if !errors.As(err, &fe) || fe.e.Code != pgerror.ProtocolViolation {
			t.Errorf("%q: %v, want 08P01", bad, err)
		}
	}
}
