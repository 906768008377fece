package session_test

import (
	"context"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mvserver/mvserver/app"
	"github.com/mvserver/mvserver/catalog"
)

// TestArrayParamsAndResults: an int[] parameter and text[] results through
// pgx in binary (the extended protocol with a described statement) and in
// text (the simple protocol, parameters interpolated), including NULL
// elements, an empty array and x = ANY($1).
func TestArrayParamsAndResults(t *testing.T) {
	srv, err := app.Start(app.Config{Logger: slog.New(slog.DiscardHandler), InMemory: true, Listen: "127.0.0.1:0", Database: "mvserver", MaxConnections: 10, TableDefaults: catalog.AllOn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(2 * time.Second) })
	url := "postgres://tester@" + srv.Addr().String() + "/mvserver?sslmode=disable"
	ctx := context.Background()
	for i, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeDescribeExec, pgx.QueryExecModeSimpleProtocol} {
		t.Run(mode.String(), func(t *testing.T) {
			cfg, err := pgx.ParseConfig(url)
			if err != nil {
				t.Fatal(err)
			}
			cfg.DefaultQueryExecMode = mode
			c, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			tbl := "arr_" + string(rune('a'+i))
			if _, err := c.Exec(ctx, "CREATE TABLE "+tbl+" (id INT PRIMARY KEY, a INT[], b TEXT[])"); err != nil {
				t.Fatal(err)
			}
			rows := []struct {
				id int32
				a  []int32
				b  []string
			}{{1, []int32{1, 2, 3}, []string{"x", "y z", `q"uote`, ""}}, {2, []int32{}, []string{}}, {3, []int32{-7}, []string{"NULL", "{}"}}}
			for _, r := range rows {
				if _, err := c.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1, $2, $3)", r.id, r.a, r.b); err != nil {
					t.Fatalf("insert %d: %v", r.id, err)
				}
			}
			for _, r := range rows {
				var a []int32
				var b []string
				if err := c.QueryRow(ctx, "SELECT a, b FROM "+tbl+" WHERE id = $1", r.id).Scan(&a, &b); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(a, r.a) || !reflect.DeepEqual(b, r.b) {
					t.Errorf("row %d: got %v %q, want %v %q", r.id, a, b, r.a, r.b)
				}
			}
			// The result columns are int4[] and text[], in binary where
			// pgx asks for it.
			rs := mustQuery(t, c, "SELECT a, b FROM "+tbl+" WHERE id = 1")
			fds := rs.FieldDescriptions()
			wantFormat := int16(1)
			if mode == pgx.QueryExecModeSimpleProtocol {
				wantFormat = 0
			}
			if fds[0].DataTypeOID != 1007 || fds[1].DataTypeOID != 1009 || fds[1].Format != wantFormat {
				t.Errorf("result columns: %+v", fds)
			}
			rs.Close()
			// x = ANY($1) with an int[] parameter.
			got, err := pgx.CollectRows(mustQuery(t, c, "SELECT id FROM "+tbl+" WHERE id = ANY($1) ORDER BY id", []int32{3, 1, 9}), pgx.RowTo[int32])
			if err != nil || !reflect.DeepEqual(got, []int32{1, 3}) {
				t.Errorf("= ANY($1): %v %v", got, err)
			}
			// NULL elements and a NULL array.
			var withNull []*string
			if err := c.QueryRow(ctx, "SELECT ARRAY['a', NULL, 'c']").Scan(&withNull); err != nil {
				t.Fatal(err)
			}
			if len(withNull) != 3 || withNull[1] != nil || *withNull[0] != "a" || *withNull[2] != "c" {
				t.Errorf("NULL element: %v", withNull)
			}
			var none []int32
			if err := c.QueryRow(ctx, "SELECT $1::int[]", nil).Scan(&none); err != nil || none != nil {
				t.Errorf("NULL array: %v %v", none, err)
			}
			var n int32
			if err := c.QueryRow(ctx, "SELECT cardinality($1::int[])", []int32{4, 5}).Scan(&n); err != nil || n != 2 {
				t.Errorf("cardinality($1): %d %v", n, err)
			}
		})
	}
}

func mustQuery(t *testing.T, c *pgx.Conn, sql string, args ...any) pgx.Rows {
	t.Helper()
	rows, err := c.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
