package server

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/mvserver/mvserver/pgerror"
)

// url is a connection URL for user (with password, unless empty) and
// sslmode (anything after it is more parameters).
func (ts *testServer) url(user, password, sslmode string) string {
	u := &url.URL{Scheme: "postgres", User: url.User(user), Host: ts.addr, Path: "/test", RawQuery: "sslmode=" + sslmode}
	if password != "" {
		u.User = url.UserPassword(user, password)
	}
	return u.String()
}

// testRoles is a role store: name → verifier. Every role may log in but
// "nolog".
var testRoles = map[string]string{
	"alice": pgSCRAMAlice, // password pencil, made by PostgreSQL 15
	"bob":   pgMD5Bob,     // password secret, MD5, made by PostgreSQL 15
	"carol": NewSCRAMVerifier("ça va"),
	"nopw":  "",
	"test":  "",
	"nolog": NewSCRAMVerifier("pw"),
}

func testCredentials(_ context.Context, user string) (Credentials, error) {
	v, ok := testRoles[user]
	return Credentials{Exists: ok, Login: ok && user != "nolog", Verifier: v}, nil
}

// authServer serves with rules from hba (one rule a line) and testRoles.
func authServer(t *testing.T, hba string, tlsCert *testCert) *testServer {
	t.Helper()
	h, err := ParseHBA("test_hba", strings.NewReader(hba))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Authenticator: NewAuthenticator(AuthConfig{HBA: h, Credentials: testCredentials})}
	if tlsCert != nil {
		cfg.TLS = tlsCert.cfg
	}
	return startServer(t, cfg)
}

// login connects and disconnects; it returns why it failed.
func login(t *testing.T, connString string) error {
	t.Helper()
	ctx := testCtx(t)
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return err
	}
	var one int32
	if err := conn.QueryRow(ctx, "select 1").Scan(&one); err != nil {
		t.Fatalf("select 1: %v", err)
	}
	conn.Close(ctx)
	return nil
}

func wantLogin(t *testing.T, connString string) {
	t.Helper()
	if err := login(t, connString); err != nil {
		t.Fatalf("%s: %v", connString, err)
	}
}

// wantRefused checks the FATAL a login gets, code and message.
func wantRefused(t *testing.T, connString, code, message string) {
	t.Helper()
	pe := wantCode(t, login(t, connString), code)
	if pe.Severity != "FATAL" || pe.Message != message {
		t.Fatalf("%s: %s %q, want FATAL %q", connString, pe.Severity, pe.Message, message)
	}
}

func TestAuthSCRAM(t *testing.T) {
	ts := authServer(t, "host all all 127.0.0.1/32 scram-sha-256", nil)
	wantLogin(t, ts.url("alice", "pencil", "disable"))
	wantLogin(t, ts.url("carol", "ça va", "disable"))
	for _, tc := range []struct{ user, password string }{
		{"alice", "Pencil"},
		{"alice", "x"},
		{"nobody", "pencil"}, // no such role
		{"nopw", "x"},        // no password
		{"bob", "secret"},    // MD5 hash: SCRAM cannot use it
	} {
		wantRefused(t, ts.url(tc.user, tc.password, "disable"), pgerror.InvalidPassword,
			fmt.Sprintf(`password authentication failed for user "%s"`, tc.user))
	}
	if n := ts.eng.opened.Load(); n != 2 {
		t.Fatalf("%d sessions, want 2", n)
	}
}

