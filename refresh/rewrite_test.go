package refresh_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mvserver/mvserver/app"
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/refresh"
)

// TestFullRefreshWritesGeneration: past the rewrite threshold, CREATE
// MATERIALIZED VIEW and REFRESH … FULL write the view as a new generation.
// The view equals its query (duplicates, a unique index), a reader begun
// before the refresh keeps the old content, a view on the view recomputes
// in full saying why, a repeated unique key fails with 23505 leaving the
// view as it was, and a CREATE inside a transaction block reads its view.
func TestFullRefreshWritesGeneration(t *testing.T) {
	// Views of more than 50 rows are not written as a difference.
	defer refresh.SetChunking(1<<20, 50)()
	srv, err := app.Start(app.Config{Logger: slog.New(slog.DiscardHandler), InMemory: true, Listen: "127.0.0.1:0", Database: "mvserver",
		MaxConnections: 20, TableDefaults: catalog.AllOn, RewriteThreshold: 100})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(2 * time.Second) })
	url := "postgres://tester@" + srv.Addr().String() + "/mvserver?sslmode=disable"
	c := connect(t, url)
	exec(t, c, `CREATE TABLE src (id INT PRIMARY KEY, g INT, v TEXT)`)
	exec(t, c, `INSERT INTO src SELECT i, i, 'v' || (i % 37) FROM generate_series(1, 1000) AS i`)
	// A bag: every row repeated many times.
	exec(t, c, `CREATE MATERIALIZED VIEW bag AS SELECT g % 10 AS k, v FROM src`)
	exec(t, c, `CREATE MATERIALIZED VIEW uq AS SELECT g, v FROM src`)
	exec(t, c, `CREATE UNIQUE INDEX uq_g ON uq (g)`)
	exec(t, c, `CREATE MATERIALIZED VIEW over AS SELECT k, count(*) AS n FROM bag GROUP BY k`)
	same := func(view, query string) {
		t.Helper()
		if got, want := rows(t, c, `SELECT * FROM `+view), rows(t, c, query); !slices.Equal(got, want) {
			t.Fatalf("%s: %d rows, its query %d", view, len(got), len(want))
		}
	}
	same("bag", `SELECT g % 10, v FROM src`)
	same("uq", `SELECT g, v FROM src`)
	if got := rows(t, c, `SELECT count(*) FROM bag WHERE k = 3 AND v = 'v3'`); got[0] == "0" {
		t.Fatal("bag lost its duplicates")
	}

	old := rows(t, c, `SELECT * FROM bag`)
	reader := connect(t, url)
	exec(t, reader, `BEGIN ISOLATION LEVEL REPEATABLE READ`)
	if n := len(rows(t, reader, `SELECT * FROM bag`)); n != 1000 {
		t.Fatalf("reader: %d rows", n)
	}
	exec(t, c, `UPDATE src SET v = 'w' || id WHERE id % 3 = 0`)
	exec(t, c, `INSERT INTO src SELECT i, i, 'new' FROM generate_series(1001, 1500) AS i`)
	exec(t, c, `REFRESH MATERIALIZED VIEW bag FULL`)
	exec(t, c, `REFRESH MATERIALIZED VIEW uq FULL`)
	same("bag", `SELECT g % 10, v FROM src`)
	same("uq", `SELECT g, v FROM src`)
	if got := rows(t, reader, `SELECT * FROM bag`); !slices.Equal(got, old) {
		t.Fatalf("a reader begun before the refresh sees %d rows, not its %d", len(got), len(old))
	}
	exec(t, reader, `COMMIT`)
	// Lookups through the unique index of the new generation.
	if got := rows(t, c, `SELECT v FROM uq WHERE g = 1200`); !slices.Equal(got, []string{"new"}) {
		t.Fatalf("uq at g = 1200: %v", got)
	}

	exec(t, c, `REFRESH MATERIALIZED VIEW over`)
	same("over", `SELECT g % 10, count(*) FROM src GROUP BY 1`)
	// A view on a view whose rewrite recorded no row changes (small
	// enough that the change is read, not estimated away).
	exec(t, c, `CREATE TABLE few (id INT PRIMARY KEY, v INT)`)
	exec(t, c, `INSERT INTO few SELECT i, i % 5 FROM generate_series(1, 300) AS i`)
	exec(t, c, `CREATE MATERIALIZED VIEW fewv AS SELECT id, v FROM few`)
	exec(t, c, `CREATE MATERIALIZED VIEW fewsum AS SELECT v, count(*) AS n FROM fewv GROUP BY v`)
	exec(t, c, `UPDATE few SET v = 9 WHERE id < 50`)
	exec(t, c, `REFRESH MATERIALIZED VIEW fewv FULL`)
	exec(t, c, `REFRESH MATERIALIZED VIEW fewsum`)
	same("fewsum", `SELECT v, count(*) FROM few GROUP BY v`)
	var details string
	if err := c.QueryRow(context.Background(), `SELECT details FROM event_log('fewsum') WHERE event_type = 'planning_information' ORDER BY timestamp DESC LIMIT 1`, pgx.QueryExecModeSimpleProtocol).Scan(&details); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(details, "SOURCE_REWRITTEN") {
		t.Fatalf("the view over a rewritten view planned: %s", details)
	}
	var tc *pgconn.PgError
	if _, err := c.Exec(context.Background(), `SELECT * FROM table_changes('fewv', 1)`, pgx.QueryExecModeSimpleProtocol); !errors.As(err, &tc) || !strings.Contains(tc.Message, "rewrote it whole") {
		t.Fatalf("table_changes across the rewrite: %v", err)
	}
	// An incremental refresh of bag after its rewrite works on the new
	// generation's rows (copy numbers of any chunk).
	exec(t, c, `DELETE FROM src WHERE id % 7 = 0`)
	exec(t, c, `INSERT INTO src SELECT i, i, 'v3' FROM generate_series(2001, 2100) AS i`)
	exec(t, c, `REFRESH MATERIALIZED VIEW bag`)
	same("bag", `SELECT g % 10, v FROM src`)

	// Two rows of one g: the unique index of uq refuses the new content.
	before := rows(t, c, `SELECT * FROM uq`)
	exec(t, c, `UPDATE src SET g = 5 WHERE id = 6`)
	_, err = c.Exec(context.Background(), `REFRESH MATERIALIZED VIEW uq FULL`, pgx.QueryExecModeSimpleProtocol)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" {
		t.Fatalf("refresh repeating a unique key: %v", err)
	}
	if got := rows(t, c, `SELECT * FROM uq`); !slices.Equal(got, before) {
		t.Fatal("a failed refresh changed the view")
	}

	// Inside a transaction block the new view is read back at once.
	exec(t, c, `BEGIN`)
	exec(t, c, `CREATE MATERIALIZED VIEW inblock AS SELECT id, v FROM src`)
	same("inblock", `SELECT id, v FROM src`)
	exec(t, c, `COMMIT`)
	same("inblock", `SELECT id, v FROM src`)
}
