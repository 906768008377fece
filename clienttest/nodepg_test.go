//go:build clients

package clienttest

import (
	"os"
	"testing"
)

// TestNodePg runs testdata/clients/node/node_pg_session.js with npm's pg
// (pinned in package-lock.json; scripts/install-test-deps.sh runs npm ci):
// queries without values (simple protocol), parameterized and named
// queries (extended protocol, parameter types left to the server),
// rowMode array, transactions, several statements in one string, errors.
func TestNodePg(t *testing.T) {
	node := need(t, "node")
	if _, err := os.Stat(testdata("node", "node_modules", "pg", "package.json")); err != nil {
		t.Fatalf("npm's pg is not installed in testdata/clients/node (run scripts/install-test-deps.sh, or npm ci there): %v", err)
	}
	targets := startTargets(t, sessionOpts{tls: true})
	run := clientRun{argv: []string{node, "node_pg_session.js"}, dir: testdata("node")}
	pgOut := runClient(t, targets[0], run)
	mvOut := runClient(t, targets[1], run)
	compareSessions(t, pgOut, mvOut, nil)
}
