package server

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mvserver/mvserver/pgerror"
)

// The simple query protocol driven by pgx (QueryExecModeSimpleProtocol sends
// every statement as one Query message).

func TestSimpleQueryPgx(t *testing.T) {
	ts := startServer(t, Config{})
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	ctx := testCtx(t)

	var one int32
	if err := conn.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("select 1: %d, %v", one, err)
	}

	// A result far larger than the output buffer streams through it.
	const n = 100_000
	rows, err := conn.Query(ctx, "select n from generate(100000)")
	if err != nil {
		t.Fatal(err)
	}
	var count, sum int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		count++
		sum += v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if count != n || sum != n*(n+1)/2 {
		t.Fatalf("got %d rows summing to %d", count, sum)
	}
	if tag := rows.CommandTag().String(); tag != "SELECT 100000" {
		t.Fatalf("tag %q", tag)
	}
}

func TestSimpleQueryMultiStatementPgconn(t *testing.T) {
	ts := startServer(t, Config{})
	pc := ts.connect(t, pgx.QueryExecModeSimpleProtocol).PgConn()
	ctx := testCtx(t)

	results, err := pc.Exec(ctx, "select 1; select n from generate(3); insert 7").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, r := range results {
		tags = append(tags, r.CommandTag.String())
	}
	if got := len(results); got != 3 || tags[0] != "SELECT 1" || tags[1] != "SELECT 3" || tags[2] != "INSERT 0 7" {
		t.Fatalf("results %v", tags)
	}
	if len(results[1].Rows) != 3 || string(results[1].Rows[2][0]) != "3" {
		t.Fatalf("rows %q", results[1].Rows)
	}

	// The error carries its position in the whole query text.
	_, err = pc.Exec(ctx, "select 1; error").ReadAll()
	if pe := wantCode(t, err, pgerror.SyntaxError); pe.Position != 11 || pe.Severity != "ERROR" {
		t.Fatalf("position %d severity %s", pe.Position, pe.Severity)
	}
}

func TestSimpleQueryStatusNoticesParams(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := testCtx(t)
	var notices []*pgconn.Notice
	cfg, err := pgconn.ParseConfig(ts.connString("application_name=first"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n) }
	pc, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close(ctx)

	if got := pc.ParameterStatus("application_name"); got != "first" {
		t.Fatalf("application_name at startup %q", got)
	}
	if _, err := pc.Exec(ctx, "notice; set application_name = second").ReadAll(); err != nil {
		t.Fatal(err)
	}
	if len(notices) != 1 || notices[0].Message != "this is a notice" || notices[0].Severity != "NOTICE" {
		t.Fatalf("notices %+v", notices)
	}
	if got := pc.ParameterStatus("application_name"); got != "second" {
		t.Fatalf("application_name after SET %q", got)
	}

	for _, step := range []struct {
		sql    string
		code   string
		status byte
	}{
		{"begin", "", 'T'},
		{"error", pgerror.SyntaxError, 'E'},
		{"select 1", pgerror.InFailedSQLTransaction, 'E'},
		{"rollback", "", 'I'},
		{"", "", 'I'}, // empty query
	} {
		_, err := pc.Exec(ctx, step.sql).ReadAll()
		if pgCode(err) != step.code {
			t.Fatalf("%q: error %v, want code %q", step.sql, err, step.code)
		}
		if pc.TxStatus() != step.status {
			t.Fatalf("%q: status %c, want %c", step.sql, pc.TxStatus(), step.status)
		}
	}
}

// BenchmarkSimpleQueryRows measures a 10,000-row result of a simple Query
// end to end over loopback (server and pgconn client in one process).
func BenchmarkSimpleQueryRows(b *testing.B) {
	ts := startServer(b, Config{Logger: discardLogger()})
	pc := ts.connect(b, pgx.QueryExecModeSimpleProtocol).PgConn()
	ctx := testCtx(b)
	b.ReportAllocs()
	for b.Loop() {
		mrr := pc.Exec(ctx, "select n from generate(10000)")
		n := 0
		for mrr.NextResult() {
			rr := mrr.ResultReader()
			for rr.NextRow() {
				n++
			}
		}
		if err := mrr.Close(); err != nil || n != 10000 {
			b.Fatalf("%d rows, %v", n, err)
		}
	}
	b.ReportMetric(float64(b.N*10000)/b.Elapsed().Seconds(), "rows/s")
}
