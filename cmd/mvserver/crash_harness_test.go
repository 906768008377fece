//go:build crash

package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

var crashKills = flag.Int("crash.kills", 50, "how many times TestCrashHarness kills the server")

// ledger is what clients were told: every acknowledged commit must survive
// a SIGKILL, and a statement that was not acknowledged must be whole or
// absent.
type ledger struct {
	mu sync.Mutex
	// groups are the event ids written together by one statement (INSERT
	// of several rows, COPY): acknowledged or not.
	acked, pending [][]int64
	// bumps counts the acknowledged increments of each account; unknown
	// the attempts whose outcome the client never learned.
	bumps, unknown map[int64]int64
}

// harnessSchema is the harness's tables, views and indexes.
var harnessSchema = []string{
	"CREATE TABLE acct (id INT PRIMARY KEY, grp INT NOT NULL, v INT NOT NULL)",
	"INSERT INTO acct SELECT g, g % 7, 0 FROM generate_series(1, 50) AS g",
	"CREATE TABLE events (id BIGINT PRIMARY KEY, acct INT, payload TEXT)",
	// GROUP_AGGREGATE, refreshed by its trigger
	"CREATE MATERIALIZED VIEW by_grp TRIGGER ON UPDATE AT MOST EVERY INTERVAL 1 SECOND AS SELECT grp, sum(v) AS total, count(*) AS n FROM acct GROUP BY grp",
	// ROW_BASED join, refreshed by hand
	"CREATE MATERIALIZED VIEW ev_acct AS SELECT e.id, e.payload, a.grp FROM events e JOIN acct a ON a.id = e.acct WHERE e.id % 3 <> 0",
	// a window view (WINDOW_FUNCTION or full)
	"CREATE MATERIALIZED VIEW last_ev AS SELECT acct, id FROM events QUALIFY row_number() OVER (PARTITION BY acct ORDER BY id DESC) = 1",
	"CREATE STREAMING TABLE ev_stream AS SELECT id, acct FROM STREAM(events)",
	// Secondary indexes on a source and on views (R-T10): kept in
	// step with the rows through every crash; CHECK verifies the
	// views', the lookups below the table's.
	"CREATE INDEX events_acct ON events (acct)",
	"CREATE UNIQUE INDEX by_grp_grp ON by_grp (grp)",
	"CREATE INDEX ev_acct_grp ON ev_acct (grp, id)",
}

