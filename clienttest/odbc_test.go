//go:build clients

package clienttest

import (
	"os"
	"testing"
)

// TestODBC runs testdata/clients/odbc_session.sh: psqlODBC through
// unixODBC's isql, with a DSN in a private odbc.ini — SELECTs, SQLTables
// (isql's help) and SQLColumns (help TABLE), each on its own connection.
func TestODBC(t *testing.T) {
	need(t, "isql")
	bash := need(t, "bash")
	if _, err := os.Stat("/usr/lib/x86_64-linux-gnu/odbc/psqlodbcw.so"); err != nil {
		// Where Debian's odbc-postgresql puts the driver; unixODBC finds it
		// by the bare name in odbcinst.ini.
		t.Fatalf("psqlODBC is not installed (run scripts/install-test-deps.sh): %v", err)
	}
	targets := startTargets(t, sessionOpts{tls: true})
	run := clientRun{argv: []string{bash, "odbc_session.sh"}}
	pgOut := runClient(t, targets[0], run)
	mvOut := runClient(t, targets[1], run)
	compareSessions(t, pgOut, mvOut, odbcNorms)
}
