package session_test

import (
	"context"
	"testing"

	"github.com/mvserver/mvserver/app"
	"github.com/mvserver/mvserver/sql/session"
)

// query_memory_limit: shown in PostgreSQL's units, lowered by anyone,
// raised above the server's limit (or turned off with 0) by superusers
// only (42501 otherwise), and RESET to the server's.
func TestQueryMemoryLimitSetting(t *testing.T) {
	rs := startRoleServer(t, "")
	admin := rs.mustLogin("admin", "adminpw")
	roleExec(t, admin, `CREATE ROLE ann LOGIN PASSWORD 'annpw'`)
	ann := rs.mustLogin("ann", "annpw")
	ctx := context.Background()
	show := func(c *roleConn) string {
		t.Helper()
		var v string
		if err := c.QueryRow(ctx, `SHOW query_memory_limit`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	server := show(ann)
	if n, err := session.ParseMemory(server); err != nil || n != app.DefaultMemoryLimit() {
		t.Fatalf("default query_memory_limit %q (%v), want the server's %d bytes", server, err, app.DefaultMemoryLimit())
	}
	for in, want := range map[string]string{"'64MB'": "64MB", "2048": "2MB", "'1536kB'": "1536kB", "'1 GB'": "1GB"} {
		roleExec(t, ann, `SET query_memory_limit = `+in)
		if got := show(ann); got != want {
			t.Errorf("SET %s: shows %q, want %q", in, got, want)
		}
	}
	for _, bad := range []string{"'12 parsecs'", "'-1'", "'x'"} {
		if _, err := ann.Exec(ctx, `SET query_memory_limit = `+bad); pgCode(err) != "22023" {
			t.Errorf("SET %s: %v, want 22023", bad, err)
		}
	}
	for _, raise := range []string{"'0'", "'4096TB'"} {
		if _, err := ann.Exec(ctx, `SET query_memory_limit = `+raise); pgCode(err) != "42501" {
			t.Errorf("ann SET %s: %v, want 42501", raise, err)
		}
		roleExec(t, admin, `SET query_memory_limit = `+raise)
	}
	roleExec(t, ann, `RESET query_memory_limit`)
	if got := show(ann); got != server {
		t.Errorf("after RESET: %q, want %q", got, server)
	}
}
