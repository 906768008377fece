//go:build tikv

package app

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
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

// holders lists the servers holding view's refresh-runner lease.
func holders(srvs []*Server, view uint32) []int {
	var out []int
	for i, s := range srvs {
		if _, ok := s.sched.shared.lease(view); ok {
			out = append(out, i)
		}
	}
	return out
}

// waitFor polls cond every 20ms until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > d {
			t.Fatalf("after %s: %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// TestSharedThreeServers: three servers on one store. B holds the
// triggered view's refresh-runner lease; a write on A is refreshed by B
// and read on C. Then B dies (stops renewing, releases nothing): within
// the lease time another server takes the lease and refreshes A's next
// write, and B's refresh with its old lease is fenced off.
func TestSharedThreeServers(t *testing.T) {
	const lease = time.Second
	cfg := Config{Store: "tikvmock://" + t.Name(), TriggerMinInterval: 10 * time.Millisecond, RefreshLease: lease}
	ctx := context.Background()
	srvB, b := startTestServer(t, cfg)
	mustExec(t, b, "CREATE TABLE src (k int PRIMARY KEY, v int)")
	mustExec(t, b, "CREATE MATERIALIZED VIEW total TRIGGER ON UPDATE AS SELECT count(*) AS n, coalesce(sum(v), 0) AS s FROM src")
	view := uint32(queryInt(t, b, "SELECT oid::int8 FROM pg_class WHERE relname = 'total'"))
	waitFor(t, 2*lease, "B holds the view's lease", func() bool { _, ok := srvB.sched.shared.lease(view); return ok })
	srvA, a := startTestServer(t, cfg)
	srvC, c := startTestServer(t, cfg)
	srvs := []*Server{srvA, srvB, srvC}
	time.Sleep(lease / 2) // A and C have tried to take the lease
	if h := holders(srvs, view); len(h) != 1 || h[0] != 1 {
		t.Fatalf("lease holders %v, want B alone", h)
	}

	mustExec(t, a, "INSERT INTO src VALUES (1, 10), (2, 20)")
	waitFor(t, 5*lease, "C reads the refresh of A's write", func() bool { return queryInt(t, c, "SELECT s FROM total") == 30 })

	// B dies: it renews nothing more and releases nothing.
	srvB.sched.shared.stop(false)
	old, _ := srvB.sched.shared.lease(view)
	died := time.Now()
	mustExec(t, a, "INSERT INTO src VALUES (3, 30)")
	took := waitFor(t, 3*lease, "another server refreshes A's write after B died", func() bool { return queryInt(t, c, "SELECT s FROM total") == 60 })
	h := holders([]*Server{srvA, srvC}, view)
	if len(h) != 1 {
		t.Fatalf("after B died, lease holders among A and C: %v", h)
	}
	if l, _ := []*Server{srvA, srvC}[h[0]].sched.shared.lease(view); l.Token <= old.Token {
		t.Fatalf("new holder's token %d, B's %d: want a larger one", l.Token, old.Token)
	}
	t.Logf("refreshed by another server %s after B died (lease %s)", took, lease)
	if since := time.Since(died); since > lease+lease/2+time.Second {
		t.Errorf("takeover took %s, lease %s", since, lease)
	}

	// B, paused rather than dead, still believes it holds the lease: its
	// refresh must not commit.
	mustExec(t, a, "INSERT INTO src VALUES (4, 40)")
	res, err := srvB.sched.runner.Refresh(ctx, view, refresh.Options{Cause: "TRIGGER", Env: &types.Env{Loc: time.UTC}, Lease: &old})
	if !errors.Is(err, storage.ErrLeaseLost) {
		t.Fatalf("B's refresh with its lost lease: %v %v, want ErrLeaseLost", res, err)
	}
	waitFor(t, 3*lease, "the new holder refreshes the last write", func() bool { return queryInt(t, c, "SELECT s FROM total") == 100 })
	if n := queryInt(t, b, "SELECT n FROM total"); n != 4 {
		t.Fatalf("B reads n = %d, want 4", n)
	}
}

// TestSharedNotify: a NOTIFY committed on one server reaches a listener
// on another (and a listener on its own), once each.
func TestSharedNotify(t *testing.T) {
	c := startShared(t, 2)
	a, b := c[0], c[1]
	ctx := context.Background()
	mustExec(t, a, "LISTEN ch")
	mustExec(t, b, "LISTEN ch")
	mustExec(t, a, "NOTIFY ch, 'from a'")
	mustExec(t, b, "BEGIN")
	mustExec(t, b, "NOTIFY ch, 'from b'")
	mustExec(t, b, "COMMIT")
	for name, conn := range map[string]*pgx.Conn{"A": a, "B": b} {
		got := map[string]int{}
		for len(got) < 2 {
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			n, err := conn.WaitForNotification(wctx)
			cancel()
			if err != nil {
				t.Fatalf("%s: %v (got %v)", name, err, got)
			}
			got[n.Payload]++
		}
		if got["from a"] != 1 || got["from b"] != 1 {
			t.Fatalf("%s got %v", name, got)
		}
		// No duplicate arrives later.
		wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if err == nil {
			t.Fatalf("%s: a further notification %q", name, n.Payload)
		}
	}
}

// TestSharedFullRefreshGeneration: a full refresh past the rewrite
// threshold writes the view as a new generation on one server; the other
// servers read the new content, and a second rewrite from another server
// switches again.
func TestSharedFullRefreshGeneration(t *testing.T) {
	cfg := Config{Store: "tikvmock://" + t.Name(), RewriteThreshold: 10}
	_, a := startTestServer(t, cfg)
	_, b := startTestServer(t, cfg)
	mustExec(t, a, "CREATE TABLE src (k int PRIMARY KEY, v int)")
	mustExec(t, a, "INSERT INTO src SELECT g, g % 7 FROM generate_series(1, 200) g")
	mustExec(t, a, "CREATE MATERIALIZED VIEW copy AS SELECT k, v FROM src")
	mustExec(t, b, "INSERT INTO src SELECT g, 1 FROM generate_series(201, 300) g")
	mustExec(t, b, "REFRESH MATERIALIZED VIEW copy FULL")
	for name, c := range map[string]*pgx.Conn{"A": a, "B": b} {
		if n := queryInt(t, c, "SELECT count(*) FROM copy"); n != 300 {
			t.Fatalf("%s reads %d rows of the view after B's full refresh, want 300", name, n)
		}
	}
	mustExec(t, a, "DELETE FROM src WHERE k > 250")
	mustExec(t, a, "REFRESH MATERIALIZED VIEW copy FULL")
	if n := queryInt(t, b, "SELECT count(*) FROM copy"); n != 250 {
		t.Fatalf("B reads %d rows of the view after A's full refresh, want 250", n)
	}
}
