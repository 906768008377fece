package session_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A session's temporary tables are its own: another session resolves the
// name to its own relations, cannot read them through pg_temp_N, and they
// are gone once the session ends.
func TestTempTableIsolation(t *testing.T) {
	ctx := context.Background()
	url := startServer(t)
	a := connect(t, url, pgx.QueryExecModeSimpleProtocol)
	b := connect(t, url, pgx.QueryExecModeSimpleProtocol)
	for _, q := range []string{"CREATE TABLE t (a INT)", "INSERT INTO t VALUES (1)", "CREATE TEMP TABLE t (a INT)", "INSERT INTO t VALUES (2), (3)"} {
		if _, err := a.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var ns string
	if err := a.QueryRow(ctx, "SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = 't' AND c.relpersistence = 't'").Scan(&ns); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := a.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("session a reads %d rows (%v), want its temporary table's 2", n, err)
	}
	if err := b.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("session b reads %d rows (%v), want the permanent table's 1", n, err)
	}
	if _, err := b.Exec(ctx, "SELECT * FROM "+ns+".t"); pgCode(err) != "0A000" {
		t.Fatalf("reading another session's temporary table: %v, want 0A000", err)
	}
	// Naming a's schema in search_path does not make its tables b's.
	if _, err := b.Exec(ctx, "SET search_path = "+ns+", public"); err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("session b with %s on its path reads %d rows (%v), want the permanent table's 1", ns, n, err)
	}
	if _, err := b.Exec(ctx, "RESET search_path"); err != nil {
		t.Fatal(err)
	}
	// b may have a temporary table of the same name.
	if _, err := b.Exec(ctx, "CREATE TEMP TABLE t (x TEXT)"); err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 0 {
		t.Fatalf("session b reads %d rows (%v) from its own temporary t, want 0", n, err)
	}
	// pg_class lists every session's temporary tables, as PostgreSQL's does;
	// information_schema.tables only the session's own.
	if err := b.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relname = 't' AND relpersistence = 't'").Scan(&n); err != nil || n != 2 {
		t.Fatalf("pg_class lists %d temporary t (%v), want 2", n, err)
	}
	if err := b.QueryRow(ctx, "SELECT count(*) FROM information_schema.tables WHERE table_name = 't' AND table_type = 'LOCAL TEMPORARY'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("information_schema.tables lists %d temporary t (%v), want 1", n, err)
	}

	// VACUUM of every table leaves other sessions' temporary ones alone.
	if _, err := b.Exec(ctx, "VACUUM"); err != nil {
		t.Fatal(err)
	}

	a.Close(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := b.QueryRow(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", ns).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still exists after its session ended", ns)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := b.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relname = 't'").Scan(&n); err != nil || n != 2 {
		t.Fatalf("pg_class lists %d t after a ended (%v), want the permanent one and b's", n, err)
	}
}

// A prepared SELECT's cached plan is rebound when a temporary table comes
// to hide (or stops hiding) the table its name resolved to.
func TestPreparedPlanFollowsTempTable(t *testing.T) {
	ctx := context.Background()
	c := connect(t, startServer(t), pgx.QueryExecModeCacheStatement)
	for _, q := range []string{"CREATE TABLE t (a INT)", "INSERT INTO t VALUES (1)"} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	read := func(want int) {
		t.Helper()
		var n int
		if err := c.QueryRow(ctx, "SELECT a FROM t").Scan(&n); err != nil || n != want {
			t.Fatalf("SELECT a FROM t = %d (%v), want %d", n, err, want)
		}
	}
	read(1)
	read(1)
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE t (a INT)", pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "INSERT INTO t VALUES (2)", pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}
	read(2)
	if _, err := c.Exec(ctx, "DROP TABLE t", pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}
	read(1)
}

// COPY reads into and writes out of a temporary table.
func TestCopyTempTable(t *testing.T) {
	ctx := context.Background()
	c := connect(t, startServer(t), pgx.QueryExecModeExec)
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE tc (k INT, v TEXT)"); err != nil {
		t.Fatal(err)
	}
	n, err := c.CopyFrom(ctx, pgx.Identifier{"tc"}, []string{"k", "v"}, pgx.CopyFromRows([][]any{{1, "a"}, {2, "b"}}))
	if err != nil || n != 2 {
		t.Fatalf("COPY FROM: %d, %v", n, err)
	}
	var buf bytesBuffer
	if _, err := c.PgConn().CopyTo(ctx, &buf, "COPY tc TO STDOUT"); err != nil {
		t.Fatal(err)
	}
	if got := string(buf); got != "1\ta\n2\tb\n" {
		t.Fatalf("COPY TO: %q", got)
	}
}

type bytesBuffer []byte

func (b *bytesBuffer) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }

// Sessions creating and dropping temporary tables at once do not fail
// each other's statements (every DDL writes the catalog generation; a
// lone temporary-table DDL that loses that race runs again).
func TestTempTablesConcurrentSessions(t *testing.T) {
	ctx := context.Background()
	url := startServer(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := 0; w < 4; w++ {
		c := connect(t, url, pgx.QueryExecModeSimpleProtocol)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				for _, q := range []string{fmt.Sprintf("CREATE TEMP TABLE x%d (a INT PRIMARY KEY)", i), fmt.Sprintf("INSERT INTO x%d VALUES (1)", i),
					fmt.Sprintf("CREATE TEMP TABLE y%d AS SELECT a FROM x%d", i, i), fmt.Sprintf("DROP TABLE x%d, y%d", i, i)} {
					if _, err := c.Exec(ctx, q); err != nil {
						errs <- fmt.Errorf("%s: %w", q, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A view over a temporary table becomes temporary with PostgreSQL's
// NOTICE, and goes when its session ends.
func TestTempViewNotice(t *testing.T) {
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(startServer(t))
	if err != nil {
		t.Fatal(err)
	}
	var notices []string
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n.Message) }
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, q := range []string{"CREATE TEMP TABLE tt (a INT)", "CREATE VIEW v AS SELECT a FROM tt"} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if len(notices) != 1 || notices[0] != `view "v" will be a temporary view` {
		t.Fatalf("notices %q", notices)
	}
	var p string
	if err := c.QueryRow(ctx, "SELECT relpersistence::text FROM pg_class WHERE relname = 'v'").Scan(&p); err != nil || p != "t" {
		t.Fatalf("relpersistence %q (%v), want t", p, err)
	}
}
