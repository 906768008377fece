package app

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/mvserver/mvserver/catalog"
)

func authConfig(dir string) Config {
	return Config{Logger: slog.New(slog.DiscardHandler), DataDir: dir, Listen: "127.0.0.1:0", Database: "mvserver",
		MaxConnections: 10, TableDefaults: catalog.AllOn, AuthFailureDelay: -1}
}

func loginErr(srv *Server, user, password string) error {
	u := &url.URL{Scheme: "postgres", User: url.UserPassword(user, password), Host: srv.Addr().String(), Path: "/mvserver", RawQuery: "sslmode=disable"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, u.String())
	if err == nil {
		c.Close(ctx)
	}
	return err
}

func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// Roles and their passwords survive a restart; the bootstrap superuser's
// password follows the configuration.
func TestRolesSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := authConfig(dir)
	cfg.Superuser, cfg.SuperuserPassword = "root", "pw1"
	srv, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	u := &url.URL{Scheme: "postgres", User: url.UserPassword("root", "pw1"), Host: srv.Addr().String(), Path: "/mvserver", RawQuery: "sslmode=disable"}
	c, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"CREATE USER alice PASSWORD 'a'", "CREATE TABLE t (k INT PRIMARY KEY)", "CREATE ROLE bob LOGIN PASSWORD 'b' VALID UNTIL '2999-01-01'"} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	c.Close(ctx)
	if err := srv.Shutdown(5 * time.Second); err != nil {
		t.Fatal(err)
	}

	cfg.SuperuserPassword = "pw2"
	srv, err = Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(5 * time.Second)
	for _, tc := range []struct{ user, pw, code string }{
		{"alice", "a", ""}, {"bob", "b", ""}, {"root", "pw2", ""}, {"root", "pw1", "28P01"}, {"alice", "b", "28P01"},
	} {
		if err := loginErr(srv, tc.user, tc.pw); sqlState(err) != tc.code || tc.code == "" && err != nil {
			t.Errorf("%s/%s: %v, want %q", tc.user, tc.pw, err, tc.code)
		}
	}
}

// An HBA file decides; trust for a name that is no role is 28000.
func TestHBAFile(t *testing.T) {
	cfg := authConfig("")
	cfg.InMemory = true
	cfg.HBAFile = filepath.Join(t.TempDir(), "pg_hba.conf")
	os.WriteFile(cfg.HBAFile, []byte("host all mvserver 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n"), 0o600)
	srv, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(5 * time.Second)
	if err := loginErr(srv, "mvserver", ""); err != nil {
		t.Fatal(err) // the bootstrap superuser, no password: trust
	}
	if err := loginErr(srv, "nobody", "x"); sqlState(err) != "28P01" {
		t.Fatalf("nobody: %v", err)
	}

	os.WriteFile(cfg.HBAFile, []byte("host all all 127.0.0.1/32 trust\n"), 0o600)
	srv2, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv2.Shutdown(5 * time.Second)
	err = loginErr(srv2, "nobody", "")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "28000" || pe.Message != `role "nobody" does not exist` {
		t.Fatalf("nobody: %v", err)
	}
}

// Configuration mistakes stop the start with a message that says where.
func TestAuthConfigErrors(t *testing.T) {
	dir := t.TempDir()
	hba := filepath.Join(dir, "hba.conf")
	os.WriteFile(hba, []byte("# rules\nhostssl all all 0.0.0.0/0 scram-sha-256\n"), 0o600)
	bad := filepath.Join(dir, "bad.conf")
	os.WriteFile(bad, []byte("local all all trust\nhost all all example.com trust\n"), 0o600)
	for _, tc := range []struct {
		set  func(*Config)
		want string
	}{
		{func(c *Config) { c.TLSCert = "x.pem" }, "needs both a certificate and its key"},
		{func(c *Config) { c.TLSCert, c.TLSKey = filepath.Join(dir, "none.pem"), filepath.Join(dir, "none.key") }, "load TLS certificate"},
		{func(c *Config) { c.HBAFile = hba }, hba + ":2: hostssl record cannot match because TLS is not configured"},
		{func(c *Config) { c.HBAFile = bad }, bad + ":2: invalid IP address \"example.com\""},
		{func(c *Config) { c.HBAFile = filepath.Join(dir, "missing.conf") }, "load HBA rules"},
	} {
		cfg := authConfig("")
		cfg.InMemory = true
		tc.set(&cfg)
		srv, err := Start(cfg)
		if err == nil {
			srv.Shutdown(time.Second)
			t.Errorf("started; want %q", tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %q, want %q", err, tc.want)
		}
	}
}

// mockSalt is the salt the server shows an unknown role in its first
// SCRAM message (the server-first message's s=).
func mockSalt(t *testing.T, addr, user string) string {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	fe := pgproto3.NewFrontend(nc, nc)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": user, "database": "mvserver"}})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		switch m := msg.(type) {
		case *pgproto3.AuthenticationSASL:
			fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("n,,n=,r=abcdef")})
			if err := fe.Flush(); err != nil {
				t.Fatal(err)
			}
		case *pgproto3.AuthenticationSASLContinue:
			for _, f := range strings.Split(string(m.Data), ",") {
				if s, ok := strings.CutPrefix(f, "s="); ok {
					return s
				}
			}
			t.Fatalf("server-first message without a salt: %q", m.Data)
		case *pgproto3.ErrorResponse:
			t.Fatalf("%s: %s", m.Code, m.Message)
		}
	}
}

// The salt shown to a role that does not exist stays the same across a
// restart, as a real role's does: it comes from a secret kept in the data
// directory. Before, it changed at each start, which told unknown names
// from known ones.
func TestMockSaltSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := authConfig(dir)
	cfg.Superuser, cfg.SuperuserPassword = "root", "pw1"
	salts := func() (string, string) {
		srv, err := Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Shutdown(2 * time.Second)
		return mockSalt(t, srv.Addr().String(), "nobody"), mockSalt(t, srv.Addr().String(), "root")
	}
	nobody1, root1 := salts()
	nobody2, root2 := salts()
	if root1 != root2 {
		t.Fatalf("the real role's salt changed across a restart: %q, %q", root1, root2)
	}
	if nobody1 != nobody2 {
		t.Fatalf("an unknown role's salt changed across a restart: %q, %q", nobody1, nobody2)
	}
	if fi, err := os.Stat(filepath.Join(dir, serverSecretFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the server secret file: %v %v", fi, err)
	}
}
