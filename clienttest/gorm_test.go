//go:build clients

package clienttest

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGORM builds testdata/clients/gorm (a module of its own: GORM and
// its driver stay out of mvserver's module; scripts/install-test-deps.sh
// downloads them) and runs it: AutoMigrate of models with belongs-to,
// has-many and many-to-many associations, a CHECK and indexes, the
// Migrator's catalog reads (ColumnTypes, HasConstraint, HasIndex), a
// second AutoMigrate after a field was added, and the associations in use.
func TestGORM(t *testing.T) {
	goBin := need(t, "go")
	bin := filepath.Join(workRoot, "gorm_session")
	build := exec.Command(goBin, "build", "-o", bin, ".")
	build.Dir = testdata("gorm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building testdata/clients/gorm (run scripts/install-test-deps.sh for its modules): %v\n%s", err, out)
	}
	targets := startTargets(t, sessionOpts{})
	run := clientRun{argv: []string{bin}}
	pgOut := runClient(t, targets[0], run)
	mvOut := runClient(t, targets[1], run)
	compareSessions(t, pgOut, mvOut, nil)
}
