package session_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestDeepStatementKeepsServing: statements of 10^5 and 10^6 terms of each
// shape that overflowed pg_query's C stack (a SIGSEGV that ended the whole
// server) are refused with PostgreSQL's SQLSTATE, over the simple and the
// extended protocol, and the same connection keeps answering.
func TestDeepStatementKeepsServing(t *testing.T) {
	url := startServer(t)
	ctx := context.Background()
	rep := func(s string, n int, sep string) string {
		return strings.Repeat(s+sep, n-1) + s
	}
	shapes := []struct {
		name string
		gen  func(n int) string
		code string
	}{
		{"plus", func(n int) string { return "SELECT " + rep("1", n, "+") }, "54001"},
		{"concat", func(n int) string { return "SELECT " + rep("'a'", n, "||") }, "54001"},
		{"minus", func(n int) string { return "SELECT " + rep("1", n, "-") }, "54001"},
		{"union all", func(n int) string { return rep("SELECT 1", n, " UNION ALL ") }, "54001"},
		{"join", func(n int) string { return "SELECT 1 FROM t" + strings.Repeat(" JOIN t ON true", n) }, "54001"},
		{"parentheses", func(n int) string { return "SELECT " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) }, "42601"},
		{"subqueries", func(n int) string { return "SELECT " + strings.Repeat("(SELECT ", n) + "1" + strings.Repeat(")", n) }, "42601"},
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeDescribeExec} {
		c := connect(t, url, mode)
		if _, err := c.Exec(ctx, "CREATE TABLE IF NOT EXISTS t (a int)"); err != nil {
			t.Fatal(err)
		}
		for _, sh := range shapes {
			for _, n := range []int{100_000, 1_000_000} {
				var x any
				err := c.QueryRow(ctx, sh.gen(n)).Scan(&x)
				if got := pgCode(err); got != sh.code {
					t.Errorf("%v %s × %d: %v, want %s", mode, sh.name, n, err, sh.code)
				}
				var alive int
				if err := c.QueryRow(ctx, "SELECT 1+1").Scan(&alive); err != nil || alive != 2 {
					t.Fatalf("%v after %s × %d: %v %d", mode, sh.name, n, err, alive)
				}
			}
		}
		// The deepest accepted chains still run through binder, planner
		// and executor.
		var sum int
		if err := c.QueryRow(ctx, "SELECT "+rep("1", 4_000, "+")).Scan(&sum); err != nil || sum != 4_000 {
			t.Errorf("%v 4 000 terms: %v %d", mode, err, sum)
		}
		var cnt int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM ("+rep("SELECT 1", 6_000, " UNION ALL ")+") s").Scan(&cnt); err != nil || cnt != 6_000 {
			t.Errorf("%v union of 6 000: %v %d", mode, err, cnt)
		}
		c.Close(ctx)
	}
}

// TestDeepViewDefinition: a view's query is deparsed to be stored, and
// pg_query's deparser needs about 1 kB of C stack a tree level: a query
// that parses but is too deep for that is 54001 (it was a SIGSEGV), and
// the server keeps answering.
func TestDeepViewDefinition(t *testing.T) {
	c := connect(t, startServer(t), pgx.QueryExecModeSimpleProtocol)
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE t (a int PRIMARY KEY); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	deep := "SELECT " + strings.Repeat("a+", 4_500) + "a AS x FROM t"
	for _, q := range []string{"CREATE VIEW v AS " + deep, "CREATE MATERIALIZED VIEW mv AS " + deep} {
		if _, err := c.Exec(ctx, q); pgCode(err) != "54001" {
			t.Errorf("%.30s…: %v, want 54001", q, err)
		}
	}
	if _, err := c.Exec(ctx, "CREATE TABLE d (a int DEFAULT "+strings.Repeat("1+", 4_500)+"1)"); pgCode(err) != "54001" {
		t.Errorf("deep default: %v, want 54001", err)
	}
	ok := "SELECT " + strings.Repeat("a+", 999) + "a AS x FROM t"
	if _, err := c.Exec(ctx, "CREATE MATERIALIZED VIEW mv AS "+ok); err != nil {
		t.Fatal(err)
	}
	var x int
	if err := c.QueryRow(ctx, "SELECT x FROM mv").Scan(&x); err != nil || x != 1_000 {
		t.Fatalf("%v %d", err, x)
	}
}
