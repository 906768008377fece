//go:build clients

package clienttest

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	update     = flag.Bool("update", false, "rewrite the golden files under testdata/clients/golden/ from mvserver's output")
	mvBinFlag  = flag.String("mvserver", "", "mvserver binary to test (default: build ./cmd/mvserver of this tree)")
	pgBinFlag  = flag.String("pgbin", "/usr/lib/postgresql/15/bin", "directory of PostgreSQL 15's initdb and postgres (the oracle)")
	keepFlag   = flag.Bool("keep", false, "keep the work directory (servers' data, logs, every client's output) and print where it is")
	stepFilter = flag.String("steps", "", "compare only the steps whose name contains this text (the programs still run every step)")
)

// repoRoot is the module root; testdata/clients/ is below it.
var repoRoot string

// workRoot holds everything the tests create: the binary, the oracle's
// template cluster, each test's servers and the clients' outputs. It is
// world-traversable so that the postgres user reaches its data directories.
var workRoot string

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "clienttest:", err)
		return 1
	}
	repoRoot = filepath.Dir(wd)
	workRoot, err = os.MkdirTemp("", "mvclients-")
	if err == nil {
		err = os.Chmod(workRoot, 0o755)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "clienttest:", err)
		return 1
	}
	code := m.Run()
	if *keepFlag {
		fmt.Fprintln(os.Stderr, "clienttest: work directory kept:", workRoot)
	} else {
		_ = os.RemoveAll(workRoot)
	}
	return code
}

// testdata is the path of a file under testdata/clients/.
func testdata(elem ...string) string {
	return filepath.Join(append([]string{repoRoot, "testdata", "clients"}, elem...)...)
}

// need fails the test when tool is not on PATH (or not at the absolute path
// given): a tagged suite that cannot find its client fails, it does not skip.
func need(t testing.TB, tool string) string {
	t.Helper()
	if filepath.IsAbs(tool) {
		if _, err := os.Stat(tool); err != nil {
			t.Fatalf("%s is missing (run scripts/install-test-deps.sh): %v", tool, err)
		}
		return tool
	}
	p, err := exec.LookPath(tool)
	if err != nil {
		t.Fatalf("%s is not on PATH (run scripts/install-test-deps.sh): %v", tool, err)
	}
	return p
}

// mvserver binary, built once.
var (
	mvOnce     sync.Once
	mvBin      string
	mvFeatures features
	mvErr      error
)

// features are what the mvserver binary offers, read from its --help, so
// that the suite starts authenticating and encrypting as soon as main gains
// the flags (issue 8: SCRAM and TLS), and trusts loopback before that.
type features struct {
	password bool // --superuser-password (with --superuser): SCRAM-SHA-256
	tls      bool // --tls-cert, --tls-key
}

// mvBuildTags are the build tags of the binary: tikv when the suite is
// built with it (tags_tikv_test.go).
var mvBuildTags string

// mvStore is every mvserver's --store: empty for Pebble, or
// MVSERVER_TEST_STORE (tikvmock:// keeps the mock cluster in the data
// directory). Read here: the servers' environment drops MVSERVER_*.
var mvStore = os.Getenv("MVSERVER_TEST_STORE")

// mvserverBinary builds ./cmd/mvserver once (or takes -mvserver).
func mvserverBinary(t testing.TB) (string, features) {
	t.Helper()
	mvOnce.Do(func() {
		mvBin = *mvBinFlag
		if mvBin == "" {
			mvBin = filepath.Join(workRoot, "mvserver")
			// go test puts its own toolchain first on PATH.
			build := []string{"build", "-o", mvBin}
			if mvBuildTags != "" {
				build = append(build, "-tags", mvBuildTags)
			}
			cmd := exec.Command("go", append(build, "./cmd/mvserver")...)
			cmd.Dir = repoRoot
			if out, err := cmd.CombinedOutput(); err != nil {
				mvErr = fmt.Errorf("building mvserver: %v\n%s", err, out)
				return
			}
		}
		out, _ := exec.Command(mvBin, "--help").CombinedOutput() // --help exits 2
		help := string(out)
		if !strings.Contains(help, "-data-dir") {
			mvErr = fmt.Errorf("%s --help does not look like mvserver's:\n%s", mvBin, help)
			return
		}
		mvFeatures = features{
			password: strings.Contains(help, "-superuser-password") && strings.Contains(help, "-superuser "),
			tls:      strings.Contains(help, "-tls-cert") && strings.Contains(help, "-tls-key"),
		}
	})
	if mvErr != nil {
		t.Fatal(mvErr)
	}
	return mvBin, mvFeatures
}
