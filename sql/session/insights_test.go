package session_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// noticeConn is a connection that keeps the NOTICEs of each statement.
type noticeConn struct {
	t  *testing.T
	c  *pgx.Conn
	mu sync.Mutex
	ns []*pgconn.Notice
}

func connectNotices(t *testing.T, url string, mode pgx.QueryExecMode) *noticeConn {
	t.Helper()
	nc := &noticeConn{t: t}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		nc.mu.Lock()
		nc.ns = append(nc.ns, n)
		nc.mu.Unlock()
	}
	c, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	nc.c = c
	return nc
}

// exec runs one statement and returns the NOTICEs it raised as
// "message | hint" lines.
func (nc *noticeConn) exec(q string) []string {
	nc.t.Helper()
	nc.mu.Lock()
	nc.ns = nil
	nc.mu.Unlock()
	if _, err := nc.c.Exec(context.Background(), q); err != nil {
		nc.t.Fatalf("%s: %v", q, err)
	}
	nc.mu.Lock()
	defer nc.mu.Unlock()
	var out []string
	for _, n := range nc.ns {
		if n.Severity != "NOTICE" || n.Code != "00000" {
			nc.t.Errorf("%s: notice %q has severity %s code %s", q, n.Message, n.Severity, n.Code)
		}
		s := n.Message
		if n.Hint != "" {
			s += " | " + n.Hint
		}
		out = append(out, s)
	}
	return out
}

func expectNotices(t *testing.T, q string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s: notices\n%s\nwant\n%s", q, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestBlockerNotices: CREATE and REFRESH send one NOTICE per blocker, with
// where it is in the query, the reason and the fix as the hint (R-I9), in
// both protocols.
func TestBlockerNotices(t *testing.T) {
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
		t.Run(mode.String(), func(t *testing.T) {
			nc := connectNotices(t, startServer(t), mode)
			run := func(q string, want ...string) {
				t.Helper()
				expectNotices(t, q, nc.exec(q), want...)
			}
			run(`CREATE TABLE facts (id INT PRIMARY KEY, k INT, v DECIMAL(10,2)) TBLPROPERTIES (delta.enableChangeDataFeed = false)`)
			run(`CREATE TABLE dims (k INT PRIMARY KEY, name STRING) TBLPROPERTIES (delta.enableRowTracking = false)`)
			run(`INSERT INTO facts VALUES (1, 1, 2.50), (2, 2, 4.00)`)
			run(`INSERT INTO dims VALUES (1, 'one'), (2, 'two')`)

			// A missing change data feed: accepted, said after the first refresh.
			run("CREATE MATERIALIZED VIEW totals REFRESH POLICY INCREMENTAL AS\nSELECT k, sum(v) AS total\nFROM facts GROUP BY k",
				"refresh planned as FULL_RECOMPUTE: the view has not been computed yet",
				`materialized view "totals" cannot be refreshed incrementally until this is fixed: CHANGE_DATA_FEED_NOT_ENABLED at line 2, column 6 (public.facts): source public.facts does not record a change data feed | ALTER TABLE public.facts SET TBLPROPERTIES (delta.enableChangeDataFeed = true)`)
			// REFRESH says it again, after what the refresh did.
			run(`INSERT INTO facts VALUES (3, 1, 1.00)`)
			run(`REFRESH MATERIALIZED VIEW totals`,
				"refresh planned as FULL_RECOMPUTE: the query cannot be maintained incrementally: CHANGE_DATA_FEED_NOT_ENABLED: source public.facts does not record a change data feed (fix: ALTER TABLE public.facts SET TBLPROPERTIES (delta.enableChangeDataFeed = true))",
				`materialized view "totals" cannot be refreshed incrementally until this is fixed: CHANGE_DATA_FEED_NOT_ENABLED at line 2, column 6 (public.facts): source public.facts does not record a change data feed | ALTER TABLE public.facts SET TBLPROPERTIES (delta.enableChangeDataFeed = true)`)

			// Row tracking does not matter to an aggregate: no NOTICE.
			run(`CREATE MATERIALIZED VIEW names AS SELECT name, count(*) AS n FROM dims GROUP BY name`,
				"refresh planned as FULL_RECOMPUTE: the view has not been computed yet")
			// It does to a join (ROW_BASED); the NOTICE points at the
			// reference to the table.
			run(`CREATE MATERIALIZED VIEW joined AS SELECT f.id, d.name FROM dims d JOIN dims e ON d.k = e.k JOIN facts f ON f.k = d.k`,
				"refresh planned as FULL_RECOMPUTE: the view has not been computed yet",
				`materialized view "joined" cannot be refreshed incrementally until this is fixed: CHANGE_DATA_FEED_NOT_ENABLED at line 1, column 63 (public.facts): source public.facts does not record a change data feed | ALTER TABLE public.facts SET TBLPROPERTIES (delta.enableChangeDataFeed = true)`,
				`materialized view "joined" cannot be refreshed incrementally until this is fixed: ROW_TRACKING_NOT_ENABLED at line 1, column 26 (public.dims): source public.dims does not track row ids, which row-based maintenance needs | ALTER TABLE public.dims SET TBLPROPERTIES (delta.enableRowTracking = true)`)

			// A permanent blocker under AUTO: accepted, and said so.
			run(`CREATE MATERIALIZED VIEW pids AS SELECT k, pg_backend_pid() AS pid FROM dims`,
				"refresh planned as FULL_RECOMPUTE: the view has not been computed yet",
				`materialized view "pids" can never be refreshed incrementally: NON_DETERMINISTIC_EXPRESSION at line 1, column 11 (pg_backend_pid()): pg_backend_pid() returns a different value at each evaluation | remove the call or compute the value in a source table`,
				`materialized view "pids" cannot be refreshed incrementally until this is fixed: ROW_TRACKING_NOT_ENABLED at line 1, column 40 (public.dims): source public.dims does not track row ids, which row-based maintenance needs | ALTER TABLE public.dims SET TBLPROPERTIES (delta.enableRowTracking = true)`)
			// REFRESH POLICY FULL asked for full refreshes: nothing to say.
			run(`CREATE MATERIALIZED VIEW pids_full REFRESH POLICY FULL AS SELECT k, pg_backend_pid() AS pid FROM dims`,
				"refresh planned as FULL_RECOMPUTE: the view has not been computed yet")

			// ENABLE INCREMENTAL: one NOTICE per table changed.
			run(`ALTER MATERIALIZED VIEW joined ENABLE INCREMENTAL`,
				"set delta.enableRowTracking = true on table public.dims",
				"set delta.enableChangeDataFeed = true on table public.facts")
			run(`ALTER MATERIALIZED VIEW joined ENABLE INCREMENTAL`,
				"every source of joined already has the change data feed and row tracking")
			// ALTER … SET REFRESH POLICY INCREMENTAL on a view with no
			// blocker left: no NOTICE.
			run(`ALTER MATERIALIZED VIEW totals SET REFRESH POLICY INCREMENTAL STRICT`)
		})
	}
}
