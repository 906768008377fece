package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseStores(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  bool
	}{
		{"", []string{""}, false},
		{"pebble", []string{""}, false},
		{"tikvmock://", []string{"tikvmock://"}, false},
		{"pebble,tikvmock://", []string{"", "tikvmock://"}, false},
		{"tikvmock://, Pebble", []string{"tikvmock://", ""}, false},
		{"pebble,", nil, true}, // the empty entry is Pebble again
		{"tikvmock://,tikvmock://", nil, true},
	} {
		got, err := parseStores(c.in)
		if (err != nil) != c.err || strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("parseStores(%q) = %q, %v; want %q (error %v)", c.in, got, err, c.want, c.err)
		}
	}
}

// TestBesideStore: the second engine's mvserver numbers line up with the
// first's by what was measured and which repetition, PostgreSQL's and
// failed statements are left out, and each workload gets a geometric mean.
func TestBesideStore(t *testing.T) {
	base := &Report{Store: storePebble}
	other := &Report{Store: "tikvmock://"}
	add := func(r *Report, m Measurement) { r.Measurements = append(r.Measurements, m) }
	for _, r := range []*Report{base, other} {
		f := 1.0
		if r == other {
			f = 4
		}
		add(r, Measurement{Workload: "W1", System: sysMV, Phase: phCopy, D: 1000, Seconds: 0.5 * f})
		add(r, Measurement{Workload: "W1", System: sysPG, Phase: phCopy, D: 1000, Seconds: 9})
		add(r, Measurement{Workload: "W1", System: sysMV, Phase: phRefresh, Variant: varInserts, D: 10, Seconds: 0.01 * f, Technique: "GROUP_AGGREGATE"})
		add(r, Measurement{Workload: "W1", System: sysMV, Phase: phReads, Clients: 2, TPS: 1000 / f})
		add(r, Measurement{Workload: "T", System: sysMV, Phase: phSelect, Variant: "Q1", Seconds: 0.2 * f / 2, Status: stOK})
		add(r, Measurement{Workload: "T", System: sysMV, Phase: phSelect, Variant: "Q2", Seconds: 90, Status: "timeout"})
	}
	var out bytes.Buffer
	printBesideStore(&out, base, other)
	got := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{
		"mvserver on tikvmock:// beside mvserver on pebble",
		"W1 COPY 500ms 2.00s 4.00",
		"W1 REFRESH inserts d=10 10ms GROUP_AGGREGATE 40ms GROUP_AGGREGATE 4.00",
		"W1 point reads 2 clients",
		"T SELECT Q1 100ms 400ms 4.00",
		"geometric mean of the ratios, W1: 4.00 over 3 measurements",
		"geometric mean of the ratios, T: 4.00 over 1 measurements",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	if strings.Contains(got, "Q2") || strings.Contains(got, "9.00s") {
		t.Errorf("a timed-out or PostgreSQL measurement is in the table:\n%s", out.String())
	}
}
