package refresh_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestRefreshReadsTouchedKeysByIndex: a window view partitioned by a
// column with an index, and a GENERIC_AGGREGATE view grouped by it, read
// only the touched partitions and groups through the index — EXPLAIN
// REFRESH's estimate is a fraction of the table — and equal their queries
// after the refresh; without the index the estimate is the whole table.
func TestRefreshReadsTouchedKeysByIndex(t *testing.T) {
	c := connect(t, start(t))
	ctx := context.Background()
	exec(t, c, `CREATE TABLE ev (id INT PRIMARY KEY, g INT, v INT, s TEXT)`)
	exec(t, c, `INSERT INTO ev SELECT i, i % 500, i % 7, 's' || (i % 3) FROM generate_series(1, 4000) AS i`)
	exec(t, c, `CREATE MATERIALIZED VIEW latest AS SELECT id, g, v FROM ev QUALIFY row_number() OVER (PARTITION BY g ORDER BY id DESC) = 1`)
	exec(t, c, `CREATE MATERIALIZED VIEW kinds AS SELECT g, count(DISTINCT s) AS n, count(DISTINCT v) AS nv FROM ev GROUP BY g`)
	queries := map[string]string{
		"latest": `SELECT id, g, v FROM ev QUALIFY row_number() OVER (PARTITION BY g ORDER BY id DESC) = 1`,
		"kinds":  `SELECT g, count(DISTINCT s), count(DISTINCT v) FROM ev GROUP BY g`,
	}
	estimate := func(view string) (string, int) {
		t.Helper()
		r, err := c.Query(ctx, `EXPLAIN REFRESH MATERIALIZED VIEW `+view, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for r.Next() {
			var k, v string
			if err := r.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			if rest, ok := strings.CutPrefix(v, "chosen: estimated cost "); ok && strings.HasPrefix(k, "candidate ") {
				n, err := strconv.Atoi(strings.TrimRight(strings.Fields(rest)[0], ";"))
				if err != nil {
					t.Fatalf("%s: %q", view, v)
				}
				return strings.TrimPrefix(k, "candidate "), n
			}
		}
		t.Fatalf("%s: no chosen candidate with a cost", view)
		return "", 0
	}
	change := func(round int) {
		exec(t, c, fmt.Sprintf(`INSERT INTO ev VALUES (%d, 7, 1, 'x'), (%d, 8, 2, 's1')`, 5000+2*round, 5001+2*round))
		exec(t, c, fmt.Sprintf(`UPDATE ev SET s = 'y', v = v + 1 WHERE id = %d`, 100+round))
		exec(t, c, fmt.Sprintf(`DELETE FROM ev WHERE id = %d`, 1000+round))
	}
	check := func(when string) {
		t.Helper()
		for view, q := range queries {
			exec(t, c, `REFRESH MATERIALIZED VIEW `+view)
			if got, want := strings.Join(rows(t, c, `SELECT * FROM `+view), ";"), strings.Join(rows(t, c, q), ";"); got != want {
				t.Fatalf("%s: %s differs from its query", when, view)
			}
		}
	}
	// Without an index: every touched key's rows come from a full scan.
	change(0)
	for view, tech := range map[string]string{"latest": "WINDOW_FUNCTION", "kinds": "GENERIC_AGGREGATE"} {
		if got, cost := estimate(view); got != tech || cost < 4000 {
			t.Fatalf("no index: %s chose %s at cost %d, want %s reading the whole table (4000 rows)", view, got, cost, tech)
		}
	}
	check("without the index")
	exec(t, c, `CREATE INDEX ev_g ON ev (g)`)
	for round := 1; round <= 3; round++ {
		change(round)
		for view, tech := range map[string]string{"latest": "WINDOW_FUNCTION", "kinds": "GENERIC_AGGREGATE"} {
			if got, cost := estimate(view); got != tech || cost >= 1000 {
				t.Fatalf("round %d: %s chose %s at cost %d, want %s reading only the touched keys by index", round, view, got, cost, tech)
			}
		}
		check(fmt.Sprintf("round %d", round))
	}
}
