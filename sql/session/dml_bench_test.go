package session_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mvserver/mvserver/app"
	"github.com/mvserver/mvserver/catalog"
)

// BenchmarkDML runs mvbench's DML measurement on W2's orders table through
// the wire protocol: a 1000-row INSERT … VALUES of literals (negative ids
// below the table's 10 000 rows), an UPDATE of those rows and their
// DELETE, each statement a sub-benchmark; run it with -cpuprofile or
// -memprofile to see where a statement's time goes.
func BenchmarkDML(b *testing.B) {
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
	exec := func(b *testing.B, sql string) {
		if _, err := conn.Exec(ctx, sql); err != nil {
			b.Fatal(err)
		}
	}
	exec(b, `CREATE TABLE orders (order_id BIGINT PRIMARY KEY, order_date DATE, product_id INT, quantity INT);
		INSERT INTO orders SELECT i, DATE '2025-01-01' + (i % 365), i % 10000, 1 + i % 5 FROM generate_series(0, 9999) i`)
	var sb strings.Builder
	sb.WriteString("INSERT INTO orders VALUES ")
	for i := -1000; i < 0; i++ {
		if i > -1000 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "(%d,DATE '2025-%02d-%02d',%d,%d)", i, 1+(-i)%12, 1+(-i)%28, (-i*7919)%10000, 1+(-i)%5)
	}
	insert := sb.String()
	const update = "UPDATE orders SET quantity = quantity + 1, product_id = (product_id + 1) % 10000 WHERE order_id >= -1000 AND order_id < 0"
	const del = "DELETE FROM orders WHERE order_id < 0"
	b.Run("insert", func(b *testing.B) {
		for b.Loop() {
			exec(b, insert)
			b.StopTimer()
			exec(b, del)
			b.StartTimer()
		}
	})
	b.Run("update", func(b *testing.B) {
		exec(b, insert)
		for b.Loop() {
			exec(b, update)
		}
		exec(b, del)
	})
	b.Run("delete", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			exec(b, insert)
			b.StartTimer()
			exec(b, del)
		}
	})
}
