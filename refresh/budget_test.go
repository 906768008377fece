package refresh_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestBudgetStopsCostlyChange: when a change moves the scalar of a filter
// like TPC-H Q15's (total = (SELECT max(total) …)), building the change
// would run the filter's input whole, old and new: twice a full
// recompute. The differentiation prices that before running it and the
// refresh goes full, with the budget as its reason (budget.go); the view
// still equals its query.
func TestBudgetStopsCostlyChange(t *testing.T) {
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE supplier (s_suppkey INT PRIMARY KEY, s_name TEXT)`)
	exec(t, c, `CREATE TABLE lineitem (l_orderkey INT, l_linenumber INT, l_suppkey INT, l_price DECIMAL(15,2), l_shipdate DATE, PRIMARY KEY (l_orderkey, l_linenumber))`)
	exec(t, c, `CREATE INDEX lineitem_supp ON lineitem (l_suppkey)`)
	for s := 0; s < 100; s++ {
		exec(t, c, fmt.Sprintf(`INSERT INTO supplier VALUES (%d, 's%d')`, s, s))
	}
	exec(t, c, `INSERT INTO lineitem SELECT g/4, g%4, g%100, (g%97)::decimal(15,2), DATE '1996-01-01' + (g % 200) FROM generate_series(1, 20000) g`)
	exec(t, c, `CREATE VIEW revenue0 AS SELECT l_suppkey AS supplier_no, sum(l_price) AS total_revenue FROM lineitem WHERE l_shipdate >= DATE '1996-01-01' AND l_shipdate < DATE '1996-04-01' GROUP BY l_suppkey`)
	const q = `SELECT s_suppkey, s_name, total_revenue FROM supplier, revenue0 WHERE s_suppkey = supplier_no AND total_revenue = (SELECT max(total_revenue) FROM revenue0)`
	exec(t, c, `CREATE MATERIALIZED VIEW q15 AS `+q)
	for i, change := range []string{
		`UPDATE lineitem SET l_price = l_price + 1 WHERE l_orderkey < 30`,
		`DELETE FROM lineitem WHERE l_orderkey BETWEEN 100 AND 130`,
	} {
		exec(t, c, change)
		explain := strings.Join(rows(t, c, `EXPLAIN REFRESH MATERIALIZED VIEW q15`), "\n")
		if !strings.Contains(explain, "technique|FULL_RECOMPUTE") || !strings.Contains(explain, "building the change was estimated at") {
			t.Fatalf("change %d: EXPLAIN REFRESH does not go full on the budget:\n%s", i, explain)
		}
		exec(t, c, `REFRESH MATERIALIZED VIEW q15`)
		if got := lastTechnique(t, c, "q15"); got != "FULL_RECOMPUTE" {
			t.Fatalf("change %d: technique %s, want FULL_RECOMPUTE", i, got)
		}
		got, want := rows(t, c, `SELECT * FROM q15 ORDER BY 1`), rows(t, c, q+` ORDER BY 1`)
		if strings.Join(got, "\n") != strings.Join(want, "\n") || len(want) == 0 {
			t.Fatalf("change %d: view %v, query %v", i, got, want)
		}
	}
}
