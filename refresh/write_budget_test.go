package refresh_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mvserver/mvserver/app"
	"github.com/mvserver/mvserver/refresh"
)

// TestWriteSetCountsAgainstBudget: what a refresh writes counts against
// --refresh-memory-limit (4MB here). A view rewritten in full (past the
// difference limit: truncated, its rows inserted afresh) whose new rows do
// not fit fails with 53200 and keeps its previous rows; so does a CREATE
// whose first computation does not fit, and it leaves no view. Before,
// only a difference's held rows counted: both ran to the end whatever the
// budget.
func TestWriteSetCountsAgainstBudget(t *testing.T) {
	defer refresh.SetChunking(1000, 1000)()
	url, srv := startWith(t, app.Config{RefreshMemoryLimit: 4 << 20})
	t.Cleanup(func() { srv.Shutdown(2 * time.Second) })
	c := connect(t, url)
	exec(t, c, `CREATE TABLE t (id INT PRIMARY KEY, s TEXT)`)
	exec(t, c, `INSERT INTO t SELECT i, md5(i::text) FROM generate_series(1, 5000) AS i`)
	exec(t, c, `CREATE MATERIALIZED VIEW mv AS SELECT id, s FROM t`)
	before := strings.Join(rows(t, c, `SELECT * FROM mv`), ",")
	exec(t, c, `INSERT INTO t SELECT i, md5(i::text) FROM generate_series(5001, 20000) AS i`)

	outOfMemory := func(q string) {
		t.Helper()
		_, err := c.Exec(context.Background(), q)
		if sqlState(err) != "53200" || !strings.Contains(err.Error(), "out of memory") {
			t.Fatalf("%s: %v, want 53200", q, err)
		}
	}
	outOfMemory(`REFRESH MATERIALIZED VIEW mv FULL`)
	if got := strings.Join(rows(t, c, `SELECT * FROM mv`), ","); got != before {
		t.Fatalf("the failed refresh changed the view: %d rows", len(rows(t, c, `SELECT * FROM mv`)))
	}
	outOfMemory(`CREATE MATERIALIZED VIEW mv2 AS SELECT id, s FROM t`)
	if got := rows(t, c, `SELECT count(*) FROM pg_matviews WHERE matviewname = 'mv2'`); len(got) != 1 || got[0] != "0" {
		t.Fatalf("the failed CREATE left a view: %v", got)
	}
	// What fits still refreshes, and a failed refresh left the budget
	// whole.
	exec(t, c, `DELETE FROM t WHERE id > 6000`)
	exec(t, c, `REFRESH MATERIALIZED VIEW mv FULL`)
	if got := rows(t, c, `SELECT count(*) FROM mv`); len(got) != 1 || got[0] != "6000" {
		t.Fatalf("after the refresh that fits: %v", got)
	}
}