// TestCrashHarness runs the real binary under a mixed workload — inserts
// of one and of several rows, COPY, updates, manual and triggered refreshes
// of materialized views of several techniques, streaming-table refreshes —
// and kills it with SIGKILL at random moments (R-X2). After each restart:
// every acknowledged commit is there, no unacknowledged statement is half
// there, each materialized view equals its query on its checkpoint
// (CHECK MATERIALIZED VIEW is OK), the streaming table holds no source row
// twice and, refreshed, each exactly once; at the end a triggered view
// still catches up by itself.
//
//	go test -tags crash ./cmd/mvserver -run TestCrashHarness -v [-crash.kills 50] [-crash.seed N]
func TestCrashHarness(t *testing.T) {
	seed := int64(*crashSeed) // the -crash.seed flag of main_test.go
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (rerun with -crash.seed %d)", seed, seed)
	rng := rand.New(rand.NewSource(seed))
	dir := t.TempDir()
	args := []string{"--trigger-min-interval", "1s"}
	p := startServer(t, dir, args)
	c := p.connect(t)
	for _, q := range harnessSchema {
		mustExec(t, c, q)
	}
	c.Close(context.Background())

	led := &ledger{bumps: map[int64]int64{}, unknown: map[int64]int64{}}
	nextID := int64(1)
	for kill := 1; kill <= *crashKills; kill++ {
		crashCycle(t, p, led, rng, nextID, time.Duration(100+rng.Intn(2400))*time.Millisecond) // some runs outlast the trigger's 1s window
		nextID += 3_000_000

		p = startServer(t, dir, args)
		verify(t, p, led, kill)
	}

	// Triggers still fire after all the crashes: a write reaches by_grp by itself.
	c = p.connect(t)
	defer c.Close(context.Background())
	t.Logf("%d kills: %d events, %d increments, %d refreshes recorded (%d triggered)", *crashKills,
		queryInt(t, c, "SELECT count(*) FROM events"), queryInt(t, c, "SELECT sum(v) FROM acct"),
		queryInt(t, c, "SELECT count(*) FROM refresh_history()"),
		queryInt(t, c, "SELECT count(*) FROM refresh_history() WHERE cause LIKE 'TRIGGER%'"))
	mustExec(t, c, "UPDATE acct SET v = v + 1000 WHERE id = 1")
	want := queryInt(t, c, "SELECT sum(v) FROM acct")
	deadline := time.Now().Add(30 * time.Second)
	for queryInt(t, c, "SELECT coalesce(sum(total), 0) FROM by_grp") != want {
		if time.Now().After(deadline) {
			t.Fatal("after the crashes, TRIGGER ON UPDATE did not refresh by_grp within 30s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// crashCycle runs the harness's writers and refresher against p for run,
// then kills p with SIGKILL and waits for everything to stop. Writers take
// event ids from nextID on (3,000,000 of them).
func crashCycle(t *testing.T, p *proc, led *ledger, rng *rand.Rand, nextID int64, run time.Duration) {
	t.Helper()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		wseed := rng.Int63()
		start := nextID + int64(w)*1_000_000
		go func() {
			defer wg.Done()
			work(p, led, rand.New(rand.NewSource(wseed)), start, stop)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		refresher(p, rand.New(rand.NewSource(rng.Int63())), stop)
	}()
	time.Sleep(run) // the kill moment
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	close(stop)
	wg.Wait()
}

// work writes until stop (or the server dies), recording what was
// acknowledged.
func work(p *proc, led *ledger, rng *rand.Rand, id int64, stop chan struct{}) {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, connString(p.addr, databaseOf(p)))
	if err != nil {
		return
	}
	defer c.Close(ctx)
	for {
		select {
		case <-stop:
			return
		default:
		}
		switch op := rng.Intn(10); {
		case op < 4: // several rows in one statement
			n := 1 + rng.Intn(5)
			ids := make([]int64, n)
			var sb strings.Builder
			sb.WriteString("INSERT INTO events VALUES ")
			for i := range ids {
				ids[i] = id
				id++
				if i > 0 {
					sb.WriteByte(',')
				}
				fmt.Fprintf(&sb, "(%d, %d, 'p%d')", ids[i], 1+rng.Intn(50), ids[i])
			}
			led.record(ids, func() error { _, err := c.Exec(ctx, sb.String()); return err })
		case op < 6: // COPY
			n := 1 + rng.Intn(20)
			ids := make([]int64, n)
			rows := make([][]any, n)
			for i := range ids {
				ids[i] = id
				rows[i] = []any{id, int32(1 + rng.Intn(50)), fmt.Sprintf("c%d", id)}
				id++
			}
			led.record(ids, func() error {
				_, err := c.CopyFrom(ctx, pgx.Identifier{"events"}, []string{"id", "acct", "payload"}, pgx.CopyFromRows(rows))
				return err
			})
		default: // an update in an explicit transaction
			acct := int64(1 + rng.Intn(50))
			led.bump(acct, func() error {
				tx, err := c.Begin(ctx)
				if err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, "UPDATE acct SET v = v + 1 WHERE id = $1", acct); err != nil {
					tx.Rollback(ctx)
					return err
				}
				return tx.Commit(ctx)
			})
		}
		if c.IsClosed() {
			return
		}
	}
}

// refresher refreshes the manual views and the streaming table until stop.
func refresher(p *proc, rng *rand.Rand, stop chan struct{}) {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, connString(p.addr, databaseOf(p)))
	if err != nil {
		return
	}
	defer c.Close(ctx)
	stmts := []string{"REFRESH MATERIALIZED VIEW ev_acct", "REFRESH MATERIALIZED VIEW last_ev", "REFRESH STREAMING TABLE ev_stream", "REFRESH MATERIALIZED VIEW by_grp FULL"}
	for {
		select {
		case <-stop:
			return
		default:
		}
		if _, err := c.Exec(ctx, stmts[rng.Intn(len(stmts))]); err != nil && c.IsClosed() {
			return
		}
	}
}

// record runs a statement writing ids and files them as acknowledged or
// pending.
func (l *ledger) record(ids []int64, run func() error) {
	err := run()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		l.acked = append(l.acked, ids)
	} else {
		l.pending = append(l.pending, ids)
	}
}

