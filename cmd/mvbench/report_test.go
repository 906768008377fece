package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestTargets: the verdicts follow the measured ratios, the worst one
// deciding, and targets without both systems' numbers are left out.
func TestTargets(t *testing.T) {
	r := &Report{PostgreSQL: "PostgreSQL 15", Config: ReportConfig{Rows: 1000, Changes: []int64{1, 1000}, DMLRows: 100, Clients: []int{2}}}
	add := func(sys, phase, variant string, d int64, sec float64) {
		r.Measurements = append(r.Measurements, Measurement{Workload: "W1", System: sys, Phase: phase, Variant: variant, D: d, Seconds: sec})
	}
	add(sysMV, phRefresh, varInserts, 1000, 0.001)
	add(sysPG, phRefresh, varInserts, 1000, 1)     // 1/1000: met
	add(sysMV, phRefresh, varMixed, 1000, 0.01)    //
	add(sysPG, phRefresh, varMixed, 1000, 1)       // 1/100: missed, 2× over
	add(sysMV, phRefreshFull, varInserts, 1000, 1) // own full: 1/1000, met
	add(sysMV, phRefreshFull, varMixed, 1000, 2)   // 1/200, met
	for _, v := range []string{varInserts, varMixed} {
		add(sysPG, phRefresh, v, 1, 1)
	}
	add(sysMV, phRefreshFull, varInserts, 1, 3) // full/PG 3: the worst
	add(sysMV, phRefreshFull, varMixed, 1, 1)
	add(sysMV, phCopy, "", 1000, 1.2)
	add(sysPG, phCopy, "", 1000, 1) // 1.2: met
	var out bytes.Buffer
	r.printTargets(&out, "W1")
	got := strings.Join(strings.Fields(out.String()), " ") // column widths aside
	for _, want := range []string{
		"incremental REFRESH after 1000 changes / PostgreSQL REFRESH ≤ 1/200 inserts 1/1000, updates+deletes 1/100 MISSED (2.0× over)",
		"incremental REFRESH after 1000 changes / own REFRESH FULL ≤ 1/100 inserts 1/1000, updates+deletes 1/200 met",
		"REFRESH FULL / PostgreSQL REFRESH ≤ 1.50 median 1.50 of 4, worst 3.00 (1 inserts) MISSED (2.0× over)",
		"COPY / PostgreSQL COPY ≤ 1.50 1.20 met",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "point reads") || strings.Contains(got, "DML") {
		t.Errorf("targets without measurements printed:\n%s", got)
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{fmtRatio(0.004), "1/250"}, {fmtRatio(0.25), "0.25"}, {fmtRatio(12.4), "12"}, {fmtRatio(0), ""},
		{fmtDur(0.0042), "4.20ms"}, {fmtDur(0.42), "420ms"}, {fmtDur(4.2), "4.20s"}, {fmtDur(420), "420s"},
		{fmtCount(1_000_000), "1M"}, {fmtCount(10_000), "10k"}, {fmtCount(1500), "1500"}, {fmtCount(0), ""},
		{cents(-5).String(), "-0.05"}, {cents(123456).String(), "1234.56"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestCostModelChoices: a refresh that went incremental is set against the
// view's REFRESH FULL, one that went full against the INCREMENTAL STRICT
// twin; the report counts the chosen ones that were slower and names them
// with their estimates; a twin that fell back to full is no alternative.
func TestCostModelChoices(t *testing.T) {
	r := &Report{Config: ReportConfig{Rows: 1000, Changes: []int64{1000, 100000}}}
	add := func(phase, variant string, d int64, sec float64, tech string) *Measurement {
		r.Measurements = append(r.Measurements, Measurement{Workload: "W1", System: sysMV, Phase: phase, Variant: variant, D: d, Seconds: sec, Technique: tech})
		return &r.Measurements[len(r.Measurements)-1]
	}
	add(phRefresh, varInserts, 1000, 0.01, "GROUP_AGGREGATE")
	add(phRefreshFull, varInserts, 1000, 1, "FULL_RECOMPUTE") // faster chosen
	m := add(phRefresh, varMixed, 1000, 2, "GROUP_AGGREGATE")
	m.Estimates = []estimate{{Technique: "GROUP_AGGREGATE", Chosen: true, Cost: 500, EstimatedSeconds: 0.5}, {Technique: "FULL_RECOMPUTE", Cost: 900}}
	add(phRefreshFull, varMixed, 1000, 1, "FULL_RECOMPUTE") // slower chosen: 2×
	add(phRefresh, varInserts, 100000, 1, "FULL_RECOMPUTE")
	add(phRefreshAlt, varInserts, 100000, 3, "GROUP_AGGREGATE") // faster chosen
	add(phRefresh, varMixed, 100000, 1, "FULL_RECOMPUTE")
	add(phRefreshAlt, varMixed, 100000, 0.5, "FULL_RECOMPUTE") // no alternative
	cs := r.choices("W1")
	if len(cs) != 3 {
		t.Fatalf("%d choices, want 3: %+v", len(cs), cs)
	}
	var out bytes.Buffer
	r.printCostModel(&out, "W1")
	got := out.String()
	for _, want := range []string{
		"slower than the one not chosen in 1 of 3 refreshes",
		"1k updates+deletes: GROUP_AGGREGATE 2.00s against FULL_RECOMPUTE 1.00s (2.00); estimated GROUP_AGGREGATE 500ms, FULL_RECOMPUTE 900 units",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
}
