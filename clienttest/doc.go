// Package clienttest proves mvserver with real PostgreSQL clients (SPEC
// R-P4): psql, pgjdbc, psycopg2, node-postgres, psqlODBC (through unixODBC's
// isql), pgbench, pg_dump, sqlsmith, and the ORMs and tools applications
// reach a database through: SQLAlchemy and pandas, pgcli, knex,
// Sequelize, postgres.js and GORM. Its tests carry the build tag `clients`:
//
//	scripts/install-test-deps.sh       # the clients, PostgreSQL 15, npm ci
//	go test -tags clients ./clienttest/
//	go test -tags clients ./clienttest/ -run TestPsql -update   # rewrite golden files
//
// Each test (one per client):
//
//  1. starts a fresh mvserver, built from this tree by TestMain (or the
//     binary given with -mvserver), and a fresh scratch PostgreSQL 15 — a
//     copy of one cluster TestMain initialised, its postgres processes
//     run as the postgres user when the tests run as root (initdb and
//     postgres refuse to run as root);
//  2. loads testdata/clients/schema.sql into both, through pgx;
//  3. runs the client's program from testdata/clients/ against each, with
//     the same connection settings (one place: connSettings, handed to
//     every program as PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE,
//     PGSSLMODE);
//  4. splits both outputs into steps (a line "=== NAME" starts one) and
//     compares them step by step, each step a subtest, after the few
//     normalizations in normalize_test.go. Lines starting with "# " are
//     shown but never compared (version strings, error texts).
//
// # Invariants
//
//  1. A missing client, driver or server binary fails the test; nothing skips.
//  2. A step that answers differently on mvserver fails, with both outputs.
//  3. Every normalization is named, commented and scoped to one client's
//     steps; the oracle's own setup (oracle_test.go) only removes what a
//     fresh PostgreSQL cluster has and a fresh mvserver cannot (other
//     databases) and adds what mvserver always has (its system schema).
//  4. When the mvserver binary offers password authentication and TLS
//     (--superuser-password, --tls-cert), both servers demand SCRAM-SHA-256
//     (checked: both refuse a wrong password with 28P01) and offer TLS with
//     one self-signed certificate. The psycopg2 session requires TLS
//     (sslmode=require); the others keep their drivers' defaults (libpq's,
//     pgjdbc's and psqlODBC's "prefer" encrypts, node-postgres does not).
//     A binary without those flags is tested trusting loopback clients.
//
// The package's code is all in _test.go files behind the tag, so `go test
// ./...` builds nothing here. It imports nothing from the server: it drives
// binaries, as a user would.
package clienttest
