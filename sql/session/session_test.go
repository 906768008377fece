package session_test

import (
	"context"
	"errors"
	"log/slog"
	"math/big"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/mvserver/mvserver/app"
	"github.com/mvserver/mvserver/catalog"
)

func startServer(t testing.TB) string {
	t.Helper()
	srv, err := app.Start(app.Config{Logger: slog.New(slog.DiscardHandler), InMemory: true, Listen: "127.0.0.1:0", Database: "mvserver", MaxConnections: 20, TableDefaults: catalog.AllOn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(2 * time.Second) })
	return "postgres://tester@" + srv.Addr().String() + "/mvserver?sslmode=disable"
}

func connect(t *testing.T, url string, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	c, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// TestBinaryRoundTrip sends parameters and reads results in binary for
// every type of the foundation's list, through pgx's default (extended,
// binary) mode, and compares with the simple protocol's text.
func TestBinaryRoundTrip(t *testing.T) {
	url := startServer(t)
	ctx := context.Background()
	c := connect(t, url, pgx.QueryExecModeCacheStatement)
	_, err := c.Exec(ctx, `CREATE TABLE v (k INT PRIMARY KEY, b BOOLEAN, s SMALLINT, i INT, l BIGINT, r REAL, d DOUBLE PRECISION,
		n NUMERIC(20,4), t TEXT, vc VARCHAR(10), by BYTEA, dt DATE, ts TIMESTAMP, tz TIMESTAMPTZ)`)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2024, 3, 5, 10, 11, 12, 123456000, time.UTC)
	num := pgtype.Numeric{Int: big.NewInt(-12345678), Exp: -4, Valid: true}
	_, err = c.Exec(ctx, `INSERT INTO v VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14)`,
		1, true, int16(-7), int32(2147483647), int64(-9223372036854775808), float32(1.5), 2.25,
		num, "héllo", "abc", []byte{0, 1, 255}, time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC), ts, ts)
	if err != nil {
		t.Fatal(err)
	}
	var (
		b                bool
		s                int16
		i                int32
		l                int64
		r                float32
		d                float64
		n                pgtype.Numeric
		tx, vc           string
		by               []byte
		dt, gotTs, gotTz time.Time
	)
	err = c.QueryRow(ctx, `SELECT b, s, i, l, r, d, n, t, vc, by, dt, ts, tz FROM v WHERE k = $1`, 1).
		Scan(&b, &s, &i, &l, &r, &d, &n, &tx, &vc, &by, &dt, &gotTs, &gotTz)
	if err != nil {
		t.Fatal(err)
	}
	if !b || s != -7 || i != 2147483647 || l != -9223372036854775808 || r != 1.5 || d != 2.25 || tx != "héllo" || vc != "abc" || string(by) != "\x00\x01\xff" {
		t.Fatalf("scalar mismatch: %v %v %v %v %v %v %q %q %x", b, s, i, l, r, d, tx, vc, by)
	}
	if n.Int.Cmp(big.NewInt(-12345678)) != 0 || n.Exp != -4 {
		t.Fatalf("numeric %v e%d", n.Int, n.Exp)
	}
	if !dt.Equal(time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC)) || !gotTs.Equal(ts) || !gotTz.Equal(ts) {
		t.Fatalf("times %v %v %v", dt, gotTs, gotTz)
	}
	// The same row in text through the simple protocol.
	simple := connect(t, url, pgx.QueryExecModeSimpleProtocol)
	var text string
	if err := simple.QueryRow(ctx, `SELECT n::text || ' ' || ts::text || ' ' || tz::text FROM v`).Scan(&text); err != nil {
		t.Fatal(err)
	}
	if want := "-1234.5678 2024-03-05 10:11:12.123456 2024-03-05 10:11:12.123456+00"; text != want {
		t.Fatalf("text %q want %q", text, want)
	}
}

