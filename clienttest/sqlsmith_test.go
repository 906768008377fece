//go:build clients

package clienttest

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// sqlsmithQueries is how many random queries each server gets (issue 22's
// Done-when: 10 000).
const sqlsmithQueries = "10000"

var sqlsmithCountRE = regexp.MustCompile(`(?m)^queries: (\d+)$`)
var sqlsmithErrRE = regexp.MustCompile(`(?m)^error rate: ([0-9.]+)$`)

// TestSqlsmith runs sqlsmith (random queries built from the catalog, a
// fixed seed) against PostgreSQL and mvserver, each with the suite's
// schema. Both must come out the same way: sqlsmith reads the catalog,
// sends every query, and the server is still answering; mvserver's log has
// no panic. A query may fail (most random queries do on PostgreSQL too);
// a crash, a hang or an aborted start-up fails the test.
func TestSqlsmith(t *testing.T) {
	bin := need(t, "/usr/bin/sqlsmith")
	targets := startTargets(t, sessionOpts{})
	for _, tg := range targets {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		// The connection comes from libpq's environment: no password in
		// the arguments.
		cmd := exec.CommandContext(ctx, bin, "--target=dbname="+tg.conn.Database, "--max-queries="+sqlsmithQueries, "--seed=1", "--verbose")
		cmd.Env = append(os.Environ(), tg.conn.env()...)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		cancel()
		report := string(out)
		if err != nil {
			t.Fatalf("%s: sqlsmith: %v\n%s", tg.name, err, tail(report, 40))
		}
		// --verbose reports as it goes: the last report counts them all.
		if m := sqlsmithCountRE.FindAllStringSubmatch(report, -1); m == nil || m[len(m)-1][1] != sqlsmithQueries {
			t.Fatalf("%s: sqlsmith did not send its %s queries:\n%s", tg.name, sqlsmithQueries, tail(report, 40))
		}
		if tg.log != nil {
			if l := tg.log.String(); strings.Contains(l, "panic") {
				t.Fatalf("%s logged a panic under sqlsmith:\n%s", tg.name, tail(l, 60))
			}
		}
		if err := execAll(tg.conn, []string{"SELECT 1"}); err != nil {
			t.Fatalf("%s does not answer after sqlsmith: %v", tg.name, err)
		}
		rate := "?"
		if m := sqlsmithErrRE.FindAllStringSubmatch(report, -1); len(m) > 0 {
			rate = m[len(m)-1][1]
		}
		t.Logf("%s: %s sqlsmith queries in %s, error rate %s", tg.name, sqlsmithQueries, time.Since(start).Round(time.Second), rate)
	}
}
