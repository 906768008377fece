//go:build clients

package clienttest

import "testing"

// TestPgcli runs testdata/clients/pgcli_session.py: pgcli's own engine
// (PGExecute with pgspecial, as its prompt uses them) runs \dt, \df, \d of
// tables and a view, \dv, \di and \dn, and the catalog reads pgcli makes
// at connect to fill its completion.
func TestPgcli(t *testing.T) {
	need(t, debianPython)
	need(t, "pgcli")
	targets := startTargets(t, sessionOpts{})
	run := clientRun{argv: []string{debianPython, "-u", "pgcli_session.py"}}
	pgOut := runClient(t, targets[0], run)
	mvOut := runClient(t, targets[1], run)
	compareSessions(t, pgOut, mvOut, nil)
}
