package session_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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
