//go:build crash

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCrashDuringStagedInsert kills the server at the kill points of a big
// INSERT … SELECT (and a CREATE TABLE AS) whose rows are staged on disk
// and ingested at commit: after a run is written, just before the ingest,
// and just after it. Killed before the ingest, the table holds its
// previous content whole and start-up deletes the staged files (it says
// so); killed after it, the table holds every new row. Either way the
// unique index agrees with the rows, an incremental refresh of a view on
// the table equals its full refresh, and the statement runs again.
func TestCrashDuringStagedInsert(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--stage-threshold", "1000"}
	p := startServer(t, dir, args)
	conn := p.connect(t)
	const n = 20000
	mustExec(t, conn, `CREATE TABLE t (id INT PRIMARY KEY, v INT)`)
	mustExec(t, conn, `CREATE UNIQUE INDEX t_v ON t (v)`)
	mustExec(t, conn, fmt.Sprintf(`INSERT INTO t SELECT i, -i FROM generate_series(1, %d) AS i`, n))
	mustExec(t, conn, `CREATE MATERIALIZED VIEW m AS SELECT id % 10 AS k, count(*) AS c, sum(v) AS s FROM t GROUP BY 1`)
	conn.Close(context.Background())
	p.signal(syscall.SIGKILL)
	<-p.exited

	stageDir := filepath.Join(dir, "tmp", "storage-stage")
	reclaimed := "deleted the staged files of transactions a crash interrupted"
	rows := int64(n)
	// On TiKV the staged rows are written as a new generation of the
	// table, switched to by a small commit (storage/stage_generation.go):
	// killed before the switch or after it.
	// Each point with what start-up says it deleted.
	rewrote := "deleted the new content of rewrites a crash interrupted"
	points := []struct{ name, deleted string }{{"stage-spill:3", reclaimed}, {"stage-ingest:1", reclaimed}, {"stage-ingested:1", reclaimed}}
	if testStore != "" {
		points = []struct{ name, deleted string }{{"stage-spill:3", reclaimed}, {"rewrite-switch:1", rewrote}, {"rewrite-switched:1", ""}}
	}
	committed := points[2].name
	for round, pt := range points {
		point := pt.name
		from := int64(n*(round+1) + 1)
		stmt := fmt.Sprintf(`INSERT INTO t SELECT i, -i FROM generate_series(%d, %d) AS i`, from, from+n-1)
		p := startServer(t, dir, args, "MVSERVER_KILL_POINT="+point)
		c := p.connect(t)
		if _, err := c.Exec(context.Background(), stmt); err == nil {
			t.Fatalf("%s: the INSERT was acknowledged before the kill point", point)
		}
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the server did not kill itself", point)
		}
		p = startServer(t, dir, args)
		if !strings.Contains(p.log.String(), pt.deleted) {
			t.Fatalf("%s: start-up did not say %q:\n%s", point, pt.deleted, p.log.String())
		}
		if names, _ := os.ReadDir(stageDir); len(names) != 0 {
			t.Fatalf("%s: start-up left %d staged files", point, len(names))
		}
		c = p.connect(t)
		want := rows
		if point == committed {
			want += n // the ingest (the switch) is the commit point
		}
		if got := queryInt(t, c, `SELECT count(*) FROM t`); got != want {
			t.Fatalf("%s: after the crash t holds %d rows, want %d", point, got, want)
		}
		if got := queryInt(t, c, `SELECT count(*) FROM t WHERE v < 0`); got != want {
			t.Fatalf("%s: the unique index finds %d rows", point, got)
		}
		if want == rows {
			mustExec(t, c, stmt)
		}
		rows += n
		if got := queryInt(t, c, `SELECT max(id) FROM t`); got != rows {
			t.Fatalf("%s: max(id) %d after the INSERT, want %d", point, got, rows)
		}
		mustExec(t, c, `REFRESH MATERIALIZED VIEW m`)
		inc := queryInt(t, c, `SELECT sum(c) FROM m`) + 7*queryInt(t, c, `SELECT sum(s) FROM m`)
		mustExec(t, c, `REFRESH MATERIALIZED VIEW m FULL`)
		if full := queryInt(t, c, `SELECT sum(c) FROM m`) + 7*queryInt(t, c, `SELECT sum(s) FROM m`); inc != full || queryInt(t, c, `SELECT sum(c) FROM m`) != rows {
			t.Fatalf("%s: the incremental refresh gave %d, the full one %d", point, inc, full)
		}
		c.Close(context.Background())
		p.signal(syscall.SIGKILL)
		<-p.exited
	}

	// A CREATE TABLE AS interrupted: no table, no leftovers; it runs again.
	p = startServer(t, dir, args, "MVSERVER_KILL_POINT=stage-spill:2")
	c := p.connect(t)
	if _, err := c.Exec(context.Background(), `CREATE TABLE t2 AS SELECT id, v FROM t`); err == nil {
		t.Fatal("the CREATE TABLE AS was acknowledged before the kill point")
	}
	<-p.exited
	p = startServer(t, dir, args)
	c = p.connect(t)
	if got := queryInt(t, c, `SELECT count(*) FROM pg_tables WHERE tablename = 't2'`); got != 0 {
		t.Fatal("a crashed CREATE TABLE AS left table t2")
	}
	mustExec(t, c, `CREATE TABLE t2 AS SELECT id, v FROM t`)
	if got := queryInt(t, c, `SELECT count(*) FROM t2`); got != rows {
		t.Fatalf("t2 holds %d rows, want %d", got, rows)
	}
	c.Close(context.Background())
}
