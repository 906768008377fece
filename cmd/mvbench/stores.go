package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// Several storage engines in one run (--store pebble,tikvmock://): the
// whole run once per engine, each with its own in-process mvserver (and
// PostgreSQL beside it, as in a run of one), then every mvserver
// measurement of the later engines beside the first's.

// storePebble names the embedded default engine in --store's list; the
// server's own --store spells it as the empty string.
const storePebble = "pebble"

// parseStores reads --store's comma list. One entry is the single-engine
// run; "pebble" (or an empty entry) is the embedded default.
func parseStores(s string) ([]string, error) {
	if !strings.Contains(s, ",") {
		return []string{storeURL(s)}, nil
	}
	var out []string
	for _, f := range strings.Split(s, ",") {
		u := storeURL(strings.TrimSpace(f))
		for _, prev := range out {
			if prev == u {
				return nil, fmt.Errorf("--store: %q appears twice", storeLabel(u))
			}
		}
		out = append(out, u)
	}
	return out, nil
}

// storeURL is an entry of --store as the server's --store takes it.
func storeURL(s string) string {
	if strings.EqualFold(s, storePebble) {
		return ""
	}
	return s
}

// storeLabel is how the tables name an engine.
func storeLabel(store string) string {
	if store == "" {
		return storePebble
	}
	return store
}

// runStores runs the bench once per engine and prints the later engines'
// mvserver numbers beside the first's. --json then writes a list of the
// runs' reports.
func runStores(ctx context.Context, cfg *config, stdout, stderr io.Writer) ([]*Report, error) {
	var reps []*Report
	var err error
	for _, st := range cfg.stores {
		c := *cfg
		c.stores, c.store, c.jsonPath = []string{st}, st, ""
		fmt.Fprintf(stdout, "\n======== mvserver on %s ========\n", storeLabel(st))
		var rep *Report
		rep, err = runBench(ctx, &c, stdout, stderr)
		if rep != nil {
			reps = append(reps, rep)
		}
		if err != nil {
			break
		}
	}
	for _, r := range reps[1:] {
		printBesideStore(stdout, reps[0], r)
	}
	if cfg.jsonPath != "" {
		b, jerr := json.MarshalIndent(reps, "", "  ")
		if jerr == nil {
			jerr = os.WriteFile(cfg.jsonPath, append(b, '\n'), 0o644)
		}
		if jerr != nil && err == nil {
			err = fmt.Errorf("write %s: %w", cfg.jsonPath, jerr)
		} else if jerr == nil {
			fmt.Fprintf(stdout, "measurements of %d runs written to %s\n", len(reps), cfg.jsonPath)
		}
	}
	return reps, err
}

// measureKey identifies one measurement across two runs of the same
// configuration: what was measured, and which repetition of it.
type measureKey struct {
	workload, phase, variant, batch string
	d                               int64
	clients                         int
	nth                             int
}

// measureLabel names a measurement in the side-by-side table.
func measureLabel(m *Measurement) string {
	parts := []string{m.Workload, phaseLabel(m.Phase)}
	if m.Variant != "" {
		parts = append(parts, m.Variant)
	}
	if m.Batch != "" && m.Batch != m.Variant {
		parts = append(parts, "after "+m.Batch)
	}
	if m.D > 0 && m.Phase != phCopy && m.Phase != phCreate && m.Phase != phIndex {
		parts = append(parts, "d="+fmtCount(m.D))
	}
	if m.Clients > 0 {
		parts = append(parts, fmt.Sprintf("%d clients", m.Clients))
	}
	return strings.Join(parts, " ")
}

// phaseLabel is a phase as the tables print it.
func phaseLabel(p string) string {
	switch p {
	case phCopy:
		return "COPY"
	case phCreate:
		return "CREATE MV"
	case phIndex:
		return "CREATE INDEX on view"
	case phRefresh:
		return "REFRESH"
	case phRefreshFull:
		return "REFRESH FULL"
	case phRefreshAlt:
		return "REFRESH strict twin"
	case phReads:
		return "point reads"
	case phIndexes:
		return "secondary indexes"
	case phSelect:
		return "SELECT"
	}
	return p
}

// printBesideStore writes every mvserver measurement of other beside the
// same one of base, with the ratio other / base (point reads: base TPS /
// other TPS, so above 1 other is slower either way), and the geometric
// mean per workload.
func printBesideStore(out io.Writer, base, other *Report) {
	bl, ol := storeLabel(base.Store), storeLabel(other.Store)
	fmt.Fprintf(out, "\nmvserver on %s beside mvserver on %s (ratio = %s / %s; point reads: %s TPS / %s TPS)\n", ol, bl, ol, bl, bl, ol)
	index := func(r *Report) (map[measureKey]*Measurement, []measureKey) {
		seen := map[measureKey]int{}
		m := map[measureKey]*Measurement{}
		var order []measureKey
		for i := range r.Measurements {
			x := &r.Measurements[i]
			if x.System != sysMV || (x.Seconds <= 0 && x.TPS <= 0) || (x.Status != "" && x.Status != stOK) {
				continue
			}
			k := measureKey{x.Workload, x.Phase, x.Variant, x.Batch, x.D, x.Clients, 0}
			k.nth = seen[k]
			seen[k]++
			m[k] = x
			order = append(order, k)
		}
		return m, order
	}
	bm, order := index(base)
	om, _ := index(other)
	t := [][]string{{"measurement", bl, "technique", ol, "technique", "ratio"}}
	logSum, n := map[string]float64{}, map[string]int{}
	var workloads []string
	for _, k := range order {
		b, o := bm[k], om[k]
		if o == nil {
			continue
		}
		var r float64
		var bc, oc string
		if k.phase == phReads {
			bc, oc = fmtTPS(b.TPS), fmtTPS(o.TPS)
			if o.TPS > 0 {
				r = b.TPS / o.TPS
			}
		} else {
			bc, oc = fmtDur(b.Seconds), fmtDur(o.Seconds)
			r = o.Seconds / b.Seconds
		}
		t = append(t, []string{measureLabel(b), bc, b.Technique, oc, o.Technique, fmtRatio(r)})
		if r > 0 && !math.IsInf(r, 0) {
			if n[k.workload] == 0 {
				workloads = append(workloads, k.workload)
			}
			logSum[k.workload] += math.Log(r)
			n[k.workload]++
		}
	}
	if len(t) == 1 {
		fmt.Fprintln(out, "no measurement is in both runs")
		return
	}
	printAligned(out, t, map[int]bool{0: true, 2: true, 4: true})
	for _, w := range workloads {
		fmt.Fprintf(out, "geometric mean of the ratios, %s: %s over %d measurements\n", w, fmtRatio(math.Exp(logSum[w]/float64(n[w]))), n[w])
	}
}
