package main

import (
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// TestTPCHQueriesParse: the 22 queries, their views and the refresh
// phase's statements are one statement each to PostgreSQL's own parser
// (the tests have no PostgreSQL server), numbered 1 to 22, and compared
// in order exactly when they end in ORDER BY.
func TestTPCHQueriesParse(t *testing.T) {
	qs := tpchQueries(0.1)
	if len(qs) != 22 {
		t.Fatalf("%d queries", len(qs))
	}
	unordered := map[int]bool{6: true, 14: true, 17: true, 19: true}
	for i, q := range qs {
		if q.n != i+1 {
			t.Errorf("query %d is numbered %d", i+1, q.n)
		}
		if q.ordered == unordered[q.n] {
			t.Errorf("%s: ordered = %v", q.name(), q.ordered)
		}
		for _, sql := range []string{q.sql, "CREATE MATERIALIZED VIEW " + q.view() + " AS " + q.sql} {
			parseOne(t, q.name(), sql)
		}
	}
	if !strings.Contains(qs[10].sql, "* 0.001\n") {
		t.Errorf("Q11 at SF 0.1: FRACTION is not 0.0001 / 0.1:\n%s", qs[10].sql)
	}
	g := mustGen(t, 0.01, 1)
	r := &tpchRun{gen: g, b: &bench{cfg: &config{insertBatch: 7}}}
	batches := r.changeBatches()
	if len(batches) != 3 {
		t.Fatalf("%d batches", len(batches))
	}
	for _, b := range batches {
		for _, sql := range b.stmts {
			parseOne(t, b.name, sql)
		}
	}
	// RF1 at SF 0.01: 15 orders in 3 INSERTs of 7 rows, then their
	// lineitems.
	if n := strings.Count(strings.Join(batches[0].stmts, ";"), "INSERT INTO orders"); n != 3 {
		t.Errorf("RF1: %d INSERTs into orders", n)
	}
	for _, tb := range tpchTables() {
		parseOne(t, tb.name, tb.createSQL())
	}
	for _, ix := range tpchIndexes {
		parseOne(t, "index", ix)
	}
}

func parseOne(t *testing.T, what, sql string) {
	t.Helper()
	res, err := pg_query.Parse(sql)
	if err != nil {
		t.Errorf("%s: %v\n%s", what, err, sql)
		return
	}
	if len(res.Stmts) != 1 {
		t.Errorf("%s: %d statements", what, len(res.Stmts))
	}
}
