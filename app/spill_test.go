package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mvserver/mvserver/catalog"
)

// Under query_memory_limit = '1MB' a GROUP BY of a million distinct keys,
// a DISTINCT and a hash join past the budget complete
// by spilling to the data directory's tmp/ (PostgreSQL answers them under
// work_mem = '1MB' too), with PostgreSQL's answers, and leave tmp/ empty.
func TestSpillMillionKeys(t *testing.T) {
	dir := t.TempDir()
	srv, c := startAndConnect(t, Config{Logger: slog.New(slog.DiscardHandler), DataDir: dir, Listen: "127.0.0.1:0", Database: "mvserver",
		MaxConnections: 10, TableDefaults: catalog.AllOn})
	t.Cleanup(func() { srv.Shutdown(2 * time.Second) })
	ctx := context.Background()
	defer c.Close(ctx)

	// max(g) of each k = g % 300001 over 1…500000.
	var maxSum int64
	for k := int64(0); k <= 300000; k++ {
		m := k + 300001*((500000-k)/300001)
		if m == 0 {
			m = 300001 // g = 0 is not in the series
		}
		maxSum += m
	}
	mustExec(t, c, `SET query_memory_limit = '1MB'`)
	for _, q := range []struct{ sql, want string }{
		// Every key once, its count 1: sums check each group.
		{`SELECT count(*) || ' ' || sum(n) || ' ' || sum(k) FROM (SELECT g AS k, count(*) AS n FROM generate_series(1, 1000000) AS g GROUP BY g) AS s`,
			"1000000 1000000 500000500000"},
		{`SELECT count(*) || ' ' || sum(k) || ' ' || sum(m) FROM (SELECT g % 300001 AS k, max(g) AS m FROM generate_series(1, 500000) AS g GROUP BY g % 300001) AS s`,
			"300001 45000150000 " + fmt.Sprint(maxSum)},
		{`SELECT count(*) FROM (SELECT DISTINCT g % 400000 FROM generate_series(1, 500000) AS g) AS d`, "400000"},
		{`SELECT count(*) || ' ' || sum(a.x) FROM generate_series(1, 300000) AS a(x) JOIN generate_series(1, 600000) AS b(y) ON a.x = b.y`,
			"300000 45000150000"},
	} {
		start := time.Now()
		r := queryRows(t, c, q.sql)
		t.Logf("%v: %s", time.Since(start).Round(time.Millisecond), q.sql)
		if got := fmt.Sprint(r); got != "["+q.want+"]" {
			t.Errorf("%s: %s, want [%s]", q.sql, got, q.want)
		}
	}
	if files, err := os.ReadDir(filepath.Join(dir, "tmp")); err != nil || len(files) != 0 {
		t.Errorf("tmp/ after spilling: %d files, %v", len(files), err)
	}
}
