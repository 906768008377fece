package app

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// joinChainQuery returns a join of n tables t0 … t(n-1), written as a comma
// FROM list in an order shuffled by seed with one equality per adjacent
// pair (t(i).b = t(i+1).a), the conditions shuffled too: the shape of
// sqllogictest's many-table joins. Each table has ten rows (k, k), so the
// join has ten rows.
func joinChainQuery(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(uint64(n), seed))
	from := make([]string, n)
	for i := range from {
		from[i] = fmt.Sprintf("t%d", i)
	}
	r.Shuffle(len(from), func(i, j int) { from[i], from[j] = from[j], from[i] })
	conds := make([]string, n-1)
	for i := range conds {
		conds[i] = fmt.Sprintf("t%d.b = t%d.a", i, i+1)
	}
	r.Shuffle(len(conds), func(i, j int) { conds[i], conds[j] = conds[j], conds[i] })
	return fmt.Sprintf("SELECT count(*), min(t0.a), max(t%d.b) FROM %s WHERE %s", n-1, strings.Join(from, ", "), strings.Join(conds, " AND "))
}

// BenchmarkJoinChain20 plans (EXPLAIN) and runs the join of 20 ten-row
// tables connected by equalities (joinChainQuery) through the wire
// protocol: the planner must find an order without cross products.
func BenchmarkJoinChain20(b *testing.B) {
	const n = 20
	srv := startIndexServer(b, "")
	defer srv.Shutdown(5 * time.Second)
	ctx := context.Background()
	conn := indexConn(b, srv)
	for i := 0; i < n; i++ {
		if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE TABLE t%d (a INT, b INT)", i)); err != nil {
			b.Fatal(err)
		}
		if _, err := conn.Exec(ctx, fmt.Sprintf("INSERT INTO t%d SELECT k, k FROM generate_series(0, 9) k", i)); err != nil {
			b.Fatal(err)
		}
	}
	// A run that does not finish in a minute is a failure, not a number.
	const limit = time.Minute
	// Several FROM orders: the plan must not depend on the one written.
	for _, seed := range []uint64{7, 8, 9} {
		q := joinChainQuery(n, seed)
		b.Run(fmt.Sprintf("order%d/plan", seed), func(b *testing.B) {
			for b.Loop() {
				qctx, cancel := context.WithTimeout(ctx, limit)
				rows, err := conn.Query(qctx, "EXPLAIN "+q)
				if err == nil {
					for rows.Next() {
					}
					err = rows.Err()
				}
				cancel()
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("order%d/run", seed), func(b *testing.B) {
			for b.Loop() {
				qctx, cancel := context.WithTimeout(ctx, limit)
				var count, lo, hi int64
				err := conn.QueryRow(qctx, q).Scan(&count, &lo, &hi)
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				if count != 10 || lo != 0 || hi != 9 {
					b.Fatalf("count %d min %d max %d, want 10 0 9", count, lo, hi)
				}
			}
		})
	}
}
