//go:build clients

package clienttest

import "testing"

// TestPsql runs testdata/clients/psql.sql with psql 15 non-interactively
// (the \d family, \du, \l, \x, \conninfo and plain SELECTs; psql picks its
// catalog queries by the server_version the server reports) and compares
// the outputs; mvserver's is also kept in testdata/clients/golden/psql.txt.
func TestPsql(t *testing.T) {
	psql := need(t, "psql")
	targets := startTargets(t, sessionOpts{})
	run := clientRun{argv: []string{psql, "-X", "-v", "ON_ERROR_STOP=0", "-f", "psql.sql"}}
	pgOut := runClient(t, targets[0], run)
	mvOut := runClient(t, targets[1], run)
	mvSteps := compareSessions(t, pgOut, mvOut, psqlNorms)
	checkGolden(t, "psql.txt", mvSteps)
}
