package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTinyRun runs every workload at 2000 rows and one change size against
// an in-process mvserver (no PostgreSQL), with the view compared to its
// query after every incremental refresh, and checks that every phase ran
// and was recorded. Times are not asserted.
func TestTinyRun(t *testing.T) {
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "out.json")
	var stderr bytes.Buffer
	cfg, err := parseFlags([]string{
		"--rows", "2000", "--changes", "50", "--clients", "2", "--read-duration", "200ms",
		"--dml-rows", "20", "--dml-reps", "1", "--full-reps", "2", "--check", "each",
		"--data-dir", filepath.Join(dir, "data"), "--json", jsonPath, "--quiet", "--workloads", "W1,W2,W3,W4,Q",
	}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	rep, err := runBench(ctx, cfg, &out, &stderr)
	if err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, out.String(), stderr.String())
	}
	t.Logf("\n%s", out.String())

	// Q: every query measured twice, with its result.
	for _, q := range queryWorkload().queries {
		var m *Measurement
		for i := range rep.Measurements {
			if x := &rep.Measurements[i]; x.Workload == "Q" && x.Phase == phQuery && x.Variant == q.name {
				m = x
			}
		}
		if m == nil || len(m.Samples) != 2 || m.Seconds <= 0 || !strings.Contains(m.Note, "rows, fingerprint") || strings.HasPrefix(m.Note, "0 rows") {
			t.Errorf("Q %s: %+v", q.name, m)
		}
	}

	type key struct{ phase, variant string }
	want := []key{
		{phCopy, ""}, {phCreate, ""}, {phReads, ""},
		{phDMLInsert, varNoView}, {phDMLUpdate, varNoView}, {phDMLDelete, varNoView},
		{phDMLInsert, varView}, {phDMLUpdate, varView}, {phDMLDelete, varView},
		{phChange, varInserts}, {phRefresh, varInserts}, {phRefreshFull, varInserts}, {phCheck, varInserts},
		{phChange, varMixed}, {phRefresh, varMixed}, {phRefreshFull, varMixed}, {phCheck, varMixed},
	}
	for _, w := range []string{"W1", "W2", "W3", "W4"} {
		got := map[key]Measurement{}
		for _, m := range rep.Measurements {
			if m.Workload != w {
				continue
			}
			if m.System != sysMV {
				t.Errorf("%s: a measurement of %s without --pg", w, m.System)
			}
			got[key{m.Phase, m.Variant}] = m
		}
		for _, k := range want {
			m, ok := got[k]
			if !ok {
				t.Errorf("%s: no %s %s measurement", w, k.phase, k.variant)
				continue
			}
			if m.Seconds <= 0 {
				t.Errorf("%s: %s %s took %v s", w, k.phase, k.variant, m.Seconds)
			}
		}
		for _, v := range []string{varInserts, varMixed} {
			r := got[key{phRefresh, v}]
			if r.Technique == "" || r.Technique == "NO_OP" {
				t.Errorf("%s: refresh after 50 %s: technique %q", w, v, r.Technique)
			}
			if f := got[key{phRefreshFull, v}]; f.Technique != "FULL_RECOMPUTE" || len(f.Samples) != 2 {
				t.Errorf("%s: REFRESH FULL after 50 %s: technique %q, %d samples (want 2)", w, v, f.Technique, len(f.Samples))
			}
			t.Logf("%s after 50 %s: %s", w, v, r.Technique)
		}
		if m := got[key{phReads, ""}]; m.Clients != 2 || m.Queries == 0 || m.P99Ms <= 0 {
			t.Errorf("%s: reads %+v", w, m)
		}
		if m := got[key{phCopy, ""}]; m.Rows < 2000 {
			t.Errorf("%s: COPY loaded %d rows", w, m.Rows)
		}
		if !strings.Contains(out.String(), "\n"+w+" ") {
			t.Errorf("no table for %s in the output", w)
		}
	}

	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Measurements) != len(rep.Measurements) || back.Config.Rows != 2000 {
		t.Errorf("JSON holds %d measurements of %d rows; the run made %d", len(back.Measurements), back.Config.Rows, len(rep.Measurements))
	}
}

// TestCheckFindsDrift: the comparison the run relies on sees a view that
// differs from its query.
func TestCheckFindsDrift(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, url, err := startMVServer(t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	s, err := connectSystem(ctx, sysMV, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if err := s.resetSchema(ctx); err != nil {
		t.Fatal(err)
	}
	w := workloads()[0]
	for _, q := range append([]string{w.main.createSQL()}, w.main.insertSQL(1, 0, 10, time.Now(), 5)...) {
		if _, err := s.exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.exec(ctx, "CREATE MATERIALIZED VIEW "+w.view+" AS "+w.query); err != nil {
		t.Fatal(err)
	}
	if err := checkView(ctx, s, w, time.Now()); err != nil {
		t.Fatalf("fresh view: %v", err)
	}
	if _, err := s.exec(ctx, "INSERT INTO transactions_table VALUES (100, 7, 1.00), (101, 7, 2.00)"); err != nil {
		t.Fatal(err)
	}
	err = checkView(ctx, s, w, time.Now())
	if err == nil || !strings.Contains(err.Error(), "differs from its query") {
		t.Fatalf("stale view: %v, want a difference", err)
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--rows", "0"},
		{"--changes", "1,x"},
		{"--changes", "-5"},
		{"--changes", "1,1"},
		{"--workloads", "W9"},
		{"--workloads", ""},
		{"--clients", "0"},
		{"--check", "sometimes"},
		{"--profile-phase", "REFRESH"},
		{"--mv", "postgres://127.0.0.1:5433/mvserver", "--data-dir", "x"},
		{"stray"},
	} {
		if _, err := parseFlags(args, &bytes.Buffer{}); err == nil {
			t.Errorf("%q: accepted", args)
		}
	}
	cfg, err := parseFlags([]string{"--workloads", "w2,W1,W2", "--changes", "1, 1000", "--clients", ""}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.workloads) != 2 || cfg.workloads[0].id != "W2" || cfg.workloads[1].id != "W1" {
		t.Errorf("workloads %v", cfg.workloads)
	}
	if len(cfg.changes) != 2 || cfg.changes[1] != 1000 || len(cfg.clients) != 0 {
		t.Errorf("changes %v clients %v", cfg.changes, cfg.clients)
	}
}
