//go:build clients

// Package loadtest runs pgbench against an in-process mvserver (R-X3,
// issue 10's load item): point reads of a materialized view refreshed by
// TRIGGER ON UPDATE, inserts into its source and mixed read/write
// transactions from 32 clients, then checks that nothing failed but
// retried serialization failures, that the view equals its query, and that
// goroutines, file descriptors and heap return to their baseline.
//
//	go test -tags clients ./loadtest -v [-load.duration 60s] [-load.clients 32]
package loadtest

import (
	"bufio"
	"context"
	"flag"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mvserver/mvserver/app"
	"github.com/mvserver/mvserver/catalog"
)

var (
	duration = flag.Duration("load.duration", 60*time.Second, "how long pgbench runs")
	clients  = flag.Int("load.clients", 32, "pgbench clients")
)

// The three transaction scripts, weighted 5:2:3.
var scripts = map[string]string{
	"read.sql": `\set bid random(1, 100)
SELECT bid, total, n FROM branch_totals WHERE bid = :bid;
`,
	"insert.sql": `\set bid random(1, 100)
\set delta random(-5000, 5000)
INSERT INTO accounts (aid, bid, abalance) VALUES (nextval('aid_seq'), :bid, :delta);
`,
	"mixed.sql": `\set aid random(1, 10000)
\set bid random(1, 100)
\set delta random(-5000, 5000)
BEGIN;
UPDATE accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM accounts WHERE aid = :aid;
SELECT total FROM branch_totals WHERE bid = :bid;
END;
`,
}

