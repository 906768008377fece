package refresh_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mvserver/mvserver/app"
	"github.com/mvserver/mvserver/catalog"
)

func startWith(t *testing.T, cfg app.Config) (string, *app.Server) {
	t.Helper()
	cfg.Logger, cfg.Listen, cfg.Database, cfg.MaxConnections, cfg.TableDefaults = slog.New(slog.DiscardHandler), "127.0.0.1:0", "mvserver", 30, catalog.AllOn
	if cfg.DataDir == "" {
		cfg.InMemory = true
	}
	srv, err := app.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return "postgres://tester@" + srv.Addr().String() + "/mvserver?sslmode=disable", srv
}

func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// waitRows polls a query until it returns want (sorted lines), within a
// deadline.
func waitRows(t *testing.T, c *pgx.Conn, q string, want []string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var got []string
	for time.Now().Before(deadline) {
		if got = rows(t, c, q); strings.Join(got, ",") == strings.Join(want, ",") {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s: %v, want %v (deadline passed)", q, got, want)
}

// TestStreamingExactlyOnce: writers commit rows to a stream (single and
// multi-row INSERTs, explicit transactions, rollbacks) while the streaming
// table is refreshed at the same time by its trigger, by manual REFRESHes
// from several sessions and by CREATE OR REFRESH; a materialized view over
// it follows by its own trigger. Afterwards every committed row is in the
// streaming table exactly once and no rolled-back row is (R-ST2), and the
// view agrees.
func TestStreamingExactlyOnce(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	url, srv := startWith(t, app.Config{TriggerMinInterval: time.Millisecond})
	t.Cleanup(func() { srv.Shutdown(5 * time.Second) })
	c := connect(t, url)
	exec(t, c, `CREATE TABLE src (id BIGINT PRIMARY KEY, w INT, v INT)`)
	exec(t, c, `INSERT INTO src VALUES (0, -1, 0)`)
	const def = `CREATE OR REFRESH STREAMING TABLE st TRIGGER ON UPDATE AS SELECT id, w, v * 10 AS v10 FROM STREAM(src) WHERE v >= 0`
	exec(t, c, def)
	exec(t, c, `CREATE MATERIALIZED VIEW per_writer TRIGGER ON UPDATE AS SELECT w, count(*) AS n FROM st GROUP BY w`)

	const writers, commits = 4, 60
	var mu sync.Mutex
	committed := map[int64]bool{0: true}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed + int64(w)))
			wc := connect(t, url)
			ctx := context.Background()
			for i := 0; i < commits; i++ {
				base := int64(w*1_000_000 + i*100 + 1)
				n := 1 + rng.Intn(4)
				var vals []string
				for k := 0; k < n; k++ {
					vals = append(vals, fmt.Sprintf("(%d, %d, %d)", base+int64(k), w, k))
				}
				ins := "INSERT INTO src VALUES " + strings.Join(vals, ", ")
				switch rng.Intn(4) {
				case 0: // explicit transaction
					if _, err := wc.Exec(ctx, "BEGIN"); err != nil {
						errs <- err
						return
					}
					if _, err := wc.Exec(ctx, ins); err != nil {
						errs <- err
						return
					}
					end := "COMMIT"
					if rng.Intn(3) == 0 {
						end = "ROLLBACK"
					}
					if _, err := wc.Exec(ctx, end); err != nil {
						errs <- err
						return
					}
					if end == "ROLLBACK" {
						continue
					}
				default:
					if _, err := wc.Exec(ctx, ins); err != nil {
						errs <- err
						return
					}
				}
				mu.Lock()
				for k := 0; k < n; k++ {
					committed[base+int64(k)] = true
				}
				mu.Unlock()
			}
		}(w)
	}
	// Manual refreshes and CREATE OR REFRESH with the same definition,
	// from two sessions, while the writers and the trigger run. A CREATE
	// OR REFRESH runs its refresh in its own transaction, outside the
	// runner's per-table lock: when it overlaps another refresh, one of
	// the two fails with 40001 (both wrote the checkpoint) — never both
	// commit the same rows.
	stop := make(chan struct{})
	var rwg sync.WaitGroup
	for r := 0; r < 2; r++ {
		rwg.Add(1)
		go func(r int) {
			defer rwg.Done()
			rc := connect(t, url)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				q := `REFRESH STREAMING TABLE st`
				if r == 1 && i%3 == 0 {
					q = def
				}
				if _, err := rc.Exec(context.Background(), q); err != nil && sqlState(err) != "40001" {
					errs <- fmt.Errorf("%s: %w", q, err)
					return
				}
			}
		}(r)
	}
	wg.Wait()
	close(stop)
	rwg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	exec(t, c, `REFRESH STREAMING TABLE st`)

	got := rows(t, c, `SELECT id, count(*) FROM st GROUP BY id`)
	seen := map[int64]bool{}
	for _, line := range got {
		var id, n int64
		if _, err := fmt.Sscanf(line, "%d|%d", &id, &n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("row %d appears %d times in the streaming table", id, n)
		}
		if !committed[id] {
			t.Errorf("row %d is in the streaming table but was never committed", id)
		}
		seen[id] = true
	}
	for id := range committed {
		if !seen[id] {
			t.Errorf("committed row %d is missing from the streaming table", id)
		}
	}
	// The view above follows the streaming table through its change feed.
	want := rows(t, c, `SELECT w, count(*) FROM src GROUP BY w`)
	waitRows(t, c, `SELECT w, n FROM per_writer`, want)
	if t.Failed() {
		return
	}
	var techniques []string
	for _, l := range rows(t, c, `SELECT DISTINCT technique FROM refresh_history WHERE view_name = 'per_writer' AND cause = 'TRIGGER'`) {
		techniques = append(techniques, l)
	}
	for _, tq := range techniques {
		if tq == "FULL_RECOMPUTE" {
			t.Errorf("a triggered refresh of the view over the streaming table was FULL_RECOMPUTE (%v); its source only appends", techniques)
		}
	}
	t.Logf("failures: %v", rows(t, c, `SELECT error FROM refresh_history WHERE status <> 'COMPLETED'`))
	t.Logf("%d rows; %s; view techniques %v", len(committed), strings.Join(rows(t, c, `SELECT cause || ' ' || status || ' ' || count(*) FROM refresh_history WHERE view_name = 'st' GROUP BY cause, status`), ", "), techniques)
}

