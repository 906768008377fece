package lint

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/mvserver/mvserver"

// allowed lists, for each package (relative to the module), the project
// packages it may import (DESIGN.md "Layout and who owns what"). A package
// missing from the table may import nothing of the project.
var allowed = map[string][]string{
	"pgerror":     {},
	"storage":     {},
	"sql/types":   {"pgerror"},
	"sql/parse":   {"pgerror"},
	"sql/copyfmt": {"pgerror"},
	// sql/settings: PostgreSQL 15's configuration parameters (a leaf).
	"sql/settings": {"pgerror"},
	"sql/funcs":    {"pgerror", "sql/types"},
	"catalog":      {"pgerror", "sql/types", "storage"},
	// stats: ANALYZE's sampling and estimators, auto-analyze.
	"stats":    {"pgerror", "sql/types", "catalog", "storage"},
	"sql/plan": {"pgerror", "sql/parse", "sql/funcs", "sql/types", "catalog"},
	"sql/exec": {"pgerror", "sql/plan", "sql/funcs", "sql/types", "catalog", "storage", "sql/exec/vec"},
	// sql/exec/vec: columnar batches and vector kernels (a leaf under exec).
	"sql/exec/vec": {"pgerror", "sql/types"},
	// sql/pgcatalog: pg_catalog's relations and functions over the catalog.
	"sql/pgcatalog": {"pgerror", "sql/parse", "sql/plan", "sql/exec", "sql/funcs", "sql/types", "catalog"},
	// sql/acl: privilege rules over roles (membership, other backends).
	"sql/acl": {"pgerror", "catalog"},
	// sql/sequence: sequence counters outside transactions, and the
	// options of CREATE/ALTER SEQUENCE.
	"sql/sequence": {"pgerror", "catalog", "storage"},
	// sql/plpgsql: DO blocks parsed and interpreted; their SQL runs
	// through a Runner the session gives.
	"sql/plpgsql": {"pgerror", "sql/parse"},
	// sql/ddl: DDL applied to a catalog clone (enum types, functions).
	"sql/ddl": {"pgerror", "sql/parse", "sql/plan", "sql/funcs", "sql/types", "catalog"},
	"server":  {"pgerror"},
	"refresh": {"pgerror", "sql/parse", "sql/plan", "sql/exec", "sql/funcs", "sql/types", "catalog", "storage"},
	"notify":  {"pgerror"},
	// dataset: the lifecycle of materialized views and streaming tables
	// that is not the connection's: incrementality analysis (mv_insights,
	// EXPLAIN's blockers), SHOW, DESCRIBE and EXPLAIN of datasets.
	"dataset":       {"pgerror", "refresh", "sql/parse", "sql/plan", "sql/exec", "sql/types", "sql/settings", "catalog", "storage"},
	"sql/session":   {"pgerror", "sql/ddl", "sql/plpgsql", "notify", "server", "refresh", "dataset", "scheduler", "sql/parse", "sql/plan", "sql/exec", "sql/funcs", "sql/types", "sql/pgcatalog", "sql/copyfmt", "sql/settings", "sql/acl", "sql/sequence", "catalog", "storage", "stats"},
	"app":           {"pgerror", "notify", "server", "sql/session", "refresh", "scheduler", "sql/types", "catalog", "storage", "web", "stats"},
	"web":           {"pgerror", "server", "dataset", "sql/parse", "sql/exec", "refresh", "sql/types", "catalog", "storage"},
	"cmd/mvserver":  {"app"},
	"cmd/mvbench":   {"app"},
	"logictest":     {"app", "catalog", "pgerror"},
	"scheduler":     {"pgerror", "catalog"},
	"internal/lint": {},
	// internal/wiretest runs wire golden files (server's tests, clienttest).
	"internal/wiretest": {},
	// clienttest drives real clients against the mvserver binary: it
	// imports nothing of the project.
	"clienttest": {},
	// loadtest: pgbench against an in-process server (test files only).
	"loadtest": {},
}

type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// touchSources stats every Go file of the module, so that go test's result
// cache (which records the files a test stats or opens) reruns these checks
// whenever a source file changes; the go commands they run are invisible to it.
func touchSources(t *testing.T) {
	t.Helper()
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".go") || d.Name() == "go.mod") {
			_, err := os.Stat(path)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestImportDirection(t *testing.T) {
	touchSources(t)
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		ok, known := allowed[rel]
		if !known {
			t.Errorf("package %s is not in the import-direction table of internal/lint; add it (and to DESIGN.md)", rel)
			continue
		}
		set := map[string]bool{}
		for _, a := range ok {
			set[a] = true
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			if !set[dep] {
				t.Errorf("%s imports %s, which DESIGN.md's import direction does not allow", rel, dep)
			}
		}
	}
}

func TestVet(t *testing.T) {
	touchSources(t)
	out, err := exec.Command("go", "vet", module+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go vet:\n%s", out)
	}
}
