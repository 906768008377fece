package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/storage"
)

// Secondary indexes and UNIQUE constraints end to end (R-T10): entries
// always match the rows, whatever the writes; concurrent inserts of one
// unique value; a point lookup by an indexed column.

func startIndexServer(t testing.TB, dir string) *Server {
	t.Helper()
	cfg := Config{Logger: slog.New(slog.DiscardHandler), Listen: "127.0.0.1:0", Database: "mvserver", MaxConnections: 40, TableDefaults: catalog.AllOn}
	if dir == "" {
		cfg.InMemory = true
	} else {
		cfg.DataDir = dir
	}
	srv, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func indexConn(t testing.TB, srv *Server) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), "postgres://tester@"+srv.Addr().String()+"/mvserver?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// verifyIndexes checks, in a transaction of its own, that every index of
// every table holds exactly the entries its rows call for.
func verifyIndexes(t *testing.T, srv *Server) int {
	t.Helper()
	txn := srv.db.Begin()
	defer txn.Rollback()
	cat, err := srv.cat.Snapshot(txn)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tbl := range cat.Tables() {
		for i := range tbl.Indexes {
			if err := txn.VerifyIndex(storage.TableID(tbl.ID), exec.IndexInfo(&tbl.Indexes[i])); err != nil {
				t.Fatalf("index %s of %s: %v", tbl.Indexes[i].Name, tbl.Name, err)
			}
			n++
		}
	}
	return n
}

