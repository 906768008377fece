package session_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// EXPLAIN ANALYZE runs the query and shows each node's actual rows and runs.
func TestExplainAnalyze(t *testing.T) {
	c := connect(t, startServer(t), pgx.QueryExecModeSimpleProtocol)
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE o (id INT PRIMARY KEY, c INT, amt INT)",
		"CREATE TABLE cu (id INT PRIMARY KEY, name TEXT)",
		"INSERT INTO o SELECT g, g % 3, g * 10 FROM (VALUES (1), (2), (3), (4), (5), (6)) AS v(g)",
		"INSERT INTO cu VALUES (0, 'zero'), (1, 'one'), (2, 'two')",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	rows, err := c.Query(ctx, "EXPLAIN ANALYZE SELECT cu.name, count(*) FROM o JOIN cu ON cu.id = o.c WHERE o.amt > 20 GROUP BY cu.name")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	plan := strings.Join(lines, "\n")
	for _, want := range []string{
		// Estimates first (the planner's: 3 rows in cu, a third of o's 6
		// rows past amt > 20), then what the run counted.
		`^HashAggregate  \(cost=[0-9.]+\.\.[0-9.]+ rows=[0-9]+ width=[0-9]+\) \(actual time=[0-9.]+ rows=3 loops=1\)$`,
		`^        ->  Seq Scan on o  \(cost=[0-9.]+\.\.[0-9.]+ rows=2 width=8\) \(actual time=[0-9.]+ rows=4 loops=1\)$`,
		`^        ->  Seq Scan on cu  \(cost=[0-9.]+\.\.[0-9.]+ rows=3 width=36\) \(actual time=[0-9.]+ rows=3 loops=1\)$`,
		`^Execution Time: [0-9.]+ ms$`,
	} {
		if !regexp.MustCompile("(?m)" + want).MatchString(plan) {
			t.Errorf("plan lacks %s:\n%s", want, plan)
		}
	}
}
