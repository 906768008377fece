package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mvserver/mvserver/catalog"
)

// BenchmarkScanGroupBy1M measures a full scan + GROUP BY over 1M rows
// through the wire protocol (the foundation's end-to-end benchmark).
// The load is not timed.
func BenchmarkScanGroupBy1M(b *testing.B) {
	const rows = 1_000_000
	dir := b.TempDir()
	srv, err := Start(Config{Logger: slog.New(slog.DiscardHandler), DataDir: dir, Listen: "127.0.0.1:0", Database: "mvserver", MaxConnections: 10, TableDefaults: catalog.AllOn})
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
	if _, err := conn.Exec(ctx, `CREATE TABLE t (id BIGINT PRIMARY KEY, k INT, v DECIMAL(12,2), s STRING)`); err != nil {
		b.Fatal(err)
	}
	const per = 2000
	var sb strings.Builder
	for base := 0; base < rows; base += per {
		sb.Reset()
		sb.WriteString("INSERT INTO t VALUES ")
		for i := base; i < base+per; i++ {
			if i > base {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "(%d,%d,%d.%02d,'row %d')", i, i%100000, i%1000, i%100, i)
		}
		if _, err := conn.Exec(ctx, sb.String(), pgx.QueryExecModeSimpleProtocol); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		r, err := conn.Query(ctx, `SELECT k, count(*), sum(v), avg(v) FROM t GROUP BY k`)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for r.Next() {
			n++
		}
		if r.Err() != nil {
			b.Fatal(r.Err())
		}
		if n != 100000 {
			b.Fatalf("groups %d", n)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
