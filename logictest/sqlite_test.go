//go:build sqllogictest

package logictest

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var sqliteDir = flag.String("sqllogictest-dir", "../../shared/sqllogictest", "directory of SQLite's sqllogictest files (*.test)")

// TestSQLiteCorpus runs every *.test file of SQLite's sqllogictest corpus
// (-sqllogictest-dir; shared/sqllogictest beside the repository by
// default): go test -tags sqllogictest ./logictest -run TestSQLiteCorpus.
// A missing corpus fails the test.
func TestSQLiteCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(*sqliteDir, "*.test"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no *.test files in %s (-sqllogictest-dir)", *sqliteDir)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".test"), func(t *testing.T) {
			RunSQLiteFile(t, path, time.Minute)
		})
	}
}
