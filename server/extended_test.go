package server

import (
	"encoding/binary"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mvserver/mvserver/pgerror"
)

// The extended protocol driven by pgx: its default mode prepares and caches
// every statement (Parse/Describe/Sync, then Bind/Execute/Sync).

func TestExtendedPgx(t *testing.T) {
	ts := startServer(t, Config{})
	conn := ts.connect(t, pgx.QueryExecModeCacheStatement)
	ctx := testCtx(t)

	var s string
	if err := conn.QueryRow(ctx, "select $1", "hello").Scan(&s); err != nil || s != "hello" {
		t.Fatalf("select $1: %q, %v", s, err)
	}
	// pgx asks for int8 in binary; the rows stream through the portal.
	var sum int64
	rows, err := conn.Query(ctx, "select n from generate(10000)")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		sum += v
	}
	if err := rows.Err(); err != nil || sum != 10000*10001/2 {
		t.Fatalf("sum %d, %v", sum, err)
	}
	if rows.FieldDescriptions()[0].Format != 1 {
		t.Fatalf("format %d, want binary", rows.FieldDescriptions()[0].Format)
	}

	// Errors from Prepare reach the client and leave the connection usable.
	_, err = conn.Exec(ctx, "error")
	wantCode(t, err, pgerror.SyntaxError)
	if err := conn.QueryRow(ctx, "select $1", "again").Scan(&s); err != nil || s != "again" {
		t.Fatalf("after error: %q, %v", s, err)
	}

	// A named prepared statement, used twice.
	if _, err := conn.Prepare(ctx, "gen", "select n from generate(5)"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		var n int
		rows, err := conn.Query(ctx, "gen")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			n++
		}
		if rows.Err() != nil || n != 5 {
			t.Fatalf("gen: %d rows, %v", n, rows.Err())
		}
	}
}

func TestExtendedPgconn(t *testing.T) {
	ts := startServer(t, Config{})
	pc := ts.connect(t, pgx.QueryExecModeCacheStatement).PgConn()
	ctx := testCtx(t)

	// ExecParams: unnamed statement, binary results.
	res := pc.ExecParams(ctx, "select n from generate(3)", nil, nil, nil, []int16{1}).Read()
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if len(res.Rows) != 3 || res.FieldDescriptions[0].Format != 1 ||
		binary.BigEndian.Uint64(res.Rows[2][0]) != 3 {
		t.Fatalf("rows %x, fields %+v", res.Rows, res.FieldDescriptions)
	}

	// Prepare twice under one name: 42P05.
	if _, err := pc.Prepare(ctx, "p", "select 1", nil); err != nil {
		t.Fatal(err)
	}
	_, err := pc.Prepare(ctx, "p", "select 1", nil)
	wantCode(t, err, pgerror.DuplicatePreparedStatement)

	// Unknown statement: 26000.
	res = pc.ExecPrepared(ctx, "nope", nil, nil, nil).Read()
	wantCode(t, res.Err, pgerror.InvalidSQLStatementName)

	// A parameter missing from Bind: 08P01, an ERROR that leaves the
	// connection usable.
	res = pc.ExecParams(ctx, "select $1", nil, nil, nil, nil).Read()
	wantCode(t, res.Err, pgerror.ProtocolViolation)
	res = pc.ExecParams(ctx, "select $1", [][]byte{[]byte("x")}, nil, nil, nil).Read()
	if res.Err != nil || string(res.Rows[0][0]) != "x" {
		t.Fatalf("echo: %q, %v", res.Rows, res.Err)
	}

	// A batch with an error in the middle: the statements before it ran,
	// the ones after it were skipped, the connection goes on.
	batch := &pgconn.Batch{}
	batch.ExecParams("select 1", nil, nil, nil, nil)
	batch.ExecParams("error", nil, nil, nil, nil)
	batch.ExecParams("insert 1", nil, nil, nil, nil)
	results, err := pc.ExecBatch(ctx, batch).ReadAll()
	wantCode(t, err, pgerror.SyntaxError)
	if len(results) != 1 || results[0].CommandTag.String() != "SELECT 1" {
		t.Fatalf("batch results %+v", results)
	}
	if res := pc.ExecParams(ctx, "insert 2", nil, nil, nil, nil).Read(); res.Err != nil {
		t.Fatal(res.Err)
	}

	// An error from Sync (the implicit commit) is reported.
	res = pc.ExecParams(ctx, "fail sync", nil, nil, nil, nil).Read()
	wantCode(t, res.Err, pgerror.SerializationFailure)
	if pc.TxStatus() != 'I' {
		t.Fatalf("status %c", pc.TxStatus())
	}
}

// BenchmarkExtendedRows measures a 10,000-row result through
// Parse/Bind/Describe/Execute/Sync end to end over loopback.
func BenchmarkExtendedRows(b *testing.B) {
	ts := startServer(b, Config{Logger: discardLogger()})
	pc := ts.connect(b, pgx.QueryExecModeCacheStatement).PgConn()
	ctx := testCtx(b)
	b.ReportAllocs()
	for b.Loop() {
		rr := pc.ExecParams(ctx, "select n from generate(10000)", nil, nil, nil, []int16{1})
		n := 0
		for rr.NextRow() {
			n++
		}
		if _, err := rr.Close(); err != nil || n != 10000 {
			b.Fatalf("%d rows, %v", n, err)
		}
	}
	b.ReportMetric(float64(b.N*10000)/b.Elapsed().Seconds(), "rows/s")
}
