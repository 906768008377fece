package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mvserver/mvserver/catalog"
)

// queryRows returns a query's rows as text, in order.
func queryRows(t *testing.T, c *pgx.Conn, q string) []string {
	t.Helper()
	rows, err := c.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(v...))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// wantOutOfMemory runs q and wants 53200 with PostgreSQL's message, a
// detail naming the operator (what, unless empty) and a hint.
func wantOutOfMemory(t *testing.T, c *pgx.Conn, q, what string) {
	t.Helper()
	pe := wantCode(t, c, q, "53200")
	if pe.Message != "out of memory" || pe.Detail == "" || pe.Hint == "" {
		t.Errorf("%s: message %q, detail %q, hint %q", q, pe.Message, pe.Detail, pe.Hint)
	}
	if what != "" && !strings.HasPrefix(pe.Detail, "The "+what+" ") {
		t.Errorf("%s: detail %q does not name the %s", q, pe.Detail, what)
	}
}

// Statements and refreshes run within a memory budget (R-X3): with a
// budget of 1MB a sort of 30 MB of rows spills to the data directory's
// tmp/ and gives the in-memory answer, and so do hash aggregation, hash
// joins and DISTINCT, partitioning rows into files there; ORDER BY … LIMIT
// keeps only its rows; set operations and window functions that need more
// fail with 53200, which ends nothing else; a refresh past its budget
// fails and leaves the view as it was.
func TestMemoryBudget(t *testing.T) {
	dir := t.TempDir()
	srv, c := startAndConnect(t, Config{Logger: slog.New(slog.DiscardHandler), DataDir: dir, Listen: "127.0.0.1:0", Database: "mvserver",
		MaxConnections: 10, TableDefaults: catalog.AllOn, RefreshMemoryLimit: 1 << 20})
	t.Cleanup(func() { srv.Shutdown(2 * time.Second) })
	ctx := context.Background()
	defer c.Close(ctx)

	mustExec(t, c, `CREATE TABLE big (id INT PRIMARY KEY, g INT, s TEXT)`)
	mustExec(t, c, `INSERT INTO big SELECT i, i % 97, md5(i::text) FROM generate_series(1, 100) AS i`)
	mustExec(t, c, `CREATE MATERIALIZED VIEW per_g AS SELECT g, count(*) AS n FROM big GROUP BY g`)
	mustExec(t, c, `CREATE MATERIALIZED VIEW dist AS SELECT g, count(DISTINCT s) AS n FROM big GROUP BY g`)
	distBefore := queryRows(t, c, `SELECT * FROM dist ORDER BY g`)
	mustExec(t, c, `INSERT INTO big SELECT i, i % 97, md5(i::text) FROM generate_series(101, 60000) AS i`)

	sorted := `SELECT id, g, s FROM big ORDER BY g DESC, s`
	top := `SELECT id, s FROM big ORDER BY s DESC LIMIT 5`
	want, wantTop := queryRows(t, c, sorted), queryRows(t, c, top)
	spilling := []string{
		`SELECT id, count(*), max(s) FROM big GROUP BY id`,
		`SELECT a.id, b.id FROM big a JOIN big b ON a.s = b.s`,
		`SELECT a.id, b.g FROM big a FULL JOIN (SELECT * FROM big WHERE id % 3 = 0) b ON a.s = b.s AND a.g = b.g`,
		`SELECT DISTINCT s FROM big`,
	}
	var wantSpilled [][]string
	for _, q := range spilling {
		rows := queryRows(t, c, q)
		slices.Sort(rows)
		wantSpilled = append(wantSpilled, rows)
	}
	if len(want) != 60000 {
		t.Fatalf("%d rows", len(want))
	}

	mustExec(t, c, `SET query_memory_limit = '1MB'`)
	var shown string
	if err := c.QueryRow(ctx, `SHOW query_memory_limit`).Scan(&shown); err != nil || shown != "1MB" {
		t.Fatalf("SHOW query_memory_limit: %q, %v", shown, err)
	}
	got := queryRows(t, c, sorted)
	if len(got) != len(want) {
		t.Fatalf("spilled sort: %d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("spilled sort: row %d is %q, want %q", i, got[i], want[i])
		}
	}
	if fmt.Sprint(queryRows(t, c, top)) != fmt.Sprint(wantTop) {
		t.Fatalf("top-N: %v, want %v", queryRows(t, c, top), wantTop)
	}
	if files, err := os.ReadDir(filepath.Join(dir, "tmp")); err != nil || len(files) != 0 {
		t.Errorf("tmp/ after the sorts: %d files, %v", len(files), err)
	}

	// Hash aggregation, hash joins and DISTINCT spill partitions to tmp/
	// and give the in-memory answers (sorted here: spilled groups come in
	// another order).
	for i, q := range spilling {
		got := queryRows(t, c, q)
		slices.Sort(got)
		if len(got) != len(wantSpilled[i]) || fmt.Sprint(got) != fmt.Sprint(wantSpilled[i]) {
			t.Errorf("%s: %d rows differ from the %d without a budget", q, len(got), len(wantSpilled[i]))
		}
	}
	if files, err := os.ReadDir(filepath.Join(dir, "tmp")); err != nil || len(files) != 0 {
		t.Errorf("tmp/ after spilling: %d files, %v", len(files), err)
	}
	wantOutOfMemory(t, c, `SELECT s FROM big EXCEPT SELECT s FROM big WHERE id < 10`, "EXCEPT")
	wantOutOfMemory(t, c, `SELECT id, row_number() OVER (ORDER BY s) FROM big`, "window function")
	// Small ones still run, and so does the next statement.
	if r := queryRows(t, c, `SELECT g, count(*) FROM big GROUP BY g ORDER BY g LIMIT 2`); fmt.Sprint(r) != "[0 618 1 619]" {
		t.Errorf("small aggregate: %v", r)
	}
	mustExec(t, c, `RESET query_memory_limit`)
	if r := queryRows(t, c, `SELECT count(*) FROM (SELECT DISTINCT s FROM big) d`); fmt.Sprint(r) != "[60000]" {
		t.Errorf("after RESET: %v", r)
	}

	// Refreshes have their own budget (1MB here): 97 groups fit, 60,000
	// distinct values do not, and the failed refresh changes nothing.
	mustExec(t, c, `REFRESH MATERIALIZED VIEW per_g`)
	if r := queryRows(t, c, `SELECT sum(n)::text FROM per_g`); fmt.Sprint(r) != "[60000]" {
		t.Errorf("per_g: %v", r)
	}
	wantOutOfMemory(t, c, `REFRESH MATERIALIZED VIEW dist`, "")
	wantOutOfMemory(t, c, `REFRESH MATERIALIZED VIEW dist FULL`, "")
	if r := queryRows(t, c, `SELECT * FROM dist ORDER BY g`); fmt.Sprint(r) != fmt.Sprint(distBefore) {
		t.Errorf("dist changed by failed refreshes: %v, want %v", r, distBefore)
	}
	wantOutOfMemory(t, c, `CREATE MATERIALIZED VIEW all_ids AS SELECT id, count(*) AS n FROM big GROUP BY id`, "group-aggregate refresh")
	if r := queryRows(t, c, `SELECT count(*) FROM pg_matviews WHERE matviewname = 'all_ids'`); fmt.Sprint(r) != "[0]" {
		t.Errorf("the failed CREATE left a view: %v", r)
	}
}
