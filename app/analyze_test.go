package app

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mvserver/mvserver/catalog"
)

func startStatsServer(t *testing.T, dir string, autoOff bool) (*Server, *pgx.Conn) {
	t.Helper()
	srv, err := Start(Config{Logger: slog.New(slog.DiscardHandler), Listen: "127.0.0.1:0", Database: "mvserver",
		DataDir: dir, TableDefaults: catalog.AllOn, AutoAnalyzeOff: autoOff})
	if err != nil {
		t.Fatal(err)
	}
	c, err := pgx.Connect(context.Background(), "postgres://tester@"+srv.Addr().String()+"/mvserver?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

func statsRow(t *testing.T, c *pgx.Conn, col string) (nullFrac, nDistinct float64, mcv *string) {
	t.Helper()
	err := c.QueryRow(context.Background(), "SELECT null_frac, n_distinct, most_common_vals::text FROM pg_stats WHERE tablename = 'sa' AND attname = $1", col).
		Scan(&nullFrac, &nDistinct, &mcv)
	if err != nil {
		t.Fatalf("pg_stats of %s: %v", col, err)
	}
	return
}

// TestAnalyzePersists: ANALYZE's statistics survive a restart (catalog
// metadata keys), as do pg_class.reltuples and the estimates they give.
func TestAnalyzePersists(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	srv, c := startStatsServer(t, dir, true)
	for _, q := range []string{
		"CREATE TABLE sa (id INT PRIMARY KEY, g INT, s TEXT)",
		"INSERT INTO sa SELECT i, i % 5, CASE WHEN i % 2 = 0 THEN NULL ELSE 'x' END FROM generate_series(1, 2000) i",
		"ANALYZE sa",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	nf, nd, mcv := statsRow(t, c, "g")
	if nf != 0 || nd != 5 || mcv == nil || *mcv != "{0,1,2,3,4}" {
		t.Fatalf("before restart: g null_frac %v n_distinct %v mcv %v", nf, nd, mcv)
	}
	c.Close(ctx)
	if err := srv.Shutdown(5 * time.Second); err != nil {
		t.Fatal(err)
	}

	srv, c = startStatsServer(t, dir, true)
	defer func() {
		c.Close(ctx)
		if err := srv.Shutdown(5 * time.Second); err != nil {
			t.Error(err)
		}
	}()
	nf, nd, mcv = statsRow(t, c, "g")
	if nf != 0 || nd != 5 || mcv == nil || *mcv != "{0,1,2,3,4}" {
		t.Fatalf("after restart: g null_frac %v n_distinct %v mcv %v", nf, nd, mcv)
	}
	if nf, _, _ := statsRow(t, c, "s"); nf != 0.5 {
		t.Fatalf("after restart: s null_frac %v, want 0.5", nf)
	}
	var reltuples float64
	if err := c.QueryRow(ctx, "SELECT reltuples FROM pg_class WHERE relname = 'sa'").Scan(&reltuples); err != nil || reltuples != 2000 {
		t.Fatalf("after restart: reltuples %v (%v), want 2000", reltuples, err)
	}
	var plan string
	if err := c.QueryRow(ctx, "EXPLAIN SELECT * FROM sa WHERE s IS NULL").Scan(&plan); err != nil {
		t.Fatal(err)
	}
	if want := "rows=1000 "; !strings.Contains(plan, want) {
		t.Fatalf("EXPLAIN after restart: %s, want %s", plan, want)
	}
}

// TestAutoAnalyze: once more than 50 + 10% of a table's rows changed, the
// background worker analyzes it; with AutoAnalyzeOff nothing does.
func TestAutoAnalyze(t *testing.T) {
	ctx := context.Background()
	for _, off := range []bool{false, true} {
		srv, c := startStatsServer(t, t.TempDir(), off)
		if _, err := c.Exec(ctx, "CREATE TABLE sa (id INT PRIMARY KEY, g INT)"); err != nil {
			t.Fatal(err)
		}
		// 40 rows: under the threshold, never analyzed.
		if _, err := c.Exec(ctx, "INSERT INTO sa SELECT i, 1 FROM generate_series(1, 40) i"); err != nil {
			t.Fatal(err)
		}
		// 60 more in small commits: past 50 changed rows.
		for i := 41; i <= 100; i += 10 {
			if _, err := c.Exec(ctx, "INSERT INTO sa SELECT i, 2 FROM generate_series($1::int, $1::int + 9) i", i); err != nil {
				t.Fatal(err)
			}
		}
		var n int
		deadline := time.Now().Add(10 * time.Second)
		for {
			if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_stats WHERE tablename = 'sa'").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > 0 || off || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if off {
			// Give a worker (there must be none) the time it would take.
			time.Sleep(300 * time.Millisecond)
			if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_stats WHERE tablename = 'sa'").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Fatalf("AutoAnalyzeOff: %d pg_stats rows", n)
			}
		} else {
			if n != 2 {
				t.Fatalf("auto-analyze: %d pg_stats rows, want 2", n)
			}
			var reltuples float64
			if err := c.QueryRow(ctx, "SELECT reltuples FROM pg_class WHERE relname = 'sa'").Scan(&reltuples); err != nil || reltuples <= 50 {
				t.Fatalf("auto-analyze: reltuples %v (%v)", reltuples, err)
			}
			// Analyzed once past 50 changed rows (at 60 or more rows); the
			// rest stay under 50 + 10% of that.
			if srv.auto.Analyzed() < 1 {
				t.Fatal("auto-analyze counted no analysis")
			}
		}
		c.Close(ctx)
		if err := srv.Shutdown(5 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
}