// TestExtendedBatchError: an error inside an extended-protocol batch in a
// transaction block fails the block.
func TestExtendedBatchError(t *testing.T) {
	url := startServer(t)
	ctx := context.Background()
	c := connect(t, url, pgx.QueryExecModeSimpleProtocol)
	if _, err := c.Exec(ctx, `CREATE TABLE n (i INT PRIMARY KEY); INSERT INTO n VALUES (1),(2),(3),(4),(5)`); err != nil {
		t.Fatal(err)
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	// A batch of three statements in one Sync, the second failing: the
	// rest is discarded until Sync and the block is failed.
	var b pgx.Batch
	b.Queue(`SELECT i FROM n ORDER BY i`)
	b.Queue(`SELECT 1/0`)
	b.Queue(`SELECT 2`)
	br := tx.SendBatch(ctx, &b)
	rows, err := br.Query()
	if err != nil {
		t.Fatal(err)
	}
	var got []int32
	for rows.Next() {
		var v int32
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	rows.Close()
	if len(got) != 5 || got[0] != 1 || got[4] != 5 {
		t.Fatalf("rows %v", got)
	}
	_, err = br.Exec()
	if pgCode(err) != "22012" {
		t.Fatalf("want 22012, got %v", err)
	}
	br.Close()
	// The explicit transaction is now failed (25P02) until ROLLBACK.
	_, err = tx.Exec(ctx, `SELECT 1`)
	if pgCode(err) != "25P02" {
		t.Fatalf("want 25P02, got %v", err)
	}
}

// TestSnapshotIsolationAndConflict: a transaction does not see later commits;
// a writer of a row another transaction changed since it began gets 40001.
func TestSnapshotIsolationAndConflict(t *testing.T) {
	url := startServer(t)
	ctx := context.Background()
	a := connect(t, url, pgx.QueryExecModeCacheStatement)
	b := connect(t, url, pgx.QueryExecModeCacheStatement)
	if _, err := a.Exec(ctx, `CREATE TABLE acct (id INT PRIMARY KEY, bal INT)`); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec(ctx, `INSERT INTO acct VALUES (1, 10)`); err != nil {
		t.Fatal(err)
	}
	ta, _ := a.Begin(ctx)
	var bal int32
	if err := ta.QueryRow(ctx, `SELECT bal FROM acct WHERE id = 1`).Scan(&bal); err != nil || bal != 10 {
		t.Fatalf("read %v %v", bal, err)
	}
	if _, err := b.Exec(ctx, `UPDATE acct SET bal = 20 WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	if err := ta.QueryRow(ctx, `SELECT bal FROM acct WHERE id = 1`).Scan(&bal); err != nil || bal != 10 {
		t.Fatalf("snapshot broken: %v %v", bal, err)
	}
	// The row was updated by a commit after this block began: the UPDATE
	// itself fails (PostgreSQL's REPEATABLE READ), and so does the block.
	_, err := ta.Exec(ctx, `UPDATE acct SET bal = bal + 1 WHERE id = 1`)
	if pgCode(err) != "40001" {
		t.Fatalf("want 40001 from the UPDATE, got %v", err)
	}
	if err := ta.Commit(ctx); !errors.Is(err, pgx.ErrTxCommitRollback) {
		t.Fatalf("commit of the failed block: %v", err)
	}
	if err := a.QueryRow(ctx, `SELECT bal FROM acct WHERE id = 1`).Scan(&bal); err != nil || bal != 20 {
		t.Fatalf("after conflict %v %v", bal, err)
	}
}

// TestCancel: a CancelRequest stops a running statement with 57014 and the
// connection stays usable.
func TestCancel(t *testing.T) {
	url := startServer(t)
	ctx := context.Background()
	c := connect(t, url, pgx.QueryExecModeSimpleProtocol)
	if _, err := c.Exec(ctx, `CREATE TABLE big (i INT)`); err != nil {
		t.Fatal(err)
	}
	// 4096 rows, then a cross join of four copies is 2.8e14 rows: only a
	// cancel ends it.
	if _, err := c.Exec(ctx, `INSERT INTO big VALUES `+values(4096)); err != nil {
		t.Fatal(err)
	}
	qctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err := c.Exec(qctx, `SELECT count(*) FROM big a, big b, big c, big d`)
	if err == nil {
		t.Fatal("expected the statement to be canceled")
	}
	if pgCode(err) != "57014" && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want 57014, got %v", err)
	}
	// pgx closes the connection when the context ends mid-query; a fresh
	// one must work and the server must still serve.
	c2 := connect(t, url, pgx.QueryExecModeSimpleProtocol)
	var n int64
	if err := c2.QueryRow(ctx, `SELECT count(*) FROM big`).Scan(&n); err != nil || n != 4096 {
		t.Fatalf("after cancel: %v %v", n, err)
	}
}

// TestStatementTimeout: SET statement_timeout bounds statements (57014).
func TestStatementTimeout(t *testing.T) {
	url := startServer(t)
	ctx := context.Background()
	c := connect(t, url, pgx.QueryExecModeSimpleProtocol)
	if _, err := c.Exec(ctx, `CREATE TABLE big (i INT); INSERT INTO big VALUES `+values(2048)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `SET statement_timeout = '200ms'`); err != nil {
		t.Fatal(err)
	}
	_, err := c.Exec(ctx, `SELECT count(*) FROM big a, big b, big c`)
	if pgCode(err) != "57014" {
		t.Fatalf("want 57014, got %v", err)
	}
	var one int
	if err := c.QueryRow(ctx, `SELECT 1`).Scan(&one); err != nil || one != 1 {
		t.Fatalf("after timeout: %v", err)
	}
}

func values(n int) string {
	b := make([]byte, 0, n*8)
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '(')
		b = append(b, []byte(itoa(i))...)
		b = append(b, ')')
	}
	return string(b)
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var d []byte
	for i > 0 {
		d = append([]byte{byte('0' + i%10)}, d...)
		i /= 10
	}
	return string(d)
}

// TestDeallocate: SQL DEALLOCATE closes a statement prepared through the
// protocol (what psqlODBC sends); an unknown name is 26000; DEALLOCATE ALL
// closes every named one.
func TestDeallocate(t *testing.T) {
	url := startServer(t)
	ctx := context.Background()
	c := connect(t, url, pgx.QueryExecModeSimpleProtocol)
	pc := c.PgConn()
	for _, name := range []string{"s1", "s2", "s3"} {
		if _, err := pc.Prepare(ctx, name, "SELECT 1", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Exec(ctx, `DEALLOCATE s1`); err != nil {
		t.Fatalf("DEALLOCATE s1: %v", err)
	}
	if _, err := c.Exec(ctx, `DEALLOCATE PREPARE s1`); pgCode(err) != "26000" {
		t.Fatalf("second DEALLOCATE s1: %v, want 26000", err)
	}
	if _, err := pc.ExecPrepared(ctx, "s1", nil, nil, nil).Close(); err == nil {
		t.Fatal("executing a deallocated statement succeeded")
	}
	if _, err := pc.ExecPrepared(ctx, "s2", nil, nil, nil).Close(); err != nil {
		t.Fatalf("s2 before DEALLOCATE ALL: %v", err)
	}
	if _, err := c.Exec(ctx, `DEALLOCATE ALL`); err != nil {
		t.Fatalf("DEALLOCATE ALL: %v", err)
	}
	for _, name := range []string{"s2", "s3"} {
		if _, err := pc.ExecPrepared(ctx, name, nil, nil, nil).Close(); err == nil {
			t.Fatalf("%s survived DEALLOCATE ALL", name)
		}
	}
}
