package plan

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkJoinOrder plans (binds and optimizes) joins of n ten-row
// tables written in reverse order: a chain (one equality per adjacent
// pair) and a clique (every pair equal on one column, one class) — the
// dynamic programming's worst case at 12 relations, the greedy search
// past it.
func BenchmarkJoinOrder(b *testing.B) {
	for _, n := range []int{8, 10, 11, 12, 13, 20} {
		for _, shape := range []string{"chain", "clique"} {
			b.Run(fmt.Sprintf("%s%d", shape, n), func(b *testing.B) {
				g := newGoldenCatalog()
				var from, conds []string
				for i := 0; i < n; i++ {
					name := fmt.Sprintf("t%d", i)
					if err := g.exec("CREATE TABLE " + name + " (a INT, b INT)"); err != nil {
						b.Fatal(err)
					}
					g.stats[name] = goldenTableStats{rows: 10}
					from = append([]string{name}, from...)
					if i > 0 {
						if shape == "chain" {
							conds = append(conds, fmt.Sprintf("t%d.b = t%d.a", i-1, i))
						} else {
							conds = append(conds, fmt.Sprintf("t0.a = t%d.a", i))
						}
					}
				}
				q := "SELECT count(*) FROM " + strings.Join(from, ", ") + " WHERE " + strings.Join(conds, " AND ")
				for b.Loop() {
					root, err := g.bind(q)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := Optimize(root, NewEstimator(g.cat, g.stats)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