func TestPgbenchLoad(t *testing.T) {
	pgbench, err := exec.LookPath("pgbench")
	if err != nil {
		t.Fatalf("pgbench is not installed (scripts/install-test-deps.sh installs postgresql-client): %v", err)
	}
	dir := t.TempDir()
	srv, err := app.Start(app.Config{Logger: slog.New(slog.DiscardHandler), DataDir: filepath.Join(dir, "data"),
		Listen: "127.0.0.1:0", Database: "mvserver", MaxConnections: *clients + 10, TableDefaults: catalog.AllOn,
		TriggerMinInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(10 * time.Second)
	ctx := context.Background()
	url := "postgres://bench@" + srv.Addr().String() + "/mvserver?sslmode=disable"
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE accounts (aid INT PRIMARY KEY, bid INT NOT NULL, abalance INT NOT NULL)",
		"INSERT INTO accounts SELECT g, 1 + g % 100, 0 FROM generate_series(1, 10000) AS g",
		"CREATE SEQUENCE aid_seq START 10001",
		"CREATE MATERIALIZED VIEW branch_totals TRIGGER ON UPDATE AT MOST EVERY INTERVAL 1 SECOND AS SELECT bid, sum(abalance) AS total, count(*) AS n FROM accounts GROUP BY bid",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	c.Close(ctx)
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	time.Sleep(500 * time.Millisecond) // let startup work settle
	base := sample()

	host, port, _ := strings.Cut(srv.Addr().String(), ":")
	args := []string{"-n", "-c", strconv.Itoa(*clients), "-j", "2", "-T", strconv.Itoa(int(duration.Seconds())),
		"-M", "prepared", "--max-tries=20", "--failures-detailed", "-l", "--log-prefix", filepath.Join(dir, "tx"),
		"-f", filepath.Join(dir, "read.sql") + "@5", "-f", filepath.Join(dir, "insert.sql") + "@2", "-f", filepath.Join(dir, "mixed.sql") + "@3",
		"-h", host, "-p", port, "-U", "bench", "mvserver"}
	cmd := exec.Command(pgbench, args...)
	cmd.Env = append(os.Environ(), "PGSSLMODE=disable")
	out, err := cmd.CombinedOutput()
	report := string(out)
	if err != nil {
		t.Fatalf("pgbench: %v\n%s", err, report)
	}
	t.Logf("pgbench %s\n%s", strings.Join(args, " "), report)
	if m := regexp.MustCompile(`number of failed transactions: (\d+)`).FindStringSubmatch(report); m == nil || m[1] != "0" {
		t.Errorf("failed transactions (after retries): %v", m)
	}
	processed := regexp.MustCompile(`number of transactions actually processed: (\d+)`).FindStringSubmatch(report)
	if processed == nil || processed[1] == "0" {
		t.Fatalf("no transaction was processed")
	}
	p50, p95, p99, n := latencies(t, dir)
	t.Logf("latency over %d transactions: p50 %.2f ms, p95 %.2f ms, p99 %.2f ms", n, p50, p95, p99)

	// The view catches up and equals its query.
	c, err = pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var triggered int
	var techniques string
	if err := c.QueryRow(ctx, "SELECT count(*), coalesce(string_agg(DISTINCT technique, ','), '') FROM refresh_history() WHERE view_name = 'branch_totals' AND cause LIKE 'TRIGGER%'").Scan(&triggered, &techniques); err != nil {
		t.Fatal(err)
	}
	t.Logf("refreshes triggered by the writes during the run: %d (%s)", triggered, techniques)
	if triggered == 0 {
		t.Errorf("TRIGGER ON UPDATE never refreshed the view during the run")
	}
	if _, err := c.Exec(ctx, "REFRESH MATERIALIZED VIEW branch_totals"); err != nil {
		t.Fatal(err)
	}
	var status string
	var detail *string
	if err := c.QueryRow(ctx, "CHECK MATERIALIZED VIEW branch_totals").Scan(&status, &detail); err != nil {
		t.Fatal(err)
	}
	if status != "OK" {
		t.Errorf("CHECK MATERIALIZED VIEW branch_totals after the run: %s", status)
	}
	var diff int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM ((SELECT bid, total, n FROM branch_totals EXCEPT ALL SELECT bid, sum(abalance), count(*) FROM accounts GROUP BY bid)
		UNION ALL (SELECT bid, sum(abalance), count(*) FROM accounts GROUP BY bid EXCEPT ALL SELECT bid, total, n FROM branch_totals)) AS d`).Scan(&diff); err != nil || diff != 0 {
		t.Errorf("view against its query: %d differing rows, %v", diff, err)
	}
	c.Close(ctx)

	// Goroutines, descriptors and heap come back.
	var after resources
	deadline := time.Now().Add(30 * time.Second)
	for {
		after = sample()
		if after.goroutines <= base.goroutines+5 && after.fds <= base.fds+5 && after.heap <= max(2*base.heap, base.heap+64<<20) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("after the run: %d goroutines (before %d), %d file descriptors (before %d), %d MiB heap (before %d MiB)",
				after.goroutines, base.goroutines, after.fds, base.fds, after.heap>>20, base.heap>>20)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("resources before/after: goroutines %d/%d, fds %d/%d, heap %d/%d MiB", base.goroutines, after.goroutines, base.fds, after.fds, base.heap>>20, after.heap>>20)
}

type resources struct {
	goroutines, fds int
	heap            uint64
}

func sample() resources {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fds, _ := os.ReadDir("/proc/self/fd")
	return resources{goroutines: runtime.NumGoroutine(), fds: len(fds), heap: ms.HeapInuse}
}

// latencies reads pgbench's per-transaction logs (-l): the third field of
// each line is the transaction's latency in microseconds.
func latencies(t *testing.T, dir string) (p50, p95, p99 float64, n int) {
	files, _ := filepath.Glob(filepath.Join(dir, "tx.*"))
	var lat []float64
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 3 {
				continue
			}
			if us, err := strconv.ParseFloat(fields[2], 64); err == nil {
				lat = append(lat, us/1000)
			}
		}
		fh.Close()
	}
	if len(lat) == 0 {
		t.Fatal("pgbench wrote no transaction log")
	}
	sort.Float64s(lat)
	at := func(q float64) float64 { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
	return at(0.50), at(0.95), at(0.99), len(lat)
}
