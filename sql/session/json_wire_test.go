package session_test

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mvserver/mvserver/app"
	"github.com/mvserver/mvserver/catalog"
)

// TestJSONParamsAndResults: json and jsonb parameters (OIDs 114 and 3802)
// in Bind, in binary and text, and results read back, through pgx in each
// query mode; invalid JSON is 22P02 in all of them.
func TestJSONParamsAndResults(t *testing.T) {
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
			tbl := "js_" + string(rune('a'+i))
			if _, err := c.Exec(ctx, "CREATE TABLE "+tbl+" (id INT PRIMARY KEY, j JSON, b JSONB)"); err != nil {
				t.Fatal(err)
			}
			doc := map[string]any{"a": "x", "n": float64(2), "list": []any{true, nil}}
			var param any = doc
			if mode == pgx.QueryExecModeSimpleProtocol {
				// Interpolated: pgx has no type to encode a map by.
				param = `{"a": "x", "n": 2, "list": [true, null]}`
			}
			if _, err := c.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1, $2, $3)", 1, param, param); err != nil {
				t.Fatalf("insert: %v", err)
			}
			var j, b map[string]any
			var a string
			var kind string
			if err := c.QueryRow(ctx, "SELECT j, b, b ->> 'a', jsonb_typeof(b -> 'list') FROM "+tbl+" WHERE id = $1", 1).Scan(&j, &b, &a, &kind); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(j, doc) || !reflect.DeepEqual(b, doc) || a != "x" || kind != "array" {
				t.Fatalf("got %v, %v, %q, %q; want %v, x, array", j, b, a, kind, doc)
			}
			var text string
			if err := c.QueryRow(ctx, "SELECT b::text FROM "+tbl+" WHERE id = 1").Scan(&text); err != nil {
				t.Fatal(err)
			}
			if want := `{"a": "x", "n": 2, "list": [true, null]}`; text != want {
				t.Fatalf("jsonb text %s, want %s", text, want)
			}
			_, err = c.Exec(ctx, "INSERT INTO "+tbl+" (id, b) VALUES ($1, $2::text::jsonb)", 2, "not json")
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "22P02" || pe.Message != "invalid input syntax for type json" {
				t.Fatalf("invalid json: %v, want 22P02", err)
			}
		})
	}
}
