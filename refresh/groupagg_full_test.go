package refresh_test

import (
	"fmt"
	"math/rand"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mvserver/mvserver/refresh"
)

// TestGroupStateQueryMatchesFold: a GROUP_AGGREGATE view whose states come
// from the state query (CREATE) holds what the same view folded row at a
// time holds, and its incremental refreshes (STRICT), which start from those
// states, keep it equal to its query: seeded random rows with NULLs, int8
// sums past an int64, decimals, CHAR keys, FILTER and HAVING.
func TestGroupStateQueryMatchesFold(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE t (id INTEGER PRIMARY KEY, g INTEGER, s CHAR(3), i INTEGER, b BIGINT, d NUMERIC(12,2))`)
	val := func(s string) string {
		if rng.Intn(6) == 0 {
			return "NULL"
		}
		return s
	}
	row := func(id int) string {
		return fmt.Sprintf("(%d, %s, %s, %s, %s, %s)", id,
			val(fmt.Sprint(rng.Intn(5))),
			val(fmt.Sprintf("'%s'", []string{"a", "a ", "bc", "x"}[rng.Intn(4)])),
			val(fmt.Sprint(rng.Intn(200)-100)),
			val(fmt.Sprint([]int64{1, -7, 1 << 62, -(1 << 62), 9_000_000_000_000_000_000}[rng.Intn(5)])),
			val(fmt.Sprintf("%d.%02d", rng.Intn(2000)-1000, rng.Intn(100))))
	}
	next := 0
	insert := func(n int) {
		var vs []string
		for range n {
			vs = append(vs, row(next))
			next++
		}
		exec(t, c, "INSERT INTO t VALUES "+strings.Join(vs, ", "))
	}
	insert(300)
	queries := []string{
		`SELECT g, count(*) AS n, count(i) AS ni, sum(i) AS si, avg(i) AS ai, min(i) AS mi, max(d) AS xd, sum(d) AS sd, avg(d) AS ad, sum(b) AS sb, avg(b) AS ab FROM t GROUP BY g`,
		`SELECT count(*) AS n, sum(d) AS sd, min(s) AS ms, max(b) AS xb, avg(b) AS ab FROM t WHERE i > 0`,
		`SELECT s, sum(i) FILTER (WHERE d > 0) AS si, count(*) FILTER (WHERE g IS NULL) AS n FROM t GROUP BY s HAVING count(*) > 1`,
		`SELECT g, s, sum(d * 2) AS sd, count(*) AS n FROM t WHERE d < 500 GROUP BY g, s`,
		`SELECT count(*) AS n, sum(i) AS si FROM t WHERE id < 0`, // no rows
	}
	var runs atomic.Int64
	for i, q := range queries {
		restore := refresh.SetStateQuery(true, &runs)
		before := runs.Load()
		exec(t, c, fmt.Sprintf("CREATE MATERIALIZED VIEW v%d REFRESH POLICY INCREMENTAL STRICT AS %s", i, q))
		if runs.Load() == before {
			t.Fatalf("v%d was not computed by the state query", i)
		}
		restore()
		restore = refresh.SetStateQuery(false, &runs)
		exec(t, c, fmt.Sprintf("CREATE MATERIALIZED VIEW f%d AS %s", i, q))
		restore()
	}
	check := func(when string) {
		t.Helper()
		for i, q := range queries {
			want := strings.Join(rows(t, c, q), "\n")
			for _, v := range []string{"v", "f"} {
				if got := strings.Join(rows(t, c, fmt.Sprintf("SELECT * FROM %s%d", v, i)), "\n"); got != want {
					t.Fatalf("seed %d, %s: %s%d holds\n%s\nits query returns\n%s", seed, when, v, i, got, want)
				}
			}
		}
	}
	check("after CREATE")
	for round := range 6 {
		switch rng.Intn(3) {
		case 0:
			insert(1 + rng.Intn(40))
		case 1:
			exec(t, c, fmt.Sprintf("DELETE FROM t WHERE id %% 7 = %d", rng.Intn(7)))
		default:
			exec(t, c, fmt.Sprintf("UPDATE t SET i = i + %d, d = d - 1.25, b = -b WHERE id %% 5 = %d", rng.Intn(9)-4, rng.Intn(5)))
		}
		for i := range queries {
			for _, v := range []string{"v", "f"} {
				exec(t, c, fmt.Sprintf("REFRESH MATERIALIZED VIEW %s%d", v, i))
			}
		}
		check(fmt.Sprintf("after round %d", round))
	}
}
