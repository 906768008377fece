//go:build clients

package clienttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// jdbcJar is pgjdbc 42.x from Debian's libpostgresql-jdbc-java.
const jdbcJar = "/usr/share/java/postgresql.jar"

// TestJDBC runs testdata/clients/JdbcSession.java: plain statements,
// prepared statements past pgjdbc's 5th execution (named statements,
// binary parameters and results), ResultSetMetaData, getTables (with
// MATERIALIZED VIEW), getColumns, getPrimaryKeys, getSchemas, getTypeInfo
// and more DatabaseMetaData, transactions, portal reads and isValid.
func TestJDBC(t *testing.T) {
	javac, java := need(t, "javac"), need(t, "java")
	need(t, jdbcJar)
	classes, err := os.MkdirTemp(workRoot, "jdbc-")
	if err != nil {
		t.Fatal(err)
	}
	build := exec.Command(javac, "-d", classes, "-cp", jdbcJar, testdata("JdbcSession.java"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("javac JdbcSession.java: %v\n%s", err, out)
	}
	targets := startTargets(t, sessionOpts{tls: true})
	run := clientRun{argv: []string{java, "-Duser.timezone=UTC", "-cp", jdbcJar + string(filepath.ListSeparator) + classes, "JdbcSession"}}
	pgOut := runClient(t, targets[0], run)
	mvOut := runClient(t, targets[1], run)
	compareSessions(t, pgOut, mvOut, jdbcNorms)
}
