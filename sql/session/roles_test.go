package session_test

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mvserver/mvserver/app"
	"github.com/mvserver/mvserver/catalog"
)

// roleServer runs a server that authenticates with hba (a rules file's
// text; "" for the default rules) and the superuser admin/adminpw.
type roleServer struct {
	t    *testing.T
	addr string
}

func startRoleServer(t *testing.T, hba string) *roleServer {
	t.Helper()
	cfg := app.Config{Logger: slog.New(slog.DiscardHandler), InMemory: true, Listen: "127.0.0.1:0", Database: "mvserver",
		MaxConnections: 20, TableDefaults: catalog.AllOn, Superuser: "admin", SuperuserPassword: "adminpw",
		AuthFailureDelay: -1} // failed logins answer at once (the delay is tested in server)
	if hba != "" {
		cfg.HBAFile = filepath.Join(t.TempDir(), "hba.conf")
		if err := os.WriteFile(cfg.HBAFile, []byte(hba), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := app.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(2 * time.Second) })
	return &roleServer{t: t, addr: srv.Addr().String()}
}

func (rs *roleServer) url(user, password string) string {
	u := &url.URL{Scheme: "postgres", User: url.UserPassword(user, password), Host: rs.addr, Path: "/mvserver", RawQuery: "sslmode=disable"}
	return u.String()
}

// roleConn is a connection that records the NOTICEs it gets.
type roleConn struct {
	*pgx.Conn
	mu      sync.Mutex
	notices []string
}

func (c *roleConn) takeNotices() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.notices
	c.notices = nil
	return n
}

func (rs *roleServer) login(user, password string) (*roleConn, error) {
	rs.t.Helper()
	cfg, err := pgx.ParseConfig(rs.url(user, password))
	if err != nil {
		rs.t.Fatal(err)
	}
	nc := &roleConn{}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		nc.mu.Lock()
		nc.notices = append(nc.notices, n.Message)
		nc.mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	rs.t.Cleanup(func() { c.Close(context.Background()) })
	nc.Conn = c
	return nc, nil
}

func (rs *roleServer) mustLogin(user, password string) *roleConn {
	rs.t.Helper()
	c, err := rs.login(user, password)
	if err != nil {
		rs.t.Fatalf("login %s: %v", user, err)
	}
	return c
}

func (rs *roleServer) wantLoginCode(user, password, code string) {
	rs.t.Helper()
	_, err := rs.login(user, password)
	if got := pgCode(err); got != code {
		rs.t.Fatalf("login %s/%s: %v, want %s", user, password, err, code)
	}
}

