package session_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/big"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/mvserver/mvserver/app"
	"github.com/mvserver/mvserver/catalog"
)

// BenchmarkCopyFrom1M loads 1M rows of a 4-column table with COPY FROM
// STDIN through the wire protocol, into a server on disk (the whole path:
// decoding, text input, the insert path and the commit); run it with
// -cpuprofile to see where the time goes. Against PostgreSQL 15 on the same
// machine, time `psql -c "\copy t from 'file'"` into
// t (id bigint primary key, n int, s text, f double precision) on both
// servers (a fresh mvserver data directory each run).
func BenchmarkCopyFrom1M(b *testing.B) {
	const rows = 1_000_000
	var data bytes.Buffer
	for i := 1; i <= rows; i++ {
		fmt.Fprintf(&data, "%d\t%d\tname-%d\t%d.%03d\n", i, i*7919%100000, i, i%1000, i%997)
	}
	srv, err := app.Start(app.Config{Logger: slog.New(slog.DiscardHandler), DataDir: b.TempDir(), Listen: "127.0.0.1:0", Database: "mvserver", MaxConnections: 10, TableDefaults: catalog.AllOn})
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
	b.SetBytes(int64(data.Len()))
	for b.Loop() {
		b.StopTimer()
		if _, err := conn.Exec(ctx, `DROP TABLE IF EXISTS t; CREATE TABLE t (id BIGINT PRIMARY KEY, n INT, s TEXT, f DOUBLE PRECISION)`); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		tag, err := conn.PgConn().CopyFrom(ctx, bytes.NewReader(data.Bytes()), "COPY t FROM STDIN")
		if err != nil {
			b.Fatal(err)
		}
		if tag.RowsAffected() != rows {
			b.Fatalf("tag %s", tag)
		}
	}
}

// BenchmarkCopyFromCustomer loads 150k rows shaped like TPC-H's customer
// (workload T's worst COPY ratio: an integer key, five strings of 10 to
// 117 bytes, a DECIMAL(15,2)) with pgx's binary COPY, as mvbench does.
func BenchmarkCopyFromCustomer(b *testing.B) {
	const rows = 150_000
	srv, err := app.Start(app.Config{Logger: slog.New(slog.DiscardHandler), DataDir: b.TempDir(), Listen: "127.0.0.1:0", Database: "mvserver", MaxConnections: 10, TableDefaults: catalog.AllOn})
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
	data := make([][]any, rows)
	for i := range data {
		data[i] = []any{int32(i + 1), fmt.Sprintf("Customer#%09d", i+1), fmt.Sprintf("IVhzIApeRb ot,c,E%d", i*31), int32(i % 25),
			fmt.Sprintf("%02d-%03d-%03d-%04d", 10+i%25, i%1000, (i*7)%1000, (i*13)%10000),
			pgtype.Numeric{Int: big.NewInt(int64(i*7919%1_100_000 - 100_000)), Exp: -2, Valid: true},
			[]string{"BUILDING", "AUTOMOBILE", "MACHINERY", "HOUSEHOLD", "FURNITURE"}[i%5],
			fmt.Sprintf("regular deposits wake furiously. quickly final packages haggle slyly across the ironic %d ideas. carefully even", i)}
	}
	cols := []string{"c_custkey", "c_name", "c_address", "c_nationkey", "c_phone", "c_acctbal", "c_mktsegment", "c_comment"}
	for b.Loop() {
		b.StopTimer()
		if _, err := conn.Exec(ctx, `DROP TABLE IF EXISTS customer; CREATE TABLE customer (c_custkey INTEGER, c_name VARCHAR(25), c_address VARCHAR(40), c_nationkey INTEGER,
			c_phone CHAR(15), c_acctbal DECIMAL(15,2), c_mktsegment CHAR(10), c_comment VARCHAR(117), PRIMARY KEY (c_custkey))`); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		n, err := conn.CopyFrom(ctx, pgx.Identifier{"customer"}, cols, pgx.CopyFromRows(data))
		if err != nil {
			b.Fatal(err)
		}
		if n != rows {
			b.Fatalf("copied %d rows", n)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
