//go:build clients

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// psql (libpq) against the real binary: SCRAM-SHA-256-PLUS over TLS with a
// verified certificate, MD5 and cleartext per HBA rule, plain connections
// refused, and libpq's own reading of a wrong password. Run with
// `go test -tags clients ./cmd/mvserver/ -run Psql`; it fails, it does not
// skip, without psql (Debian's postgresql-client).
func TestPsqlAuth(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Fatalf("psql not found (install postgresql-client): %v", err)
	}
	dir := t.TempDir()
	cert, key := writeTestCert(t, dir)
	hba := filepath.Join(dir, "pg_hba.conf")
	rules := "hostssl all md5user 127.0.0.1/32 md5\n" +
		"hostssl all pwuser  127.0.0.1/32 password\n" +
		"hostssl all all     127.0.0.1/32 scram-sha-256\n"
	if err := os.WriteFile(hba, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startAuthed(t, []string{"--data-dir", filepath.Join(dir, "data"), "--hba", hba, "--tls-cert", cert, "--tls-key", key},
		[]string{"MVSERVER_SUPERUSER_PASSWORD=topsecret"}, "mvserver", "topsecret")
	host, port, _ := strings.Cut(p.addr, ":")

	run := func(user, password, conn, sql string) (string, error) {
		t.Helper()
		cmd := exec.Command(psql, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1",
			"host="+host+" port="+port+" dbname=mvserver user="+user+" "+conn, "-c", sql)
		cmd.Env = append(cleanEnv(), "PGPASSWORD="+password, "PGCONNECT_TIMEOUT=10")
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	must := func(user, password, conn, sql, want string) {
		t.Helper()
		out, err := run(user, password, conn, sql)
		if err != nil || out != want {
			t.Fatalf("psql %s %s %q: %v\n%s\nwant %q", user, conn, sql, err, out, want)
		}
	}
	refused := func(user, password, conn, want string) {
		t.Helper()
		out, err := run(user, password, conn, "SELECT 1")
		if err == nil || !strings.Contains(out, want) {
			t.Fatalf("psql %s %s: %v\n%s\nwant an error with %q", user, conn, err, out, want)
		}
	}

	tlsVerified := "sslmode=verify-full sslrootcert=" + cert + " channel_binding=require"
	must("mvserver", "topsecret", tlsVerified, "SHOW is_superuser", "on")
	// Passwords are stored only as SCRAM verifiers: md5user's md5 rule
	// runs a SCRAM exchange, as PostgreSQL does for a SCRAM-stored password.
	must("mvserver", "topsecret", "sslmode=require",
		"CREATE USER app PASSWORD 'apppw'; CREATE USER md5user PASSWORD 'm'; CREATE USER pwuser PASSWORD 'p'", "CREATE ROLE\nCREATE ROLE\nCREATE ROLE")
	if out, err := run("mvserver", "topsecret", "sslmode=require", "SET password_encryption = 'md5'"); err == nil || !strings.Contains(out, "only as SCRAM-SHA-256 verifiers") {
		t.Fatalf("SET password_encryption = 'md5': %v\n%s", err, out)
	}
	must("app", "apppw", tlsVerified, "SHOW session_authorization", "app")
	must("app", "apppw", "sslmode=require", "SHOW is_superuser", "off")
	must("md5user", "m", "sslmode=require", "SELECT 1", "1")
	must("pwuser", "p", "sslmode=require", "SELECT 1", "1")
	refused("app", "wrong", "sslmode=require", `password authentication failed for user "app"`)
	refused("md5user", "wrong", "sslmode=require", `password authentication failed for user "md5user"`)
	refused("app", "apppw", "sslmode=disable", `no pg_hba.conf entry for host "127.0.0.1", user "app", database "mvserver", no encryption`)
	refused("nobody", "x", "sslmode=require", `password authentication failed for user "nobody"`)
}
