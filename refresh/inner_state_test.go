package refresh_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mvserver/mvserver/refresh"
)

// TestInnerAggregateStates: an aggregate whose every row an aggregate
// above reads (TPC-H Q13's orders per customer under the count of
// customers per count; Q15's revenue per supplier under its max) keeps
// per-group states (inner_state.go): each batch — inserts, deletes, an
// update moving rows between groups, a group emptied, a customer without
// orders — is folded into them, every refresh is incremental under
// STRICT, and the views equal their queries. An aggregate under a join
// that reads only some of its groups (Q17's per-part average) keeps
// none: its refreshes fold nothing.
func TestInnerAggregateStates(t *testing.T) {
	var folds atomic.Int64
	defer refresh.CountInnerFolds(&folds)()
	c := connect(t, start(t))
	for _, st := range []string{
		`CREATE TABLE customer (c_custkey INT PRIMARY KEY, c_name TEXT)`,
		`CREATE TABLE orders (o_orderkey INT PRIMARY KEY, o_custkey INT, o_comment TEXT, o_price DECIMAL(15,2))`,
		`CREATE INDEX orders_cust ON orders (o_custkey)`,
		`INSERT INTO customer SELECT g, 'Customer#' || g FROM generate_series(1, 60) g`,
		`INSERT INTO orders SELECT g, 1 + (g * 7) % 45, CASE WHEN g % 9 = 0 THEN 'special requests' ELSE 'plain' END, (g % 97)::decimal(15,2) + 0.50 FROM generate_series(1, 400) g`,
	} {
		exec(t, c, st)
	}
	states := map[string]string{
		"q13": `SELECT c_count, count(*) AS custdist FROM (
  SELECT c_custkey, count(o_orderkey) FROM customer LEFT OUTER JOIN orders ON c_custkey = o_custkey AND o_comment NOT LIKE '%special%'
  GROUP BY c_custkey) AS c_orders (c_custkey, c_count)
GROUP BY c_count`,
		"q15": `WITH revenue0 (supplier_no, total_revenue) AS (
  SELECT o_custkey, sum(o_price) FROM orders GROUP BY o_custkey)
SELECT c_custkey, c_name, total_revenue FROM customer, revenue0
WHERE c_custkey = supplier_no AND total_revenue = (SELECT max(total_revenue) FROM revenue0)`,
	}
	none := map[string]string{
		"q17": `SELECT sum(o_price) AS s FROM orders, customer
WHERE c_custkey = o_custkey AND c_custkey < 5 AND o_price < (SELECT 0.5 * avg(o_price) FROM orders o2 WHERE o2.o_custkey = c_custkey)`,
	}
	for _, qs := range []map[string]string{states, none} {
		for v, q := range qs {
			exec(t, c, `CREATE MATERIALIZED VIEW `+v+` REFRESH POLICY INCREMENTAL STRICT AS `+q)
		}
	}
	// still: a view whose inner aggregate's input this batch leaves as it
	// was (q15 reads no comment), so nothing is folded.
	batches := []struct {
		name  string
		dml   []string
		still string
	}{
		{"new orders", []string{`INSERT INTO orders SELECT 1000 + g, 1 + g % 50, 'plain', 3.25 FROM generate_series(1, 12) g`}, ""},
		{"orders deleted", []string{`DELETE FROM orders WHERE o_orderkey % 11 = 0`}, ""},
		{"orders moved between customers", []string{`UPDATE orders SET o_custkey = 52 WHERE o_custkey = 3`}, ""},
		{"a comment filtered out", []string{`UPDATE orders SET o_comment = 'special requests' WHERE o_custkey = 5`}, "q15"},
		{"a customer's last order", []string{`DELETE FROM orders WHERE o_custkey = 7`, `INSERT INTO customer VALUES (61, 'Customer#61')`}, ""},
		{"a new maximum", []string{`INSERT INTO orders VALUES (5000, 61, 'plain', 99999.00)`}, ""},
		{"the maximum leaves", []string{`DELETE FROM orders WHERE o_orderkey = 5000`}, ""},
	}
	check := func(when, v, q string) {
		t.Helper()
		tech := rows(t, c, `SELECT technique FROM refresh_history WHERE view_name = '`+v+`' ORDER BY start_time DESC LIMIT 1`)
		if len(tech) != 1 || tech[0] == "FULL_RECOMPUTE" {
			t.Errorf("%s: %s refreshed as %v, want incremental", when, v, tech)
		}
		got, want := rows(t, c, `SELECT * FROM `+v), rows(t, c, q)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s: %s differs from its query:\nview  %v\nquery %v", when, v, got, want)
		}
	}
	for _, b := range batches {
		for _, st := range b.dml {
			exec(t, c, st)
		}
		for v, q := range states {
			before := folds.Load()
			exec(t, c, `REFRESH MATERIALIZED VIEW `+v)
			if folds.Load() == before && v != b.still {
				t.Errorf("%s: %s's refresh folded nothing into its inner aggregate's states", b.name, v)
			}
			check(b.name, v, q)
		}
		for v, q := range none {
			before := folds.Load()
			exec(t, c, `REFRESH MATERIALIZED VIEW `+v)
			if n := folds.Load() - before; n != 0 {
				t.Errorf("%s: %s's refresh folded %d changes into states it should not keep", b.name, v, n)
			}
			check(b.name, v, q)
		}
	}
	// A full refresh rebuilds the states; the next batch folds into them.
	exec(t, c, `REFRESH MATERIALIZED VIEW q13 FULL`)
	exec(t, c, `INSERT INTO orders VALUES (6000, 2, 'plain', 1.00)`)
	before := folds.Load()
	exec(t, c, `REFRESH MATERIALIZED VIEW q13`)
	if folds.Load() == before {
		t.Errorf("after REFRESH … FULL: q13's refresh folded nothing")
	}
	check("after REFRESH … FULL", "q13", states["q13"])
}