// method md5 does MD5 for an MD5-stored password and SCRAM for a SCRAM one,
// as PostgreSQL does; a missing role gets a SCRAM exchange too.
func TestAuthMD5(t *testing.T) {
	ts := authServer(t, "host all all 127.0.0.1/32 md5", nil)
	wantLogin(t, ts.url("bob", "secret", "disable"))
	wantLogin(t, ts.url("alice", "pencil", "disable"))
	wantRefused(t, ts.url("bob", "wrong", "disable"), pgerror.InvalidPassword, `password authentication failed for user "bob"`)
	wantRefused(t, ts.url("nobody", "x", "disable"), pgerror.InvalidPassword, `password authentication failed for user "nobody"`)

	for user, want := range map[string]string{"bob": "AuthenticationMD5Password", "alice": "AuthenticationSASL", "nobody": "AuthenticationSASL", "nopw": "AuthenticationSASL"} {
		c := dialRaw(t, ts.addr)
		c.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": user}})
		c.flush()
		types, msgs := c.readUntil(want)
		if types[len(types)-1] != want {
			t.Fatalf("%s: got %v, want %s", user, types, want)
		}
		if sasl, ok := msgs[len(msgs)-1].(*pgproto3.AuthenticationSASL); ok && strings.Join(sasl.AuthMechanisms, ",") != "SCRAM-SHA-256" {
			t.Fatalf("mechanisms %v without TLS", sasl.AuthMechanisms)
		}
	}
}

func TestAuthCleartext(t *testing.T) {
	ts := authServer(t, "host all all 127.0.0.1/32 password", nil)
	wantLogin(t, ts.url("alice", "pencil", "disable"))
	wantLogin(t, ts.url("bob", "secret", "disable"))
	wantLogin(t, ts.url("carol", "ça va", "disable"))
	for _, user := range []string{"alice", "bob", "nobody", "nopw"} {
		wantRefused(t, ts.url(user, "wrong", "disable"), pgerror.InvalidPassword,
			fmt.Sprintf(`password authentication failed for user "%s"`, user))
	}
	c := dialRaw(t, ts.addr)
	c.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "alice"}})
	c.flush()
	if types, _ := c.readUntil("AuthenticationCleartextPassword"); len(types) != 1 {
		t.Fatalf("got %v", types)
	}
	c.fe.Send(&pgproto3.PasswordMessage{Password: ""})
	c.flush()
	c.wantFatal(pgerror.InvalidPassword)
}

// Rules are tried in order; the first match decides; no match and reject
// are 28000 with PostgreSQL's messages.
func TestAuthHBARules(t *testing.T) {
	ts := authServer(t, `
host all eve 127.0.0.1/32 reject
host sameuser all 127.0.0.1/32 trust
host sales all 127.0.0.1/32 password
host all all 10.0.0.0/8 trust
`, nil)
	wantLogin(t, ts.url("test", "", "disable"))
	wantRefused(t, strings.Replace(ts.url("eve", "", "disable"), "/test?", "/eve?", 1), pgerror.InvalidAuthorizationSpec,
		`pg_hba.conf rejects connection for host "127.0.0.1", user "eve", database "eve", no encryption`)
	wantRefused(t, strings.Replace(ts.url("x", "", "disable"), "/test?", "/y?", 1), pgerror.InvalidAuthorizationSpec,
		`no pg_hba.conf entry for host "127.0.0.1", user "x", database "y", no encryption`)
	wantRefused(t, strings.Replace(ts.url("nobody", "pw", "disable"), "/test?", "/sales?", 1), pgerror.InvalidPassword,
		`password authentication failed for user "nobody"`)
	if n := ts.eng.opened.Load(); n != 1 {
		t.Fatalf("%d sessions, want 1", n)
	}
}

// hostssl matches only TLS connections, hostnossl only plain ones; the
// refusal names the encryption.
func TestAuthHostSSL(t *testing.T) {
	cert := newTestCert(t)
	ts := authServer(t, `
hostssl   all alice 127.0.0.1/32 scram-sha-256
hostnossl all test  127.0.0.1/32 trust
`, &cert)
	wantLogin(t, ts.url("alice", "pencil", "require"))
	wantRefused(t, ts.url("alice", "pencil", "disable"), pgerror.InvalidAuthorizationSpec,
		`no pg_hba.conf entry for host "127.0.0.1", user "alice", database "test", no encryption`)
	wantLogin(t, ts.url("test", "", "disable"))
	wantRefused(t, ts.url("test", "", "require"), pgerror.InvalidAuthorizationSpec,
		`no pg_hba.conf entry for host "127.0.0.1", user "test", database "test", SSL encryption`)
}

