package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
	p, url, err := startMVServer(t.TempDir(), serverOptions{}, slog.New(slog.DiscardHandler))
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
		{"--workloads", "T", "--sf", "0.001"},
		{"--workloads", "T", "--sf", "101"},
		{"--query-timeout", "0s"},
		{"--tpch-queries", "23"},
		{"--tpch-queries", "Qx"},
		{"--workloads", "T", "--reuse"},
		{"--compression", "lz4"},
		{"--block-size", "2MB"},
		{"--workloads", "T,W1", "--reuse", "--data-dir", "x"},
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
	cfg, err = parseFlags([]string{"--workloads", "T", "--sf", "0.5", "--tpch-queries", "q3, 1,3", "--query-timeout", "2m"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.sf != 0.5 || !slices.Equal(cfg.tpchQueries, []int{3, 1}) || cfg.queryTimeout != 2*time.Minute || cfg.workloads[0].run == nil {
		t.Errorf("T: sf %v queries %v timeout %v", cfg.sf, cfg.tpchQueries, cfg.queryTimeout)
	}
}

// TestTinyT runs workload T end to end at SF 0.01 against an in-process
// mvserver (the tests have no PostgreSQL), with the refresh phase, and
// checks the harness: every table loaded with the generator's row count,
// every one of the 22 queries ran as a SELECT with an outcome (answered,
// rejected with a SQLSTATE, or stopped by the 3 s statement timeout: a
// query mvserver cannot run today is reported, not a failure), a view
// that was created holds its query's rows, and after each batch every
// view was refreshed, incrementally and in full, to the same rows. Times
// are not asserted.
func TestTinyT(t *testing.T) {
	dir := t.TempDir()
	var stderr bytes.Buffer
	cfg, err := parseFlags([]string{"--workloads", "T", "--sf", "0.01", "--refresh", "--query-timeout", "3s",
		"--data-dir", filepath.Join(dir, "data"), "--quiet"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	var out bytes.Buffer
	rep, err := runBench(ctx, cfg, &out, &stderr)
	if err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, out.String(), stderr.String())
	}
	t.Logf("\n%s", out.String())
	text := out.String()
	if !strings.Contains(text, "workload T, derived from TPC-H") || strings.Contains(text, "TPC-H result") {
		t.Errorf("the output does not name workload T as it should")
	}

	g := mustGen(t, 0.01, cfg.seed)
	for _, tb := range tpchTables() {
		m := rep.findT(sysMV, phCopy, tb.name, "")
		if m == nil || m.Rows != tb.count(g) || m.Rows == 0 {
			t.Errorf("COPY %s: %+v, want %d rows", tb.name, m, tb.count(g))
		}
	}
	sqlstate := regexp.MustCompile(`^[0-9A-Z]{5}: `)
	answered := 0
	for _, q := range tpchQueries(0.01) {
		sel := rep.findT(sysMV, phSelect, q.name(), "")
		if sel == nil {
			t.Errorf("%s: no SELECT measurement", q.name())
			continue
		}
		switch sel.Status {
		case stOK:
			answered++
			if sel.Fingerprint == "" {
				t.Errorf("%s: answered without a fingerprint: %+v", q.name(), sel)
			}
		case stTimeout, stError:
			if !sqlstate.MatchString(sel.Note) && sel.Status == stError {
				t.Errorf("%s: error without a SQLSTATE: %q", q.name(), sel.Note)
			}
		default:
			t.Errorf("%s: SELECT status %q", q.name(), sel.Status)
		}
		cr := rep.findT(sysMV, phCreate, q.name(), "")
		if cr == nil {
			t.Errorf("%s: no CREATE MATERIALIZED VIEW measurement", q.name())
			continue
		}
		if cr.Status == stOK && sel.Status == stOK && cr.Fingerprint != sel.Fingerprint {
			t.Errorf("%s: the view holds other rows than the query: %+v vs %+v", q.name(), cr, sel)
		}
		for _, batch := range []string{"RF1", "RF2", "UPDATE"} {
			inc, full := rep.findT(sysMV, phRefresh, q.name(), batch), rep.findT(sysMV, phRefreshFull, q.name(), batch)
			if cr.Status != stOK {
				if inc != nil {
					t.Errorf("%s: refreshed after %s without a view", q.name(), batch)
				}
				continue
			}
			if inc == nil {
				continue // an earlier refresh timed out
			}
			if inc.Status == stOK && (inc.Technique == "" || inc.Fingerprint == "") {
				t.Errorf("%s after %s: refresh without technique or rows: %+v", q.name(), batch, inc)
			}
			if full != nil && full.Status == stOK && full.Technique != "FULL_RECOMPUTE" {
				t.Errorf("%s after %s: REFRESH FULL used %s", q.name(), batch, full.Technique)
			}
			if inc.Status == stOK && full != nil && full.Status == stOK && inc.Fingerprint != full.Fingerprint {
				t.Errorf("%s after %s: incremental and full refresh disagree: %+v vs %+v", q.name(), batch, inc, full)
			}
		}
	}
	if answered == 0 {
		t.Error("no query answered")
	}
	for _, batch := range []string{"RF1", "RF2", "UPDATE"} {
		if m := rep.findT(sysMV, phChange, batch, batch); m == nil || m.Status != stOK {
			t.Errorf("batch %s: %+v", batch, m)
		}
	}
}
