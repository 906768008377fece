package session_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Window function errors carry PostgreSQL's SQLSTATE and point where
// PostgreSQL 15 points (R-Q6), in both protocols; QUALIFY's positions are
// in the text as the client sent it. The codes and positions were read
// from a PostgreSQL 15 server (the QUALIFY cases excepted).
func TestWindowErrorPositions(t *testing.T) {
	url := startServer(t)
	ctx := context.Background()
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
		c := connect(t, url, mode)
		if _, err := c.Exec(ctx, "CREATE TABLE IF NOT EXISTS ev (id INT PRIMARY KEY, k TEXT, n INT)"); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			sql  string
			code string
			pos  int32
		}{
			{"SELECT id FROM ev WHERE row_number() OVER () = 1", "42P20", 25},
			{"SELECT k FROM ev GROUP BY k HAVING rank() OVER () > 1", "42P20", 36},
			{"SELECT sum(n) OVER (PARTITION BY id ORDER BY rank() OVER ()) FROM ev", "42P20", 46},
			{"SELECT sum(row_number() OVER (ORDER BY id)) FROM ev", "42803", 12},
			{"SELECT id, row_number() FROM ev", "42809", 12},
			{"SELECT id, row_number() OVER w FROM ev", "42704", 30},
			{"SELECT count(*) OVER (w ORDER BY id) FROM ev WINDOW w AS (ORDER BY n)", "42P20", 22},
			{"SELECT sum(n) OVER (ORDER BY n, id RANGE 1 PRECEDING) FROM ev", "42P20", 20},
			{"SELECT sum(n) OVER (ORDER BY k RANGE 1 PRECEDING) FROM ev", "0A000", 38},
			{"SELECT sum(n) OVER (ORDER BY id ROWS n PRECEDING) FROM ev", "42P10", 38},
			{"SELECT sum(n) OVER (ROWS BETWEEN CURRENT ROW AND 1 PRECEDING) FROM ev", "42P20", 50},
			{"SELECT id FROM ev WINDOW w AS (PARTITION BY nope)", "42703", 45},
			{"SELECT k, rank() OVER (ORDER BY n) FROM ev GROUP BY k", "42803", 33},
			{"SELECT lower(k) OVER () FROM ev", "42809", 8},
			// QUALIFY: positions inside the condition, and after it.
			{"SELECT id FROM ev QUALIFY nope = 1", "42703", 27},
			{"SELECT `id` FROM ev QUALIFY row_number() OVER (ORDER BY nope) = 1", "42703", 57},
			{"SELECT id FROM ev QUALIFY id > ORDER BY id", "42601", 32},
			{"SELECT id FROM ev QUALIFY rank() OVER w = 1 WINDOW w AS (ORDER BY nope) ORDER BY id", "42703", 67},
			{"SELECT id FROM ev QUALIFY row_number() OVER ()", "42804", 27},
		} {
			_, err := c.Exec(ctx, tc.sql)
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != tc.code || pe.Position != tc.pos {
				t.Errorf("%v %s: got %v (position %d), want %s at %d", mode, tc.sql, err, position(err), tc.code, tc.pos)
			}
		}
	}
}

func position(err error) int32 {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Position
	}
	return 0
}

// Frame offsets, lag/lead offsets and defaults may be parameters: their
// types are inferred (bigint for ROWS, integer for the offset, the value's
// type for the default).
func TestWindowParameters(t *testing.T) {
	url := startServer(t)
	ctx := context.Background()
	c := connect(t, url, pgx.QueryExecModeExec)
	for _, q := range []string{
		"CREATE TABLE w (id INT PRIMARY KEY, n INT)",
		"INSERT INTO w VALUES (1, 10), (2, 20), (3, 30), (4, 40)",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := c.Query(ctx, "SELECT id, sum(n) OVER (ORDER BY id ROWS $1 PRECEDING), lag(n, $2, $3) OVER (ORDER BY id) FROM w ORDER BY id", 1, 2, -1)
	if err != nil {
		t.Fatal(err)
	}
	var got [][3]int64
	for rows.Next() {
		var r [3]int64
		if err := rows.Scan(&r[0], &r[1], &r[2]); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := [][3]int64{{1, 10, -1}, {2, 30, -1}, {3, 50, 10}, {4, 70, 20}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if _, err := c.Exec(ctx, "SELECT sum(n) OVER (ORDER BY id ROWS $1 PRECEDING) FROM w", -1); pgCode(err) != "22013" {
		t.Fatalf("negative offset: %v", err)
	}
}
