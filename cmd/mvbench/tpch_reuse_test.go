package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReuse runs workload T three times on one data directory with
// --reuse: the first run loads, the second finds the load and skips it
// (its view of Q6, kept by the first, dropped so that it can be created
// again), and the third loads again because the second's change batches
// changed the tables.
func TestReuse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := func(extra ...string) (*Report, string) {
		t.Helper()
		var out, stderr bytes.Buffer
		args := append([]string{"--workloads", "T", "--sf", "0.01", "--tpch-queries", "6", "--query-timeout", "10s",
			"--data-dir", dir, "--reuse", "--quiet"}, extra...)
		cfg, err := parseFlags(args, &stderr)
		if err != nil {
			t.Fatal(err)
		}
		if !cfg.keep {
			t.Fatal("--reuse does not imply --keep")
		}
		rep, err := runBench(ctx, cfg, &out, &stderr)
		if err != nil {
			t.Fatalf("%q: %v\nstdout:\n%s\nstderr:\n%s", args, err, out.String(), stderr.String())
		}
		return rep, out.String()
	}
	loaded := func(rep *Report) bool { return rep.findT(sysMV, phCopy, "lineitem", "") != nil }
	created := func(rep *Report) string {
		if m := rep.findT(sysMV, phCreate, "Q6", ""); m != nil {
			return m.Status + " " + m.Note
		}
		return "no measurement"
	}

	rep, out := run()
	if !loaded(rep) || len(rep.Config.LoadReused) != 0 || !strings.Contains(out, "cannot reuse") {
		t.Fatalf("first run: loaded %v, reused %v:\n%s", loaded(rep), rep.Config.LoadReused, out)
	}
	rep, out = run("--refresh")
	if loaded(rep) || len(rep.Config.LoadReused) != 1 || !strings.Contains(out, "mvserver: reused the tables") {
		t.Fatalf("second run: loaded %v, reused %v:\n%s", loaded(rep), rep.Config.LoadReused, out)
	}
	if c := created(rep); !strings.HasPrefix(c, stOK) {
		t.Errorf("second run: CREATE MATERIALIZED VIEW of Q6 %s (the kept view was not dropped?)", c)
	}
	if sel := rep.findT(sysMV, phSelect, "Q6", ""); sel == nil || sel.Status != stOK {
		t.Errorf("second run: SELECT Q6 %+v", sel)
	}
	rep, out = run()
	if !loaded(rep) || len(rep.Config.LoadReused) != 0 || !strings.Contains(out, "changed by an earlier run") {
		t.Fatalf("third run, after change batches: loaded %v, reused %v:\n%s", loaded(rep), rep.Config.LoadReused, out)
	}
}