func roleExec(t *testing.T, c *roleConn, sql string) {
	t.Helper()
	if _, err := c.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func wantExecCode(t *testing.T, c *roleConn, sql, code, message string) {
	t.Helper()
	_, err := c.Exec(context.Background(), sql)
	if got := pgCode(err); got != code {
		t.Fatalf("%s: %v, want %s", sql, err, code)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe); message != "" && pe.Message != message {
		t.Fatalf("%s: message %q, want %q", sql, pe.Message, message)
	}
}

func queryString(t *testing.T, c *roleConn, sql string) string {
	t.Helper()
	var s string
	if err := c.QueryRow(context.Background(), sql).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

// CREATE/ALTER/DROP ROLE as a superuser, and logging in as what they made.
func TestRolesLifecycle(t *testing.T) {
	rs := startRoleServer(t, "host all all 127.0.0.1/32 md5\n")
	admin := rs.mustLogin("admin", "adminpw")
	if got := admin.PgConn().ParameterStatus("is_superuser"); got != "on" {
		t.Fatalf("admin is_superuser %q", got)
	}

	roleExec(t, admin, "CREATE ROLE alice LOGIN PASSWORD 'a1'")
	alice := rs.mustLogin("alice", "a1")
	if got := alice.PgConn().ParameterStatus("is_superuser"); got != "off" {
		t.Fatalf("alice is_superuser %q", got)
	}
	if got := alice.PgConn().ParameterStatus("session_authorization"); got != "alice" {
		t.Fatalf("alice session_authorization %q", got)
	}
	rs.wantLoginCode("alice", "wrong", "28P01")

	wantExecCode(t, admin, "CREATE ROLE alice", "42710", `role "alice" already exists`)
	wantExecCode(t, admin, "CREATE USER Alice", "42710", `role "alice" already exists`) // folded
	wantExecCode(t, admin, "CREATE ROLE pg_monitor2", "42939", `role name "pg_monitor2" is reserved`)
	wantExecCode(t, admin, "CREATE ROLE x LOGIN NOLOGIN", "42601", "conflicting or redundant options")
	wantExecCode(t, admin, "CREATE ROLE x IN ROLE nobody", "42704", `role "nobody" does not exist`)
	wantExecCode(t, admin, "CREATE ROLE x REPLICATION", "0A000", "")
	wantExecCode(t, admin, "ALTER ROLE nobody LOGIN", "42704", `role "nobody" does not exist`)
	wantExecCode(t, admin, "DROP ROLE nobody", "42704", `role "nobody" does not exist`)
	wantExecCode(t, admin, "ALTER ROLE nobody RENAME TO x", "42704", `role "nobody" does not exist`)
	wantExecCode(t, admin, "ALTER ROLE alice RENAME TO admin", "42710", `role "admin" already exists`)
	wantExecCode(t, admin, "ALTER ROLE alice VALID UNTIL 'soon'", "22007", "")
	roleExec(t, admin, "DROP ROLE IF EXISTS nobody, nobody2")
	if got := admin.takeNotices(); len(got) != 2 || got[0] != `role "nobody" does not exist, skipping` {
		t.Fatalf("notices %q", got)
	}

	// CREATE ROLE does not log in; CREATE USER does; NOLOGIN refuses.
	roleExec(t, admin, "CREATE ROLE nl PASSWORD 'x'")
	rs.wantLoginCode("nl", "x", "28000")
	roleExec(t, admin, "ALTER ROLE nl LOGIN")
	rs.mustLogin("nl", "x")
	roleExec(t, admin, "CREATE USER u2 WITH PASSWORD 'p2' CONNECTION LIMIT 3 CREATEDB")
	rs.mustLogin("u2", "p2")
	roleExec(t, admin, "ALTER USER u2 NOLOGIN")
	rs.wantLoginCode("u2", "p2", "28000")

	// No password, PASSWORD NULL, and the empty password all refuse.
	roleExec(t, admin, "CREATE USER np")
	rs.wantLoginCode("np", "", "28P01")
	roleExec(t, admin, "ALTER USER alice PASSWORD NULL")
	rs.wantLoginCode("alice", "a1", "28P01")
	roleExec(t, admin, "ALTER USER alice PASSWORD ''")
	if got := admin.takeNotices(); len(got) != 1 || got[0] != "empty string is not a valid password, clearing password" {
		t.Fatalf("notices %q", got)
	}

	// VALID UNTIL in the past: as if there were no password.
	roleExec(t, admin, "ALTER USER alice PASSWORD 'a2' VALID UNTIL '2001-02-03 04:05:06+00'")
	rs.wantLoginCode("alice", "a2", "28P01")
	roleExec(t, admin, "ALTER USER alice VALID UNTIL 'infinity'")
	rs.mustLogin("alice", "a2")
	roleExec(t, admin, "ALTER USER alice VALID UNTIL '2999-01-01'")
	rs.mustLogin("alice", "a2")

	// A SCRAM verifier is stored as given (PostgreSQL 15's one for
	// 'pencil'); an MD5 hash is refused, and so is password_encryption =
	// md5: only SCRAM-SHA-256 verifiers are stored.
	roleExec(t, admin, "CREATE USER v PASSWORD 'SCRAM-SHA-256$4096:aHdbuerPjhAPtCfl+jIlRA==$ePeHkq+EJC0iTU7l17nuKjwV3GNfBGuRfbpppZRp17U=:vGzSrIL7tawxsYSIpkHybDVJL30+qR1adjQhTUvYzPk='")
	rs.mustLogin("v", "pencil")
	wantExecCode(t, admin, "CREATE USER bob PASSWORD 'md521f3163f8f86fa10bdefbfbd502a8f06'", "0A000", "MD5-hashed passwords are not accepted")
	wantExecCode(t, admin, "ALTER USER v PASSWORD 'md521f3163f8f86fa10bdefbfbd502a8f06'", "0A000", "MD5-hashed passwords are not accepted")
	rs.mustLogin("v", "pencil")
	wantExecCode(t, admin, "SET password_encryption = 'md5'", "22023", "")
	wantExecCode(t, admin, "SET password_encryption = 'on'", "22023", "")
	if got := queryString(t, admin, "SHOW password_encryption"); got != "scram-sha-256" {
		t.Fatalf("password_encryption %q", got)
	}
	roleExec(t, admin, "CREATE USER m PASSWORD 'mpw'")
	roleExec(t, admin, "ALTER ROLE m RENAME TO m3") // SCRAM survives a rename
	if got := admin.takeNotices(); len(got) != 0 {
		t.Fatalf("notices %q", got)
	}
	rs.mustLogin("m3", "mpw")
	var stored string
	if err := admin.QueryRow(context.Background(), "SELECT rolpassword FROM pg_authid WHERE rolname = 'm3'").Scan(&stored); err != nil || !strings.HasPrefix(stored, "SCRAM-SHA-256$4096:") {
		t.Fatalf("stored password %q, %v", stored, err)
	}

	// DROP ROLE of several; the dropped can no longer log in.
	roleExec(t, admin, "DROP USER nl, u2")
	rs.wantLoginCode("nl", "x", "28P01")
	wantExecCode(t, admin, "DROP ROLE admin", "55006", "current user cannot be dropped")
	wantExecCode(t, admin, "ALTER ROLE admin RENAME TO boss", "0A000", "session user cannot be renamed")
}

// Role DDL is transactional: a rolled-back CREATE ROLE never existed, and
// within the transaction the new role is visible.
func TestRolesTransactional(t *testing.T) {
	rs := startRoleServer(t, "")
	admin := rs.mustLogin("admin", "adminpw")
	roleExec(t, admin, "BEGIN")
	roleExec(t, admin, "CREATE USER t1 PASSWORD 'x'")
	roleExec(t, admin, "ALTER USER t1 CREATEDB")
	roleExec(t, admin, "ROLLBACK")
	rs.wantLoginCode("t1", "x", "28P01")
	roleExec(t, admin, "BEGIN")
	roleExec(t, admin, "CREATE USER t2 PASSWORD 'x'")
	roleExec(t, admin, "COMMIT")
	rs.mustLogin("t2", "x")
}

// PostgreSQL 15's privilege rules for role DDL.
func TestRolesPrivileges(t *testing.T) {
	rs := startRoleServer(t, "")
	admin := rs.mustLogin("admin", "adminpw")
	roleExec(t, admin, "CREATE USER plain PASSWORD 'p'")
	roleExec(t, admin, "CREATE USER mgr CREATEROLE PASSWORD 'm'")
	roleExec(t, admin, "CREATE USER su2 SUPERUSER PASSWORD 's'")
	roleExec(t, admin, "CREATE USER victim PASSWORD 'v'")

	plain := rs.mustLogin("plain", "p")
	wantExecCode(t, plain, "CREATE ROLE x", "42501", "permission denied to create role")
	wantExecCode(t, plain, "CREATE ROLE x SUPERUSER", "42501", "must be superuser to create superusers")
	wantExecCode(t, plain, "ALTER ROLE plain CREATEDB", "42501", "permission denied")
	wantExecCode(t, plain, "ALTER ROLE plain PASSWORD 'q' VALID UNTIL 'infinity'", "42501", "permission denied")
	wantExecCode(t, plain, "ALTER ROLE victim PASSWORD 'q'", "42501", "permission denied")
	wantExecCode(t, plain, "DROP ROLE victim", "42501", "permission denied to drop role")
	wantExecCode(t, plain, "ALTER ROLE victim RENAME TO v2", "42501", "permission denied to rename role")
	roleExec(t, plain, "ALTER ROLE CURRENT_USER PASSWORD 'q'") // one's own password: allowed
	rs.wantLoginCode("plain", "p", "28P01")
	rs.mustLogin("plain", "q")

	mgr := rs.mustLogin("mgr", "m")
	roleExec(t, mgr, "CREATE ROLE made LOGIN PASSWORD 'x'")
	roleExec(t, mgr, "ALTER ROLE victim PASSWORD 'w' CREATEDB")
	rs.mustLogin("victim", "w")
	roleExec(t, mgr, "ALTER ROLE made RENAME TO made2")
	roleExec(t, mgr, "DROP ROLE made2")
	wantExecCode(t, mgr, "CREATE ROLE x SUPERUSER", "42501", "must be superuser to create superusers")
	wantExecCode(t, mgr, "ALTER ROLE su2 PASSWORD 'x'", "42501", "must be superuser to alter superuser roles or change superuser attribute")
	wantExecCode(t, mgr, "ALTER ROLE victim NOSUPERUSER", "42501", "must be superuser to alter superuser roles or change superuser attribute")
	wantExecCode(t, mgr, "DROP ROLE su2", "42501", "must be superuser to drop superusers")
	wantExecCode(t, mgr, "ALTER ROLE su2 RENAME TO x", "42501", "must be superuser to rename superusers")
	wantExecCode(t, mgr, "DROP ROLE mgr", "55006", "current user cannot be dropped")

	// A superuser other than the bootstrap one can do it all.
	su2 := rs.mustLogin("su2", "s")
	roleExec(t, su2, "ALTER ROLE mgr NOCREATEROLE")
	wantExecCode(t, mgr, "CREATE ROLE y", "42501", "permission denied to create role") // privileges are read per statement
	roleExec(t, su2, "DROP ROLE plain")
	// The session of a dropped role keeps running but has no privileges.
	wantExecCode(t, plain, "ALTER ROLE CURRENT_USER PASSWORD 'z'", "42704", `role "plain" does not exist`)
	roleExec(t, su2, "ALTER ROLE admin PASSWORD 'new'")
	rs.mustLogin("admin", "new")
}

// Without authentication every user name is trusted from loopback and one
// that is no role acts as a superuser, as before roles existed; a name that
// is a role gets that role's attributes.
func TestRolesWithoutAuthentication(t *testing.T) {
	url := startServer(t)
	c := connect(t, url, pgx.QueryExecModeCacheStatement)
	ctx := context.Background()
	if got := c.PgConn().ParameterStatus("is_superuser"); got != "on" {
		t.Fatalf("is_superuser %q", got)
	}
	if _, err := c.Exec(ctx, "CREATE ROLE worker LOGIN"); err != nil {
		t.Fatal(err)
	}
	w := connect(t, strings.Replace(url, "tester@", "worker@", 1), pgx.QueryExecModeSimpleProtocol)
	if got := w.PgConn().ParameterStatus("is_superuser"); got != "off" {
		t.Fatalf("worker is_superuser %q", got)
	}
	if _, err := w.Exec(ctx, "CREATE ROLE x"); pgCode(err) != "42501" {
		t.Fatalf("worker CREATE ROLE: %v", err)
	}
	// The bootstrap superuser exists.
	if _, err := c.Exec(ctx, "ALTER ROLE mvserver PASSWORD 'x'"); err != nil {
		t.Fatal(err)
	}
}
