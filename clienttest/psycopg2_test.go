//go:build clients

package clienttest

import "testing"

// debianPython is Debian's interpreter, the one python3-psycopg2 installs
// into (a python3 earlier on PATH may be another one without it).
const debianPython = "/usr/bin/python3"

// TestPsycopg2 runs testdata/clients/psycopg2_session.py: parameters,
// executemany, copy_expert both ways, transactions, a named (server-side)
// cursor, set_session. It is the suite's TLS session: sslmode=require once
// mvserver offers TLS.
func TestPsycopg2(t *testing.T) {
	need(t, debianPython)
	targets := startTargets(t, sessionOpts{tls: true})
	run := clientRun{argv: []string{debianPython, "-u", "psycopg2_session.py"}}
	pgOut := runClient(t, targets[0], run)
	mvOut := runClient(t, targets[1], run)
	compareSessions(t, pgOut, mvOut, nil)
}
