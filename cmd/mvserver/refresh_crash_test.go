package main

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCrashDuringRefresh kills the server with SIGKILL while a full refresh
// of a materialized view runs: after restart the view is at its previous
// refresh or, if the REFRESH was acknowledged, at the new one — never a
// mix — and the next REFRESH succeeds and equals the query (R-X2, R-M5).
func TestCrashDuringRefresh(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	dir := t.TempDir()
	p := startServer(t, dir, nil)
	conn := p.connect(t)
	const n = 20000
	mustExec(t, conn, `CREATE TABLE t (id INT PRIMARY KEY, gen INT)`)
	for base := 0; base < n; base += 2000 {
		var sb strings.Builder
		sb.WriteString(`INSERT INTO t VALUES `)
		for i := base; i < base+2000; i++ {
			if i > base {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "(%d, 0)", i)
		}
		mustExec(t, conn, sb.String())
	}
	mustExec(t, conn, `CREATE MATERIALIZED VIEW m AS SELECT id, gen FROM t`)
	conn.Close(context.Background())
	viewGen := int64(0) // the generation the view is known to hold at least
	for round := 1; round <= 3; round++ {
		conn := p.connect(t)
		mustExec(t, conn, fmt.Sprintf(`UPDATE t SET gen = %d`, round))
		done := make(chan error, 1)
		go func() {
			_, err := conn.Exec(context.Background(), `REFRESH MATERIALIZED VIEW m`)
			done <- err
		}()
		time.Sleep(time.Duration(rng.Intn(60)) * time.Millisecond) // the kill moment, not a wait for a condition
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		acked := <-done == nil
		<-p.exited
		p = startServer(t, dir, nil)
		c2 := p.connect(t)
		cnt := queryInt(t, c2, `SELECT count(*) FROM m`)
		lo := queryInt(t, c2, `SELECT min(gen) FROM m`)
		hi := queryInt(t, c2, `SELECT max(gen) FROM m`)
		if cnt != n || lo != hi {
			t.Fatalf("round %d: view is a mix after the crash: %d rows, gen %d..%d", round, cnt, lo, hi)
		}
		if acked && lo != int64(round) {
			t.Fatalf("round %d: the acknowledged refresh is lost: view at gen %d", round, lo)
		}
		if lo != int64(round) && lo != viewGen {
			t.Fatalf("round %d: view at gen %d, want %d or %d", round, lo, viewGen, round)
		}
		t.Logf("round %d: refresh acknowledged %v, view at gen %d after restart", round, acked, lo)
		mustExec(t, c2, `REFRESH MATERIALIZED VIEW m`)
		if g := queryInt(t, c2, `SELECT min(gen) FROM m`); g != int64(round) || queryInt(t, c2, `SELECT max(gen) FROM m`) != int64(round) {
			t.Fatalf("round %d: after REFRESH the view is not at gen %d", round, round)
		}
		viewGen = int64(round)
		c2.Close(context.Background())
	}
}
