package refresh_test

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestFullRefreshWritesDifference: a full recompute of a view holding
// rows writes only what changed (fulldiff.go) — copies of a row gained
// and lost, rows of a hash that is new or gone — and the view equals its
// query after each.
func TestFullRefreshWritesDifference(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE t (id INT PRIMARY KEY, v INT)`)
	bag := map[int]int{} // v → copies in t
	ids := map[int]int{} // id → v
	next := 0
	for i := 0; i < 200; i++ {
		v := rng.Intn(20)
		exec(t, c, fmt.Sprintf(`INSERT INTO t VALUES (%d, %d)`, next, v))
		ids[next], bag[v] = v, bag[v]+1
		next++
	}
	exec(t, c, `CREATE MATERIALIZED VIEW mv REFRESH POLICY FULL AS SELECT v FROM t`)
	for round := 0; round < 12; round++ {
		want := map[int]int{}
		for v, n := range bag {
			want[v] = n
		}
		for i := 0; i < rng.Intn(30); i++ {
			switch op := rng.Intn(3); {
			case op == 0:
				v := rng.Intn(25)
				exec(t, c, fmt.Sprintf(`INSERT INTO t VALUES (%d, %d)`, next, v))
				ids[next], bag[v] = v, bag[v]+1
				next++
			default:
				for id, v := range ids {
					if op == 1 {
						exec(t, c, fmt.Sprintf(`DELETE FROM t WHERE id = %d`, id))
						delete(ids, id)
						bag[v]--
					} else {
						nv := rng.Intn(25)
						exec(t, c, fmt.Sprintf(`UPDATE t SET v = %d WHERE id = %d`, nv, id))
						ids[id], bag[v], bag[nv] = nv, bag[v]-1, bag[nv]+1
					}
					break
				}
			}
		}
		var diff int64
		for v := range merged(want, bag) {
			d := int64(bag[v] - want[v])
			diff += max(d, -d)
		}
		exec(t, c, `REFRESH MATERIALIZED VIEW mv FULL`)
		if got, want := strings.Join(rows(t, c, `SELECT * FROM mv`), ","), strings.Join(rows(t, c, `SELECT v FROM t`), ","); got != want {
			t.Fatalf("round %d: view %s, query %s", round, got, want)
		}
		var written int64
		if err := c.QueryRow(context.Background(), `SELECT rows_written FROM refresh_history WHERE view_name = 'mv' ORDER BY start_time DESC LIMIT 1`, pgx.QueryExecModeSimpleProtocol).Scan(&written); err != nil {
			t.Fatal(err)
		}
		if written > diff {
			t.Fatalf("round %d: %d rows written for a difference of %d", round, written, diff)
		}
	}
}

func merged(a, b map[int]int) map[int]bool {
	m := map[int]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}
