package session_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// FuzzQuery: no statement text makes the server panic, hang or drop the
// connection — parse, bind and execution answer with an error at worst,
// and the session goes on. One server serves every input; each runs in a
// transaction that is rolled back, so inputs do not pile up state. Run with
// go test ./sql/session -run XXX -fuzz FuzzQuery.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{
		"SELECT k, sum(v) FROM t GROUP BY k HAVING count(*) > 1 ORDER BY 2 DESC LIMIT 3",
		"SELECT * FROM t JOIN u ON t.k = u.k WHERE u.name LIKE 'a%'",
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r",
		"SELECT k, row_number() OVER (PARTITION BY v ORDER BY k) FROM t QUALIFY row_number() OVER (ORDER BY k) = 1",
		"INSERT INTO t VALUES (9, 9) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v RETURNING *",
		"UPDATE t SET v = v * 2 WHERE k IN (SELECT k FROM u) RETURNING k",
		"SELECT ARRAY[1, 2] || 3, unnest(ARRAY['a', 'b']), generate_series(1, 3)",
		"SELECT c.relname FROM pg_class c WHERE c.relname OPERATOR(pg_catalog.~) '^(t)$' AND pg_table_is_visible(c.oid)",
		"CREATE MATERIALIZED VIEW mv AS SELECT k, count(*) FROM t GROUP BY k",
		"EXPLAIN ANALYZE SELECT * FROM t WHERE k BETWEEN 1 AND 3",
		"SELECT '{1,2}'::int[], 'x'::regclass, 1 << 3, E'\\x41'",
		"DECLARE c CURSOR FOR SELECT * FROM t",
	} {
		f.Add(s)
	}
	url := startServer(f)
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		f.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	ctx := context.Background()
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { c.Close(ctx) })
	if _, err = c.Exec(ctx, "CREATE TABLE t (k INT PRIMARY KEY, v INT); CREATE TABLE u (k INT, name TEXT); INSERT INTO t VALUES (1, 10), (2, 20), (3, 30); INSERT INTO u VALUES (1, 'ann'), (2, 'bob')"); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q string) {
		if strings.IndexByte(q, 0) >= 0 {
			return // a protocol string cannot hold NUL: FATAL 08P01 is right
		}
		qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		// A hang the deadline cannot end (the fuzzer would wait for ever
		// without naming the input) crashes with the input instead.
		watchdog := time.AfterFunc(20*time.Second, func() { panic(fmt.Sprintf("%q: hung for 20s", q)) })
		defer watchdog.Stop()
		if c.IsClosed() {
			// pgx drops the connection itself after a COPY it was not
			// ready for; start again.
			if c, err = pgx.ConnectConfig(ctx, cfg); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Exec(qctx, "BEGIN"); err != nil {
			t.Fatalf("BEGIN: %v", err)
		}
		_, err := c.Exec(qctx, q)
		var pe *pgconn.PgError
		switch {
		case err == nil:
		case errors.As(err, &pe):
			if pe.Severity == "FATAL" || pe.Severity == "PANIC" || pe.Code == "XX000" {
				t.Fatalf("%q: %s %s: %s", q, pe.Severity, pe.Code, pe.Message)
			}
		case errors.Is(err, context.DeadlineExceeded):
			t.Fatalf("%q: no answer within 10s", q)
		case strings.Contains(strings.ToLower(q), "copy"):
			return // COPY … STDIN/STDOUT through Exec: pgx gives up, not the server
		default:
			t.Fatalf("%q: %v", q, err)
		}
		if _, err := c.Exec(qctx, "ROLLBACK"); err != nil {
			t.Fatalf("%q: ROLLBACK: %v", q, err)
		}
	})
}