func seed(t *testing.T) *rand.Rand {
	s := rand.Uint64()
	if v := os.Getenv("SEED"); v != "" {
		s, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (SEED=%d replays it)", s, s)
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
}

// TestIndexConsistencyRandomDML runs random writes — inserts (some
// violating a unique key), upserts, updates moving keys and indexed
// values, deletes, TRUNCATE, COPY, index and constraint DDL, in
// transactions committed or rolled back — and after every round checks
// each index entry by entry against its rows, and index lookups against
// full scans. Then it restarts the server on its data directory and
// checks again.
func TestIndexConsistencyRandomDML(t *testing.T) {
	r := seed(t)
	dir := t.TempDir()
	srv := startIndexServer(t, dir)
	ctx := context.Background()
	c := indexConn(t, srv)
	mustExec := func(sql string) {
		t.Helper()
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	mustExec(`CREATE TABLE t (id int PRIMARY KEY, a int UNIQUE, b text, c int)`)
	mustExec(`CREATE INDEX t_b ON t (b)`)
	mustExec(`CREATE INDEX t_c_a ON t (c DESC, a)`)
	mustExec(`CREATE TABLE u (k text, v int, CONSTRAINT u_k UNIQUE NULLS NOT DISTINCT (k))`)
	mustExec(`CREATE INDEX u_v ON u (v)`)
	val := func(max int) string {
		if r.IntN(6) == 0 {
			return "NULL"
		}
		return strconv.Itoa(r.IntN(max))
	}
	text := func() string {
		if r.IntN(6) == 0 {
			return "NULL"
		}
		return "'" + string(rune('p'+r.IntN(5))) + "'"
	}
	stmt := func() string {
		switch r.IntN(16) {
		case 0, 1, 2:
			return fmt.Sprintf("INSERT INTO t VALUES (%d, %s, %s, %s)", r.IntN(80), val(50), text(), val(6))
		case 3:
			return fmt.Sprintf("INSERT INTO t VALUES (%d, %s, %s, %s) ON CONFLICT (a) DO UPDATE SET c = excluded.c, b = excluded.b", r.IntN(80), val(50), text(), val(6))
		case 4:
			return fmt.Sprintf("INSERT INTO t VALUES (%d, %s, %s, %s), (%d, %s, %s, %s) ON CONFLICT DO NOTHING", r.IntN(80), val(50), text(), val(6), r.IntN(80), val(50), text(), val(6))
		case 5:
			return fmt.Sprintf("UPDATE t SET a = %s WHERE id = %d", val(50), r.IntN(80))
		case 6:
			return fmt.Sprintf("UPDATE t SET id = id + 100 WHERE b = %s AND id < 40", text())
		case 7:
			return fmt.Sprintf("UPDATE t SET b = %s, c = c + 1 WHERE c = %s", text(), val(6))
		case 8:
			return fmt.Sprintf("DELETE FROM t WHERE a = %s", val(50))
		case 9:
			lo := r.IntN(200)
			return fmt.Sprintf("DELETE FROM t WHERE id >= %d AND id < %d", lo, lo+r.IntN(20))
		case 10:
			return fmt.Sprintf("INSERT INTO u VALUES (%s, %s)", text(), val(10))
		case 11:
			return fmt.Sprintf("UPDATE u SET k = %s WHERE v = %s", text(), val(10))
		case 12:
			return fmt.Sprintf("DELETE FROM u WHERE k = %s", text())
		case 13:
			if r.IntN(4) == 0 {
				return "TRUNCATE t"
			}
			return "DELETE FROM u WHERE v > 7"
		case 14:
			if r.IntN(2) == 0 {
				return "CREATE INDEX IF NOT EXISTS t_extra ON t (b, c)"
			}
			return "DROP INDEX IF EXISTS t_extra"
		default:
			if r.IntN(2) == 0 {
				return "ALTER TABLE t ADD CONSTRAINT t_bc UNIQUE (b, c)"
			}
			return "ALTER TABLE t DROP CONSTRAINT IF EXISTS t_bc"
		}
	}
	// check compares lookups through each index with full scans
	// (an expression on the column reads no index).
	check := func() {
		t.Helper()
		for _, q := range []struct{ indexed, scanned string }{
			{"SELECT id FROM t WHERE a = $1 ORDER BY id", "SELECT id FROM t WHERE a + 0 = $1 ORDER BY id"},
			{"SELECT id FROM t WHERE c = $1 ORDER BY id", "SELECT id FROM t WHERE c + 0 = $1 ORDER BY id"},
			{"SELECT id FROM t WHERE a < $1 ORDER BY id", "SELECT id FROM t WHERE a + 0 < $1 ORDER BY id"},
			{"SELECT v FROM u WHERE v = $1 ORDER BY v", "SELECT v FROM u WHERE v + 0 = $1 ORDER BY v"},
		} {
			for _, arg := range []int{0, 3, 5, 25} {
				a, b := queryInts(t, c, q.indexed, arg), queryInts(t, c, q.scanned, arg)
				if !slices.Equal(a, b) {
					t.Fatalf("%s [%d]: %v; a full scan: %v", q.indexed, arg, a, b)
				}
			}
		}
	}
	for round := 0; round < 40; round++ {
		explicit := r.IntN(2) == 0
		if explicit {
			mustExec("BEGIN")
		}
		failed := false
		for i := 0; i < 12 && !failed; i++ {
			if _, err := c.Exec(ctx, stmt()); err != nil {
				code := pgCodeOf(err)
				if code != "23505" && code != "21000" && code != "42P07" && code != "42704" {
					t.Fatalf("round %d: %v", round, err)
				}
				failed = explicit // the transaction is aborted
			}
		}
		if r.IntN(4) == 0 {
			rows := [][]any{{"q", int32(r.IntN(10))}, {nil, int32(r.IntN(10))}}
			if _, err := c.CopyFrom(ctx, pgx.Identifier{"u"}, []string{"k", "v"}, pgx.CopyFromRows(rows)); err != nil {
				if pgCodeOf(err) != "23505" && pgCodeOf(err) != "25P02" {
					t.Fatalf("round %d: COPY: %v", round, err)
				}
				failed = explicit
			}
		}
		if explicit {
			if failed || r.IntN(3) == 0 {
				mustExec("ROLLBACK")
			} else {
				mustExec("COMMIT")
			}
		}
		verifyIndexes(t, srv)
		check()
	}
	n := verifyIndexes(t, srv)
	c.Close(ctx)
	if err := srv.Shutdown(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	srv = startIndexServer(t, dir)
	defer srv.Shutdown(5 * time.Second)
	if got := verifyIndexes(t, srv); got != n {
		t.Fatalf("%d indexes after restart, %d before", got, n)
	}
	c = indexConn(t, srv)
	check()
}

func pgCodeOf(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func queryInts(t *testing.T, c *pgx.Conn, q string, arg int) []int64 {
	t.Helper()
	rows, err := c.Query(context.Background(), q, arg)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// TestUniqueViolationDetails checks what a unique violation says besides
// its SQLSTATE: the constraint, the table and the key, as PostgreSQL does.
func TestUniqueViolationDetails(t *testing.T) {
	srv := startIndexServer(t, "")
	defer srv.Shutdown(5 * time.Second)
	ctx := context.Background()
	c := indexConn(t, srv)
	for _, s := range []string{
		`CREATE TABLE customers (id int PRIMARY KEY, email varchar(200) UNIQUE, a int, b text)`,
		`INSERT INTO customers VALUES (1, 'x@y', 1, 'p'), (2, 'z@y', 1, 'p')`,
	} {
		if _, err := c.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ sql, msg, detail, constraint string }{
		{`INSERT INTO customers VALUES (3, 'x@y', 0, '')`, `duplicate key value violates unique constraint "customers_email_key"`, "Key (email)=(x@y) already exists.", "customers_email_key"},
		{`UPDATE customers SET email = 'x@y' WHERE id = 2`, `duplicate key value violates unique constraint "customers_email_key"`, "Key (email)=(x@y) already exists.", "customers_email_key"},
		{`ALTER TABLE customers ADD UNIQUE (a, b)`, `could not create unique index "customers_a_b_key"`, "Key (a, b)=(1, p) is duplicated.", "customers_a_b_key"},
		{`CREATE UNIQUE INDEX ON customers (b)`, `could not create unique index "customers_b_idx"`, "Key (b)=(p) is duplicated.", "customers_b_idx"},
	} {
		_, err := c.Exec(ctx, tc.sql)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "23505" || pe.Message != tc.msg || pe.Detail != tc.detail || pe.ConstraintName != tc.constraint || pe.TableName != "customers" {
			t.Errorf("%s: got %#v", tc.sql, err)
		}
	}
}

// TestConcurrentUniqueInsert: transactions that insert one unique value
// at once, none seeing the others: exactly one commits, the others fail
// with 23505 naming the constraint (at the insert when the value is
// already committed, else at COMMIT).
func TestConcurrentUniqueInsert(t *testing.T) {
	srv := startIndexServer(t, "")
	defer srv.Shutdown(5 * time.Second)
	ctx := context.Background()
	admin := indexConn(t, srv)
	if _, err := admin.Exec(ctx, `CREATE TABLE users (id int PRIMARY KEY, email text UNIQUE)`); err != nil {
		t.Fatal(err)
	}

	// Two connections, interleaved by hand: B's insert cannot see A's
	// uncommitted row; A commits first; B's COMMIT fails.
	a, b := indexConn(t, srv), indexConn(t, srv)
	for _, s := range []struct {
		c   *pgx.Conn
		sql string
	}{{a, "BEGIN"}, {b, "BEGIN"}, {a, "INSERT INTO users VALUES (1, 'x@y')"}, {b, "INSERT INTO users VALUES (2, 'x@y')"}, {a, "COMMIT"}} {
		if _, err := s.c.Exec(ctx, s.sql); err != nil {
			t.Fatalf("%s: %v", s.sql, err)
		}
	}
	_, err := b.Exec(ctx, "COMMIT")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" || pe.ConstraintName != "users_email_key" || pe.Detail != "Key (email)=(x@y) already exists." {
		t.Fatalf("second committer: %#v", err)
	}

	// Many at once.
	const writers = 8
	conns := make([]*pgx.Conn, writers)
	for w := range conns {
		conns[w] = indexConn(t, srv)
	}
	for round := 0; round < 5; round++ {
		value := fmt.Sprintf("v%d@y", round)
		var wg sync.WaitGroup
		start := make(chan struct{})
		results := make([]error, writers)
		for w, conn := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				tx, err := conn.Begin(ctx)
				if err != nil {
					results[w] = err
					return
				}
				if _, err := tx.Exec(ctx, "INSERT INTO users VALUES ($1, $2)", 100+round*writers+w, value); err != nil {
					tx.Rollback(ctx)
					results[w] = err
					return
				}
				results[w] = tx.Commit(ctx)
			}()
		}
		close(start)
		wg.Wait()
		ok := 0
		for _, err := range results {
			switch {
			case err == nil:
				ok++
			case pgCodeOf(err) == "23505" || pgCodeOf(err) == "40001":
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if ok != 1 {
			t.Fatalf("round %d: %d transactions committed %s", round, ok, value)
		}
		var n int
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM users WHERE email = $1", value).Scan(&n); err != nil || n != 1 {
			t.Fatalf("round %d: %d rows with %s (%v)", round, n, value, err)
		}
	}
	verifyIndexes(t, srv)
}

// BenchmarkIndexLookup1M looks one row up by an indexed non-key column of
// a 1M-row table, through the wire protocol, with the index and without
// it (a full scan), and by the primary key for comparison:
//
//	go test -run '^$' -bench 'IndexLookup1M/(no-index|^index|primary)' -benchtime 20x ./app
//
// (no-index takes half a second a lookup: give it few iterations;
// -bench 'IndexLookup1M/^index$' -benchtime 5000x times the index alone.)
func BenchmarkIndexLookup1M(b *testing.B) {
	const rows = 1_000_000
	srv, err := Start(Config{Logger: slog.New(slog.DiscardHandler), DataDir: b.TempDir(), Listen: "127.0.0.1:0", Database: "mvserver", MaxConnections: 10, TableDefaults: catalog.AllOn})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown(5 * time.Second)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, "postgres://bench@"+srv.Addr().String()+"/mvserver?sslmode=disable")
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE users (id BIGINT PRIMARY KEY, email TEXT, score INT)`); err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	for base := 0; base < rows; base += 5000 {
		src := pgx.CopyFromSlice(5000, func(i int) ([]any, error) {
			n := base + i
			sb.Reset()
			fmt.Fprintf(&sb, "user%d@example.org", n*7919%rows)
			return []any{int64(n), sb.String(), int32(n % 1000)}, nil
		})
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{"users"}, []string{"id", "email", "score"}, src); err != nil {
			b.Fatal(err)
		}
	}
	lookup := func(b *testing.B) {
		i := 0
		for b.Loop() {
			email := fmt.Sprintf("user%d@example.org", (i*104729)%rows)
			i++
			var id int64
			if err := conn.QueryRow(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("primary-key", func(b *testing.B) {
		i := 0
		for b.Loop() {
			var email string
			if err := conn.QueryRow(ctx, "SELECT email FROM users WHERE id = $1", int64(i*104729%rows)).Scan(&email); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("no-index", lookup)
	start := time.Now()
	if _, err := conn.Exec(ctx, `CREATE UNIQUE INDEX users_email ON users (email)`); err != nil {
		b.Fatal(err)
	}
	build := time.Since(start)
	b.Run("index", func(b *testing.B) {
		lookup(b)
		b.ReportMetric(build.Seconds(), "build-s")
	})
}

// TestIndexDDLConcurrentWrites: CREATE INDEX and a concurrent write to
// its table cannot both commit (the build would miss the row, or the
// write its entry): whichever commits second gets 40001.
func TestIndexDDLConcurrentWrites(t *testing.T) {
	srv := startIndexServer(t, "")
	defer srv.Shutdown(5 * time.Second)
	ctx := context.Background()
	a, b := indexConn(t, srv), indexConn(t, srv)
	run := func(c *pgx.Conn, sql string) error {
		_, err := c.Exec(ctx, sql)
		return err
	}
	for _, s := range []string{`CREATE TABLE t (id int PRIMARY KEY, v int)`, `INSERT INTO t VALUES (1, 1)`} {
		if err := run(a, s); err != nil {
			t.Fatal(err)
		}
	}
	// The write first, the build commits in between.
	for _, s := range []string{"BEGIN", "INSERT INTO t VALUES (2, 2)"} {
		if err := run(a, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := run(b, "CREATE INDEX t_v ON t (v)"); err != nil {
		t.Fatal(err)
	}
	if err := run(a, "COMMIT"); pgCodeOf(err) != "40001" {
		t.Fatalf("write committed after a concurrent CREATE INDEX: %v", err)
	}
	// The build first, the write commits in between.
	for _, s := range []string{"BEGIN", "CREATE UNIQUE INDEX t_v2 ON t (v)"} {
		if err := run(a, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := run(b, "INSERT INTO t VALUES (3, 1)"); err != nil {
		t.Fatal(err)
	}
	if err := run(a, "COMMIT"); pgCodeOf(err) != "40001" {
		t.Fatalf("CREATE INDEX committed after a concurrent write: %v", err)
	}
	verifyIndexes(t, srv)
	var n int
	if err := a.QueryRow(ctx, "SELECT count(*) FROM t WHERE v = 1").Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d rows with v = 1 (%v)", n, err)
	}
}
