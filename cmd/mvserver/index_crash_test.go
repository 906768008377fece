//go:build crash

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCrashDuringIndexBuild kills the server in the commit of a CREATE
// INDEX whose entries are ingested as an SSTable (storage's
// index_ingest.go): just before the ingest and just after it. Killed
// before, the index does not exist (neither in the catalog nor on disk),
// start-up deletes the files the build left, and the statement runs
// again; killed after, the index exists whole. Either way CHECK
// MATERIALIZED VIEW finds the view's indexes agree with its rows, before
// and after an incremental refresh writes through them.
func TestCrashDuringIndexBuild(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--stage-threshold", "1000"}
	p := startServer(t, dir, args)
	conn := p.connect(t)
	const n = 20000
	mustExec(t, conn, `CREATE TABLE t (id INT PRIMARY KEY, v INT)`)
	mustExec(t, conn, `INSERT INTO t SELECT i, i % 100 FROM generate_series(1, 20000) AS i`)
	mustExec(t, conn, `CREATE MATERIALIZED VIEW m AS SELECT id, v AS g FROM t`)
	conn.Close(context.Background())
	p.signal(syscall.SIGKILL)
	<-p.exited

	stageDir := filepath.Join(dir, "tmp", "storage-stage")
	reclaimed := "deleted the staged files of transactions a crash interrupted"
	rows := int64(n)
	for _, point := range []string{"stage-ingest:1", "stage-ingested:1"} {
		p := startServer(t, dir, args, "MVSERVER_KILL_POINT="+point)
		c := p.connect(t)
		if _, err := c.Exec(context.Background(), `CREATE INDEX m_g ON m (g)`); err == nil {
			t.Fatalf("%s: CREATE INDEX was acknowledged before the kill point", point)
		}
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the server did not kill itself", point)
		}
		p = startServer(t, dir, args)
		// The ingest moves its files into Pebble's directory: after it
		// nothing is left to delete.
		if point == "stage-ingest:1" && !strings.Contains(p.log.String(), reclaimed) {
			t.Fatalf("%s: start-up did not delete the files of the build:\n%s", point, p.log.String())
		}
		if names, _ := os.ReadDir(stageDir); len(names) != 0 {
			t.Fatalf("%s: start-up left %d staged files", point, len(names))
		}
		c = p.connect(t)
		want := int64(0)
		if point == "stage-ingested:1" {
			want = 1 // the ingest is the commit point
		}
		if got := queryInt(t, c, `SELECT count(*) FROM pg_indexes WHERE indexname = 'm_g'`); got != want {
			t.Fatalf("%s: after the crash pg_indexes lists m_g %d times, want %d", point, got, want)
		}
		checkViews(t, p, 0, "m")
		if want == 0 {
			mustExec(t, c, `CREATE INDEX m_g ON m (g)`)
		}
		if got := queryInt(t, c, `SELECT count(*) FROM m WHERE g = 7`); got != rows/100 {
			t.Fatalf("%s: g = 7 finds %d rows, want %d", point, got, rows/100)
		}
		mustExec(t, c, `INSERT INTO t SELECT i, i % 100 FROM generate_series($1::int, $2::int) AS i`, rows+1, rows+100)
		rows += 100
		mustExec(t, c, `REFRESH MATERIALIZED VIEW m`)
		checkViews(t, p, 0, "m")
		mustExec(t, c, `DROP INDEX m_g`)
		c.Close(context.Background())
		p.signal(syscall.SIGKILL)
		<-p.exited
	}
}
