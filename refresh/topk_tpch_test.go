package refresh_test

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestTopKTPCHShapes: the ORDER BY … LIMIT views of TPC-H Q10 and Q18,
// over customer ⋈ orders ⋈ lineitem, are estimated cheaper as TOP_K than
// as a full recompute after new orders
// with their lineitems (RF1), Q10 also after deleting old orders of its
// quarter (RF2), and both equal their queries after each.
//   - Q18: none of the new orders passes the HAVING of its IN subquery, so
//     no group of the aggregate under the top k is touched and its input
//     is not read (before, an empty set of touched keys ran the whole
//     join, old and new, and the estimate sent it full);
//   - Q10: the touched customers' old lineitems are read through the
//     lineitem key, the rows changed since the checkpoint left out
//     (before, the old side's scan could not drive an index join and the
//     whole lineitem table was hashed). After RF2 the old side is the
//     table less the deleted rows united with their images: the
//     join-union rule (sql/plan/join_union.go) looks the table branch up.
func TestTopKTPCHShapes(t *testing.T) {
	c := connect(t, start(t))
	for _, st := range []string{
		`CREATE TABLE customer (c_custkey INT PRIMARY KEY, c_name TEXT)`,
		`CREATE TABLE orders (o_orderkey INT PRIMARY KEY, o_custkey INT, o_totalprice DECIMAL(15,2), o_orderdate DATE)`,
		`CREATE INDEX orders_cust ON orders (o_custkey)`,
		`CREATE TABLE lineitem (l_orderkey INT, l_linenumber INT, l_quantity DECIMAL(15,2), l_price DECIMAL(15,2), l_returnflag TEXT, PRIMARY KEY (l_orderkey, l_linenumber))`,
		`INSERT INTO customer SELECT g, 'Customer#' || g FROM generate_series(1, 500) g`,
		`INSERT INTO orders SELECT g, 1 + g % 500, (g % 997)::decimal(15,2) * 3, DATE '1993-01-01' + (g % 700) FROM generate_series(1, 5000) g`,
		`INSERT INTO lineitem SELECT 1 + g / 4, g % 4, (1 + (g * 7) % 50)::decimal(15,2), (g % 101)::decimal(15,2) + 0.25, CASE WHEN g % 3 = 0 THEN 'R' ELSE 'N' END FROM generate_series(0, 19999) g`,
		`ANALYZE customer`, `ANALYZE orders`, `ANALYZE lineitem`,
	} {
		exec(t, c, st)
	}
	queries := map[string]string{
		"q18": `SELECT c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity) AS qty
FROM customer, orders, lineitem
WHERE o_orderkey IN (SELECT l_orderkey FROM lineitem GROUP BY l_orderkey HAVING sum(l_quantity) > 150)
  AND c_custkey = o_custkey AND o_orderkey = l_orderkey
GROUP BY c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
ORDER BY o_totalprice DESC, o_orderdate, o_orderkey LIMIT 10`,
		"q10": `SELECT c_custkey, c_name, sum(l_price) AS revenue
FROM customer, orders, lineitem
WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey
  AND o_orderdate >= DATE '1993-10-01' AND o_orderdate < DATE '1994-01-01' AND l_returnflag = 'R'
GROUP BY c_custkey, c_name
ORDER BY revenue DESC, c_custkey LIMIT 20`,
	}
	for v, q := range queries {
		exec(t, c, `CREATE MATERIALIZED VIEW `+v+` AS `+q)
	}
	// cheaper lists the views whose TOP_K estimate must be below a full
	// recompute's, in units (EXPLAIN REFRESH's candidates): the decision
	// itself also weighs the rates the view's earlier refreshes ran at,
	// which follow the machine's load (costmodel.go).
	check := func(batch string, cheaper ...string) {
		t.Helper()
		for v, q := range queries {
			if slices.Contains(cheaper, v) {
				explain := rows(t, c, `EXPLAIN REFRESH MATERIALIZED VIEW `+v)
				topK, full := units(explain, "candidate TOP_K|"), units(explain, "candidate FULL_RECOMPUTE|")
				if topK <= 0 || full <= 0 || topK >= full {
					t.Fatalf("%s: %s: TOP_K estimated at %d units, a full recompute at %d; want TOP_K cheaper:\n%s", batch, v, topK, full, strings.Join(explain, "\n"))
				}
			}
			exec(t, c, `REFRESH MATERIALIZED VIEW `+v)
			got, wantRows := rows(t, c, `SELECT * FROM `+v+` ORDER BY 1, 2, 3`), rows(t, c, `SELECT * FROM (`+q+`) AS x ORDER BY 1, 2, 3`)
			if strings.Join(got, "\n") != strings.Join(wantRows, "\n") || len(wantRows) == 0 {
				t.Fatalf("%s: %s differs from its query:\nview  %v\nquery %v", batch, v, got, wantRows)
			}
		}
	}
	// RF1: 20 new orders in Q10's quarter, each with 4 small returned
	// lineitems (a sum of 4, far under Q18's 150).
	var orders, lines []string
	for i := range 20 {
		k := 10001 + i
		orders = append(orders, fmt.Sprintf("(%d, %d, 100.00, DATE '1993-11-%02d')", k, 1+i*7, 1+i))
		for l := range 4 {
			lines = append(lines, fmt.Sprintf("(%d, %d, 1.00, 50.00, 'R')", k, l))
		}
	}
	exec(t, c, `INSERT INTO orders VALUES `+strings.Join(orders, ", "))
	exec(t, c, `INSERT INTO lineitem VALUES `+strings.Join(lines, ", "))
	check("RF1", "q18", "q10")
	// RF2: 20 old orders of Q10's quarter deleted with their lineitems.
	exec(t, c, `DELETE FROM lineitem WHERE l_orderkey BETWEEN 300 AND 319`)
	exec(t, c, `DELETE FROM orders WHERE o_orderkey BETWEEN 300 AND 319`)
	check("RF2", "q10")
}

var estimatedCost = regexp.MustCompile(`estimated cost (\d+)`)

// units is the estimated cost on the EXPLAIN REFRESH row that starts with
// prefix (0: none).
func units(explain []string, prefix string) int {
	for _, r := range explain {
		if strings.HasPrefix(r, prefix) {
			if m := estimatedCost.FindStringSubmatch(r); m != nil {
				n, _ := strconv.Atoi(m[1])
				return n
			}
		}
	}
	return 0
}