// Over TLS the server offers SCRAM-SHA-256-PLUS with tls-server-end-point;
// pgx binds the channel when asked to, and a client that says it could
// bind but thinks the server cannot ("y") is refused: someone removed PLUS.
func TestAuthChannelBinding(t *testing.T) {
	cert := newTestCert(t)
	ts := authServer(t, "host all all 127.0.0.1/32 scram-sha-256", &cert)
	wantLogin(t, ts.url("alice", "pencil", "require&channel_binding=require"))
	wantLogin(t, ts.url("alice", "pencil", "require&channel_binding=disable"))
	wantRefused(t, ts.url("alice", "wrong", "require&channel_binding=require"), pgerror.InvalidPassword,
		`password authentication failed for user "alice"`)
	if err := login(t, ts.url("alice", "pencil", "disable&channel_binding=require")); err == nil {
		t.Fatal("channel binding without TLS")
	}

	c := dialTLS(t, ts.addr)
	c.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "alice"}})
	c.flush()
	_, msgs := c.readUntil("AuthenticationSASL")
	if got := msgs[len(msgs)-1].(*pgproto3.AuthenticationSASL).AuthMechanisms; strings.Join(got, ",") != "SCRAM-SHA-256-PLUS,SCRAM-SHA-256" {
		t.Fatalf("mechanisms %v over TLS", got)
	}
	c.fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("y,,n=,r=abcdef")})
	c.flush()
	c.wantFatal(pgerror.ProtocolViolation)

	// PLUS with the binding data of another certificate fails the check.
	other := newTestCert(t)
	c = dialTLS(t, ts.addr)
	c.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "alice"}})
	c.flush()
	c.readUntil("AuthenticationSASL")
	c.fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256-PLUS", Data: []byte("p=tls-server-end-point,,n=,r=abcdef")})
	c.flush()
	_, msgs = c.readUntil("AuthenticationSASLContinue")
	nonce, _, _ := strings.Cut(strings.TrimPrefix(string(msgs[len(msgs)-1].(*pgproto3.AuthenticationSASLContinue).Data), "r="), ",")
	wrong := tlsServerEndPoint(other.cfg)
	cb := append([]byte("p=tls-server-end-point,,"), wrong...)
	c.fe.Send(&pgproto3.SASLResponse{Data: []byte("c=" + b64(cb) + ",r=" + nonce + ",p=" + b64(make([]byte, 32)))})
	c.flush()
	c.wantFatal(pgerror.ProtocolViolation)
}

// Malformed or out-of-place answers are protocol violations.
func TestAuthProtocolErrors(t *testing.T) {
	ts := authServer(t, "host all all 127.0.0.1/32 scram-sha-256", nil)
	start := func() *rawConn {
		c := dialRaw(t, ts.addr)
		c.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "alice"}})
		c.flush()
		c.readUntil("AuthenticationSASL")
		return c
	}
	c := start()
	c.fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-1", Data: []byte("n,,n=,r=abc")})
	c.flush()
	c.wantFatal(pgerror.ProtocolViolation)

	c = start()
	c.fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256-PLUS", Data: []byte("p=tls-server-end-point,,n=,r=abc")})
	c.flush()
	c.wantFatal(pgerror.ProtocolViolation) // PLUS was not offered without TLS

	c = start()
	c.fe.Send(&pgproto3.Query{String: "select 1"})
	c.flush()
	c.wantFatal(pgerror.ProtocolViolation)

	c = start()
	c.fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("n,,n=,r=abc")})
	c.flush()
	_, msgs := c.readUntil("AuthenticationSASLContinue")
	first := string(msgs[len(msgs)-1].(*pgproto3.AuthenticationSASLContinue).Data)
	if !strings.HasPrefix(first, "r=abc") || !strings.HasSuffix(first, ",s=aHdbuerPjhAPtCfl+jIlRA==,i=4096") {
		t.Fatalf("server-first %q", first)
	}
	c.fe.Send(&pgproto3.SASLResponse{Data: []byte("c=biws,r=abcX,p=" + b64(make([]byte, 32)))})
	c.flush()
	c.wantFatal(pgerror.ProtocolViolation) // not the nonce the server sent

	c = start()
	c.fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("n,,n=,r=abc")})
	c.flush()
	c.readUntil("AuthenticationSASLContinue")
	c.fe.Send(&pgproto3.SASLResponse{Data: []byte("garbage")})
	c.flush()
	c.wantFatal(pgerror.ProtocolViolation)
}

