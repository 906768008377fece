package plan

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// BenchmarkJoinOrder plans (binds and optimizes) joins of n ten-row
// tables: a chain (one equality per adjacent pair) and a clique (every
// pair equal on one column, one class) — the dynamic programming's worst
// case at its limit, the greedy search past it — written in reverse
// order and, for 20 tables, in three shuffled FROM orders with the
// conditions shuffled too (the sqllogictest shape; issue 19 asks for any
// order under 50 ms).
func BenchmarkJoinOrder(b *testing.B) {
	type order struct {
		name string
		seed uint64 // 0: reverse
	}
	for _, n := range []int{8, 10, 11, 12, 13, 20} {
		orders := []order{{"reverse", 0}}
		if n == 20 {
			orders = append(orders, order{"shuffled1", 1}, order{"shuffled2", 2}, order{"shuffled3", 3})
		}
		for _, shape := range []string{"chain", "clique"} {
			for _, ord := range orders {
				b.Run(fmt.Sprintf("%s%d/%s", shape, n, ord.name), func(b *testing.B) {
					g := newGoldenCatalog()
					for i := 0; i < n; i++ {
						name := fmt.Sprintf("t%d", i)
						if err := g.exec("CREATE TABLE " + name + " (a INT, b INT)"); err != nil {
							b.Fatal(err)
						}
						g.stats[name] = goldenTableStats{rows: 10}
					}
					q := joinQuery(shape, n, ord.seed)
					for b.Loop() {
						root, err := g.bind(q)
						if err != nil {
							b.Fatal(err)
						}
						opt, err := Optimize(root, NewEstimator(g.cat, g.stats))
						if err != nil {
							b.Fatal(err)
						}
						if plan := strings.Join(Explain(opt, nil), "\n"); strings.Contains(plan, "Nested Loop") {
							b.Fatalf("a cross product in the plan of %s:\n%s", q, plan)
						}
					}
				})
			}
		}
	}
}

// joinQuery is a count over n tables t0 … t(n-1) joined as shape (chain:
// t(i).b = t(i+1).a; clique: t0.a = t(i).a), the FROM list reversed
// (seed 0) or shuffled with the conditions by seed.
func joinQuery(shape string, n int, seed uint64) string {
	var from, conds []string
	for i := 0; i < n; i++ {
		from = append([]string{fmt.Sprintf("t%d", i)}, from...)
		if i > 0 {
			if shape == "chain" {
				conds = append(conds, fmt.Sprintf("t%d.b = t%d.a", i-1, i))
			} else {
				conds = append(conds, fmt.Sprintf("t0.a = t%d.a", i))
			}
		}
	}
	if seed != 0 {
		r := rand.New(rand.NewPCG(seed, 19))
		r.Shuffle(len(from), func(i, j int) { from[i], from[j] = from[j], from[i] })
		r.Shuffle(len(conds), func(i, j int) { conds[i], conds[j] = conds[j], conds[i] })
	}
	return "SELECT count(*) FROM " + strings.Join(from, ", ") + " WHERE " + strings.Join(conds, " AND ")
}
