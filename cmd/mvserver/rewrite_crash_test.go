//go:build crash

package main

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCrashDuringRewrite kills the server at the kill points of a view's
// rewrite (a full refresh or CREATE written as a new generation): after a
// batch of the new content, and just before the switch. After the restart
// the view holds its previous content whole, start-up deleted the new
// content (it says so in the log), and the next REFRESH … FULL succeeds.
func TestCrashDuringRewrite(t *testing.T) {
	dir := t.TempDir()
	// 1000-row chunks; no view is written as a difference.
	args := []string{"--rewrite-threshold", "1000", "--full-refresh-diff-limit", "-1"}
	p := startServer(t, dir, args)
	conn := p.connect(t)
	const n = 20000
	mustExec(t, conn, `CREATE TABLE t (id INT PRIMARY KEY, gen INT)`)
	mustExec(t, conn, fmt.Sprintf(`INSERT INTO t SELECT i, 0 FROM generate_series(1, %d) AS i`, n))
	mustExec(t, conn, `CREATE MATERIALIZED VIEW m AS SELECT id, gen FROM t`)
	mustExec(t, conn, `CREATE UNIQUE INDEX m_id ON m (id)`)
	conn.Close(context.Background())
	p.signal(syscall.SIGKILL)
	<-p.exited

	reclaimed := "deleted the new content of rewrites a crash interrupted"
	crash := func(point, stmt string) *proc {
		t.Helper()
		p := startServer(t, dir, args, "MVSERVER_KILL_POINT="+point)
		c := p.connect(t)
		if _, err := c.Exec(context.Background(), stmt); err == nil {
			t.Fatalf("%s: %s was acknowledged before the kill point", point, stmt)
		}
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the server did not kill itself", point)
		}
		p = startServer(t, dir, args)
		if !strings.Contains(p.log.String(), reclaimed) {
			t.Fatalf("%s: start-up did not delete the interrupted rewrite:\n%s", point, p.log.String())
		}
		return p
	}
	gen := 0
	for round, point := range []string{"rewrite-chunk:3", "rewrite-switch:1", "rewrite-chunk:1"} {
		p := startServer(t, dir, args)
		c := p.connect(t)
		mustExec(t, c, fmt.Sprintf(`UPDATE t SET gen = %d`, round+1))
		c.Close(context.Background())
		p.signal(syscall.SIGKILL)
		<-p.exited

		p = crash(point, `REFRESH MATERIALIZED VIEW m FULL`)
		c = p.connect(t)
		cnt, lo, hi := queryInt(t, c, `SELECT count(*) FROM m`), queryInt(t, c, `SELECT min(gen) FROM m`), queryInt(t, c, `SELECT max(gen) FROM m`)
		if cnt != n || lo != int64(gen) || hi != int64(gen) {
			t.Fatalf("%s: after the crash the view holds %d rows of gen %d..%d, want %d of gen %d", point, cnt, lo, hi, n, gen)
		}
		if got := queryInt(t, c, `SELECT gen FROM m WHERE id = 777`); got != int64(gen) {
			t.Fatalf("%s: the unique index finds gen %d", point, got)
		}
		mustExec(t, c, `REFRESH MATERIALIZED VIEW m FULL`)
		gen = round + 1
		if lo, hi := queryInt(t, c, `SELECT min(gen) FROM m`), queryInt(t, c, `SELECT max(gen) FROM m`); lo != int64(gen) || hi != int64(gen) || queryInt(t, c, `SELECT count(*) FROM m`) != n {
			t.Fatalf("%s: the refresh after the restart left gen %d..%d", point, lo, hi)
		}
		c.Close(context.Background())
		p.signal(syscall.SIGKILL)
		<-p.exited
	}

	// A CREATE interrupted: no view, no leftovers; the CREATE runs again.
	p = crash("rewrite-chunk:2", `CREATE MATERIALIZED VIEW m2 AS SELECT id, gen FROM t`)
	c := p.connect(t)
	if got := queryInt(t, c, `SELECT count(*) FROM pg_matviews WHERE matviewname = 'm2'`); got != 0 {
		t.Fatalf("a crashed CREATE left view m2")
	}
	mustExec(t, c, `CREATE MATERIALIZED VIEW m2 AS SELECT id, gen FROM t`)
	if got := queryInt(t, c, `SELECT count(*) FROM m2`); got != n {
		t.Fatalf("m2 holds %d rows", got)
	}
	c.Close(context.Background())
}