// A missing role's salt is stable, like a real one's, so two attempts do not
// tell it apart from a role that exists.
func TestAuthMockSaltStable(t *testing.T) {
	ts := authServer(t, "host all all 127.0.0.1/32 scram-sha-256", nil)
	salt := func(user string) string {
		c := dialRaw(t, ts.addr)
		c.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": user}})
		c.flush()
		c.readUntil("AuthenticationSASL")
		c.fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("n,,n=,r=abc")})
		c.flush()
		_, msgs := c.readUntil("AuthenticationSASLContinue")
		_, s, _ := strings.Cut(string(msgs[len(msgs)-1].(*pgproto3.AuthenticationSASLContinue).Data), ",s=")
		return s
	}
	a, b, other := salt("nobody"), salt("nobody"), salt("nobody2")
	if a != b || a == other || !strings.HasSuffix(a, ",i=4096") {
		t.Fatalf("salts %q %q %q", a, b, other)
	}
}

// An expired password (VALID UNTIL) is as good as none.
func TestAuthValidUntil(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	until := map[string]time.Time{"alice": now.Add(time.Second), "carol": now}
	h, _ := ParseHBA("x", strings.NewReader("host all all 127.0.0.1/32 scram-sha-256"))
	auth := NewAuthenticator(AuthConfig{HBA: h, Now: func() time.Time { return now },
		Credentials: func(ctx context.Context, user string) (Credentials, error) {
			return Credentials{Exists: true, Login: true, Verifier: testRoles[user], ValidUntil: until[user]}, nil
		}})
	ts := startServer(t, Config{Authenticator: auth})
	wantLogin(t, ts.url("alice", "pencil", "disable"))
	wantRefused(t, ts.url("carol", "ça va", "disable"), pgerror.InvalidPassword, `password authentication failed for user "carol"`)
}

// Without rules, NewAuthenticator uses DefaultHBA: SCRAM from loopback.
func TestAuthDefaultRules(t *testing.T) {
	ts := startServer(t, Config{Authenticator: NewAuthenticator(AuthConfig{Credentials: testCredentials})})
	wantLogin(t, ts.url("alice", "pencil", "disable"))
	wantRefused(t, ts.url("alice", "", "disable"), pgerror.InvalidPassword, `password authentication failed for user "alice"`)
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// Once admitted, by trust or by password, the user must be a role that may
// log in: PostgreSQL's checks right after authentication.
func TestAuthRoleMustLogIn(t *testing.T) {
	ts := authServer(t, "host all all 127.0.0.1/32 trust\n", nil)
	wantLogin(t, ts.url("alice", "", "disable"))
	wantRefused(t, ts.url("nobody", "", "disable"), pgerror.InvalidAuthorizationSpec, `role "nobody" does not exist`)
	wantRefused(t, ts.url("nolog", "", "disable"), pgerror.InvalidAuthorizationSpec, `role "nolog" is not permitted to log in`)

	ts = authServer(t, "host all all 127.0.0.1/32 scram-sha-256\n", nil)
	wantRefused(t, ts.url("nolog", "pw", "disable"), pgerror.InvalidAuthorizationSpec, `role "nolog" is not permitted to log in`)
	wantRefused(t, ts.url("nolog", "wrong", "disable"), pgerror.InvalidPassword, `password authentication failed for user "nolog"`)
	if n := ts.eng.opened.Load(); n != 0 {
		t.Fatalf("%d sessions", n)
	}
}
