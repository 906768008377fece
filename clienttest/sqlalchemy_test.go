//go:build clients

package clienttest

import "testing"

// TestSQLAlchemy runs testdata/clients/sqlalchemy_session.py with Debian's
// SQLAlchemy and pandas over psycopg2: MetaData.reflect() of every table
// and view (columns, keys, foreign keys, indexes, checks, comments), the
// inspector's calls one by one, pandas read_sql_table and to_sql with
// if_exists='replace' and 'append', and Core's create_all/drop_all.
func TestSQLAlchemy(t *testing.T) {
	need(t, debianPython)
	targets := startTargets(t, sessionOpts{})
	run := clientRun{argv: []string{debianPython, "-u", "sqlalchemy_session.py"}}
	pgOut := runClient(t, targets[0], run)
	mvOut := runClient(t, targets[1], run)
	compareSessions(t, pgOut, mvOut, nil)
}