// TestStreamingRestart: the checkpoint is durable: after a restart on the
// same data directory, a refresh processes exactly the rows committed since
// the last refresh before it (R-ST2, R-X2), and a schedule and trigger are
// still there (R-S8).
func TestStreamingRestart(t *testing.T) {
	dir := t.TempDir()
	url, srv := startWith(t, app.Config{DataDir: dir})
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	exec(t, c, `CREATE TABLE src (id INT PRIMARY KEY)`)
	exec(t, c, `INSERT INTO src VALUES (1), (2)`)
	exec(t, c, `CREATE STREAMING TABLE st SCHEDULE EVERY 8 HOURS AS SELECT id FROM STREAM(src)`)
	exec(t, c, `INSERT INTO src VALUES (3)`)
	exec(t, c, `REFRESH STREAMING TABLE st`)
	exec(t, c, `INSERT INTO src VALUES (4)`)
	c.Close(context.Background())
	if err := srv.Shutdown(5 * time.Second); err != nil {
		t.Fatal(err)
	}

	url, srv = startWith(t, app.Config{DataDir: dir})
	t.Cleanup(func() { srv.Shutdown(5 * time.Second) })
	c = connect(t, url)
	exec(t, c, `INSERT INTO src VALUES (5)`)
	exec(t, c, `REFRESH STREAMING TABLE st`)
	if got, want := strings.Join(rows(t, c, `SELECT id FROM st`), ","), "1,2,3,4,5"; got != want {
		t.Fatalf("after restart: %s, want %s", got, want)
	}
	if got := rows(t, c, `SHOW STREAMING TABLES`); len(got) != 1 || !strings.Contains(got[0], "|EVERY 8 HOURS|") {
		t.Fatalf("schedule after restart: %v", got)
	}
}

// TestStreamingDescribeExtended: DESCRIBE EXTENDED shows a streaming table's
// kind, definition, streams, trigger, last refresh and the version of each
// stream it consumed (R-O2).
func TestStreamingDescribeExtended(t *testing.T) {
	url, srv := startWith(t, app.Config{})
	t.Cleanup(func() { srv.Shutdown(5 * time.Second) })
	c := connect(t, url)
	exec(t, c, `CREATE TABLE src (id INT PRIMARY KEY, k INT)`)
	exec(t, c, `CREATE TABLE dim (k INT PRIMARY KEY, name STRING)`)
	exec(t, c, `INSERT INTO src VALUES (1, 1)`)
	exec(t, c, `CREATE STREAMING TABLE st TRIGGER ON UPDATE AT MOST EVERY INTERVAL 2 HOURS AS SELECT s.id, d.name FROM STREAM(src) s JOIN dim d ON d.k = s.k`)
	exec(t, c, `INSERT INTO src VALUES (2, 1)`)
	exec(t, c, `REFRESH STREAMING TABLE st`)
	r, err := c.Query(context.Background(), `DESCRIBE TABLE EXTENDED st`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for r.Next() {
		var k string
		var v, comment *string
		if err := r.Scan(&k, &v, &comment); err != nil {
			t.Fatal(err)
		}
		if v != nil {
			got[k] = *v
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"Type":                   "STREAMING_TABLE",
		"View Text":              "SELECT s.id, d.name FROM STREAM(src) s JOIN dim d ON d.k = s.k",
		"View Original Text":     "SELECT s.id, d.name FROM src s JOIN dim d ON d.k = s.k",
		"Streams":                "public.src",
		"Trigger":                "ON UPDATE AT MOST EVERY INTERVAL 2 HOURS",
		"Last Refresh Status":    "COMPLETED",
		"Last Refresh Technique": "APPEND_ONLY",
		"Stream Checkpoints":     "public.src@v2",
	} {
		if got[k] != want {
			t.Errorf("DESCRIBE EXTENDED %s = %q, want %q", k, got[k], want)
		}
	}
	if _, ok := got["Refresh Policy"]; ok {
		t.Errorf("a streaming table has no refresh policy; DESCRIBE shows %q", got["Refresh Policy"])
	}
	if got["Next Refresh"] == "" {
		t.Errorf("DESCRIBE EXTENDED has no Next Refresh row")
	}
}
