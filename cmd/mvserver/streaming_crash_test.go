package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestStreamingCrashSIGKILL: a writer commits batches of rows to a stream
// while its streaming table is refreshed continuously — by TRIGGER ON UPDATE
// and by a session looping REFRESH STREAMING TABLE — and the server is
// killed with SIGKILL at a seeded random moment, for -crash.rounds rounds.
// After each restart, before any refresh, the streaming table holds exactly
// the stream's rows committed up to the version its checkpoint names (the
// appended rows and the checkpoint are one commit: R-ST2, R-X2), each once;
// the refresh after it brings in exactly the rest, each once.
//
// Run it repeatedly with: go test ./cmd/mvserver -run StreamingCrashSIGKILL -count=20
// Reproduce a seed with -crash.seed=N.
func TestStreamingCrashSIGKILL(t *testing.T) {
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (reproduce: go test ./cmd/mvserver -run StreamingCrashSIGKILL -crash.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x73747265616d))
	dir := t.TempDir()

	p := startServer(t, dir, nil)
	setup := p.connect(t)
	mustExec(t, setup, "CREATE TABLE src (id BIGINT PRIMARY KEY, grp INT NOT NULL, v BIGINT NOT NULL)")
	mustExec(t, setup, "CREATE TABLE grps (grp INT PRIMARY KEY, name STRING)")
	mustExec(t, setup, "INSERT INTO grps VALUES (0, 'zero'), (1, 'one'), (2, 'two')")
	mustExec(t, setup, "CREATE STREAMING TABLE st TRIGGER ON UPDATE AS SELECT s.id, g.name, s.v * 2 AS v2 FROM STREAM(src) s JOIN grps g ON g.grp = s.grp")
	setup.Close(context.Background())

	next := int64(1)
	for round := 1; round <= *crashRounds; round++ {
		next = streamingCrashRound(t, p, round, rng, next)
		if t.Failed() {
			return
		}
		p = startServer(t, dir, nil)
		conn := p.connect(t)
		verifyStreamingCrash(t, conn, round)
		conn.Close(context.Background())
		if t.Failed() {
			return
		}
	}
	p.signal(syscall.SIGTERM)
	if code := p.waitExit(exitTimeout); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0", code)
	}
}

// streamingCrashRound runs the writer and the refresher on p until a random
// number of batches were acknowledged, then SIGKILLs p after a random
// pause. It returns the next unused id.
func streamingCrashRound(t *testing.T, p *proc, round int, rng *rand.Rand, next int64) int64 {
	target := int64(10 + rng.IntN(200))
	jitter := time.Duration(rng.IntN(30_000)) * time.Microsecond
	writer := connectTo(t, p.addr, "mvserver", pgx.QueryExecModeSimpleProtocol)
	refresher := connectTo(t, p.addr, "mvserver", pgx.QueryExecModeExec)
	var killed atomic.Bool
	var acks atomic.Int64
	reached := make(chan struct{})
	var wg sync.WaitGroup
	wrng := rand.New(rand.NewPCG(rng.Uint64(), 1))
	ids := next
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			n := 1 + wrng.IntN(50)
			var vals []string
			for k := 0; k < n; k++ {
				vals = append(vals, fmt.Sprintf("(%d, %d, %d)", ids+int64(k), (ids+int64(k))%3, ids+int64(k)))
			}
			if _, err := writer.Exec(context.Background(), "INSERT INTO src VALUES "+strings.Join(vals, ", ")); err != nil {
				if !killed.Load() {
					t.Errorf("round %d: insert before the kill: %v", round, err)
				}
				return
			}
			ids += int64(n)
			if acks.Add(1) == target {
				close(reached)
			}
		}
	}()
	var refreshes atomic.Int64
	go func() {
		defer wg.Done()
		for {
			if _, err := refresher.Exec(context.Background(), "REFRESH STREAMING TABLE st"); err != nil {
				if !killed.Load() && pgCode(err) != "40001" {
					t.Errorf("round %d: refresh before the kill: %v", round, err)
				}
				if killed.Load() || pgCode(err) != "40001" {
					return
				}
			}
			refreshes.Add(1)
		}
	}()
	select {
	case <-reached:
	case <-time.After(60 * time.Second):
		t.Errorf("round %d: only %d of %d batches acknowledged within 60s", round, acks.Load(), target)
	}
	time.Sleep(jitter) // the seeded random kill moment, not a wait for readiness
	killed.Store(true)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	if code := p.waitExit(exitTimeout); code != -1 {
		t.Errorf("exit code %d after SIGKILL, want -1 (killed)", code)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(exitTimeout):
		t.Fatalf("clients still running %v after the server was killed", exitTimeout)
	}
	t.Logf("round %d: killed after %d acknowledged batches (+%v), %d manual refreshes", round, target, jitter, refreshes.Load())
	// Unacknowledged batches may or may not have committed: the next
	// round starts past every id this one tried.
	return ids + 100
}

