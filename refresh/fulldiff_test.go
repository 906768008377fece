package refresh_test

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mvserver/mvserver/refresh"
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

// TestFreshRowsInChunks: the rows of an empty view (CREATE, a view emptied
// by its query, or one rewritten because it is past the difference limit)
// are sorted and inserted a chunk at a time; with chunks of 7 rows and a
// limit of 50 rows, repeated rows, NULLs and every path still leave the
// view equal to its query, and CHECK finds nothing.
func TestFreshRowsInChunks(t *testing.T) {
	defer refresh.SetChunking(7, 50)()
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE t (id INT PRIMARY KEY, v INT, s TEXT)`)
	for i := 0; i < 120; i++ {
		s := fmt.Sprintf("'s%d'", i%4)
		if i%11 == 0 {
			s = "NULL"
		}
		exec(t, c, fmt.Sprintf(`INSERT INTO t VALUES (%d, %d, %s)`, i, i%9, s))
	}
	same := func(when string) {
		t.Helper()
		for _, q := range [][2]string{{`SELECT * FROM mv`, `SELECT v, s FROM t WHERE v < 7`}, {`SELECT * FROM agg`, `SELECT v, count(*) FROM t GROUP BY v`}} {
			if got, want := strings.Join(rows(t, c, q[0]), ","), strings.Join(rows(t, c, q[1]), ","); got != want {
				t.Fatalf("%s: %s is %s, its query %s", when, q[0], got, want)
			}
		}
		for _, v := range []string{"mv", "agg"} {
			if got := rows(t, c, `CHECK MATERIALIZED VIEW `+v); len(got) != 1 || !strings.HasPrefix(got[0], "OK") {
				t.Fatalf("%s: CHECK MATERIALIZED VIEW %s: %v", when, v, got)
			}
		}
	}
	exec(t, c, `CREATE MATERIALIZED VIEW mv AS SELECT v, s FROM t WHERE v < 7`) // 94 rows: past the limit
	exec(t, c, `CREATE MATERIALIZED VIEW agg AS SELECT v, count(*) FROM t GROUP BY v`)
	same("after CREATE")
	exec(t, c, `DELETE FROM t WHERE id % 3 = 0`)
	exec(t, c, `REFRESH MATERIALIZED VIEW mv FULL`) // rewritten: past the limit
	exec(t, c, `REFRESH MATERIALIZED VIEW agg FULL`)
	same("after REFRESH FULL")
	exec(t, c, `DELETE FROM t WHERE v < 7`)
	exec(t, c, `REFRESH MATERIALIZED VIEW mv FULL`) // now empty
	exec(t, c, `REFRESH MATERIALIZED VIEW agg`)
	same("after the view emptied")
	exec(t, c, `INSERT INTO t SELECT i, i % 5, 'x' FROM generate_series(1000, 1040) AS i`)
	exec(t, c, `REFRESH MATERIALIZED VIEW mv FULL`) // an empty view computed again
	exec(t, c, `REFRESH MATERIALIZED VIEW agg`)
	same("after refilling")
	// In a transaction block (no new generation) an emptied view's rows
	// are one sorted run of more than a chunk.
	exec(t, c, `DELETE FROM t WHERE v < 7`)
	exec(t, c, `REFRESH MATERIALIZED VIEW mv FULL`)
	exec(t, c, `INSERT INTO t SELECT i, i % 6, 'y' FROM generate_series(2000, 2060) AS i`)
	exec(t, c, `BEGIN`)
	exec(t, c, `REFRESH MATERIALIZED VIEW mv FULL`)
	exec(t, c, `REFRESH MATERIALIZED VIEW agg`)
	exec(t, c, `COMMIT`)
	same("after refilling in a transaction block")
}
