package refresh_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mvserver/mvserver/app"
	"github.com/mvserver/mvserver/catalog"
)

func start(t *testing.T) string {
	t.Helper()
	srv, err := app.Start(app.Config{Logger: slog.New(slog.DiscardHandler), InMemory: true, Listen: "127.0.0.1:0", Database: "mvserver", MaxConnections: 20, TableDefaults: catalog.AllOn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(2 * time.Second) })
	return "postgres://tester@" + srv.Addr().String() + "/mvserver?sslmode=disable"
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// rows returns a query's rows as sorted text lines (a bag).
func rows(t *testing.T, c *pgx.Conn, q string) []string {
	t.Helper()
	r, err := c.Query(context.Background(), q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer r.Close()
	var out []string
	for r.Next() {
		vals := r.RawValues()
		parts := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				parts[i] = "NULL"
			} else {
				parts[i] = string(v)
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := r.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	sort.Strings(out)
	return out
}

func exec(t *testing.T, c *pgx.Conn, q string) {
	t.Helper()
	if _, err := c.Exec(context.Background(), q, pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestRefreshEqualsQuery: after every refresh, each view holds exactly the
// rows its query returns (R-M5), over seeded random inserts, updates and
// deletes with NULLs and duplicates.
func TestRefreshEqualsQuery(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	url := start(t)
	c := connect(t, url)
	exec(t, c, `CREATE TABLE f (id INT PRIMARY KEY, k INT, v DECIMAL(10,2), s STRING)`)
	exec(t, c, `CREATE TABLE d (k INT PRIMARY KEY, name STRING)`)
	for k := 0; k < 8; k++ {
		exec(t, c, fmt.Sprintf(`INSERT INTO d VALUES (%d, 'n%d')`, k, k%3))
	}
	views := map[string]string{
		"agg":    `SELECT k, count(*) AS n, sum(v) AS total, min(s) AS lo, max(v) AS hi FROM f GROUP BY k`,
		"filter": `SELECT id, v, s FROM f WHERE v > 10 OR s IS NULL`,
		"join":   `SELECT f.id, d.name, f.v FROM f JOIN d ON f.k = d.k`,
		"left":   `SELECT d.k, f.id FROM d LEFT JOIN f ON f.k = d.k AND f.v > 50`,
		"dup":    `SELECT s FROM f`,
		"total":  `SELECT count(*) AS n, sum(v) AS total FROM f`,
	}
	for name, q := range views {
		exec(t, c, fmt.Sprintf(`CREATE MATERIALIZED VIEW mv_%s AS %s`, name, q))
	}
	next := 0
	for round := 0; round < 12; round++ {
		for i := 0; i < 1+rng.Intn(20); i++ {
			switch op := rng.Intn(10); {
			case op < 5 || next < 5:
				s := "NULL"
				if rng.Intn(4) > 0 {
					s = fmt.Sprintf("'s%d'", rng.Intn(4))
				}
				v := "NULL"
				if rng.Intn(6) > 0 {
					v = fmt.Sprintf("%d.%02d", rng.Intn(100), rng.Intn(100))
				}
				exec(t, c, fmt.Sprintf(`INSERT INTO f VALUES (%d, %d, %s, %s)`, next, rng.Intn(10), v, s))
				next++
			case op < 8:
				exec(t, c, fmt.Sprintf(`UPDATE f SET v = v + %d, k = %d WHERE id %% 7 = %d`, rng.Intn(30), rng.Intn(10), rng.Intn(7)))
			default:
				exec(t, c, fmt.Sprintf(`DELETE FROM f WHERE id %% 11 = %d`, rng.Intn(11)))
			}
		}
		full := ""
		if rng.Intn(3) == 0 {
			full = " FULL"
		}
		for name, q := range views {
			exec(t, c, fmt.Sprintf(`REFRESH MATERIALIZED VIEW mv_%s%s`, name, full))
			got, want := rows(t, c, `SELECT * FROM mv_`+name), rows(t, c, q)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("seed %d round %d: mv_%s differs from its query\nview:\n%s\nquery:\n%s", seed, round, name, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}
}

// TestReadersSeeOldOrNew: while a view is refreshed again and again, readers
// always see one refresh's complete content, never a mix (R-M4, DESIGN
// "one atomic write").
func TestReadersSeeOldOrNew(t *testing.T) {
	url := start(t)
	c := connect(t, url)
	const n = 3000
	exec(t, c, `CREATE TABLE t (id INT PRIMARY KEY, gen INT)`)
	var sb strings.Builder
	sb.WriteString(`INSERT INTO t VALUES `)
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "(%d, 0)", i)
	}
	exec(t, c, sb.String())
	exec(t, c, `CREATE MATERIALIZED VIEW m AS SELECT id, gen FROM t`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var reads atomic.Int64
	errs := make(chan error, 4)
	for r := 0; r < 3; r++ {
		rc := connect(t, url)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				var cnt, lo, hi int64
				err := rc.QueryRow(ctx, `SELECT count(*), min(gen), max(gen) FROM m`).Scan(&cnt, &lo, &hi)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				if cnt != n || lo != hi {
					errs <- fmt.Errorf("reader saw a mix: count %d, gen %d..%d", cnt, lo, hi)
					return
				}
				reads.Add(1)
			}
		}()
	}
	for gen := 1; gen <= 15; gen++ {
		exec(t, c, fmt.Sprintf(`UPDATE t SET gen = %d`, gen))
		exec(t, c, `REFRESH MATERIALIZED VIEW m`)
	}
	// Let the readers see the last generation at least once more.
	deadline := time.Now().Add(5 * time.Second)
	for last := reads.Load(); reads.Load() < last+3 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if reads.Load() == 0 {
		t.Fatal("no reads happened")
	}
	var lo int64
	if err := c.QueryRow(context.Background(), `SELECT min(gen) FROM m`).Scan(&lo); err != nil || lo != 15 {
		t.Fatalf("final gen %d, %v", lo, err)
	}
}