var checkpointRE = regexp.MustCompile(`public\.src@v(\d+)`)

// verifyStreamingCrash checks st against src after a restart, then refreshes
// it and checks again.
func verifyStreamingCrash(t *testing.T, conn *pgx.Conn, round int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The trigger may refresh st right after the restart (no: it fires on
	// commits, and none happened yet), so the state read here is the one
	// the crash left: one transaction reads the checkpoint and the rows.
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	var ckpt int64 = -1
	rows, err := tx.Query(ctx, "DESCRIBE TABLE EXTENDED st")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		var v, c *string
		if err := rows.Scan(&k, &v, &c); err != nil {
			t.Fatal(err)
		}
		if k == "Stream Checkpoints" && v != nil {
			if m := checkpointRE.FindStringSubmatch(*v); m != nil {
				ckpt, _ = strconv.ParseInt(m[1], 10, 64)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if ckpt < 0 {
		t.Fatalf("after round %d: DESCRIBE EXTENDED st shows no checkpoint of src", round)
	}
	want := idsOf(t, tx, fmt.Sprintf("SELECT id FROM src WHERE _row_commit_version <= %d", ckpt))
	got := idsOf(t, tx, "SELECT id FROM st")
	compareIDs(t, fmt.Sprintf("after round %d, before refresh (checkpoint v%d)", round, ckpt), got, want)
	var bad int64
	if err := tx.QueryRow(ctx, "SELECT count(*) FROM st JOIN src ON src.id = st.id WHERE st.v2 <> src.v * 2").Scan(&bad); err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		t.Errorf("after round %d: %d rows of st do not match their source row", round, bad)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	mustExec(t, conn, "REFRESH STREAMING TABLE st")
	compareIDs(t, fmt.Sprintf("after round %d and a refresh", round), idsOf(t, conn, "SELECT id FROM st"), idsOf(t, conn, "SELECT id FROM src"))
	t.Logf("after round %d: %d rows, checkpoint was v%d", round, len(want), ckpt)
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// idsOf returns how many times each id occurs in a one-column query.
func idsOf(t *testing.T, q querier, sql string) map[int64]int {
	t.Helper()
	rows, err := q.Query(context.Background(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	out := map[int64]int{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out[id]++
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}

// compareIDs reports ids processed twice, lost, or invented.
func compareIDs(t *testing.T, when string, got, want map[int64]int) {
	t.Helper()
	var problems []string
	for id, n := range got {
		switch {
		case n > 1:
			problems = append(problems, fmt.Sprintf("id %d is in st %d times", id, n))
		case want[id] == 0:
			problems = append(problems, fmt.Sprintf("id %d is in st but not among the source rows it should hold", id))
		}
	}
	for id := range want {
		if got[id] == 0 {
			problems = append(problems, fmt.Sprintf("id %d is missing from st", id))
		}
	}
	if len(problems) > 20 {
		problems = append(problems[:20], fmt.Sprintf("… and %d more", len(problems)-20))
	}
	if len(problems) > 0 {
		t.Errorf("%s:\n  %s", when, strings.Join(problems, "\n  "))
	}
}