// bump runs an increment of an account and counts it.
func (l *ledger) bump(acct int64, run func() error) {
	err := run()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		l.bumps[acct]++
	} else {
		l.unknown[acct]++ // it may or may not have committed
	}
}

// verify checks the restarted server against the ledger.
func verify(t *testing.T, p *proc, led *ledger, kill int) {
	t.Helper()
	ctx := context.Background()
	c := p.connect(t)
	defer c.Close(ctx)
	present := map[int64]bool{}
	rows, err := c.Query(ctx, "SELECT id FROM events")
	if err != nil {
		t.Fatalf("kill %d: %v", kill, err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		present[id] = true
	}
	rows.Close()
	led.mu.Lock()
	for _, g := range led.acked {
		for _, id := range g {
			if !present[id] {
				t.Fatalf("kill %d: acknowledged event %d is gone", kill, id)
			}
		}
	}
	// An unacknowledged statement committed whole or not at all; settle it.
	var settled [][]int64
	for _, g := range led.pending {
		n := 0
		for _, id := range g {
			if present[id] {
				n++
			}
		}
		if n != 0 && n != len(g) {
			t.Fatalf("kill %d: a statement's rows are half there: %d of %v", kill, n, g)
		}
		if n == len(g) {
			settled = append(settled, g)
		}
	}
	led.acked, led.pending = append(led.acked, settled...), nil
	// Accounts: every acknowledged increment, plus at most the ones whose
	// outcome the client never learned.
	for acct := int64(1); acct <= 50; acct++ {
		v := queryInt(t, c, "SELECT v FROM acct WHERE id = $1", acct)
		n, maybe := led.bumps[acct], led.unknown[acct]
		if v < n || v > n+maybe {
			t.Fatalf("kill %d: account %d holds %d increments, acknowledged %d (+%d unknown)", kill, acct, v, n, maybe)
		}
		led.bumps[acct], led.unknown[acct] = v, 0
	}
	led.mu.Unlock()

	checkViews(t, p, kill, "by_grp", "ev_acct", "last_ev")
	// A few accounts' events through events_acct against a full scan.
	for i := int64(0); i < 4; i++ {
		acct := (int64(kill)*13 + i*17) % 52
		byIndex := queryInt(t, c, "SELECT count(*) FROM events WHERE acct = $1", acct)
		byScan := queryInt(t, c, "SELECT count(*) FROM events WHERE acct + 0 = $1", acct)
		if byIndex != byScan {
			t.Fatalf("kill %d: %d events of account %d through events_acct, %d in a full scan", kill, byIndex, acct, byScan)
		}
	}
	if dup := queryInt(t, c, "SELECT count(*) - count(DISTINCT id) FROM ev_stream"); dup != 0 {
		t.Fatalf("kill %d: the streaming table holds %d source rows twice", kill, dup)
	}
	if kill%10 == 0 {
		mustExec(t, c, "REFRESH STREAMING TABLE ev_stream")
		if diff := queryInt(t, c, "SELECT (SELECT count(*) FROM events) - (SELECT count(*) FROM ev_stream)"); diff != 0 {
			t.Fatalf("kill %d: after a refresh the streaming table misses %d source rows", kill, diff)
		}
	}
}

// checkViews runs CHECK MATERIALIZED VIEW on each view.
func checkViews(t *testing.T, p *proc, kill int, views ...string) {
	t.Helper()
	ctx := context.Background()
	c := p.connect(t)
	defer c.Close(ctx)
	for _, v := range views {
		var status string
		var detail *string
		if err := c.QueryRow(ctx, "CHECK MATERIALIZED VIEW "+v).Scan(&status, &detail); err != nil {
			t.Fatalf("kill %d: CHECK %s: %v", kill, v, err)
		}
		if status != "OK" {
			t.Fatalf("kill %d: %s does not equal its query on its checkpoint: %s %v", kill, v, status, detail)
		}
	}
}
