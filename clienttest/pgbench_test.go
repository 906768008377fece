//go:build clients

package clienttest

import (
	"strings"
	"testing"
)

// TestPgbench runs testdata/clients/pgbench_session.sh: pgbench -i -s 1
// (its COPY), then the select-only script (-S) for a fixed number of
// transactions in the simple, extended and prepared query modes. Besides
// agreeing with PostgreSQL's run, every mode must report all transactions
// processed and none failed.
func TestPgbench(t *testing.T) {
	need(t, "pgbench")
	need(t, "psql")
	bash := need(t, "bash")
	targets := startTargets(t, sessionOpts{})
	run := clientRun{argv: []string{bash, "pgbench_session.sh"}}
	pgOut := runClient(t, targets[0], run)
	mvOut := runClient(t, targets[1], run)
	for _, out := range []struct{ name, text string }{{"postgres", pgOut}, {"mvserver", mvOut}} {
		for _, mode := range []string{"simple", "extended", "prepared"} {
			for _, want := range []string{
				"query mode: " + mode,
				"number of transactions actually processed: 500/500",
				"number of failed transactions: 0 (0.000%)",
			} {
				if !stepContains(out.text, "pgbench -S -M "+mode, want) {
					t.Errorf("%s: pgbench -S -M %s did not report %q", out.name, mode, want)
				}
			}
		}
	}
	compareSessions(t, pgOut, mvOut, pgbenchNorms)
}

// stepContains reports whether the named step of out has the line want.
func stepContains(out, name, want string) bool {
	for _, s := range parseSteps(out) {
		if s.name != name {
			continue
		}
		for _, l := range s.lines {
			if strings.TrimSpace(l) == want {
				return true
			}
		}
	}
	return false
}
