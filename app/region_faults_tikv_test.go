//go:build tikv

package app

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mvserver/mvserver/storage"
)

// TestRegionTroubleLosesNothing: on a TiKV cluster whose regions split
// while statements and refreshes run, and which answers some requests
// with region errors (NotLeader, RegionNotFound, EpochNotMatch,
// StaleCommand), every acknowledged write is there afterwards and every
// view, refreshed incrementally, equals its query.
func TestRegionTroubleLosesNothing(t *testing.T) {
	_, c := startTestServer(t, Config{Store: "tikvmock://" + t.Name()})
	faults, err := storage.MockRegionFaults(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mustExec(t, c, "CREATE TABLE src (k int PRIMARY KEY, g int, v int)")
	mustExec(t, c, "CREATE TABLE dim (g int PRIMARY KEY, name text)")
	mustExec(t, c, "INSERT INTO dim SELECT i, 'g' || i FROM generate_series(0, 19) AS s(i)")
	mustExec(t, c, "INSERT INTO src SELECT i, i % 20, i FROM generate_series(1, 2000) AS s(i)")
	views := map[string]string{
		"by_group": "SELECT g, count(*) AS n, sum(v) AS s FROM src GROUP BY g",
		"joined":   "SELECT s.k, d.name, s.v FROM src s JOIN dim d ON s.g = d.g WHERE s.v % 3 = 0",
	}
	for name, q := range views {
		mustExec(t, c, "CREATE MATERIALIZED VIEW "+name+" AS "+q)
	}
	// The writes the test has had acknowledged: k → v.
	want := map[int]int{}
	for i := 1; i <= 2000; i++ {
		want[i] = i
	}
	faults.ErrorEvery(7)
	// Splits all through the rounds, so that they land in the middle of
	// statements and refreshes.
	stop, stopped := make(chan struct{}), make(chan struct{})
	splits := 0
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			case <-time.After(15 * time.Millisecond):
			}
			splits++
			faults.Split(4 + splits%60)
		}
	}()
	next := 2001
	for round := range 10 {
		mustExec(t, c, fmt.Sprintf("INSERT INTO src SELECT i, i %% 20, i FROM generate_series(%d, %d) AS s(i)", next, next+149))
		for i := next; i < next+150; i++ {
			want[i] = i
		}
		next += 150
		lo := 1 + round*100
		mustExec(t, c, fmt.Sprintf("UPDATE src SET v = v + 1000 WHERE k BETWEEN %d AND %d", lo, lo+49))
		for k := lo; k <= lo+49; k++ {
			if _, ok := want[k]; ok {
				want[k] += 1000
			}
		}
		mustExec(t, c, fmt.Sprintf("DELETE FROM src WHERE k BETWEEN %d AND %d", lo+50, lo+69))
		for k := lo + 50; k <= lo+69; k++ {
			delete(want, k)
		}
		for name := range views {
			mustExec(t, c, "REFRESH MATERIALIZED VIEW "+name)
		}
		n, sum := 0, 0
		for _, v := range want {
			n, sum = n+1, sum+v
		}
		var gotN, gotSum int
		if err := c.QueryRow(ctx, "SELECT count(*), sum(v) FROM src").Scan(&gotN, &gotSum); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if gotN != n || gotSum != sum {
			t.Fatalf("round %d: src has %d rows summing to %d, want %d and %d", round, gotN, gotSum, n, sum)
		}
		for name, q := range views {
			diff := queryInt(t, c, fmt.Sprintf(
				"SELECT count(*) FROM ((SELECT * FROM %s EXCEPT ALL (%s)) UNION ALL ((%s) EXCEPT ALL SELECT * FROM %s)) AS d", name, q, q, name))
			if diff != 0 {
				t.Fatalf("round %d: view %s differs from its query in %d rows", round, name, diff)
			}
		}
	}
	close(stop)
	<-stopped
	faults.ErrorEvery(0)
	incremental := queryInt(t, c, "SELECT count(*) FROM refresh_history WHERE technique NOT IN ('FULL_RECOMPUTE', 'NO_OP') AND status = 'COMPLETED'")
	if incremental < 10 {
		t.Errorf("%d incremental refreshes ran, want at least 10 (the rounds' refreshes went full?)", incremental)
	}
	if faults.Injected() < 50 {
		t.Errorf("%d region errors injected, want at least 50", faults.Injected())
	}
	if splits < 20 {
		t.Errorf("%d splits of the key space, want at least 20", splits)
	}
	t.Logf("%d region errors injected, %d splits (%d regions at the end), %d incremental refreshes", faults.Injected(), splits, faults.Regions(), incremental)
}
