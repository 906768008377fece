//go:build tikv

package app

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// startShared starts n servers on one named mock cluster, as n processes
// on one TiKV cluster.
func startShared(t *testing.T, n int) []*pgx.Conn {
	t.Helper()
	conns := make([]*pgx.Conn, n)
	for i := range conns {
		_, conns[i] = startTestServer(t, Config{Store: "tikvmock://" + t.Name()})
	}
	return conns
}

func queryInt(t *testing.T, c *pgx.Conn, q string) int64 {
	t.Helper()
	var v int64
	if err := c.QueryRow(context.Background(), q).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

// TestSharedCatalog: a catalog change one server makes (CREATE, ALTER,
// DROP of a table and a view) is seen by the next statement on another
// server of the same store.
func TestSharedCatalog(t *testing.T) {
	c := startShared(t, 2)
	a, b := c[0], c[1]
	ctx := context.Background()
	// B reads the catalog first, so that it has one cached.
	if n := queryInt(t, b, "SELECT count(*) FROM pg_class WHERE relname = 't'"); n != 0 {
		t.Fatalf("t before CREATE: %d", n)
	}
	mustExec(t, a, "CREATE TABLE t (k int PRIMARY KEY, v int)")
	mustExec(t, a, "INSERT INTO t VALUES (1, 10), (2, 20)")
	if n := queryInt(t, b, "SELECT sum(v) FROM t"); n != 30 {
		t.Fatalf("B: sum(v) = %d, want 30", n)
	}
	mustExec(t, b, "INSERT INTO t VALUES (3, 30)")
	if n := queryInt(t, a, "SELECT sum(v) FROM t"); n != 60 {
		t.Fatalf("A: sum(v) = %d, want 60", n)
	}
	mustExec(t, a, "ALTER TABLE t ADD COLUMN w int DEFAULT 7")
	if n := queryInt(t, b, "SELECT sum(w) FROM t"); n != 21 {
		t.Fatalf("B after ALTER: sum(w) = %d, want 21", n)
	}
	mustExec(t, a, "CREATE MATERIALIZED VIEW mv AS SELECT count(*) AS n, sum(v) AS s FROM t")
	if n := queryInt(t, b, "SELECT s FROM mv"); n != 60 {
		t.Fatalf("B reads A's view: %d, want 60", n)
	}
	mustExec(t, b, "INSERT INTO t VALUES (4, 40)")
	mustExec(t, b, "REFRESH MATERIALIZED VIEW mv")
	if n := queryInt(t, a, "SELECT s FROM mv"); n != 100 {
		t.Fatalf("A reads B's refresh: %d, want 100", n)
	}
	mustExec(t, a, "INSERT INTO t VALUES (5, 50)")
	mustExec(t, a, "REFRESH MATERIALIZED VIEW mv")
	if n := queryInt(t, b, "SELECT s FROM mv"); n != 150 {
		t.Fatalf("B reads A's refresh: %d, want 150", n)
	}
	mustExec(t, a, "DROP MATERIALIZED VIEW mv")
	mustExec(t, a, "DROP TABLE t")
	if _, err := b.Exec(ctx, "SELECT * FROM t"); err == nil {
		t.Fatal("B reads t after A dropped it")
	}
	mustExec(t, b, "CREATE TABLE t (k text PRIMARY KEY)")
	mustExec(t, b, "INSERT INTO t VALUES ('x')")
	if n := queryInt(t, a, "SELECT count(*) FROM t WHERE k = 'x'"); n != 1 {
		t.Fatalf("A reads B's new t: %d", n)
	}
}
