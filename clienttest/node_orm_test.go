//go:build clients

package clienttest

import (
	"os"
	"testing"
)

// The Node.js ORMs and drivers beside node-postgres, each pinned in
// testdata/clients/node/package-lock.json (scripts/install-test-deps.sh
// runs npm ci there).

// TestKnex runs node_modules' knex: migrate:latest of two migrations
// (increments, enu, references with ON DELETE CASCADE, an added column
// with a default), then rollback, latest again and down.
func TestKnex(t *testing.T) { runNodeSession(t, "knex", "knex_session.js") }

// TestSequelize runs sequelize: sync({force: true}) of three models with
// hasMany, belongsTo and belongsToMany associations and an ENUM, then
// sync({alter: true}) after the models changed.
func TestSequelize(t *testing.T) { runNodeSession(t, "sequelize", "sequelize_session.js") }

// TestPostgresJS runs postgres.js: prepared tagged-template queries with
// binary results, sql.json (jsonb parameters), dynamic identifiers and
// object inserts, transactions, a cursor, unsafe multi-statement strings,
// pipelined queries and errors.
func TestPostgresJS(t *testing.T) { runNodeSession(t, "postgres", "postgresjs_session.js") }

// runNodeSession runs program (in testdata/clients/node) with the npm
// package pkg installed, against PostgreSQL and mvserver, and compares.
func runNodeSession(t *testing.T, pkg, program string) {
	node := need(t, "node")
	if _, err := os.Stat(testdata("node", "node_modules", pkg, "package.json")); err != nil {
		t.Fatalf("npm's %s is not installed in testdata/clients/node (run scripts/install-test-deps.sh, or npm ci there): %v", pkg, err)
	}
	targets := startTargets(t, sessionOpts{})
	run := clientRun{argv: []string{node, program}, dir: testdata("node")}
	pgOut := runClient(t, targets[0], run)
	mvOut := runClient(t, targets[1], run)
	compareSessions(t, pgOut, mvOut, nil)
}
