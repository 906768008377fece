package session_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Privileges: a role that is not a superuser reaches only what it owns or
// was granted; views read with their owner's rights; REFRESH needs
// MAINTAIN (GRANT REFRESH); DDL on an object needs its ownership.
func TestPrivileges(t *testing.T) {
	url := startServer(t)
	ctx := context.Background()
	as := func(user string) *pgx.Conn {
		return connect(t, strings.Replace(url, "tester@", user+"@", 1), pgx.QueryExecModeSimpleProtocol)
	}
	admin := as("tester") // no role: a superuser while authentication is off
	exec := func(c *pgx.Conn, q string, want string) {
		t.Helper()
		_, err := c.Exec(ctx, q)
		if got := pgCode(err); got != want {
			t.Fatalf("%s: got %q (%v), want %q", q, got, err, want)
		}
	}
	for _, q := range []string{
		"CREATE ROLE alice LOGIN",
		"CREATE ROLE bob LOGIN CREATEDB",
		"CREATE TABLE t (k INT PRIMARY KEY, v TEXT)",
		"INSERT INTO t VALUES (1, 'a'), (2, 'b')",
		"CREATE VIEW v AS SELECT k FROM t",
		"CREATE MATERIALIZED VIEW m AS SELECT count(*) AS n FROM t",
	} {
		exec(admin, q, "")
	}
	alice, bob := as("alice"), as("bob")

	exec(alice, "SELECT * FROM t", "42501")
	exec(alice, "INSERT INTO t VALUES (3, 'c')", "42501")
	has := func(c *pgx.Conn, q string) bool {
		t.Helper()
		var b bool
		if err := c.QueryRow(ctx, q).Scan(&b); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return b
	}
	if has(alice, "SELECT has_table_privilege('t', 'SELECT')") || !has(admin, "SELECT has_table_privilege('alice', 'v', 'SELECT') = false") {
		t.Fatal("has_table_privilege: alice may read t before any grant")
	}
	exec(admin, "GRANT SELECT ON t TO alice", "")
	if !has(alice, "SELECT has_table_privilege('t', 'select')") || has(admin, "SELECT has_table_privilege('alice', 't'::regclass, 'INSERT, UPDATE')") {
		t.Fatal("has_table_privilege after GRANT SELECT: want SELECT only")
	}
	exec(alice, "SELECT * FROM t", "")
	exec(alice, "INSERT INTO t VALUES (3, 'c')", "42501")
	exec(alice, "UPDATE t SET v = 'x' WHERE k = 1", "42501")
	exec(admin, "GRANT INSERT, UPDATE ON TABLE t TO alice", "")
	exec(alice, "INSERT INTO t VALUES (3, 'c')", "")
	exec(alice, "UPDATE t SET v = 'x' WHERE k = 1", "")
	exec(alice, "DELETE FROM t WHERE k = 3", "42501")
	exec(alice, "TRUNCATE t", "42501")

	// A view runs with its owner's rights: granting the view is enough.
	exec(admin, "REVOKE SELECT ON t FROM alice", "")
	exec(alice, "SELECT * FROM t", "42501")
	exec(alice, "SELECT * FROM v", "42501")
	exec(admin, "GRANT SELECT ON v TO alice", "")
	exec(alice, "SELECT * FROM v", "")
	exec(alice, "SELECT * FROM v JOIN t USING (k)", "42501")

	exec(alice, "REFRESH MATERIALIZED VIEW m", "42501")
	exec(admin, "GRANT REFRESH ON m TO alice", "")
	exec(alice, "REFRESH MATERIALIZED VIEW m", "")
	exec(alice, "SELECT * FROM m", "42501")

	// DDL needs ownership; creating needs CREATE on the schema (public's
	// is the bootstrap superuser's, as in PostgreSQL 15). A GRANT by a
	// role that holds privileges but not ownership changes nothing, with
	// a WARNING; by a role with none it fails.
	exec(alice, "DROP TABLE t", "42501")
	exec(alice, "ALTER TABLE t ADD COLUMN z INT", "42501")
	exec(alice, "GRANT SELECT ON t TO alice", "")
	exec(alice, "SELECT * FROM t", "42501")
	exec(bob, "GRANT SELECT ON t TO bob", "42501")
	exec(alice, "CREATE TABLE mine (a INT)", "42501")
	exec(bob, "CREATE TABLE bt (a INT PRIMARY KEY)", "42501")
	exec(admin, "GRANT CREATE ON SCHEMA public TO bob", "")
	exec(bob, "CREATE TABLE bt (a INT PRIMARY KEY)", "")
	exec(bob, "INSERT INTO bt VALUES (1)", "")
	exec(alice, "SELECT * FROM bt", "42501")
	exec(bob, "GRANT SELECT ON bt TO PUBLIC", "")
	exec(alice, "SELECT * FROM bt", "")
	exec(bob, "SELECT * FROM t", "42501")
	exec(admin, "DROP TABLE bt", "") // a superuser may

	exec(admin, "GRANT SELECT ON t TO nobody", "42704")
	exec(admin, "GRANT USAGE ON t TO alice", "0LP01")

	var acl string
	if err := admin.QueryRow(ctx, "SELECT relacl::text FROM pg_class WHERE relname = 'm'").Scan(&acl); err != nil {
		t.Fatal(err)
	}
	if want := "{mvserver=arwdDm/mvserver,alice=m/mvserver}"; acl != want {
		t.Errorf("relacl of m = %s, want %s", acl, want)
	}
}

// What PostgreSQL 15 answers with a WARNING rather than an error: a GRANT
// or REVOKE by a role that holds privileges on the object but does not
// own it changes nothing; VACUUM skips the tables the role does not own.
// With authentication on, as a deployment runs.
func TestPrivilegeWarnings(t *testing.T) {
	rs := startRoleServer(t, "host all all 127.0.0.1/32 scram-sha-256\n")
	admin := rs.mustLogin("admin", "adminpw")
	roleExec(t, admin, "CREATE ROLE alice LOGIN PASSWORD 'a1'")
	roleExec(t, admin, "CREATE ROLE bob LOGIN PASSWORD 'b1'")
	roleExec(t, admin, "CREATE TABLE t (k INT)")
	roleExec(t, admin, "GRANT SELECT ON t TO alice")
	alice := rs.mustLogin("alice", "a1")
	for _, c := range []struct{ sql, notice string }{
		{"GRANT SELECT ON t TO bob", `no privileges were granted for "t"`},
		{"REVOKE SELECT ON t FROM alice", `no privileges could be revoked for "t"`},
		{"VACUUM t", `skipping "t" --- only table or database owner can vacuum it`},
		{"VACUUM (VERBOSE) t", `skipping "t" --- only table or database owner can vacuum it`},
	} {
		roleExec(t, alice, c.sql)
		if got := alice.takeNotices(); len(got) != 1 || got[0] != c.notice {
			t.Errorf("%s: notices %q, want %q", c.sql, got, c.notice)
		}
	}
	if got := queryString(t, admin, "SELECT relacl::text FROM pg_class WHERE relname = 't'"); got != "{admin=arwdDm/admin,alice=r/admin}" {
		t.Errorf("relacl %s: the warnings changed the grants", got)
	}
	wantExecCode(t, rs.mustLogin("bob", "b1"), "GRANT SELECT ON t TO bob", "42501", "permission denied for table t")
	// An owner of objects cannot be dropped; what it owns is listed.
	roleExec(t, admin, "ALTER TABLE t OWNER TO bob")
	wantExecCode(t, admin, "DROP ROLE bob", "2BP01", `role "bob" cannot be dropped because some objects depend on it`)
}
