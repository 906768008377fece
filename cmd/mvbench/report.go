package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"
	"unicode/utf8"
)

// Systems a measurement is of.
const (
	sysMV = "mvserver"
	sysPG = "postgresql"
)

// Phases (Measurement.Phase).
const (
	phCopy        = "copy"                 // load with COPY
	phCreate      = "create_view"          // CREATE MATERIALIZED VIEW (first computation)
	phIndex       = "create_unique_index"  // on the view's key: point reads use it (PostgreSQL's REFRESH … CONCURRENTLY needs it)
	phDMLInsert   = "dml_insert"           // variant "no view" / "with view"
	phDMLUpdate   = "dml_update"           //
	phDMLDelete   = "dml_delete"           //
	phReads       = "reads"                // prepared point reads of the view
	phChange      = "change"               // the d changed rows (variant inserts / updates+deletes)
	phRefresh     = "refresh"              // REFRESH MATERIALIZED VIEW (mvserver: incremental where it can)
	phRefreshFull = "refresh_full"         // mvserver: REFRESH … FULL
	phConcurrent  = "refresh_concurrently" // PostgreSQL: REFRESH … CONCURRENTLY
	phRefreshAlt  = "refresh_strict"       // mvserver: REFRESH of the view's INCREMENTAL STRICT twin (--alternatives)
	phCheck       = "check"                // mvserver: the view equals its query
	// phQuery (queries.go): one query of workload Q
)

// Variants of the change and DML phases.
const (
	varInserts = "inserts"
	varMixed   = "updates+deletes"
	varNoView  = "no view"
	varView    = "with view"
)

// Measurement is one measured phase of one workload on one system; --json
// writes every one.
type Measurement struct {
	Workload string `json:"workload"`
	System   string `json:"system"`
	Phase    string `json:"phase"`
	Variant  string `json:"variant,omitempty"`
	// D is the number of changed rows the phase follows (change and
	// refresh phases).
	D int64 `json:"d,omitempty"`
	// Rows is what the phase processed: rows loaded or written, source
	// rows of a full computation, changed rows of an incremental refresh.
	Rows       int64   `json:"rows"`
	Seconds    float64 `json:"seconds"`
	RowsPerSec float64 `json:"rows_per_sec,omitempty"`
	// Samples are the repetitions Seconds is the median of.
	Samples []float64 `json:"samples,omitempty"`
	// Technique, RowsRead and RowsWritten are refresh_history's record of
	// an mvserver refresh.
	Technique   string `json:"technique,omitempty"`
	RowsRead    int64  `json:"rows_read,omitempty"`
	RowsWritten int64  `json:"rows_written,omitempty"`
	// Estimates are the cost model's candidates of that refresh
	// (planning_information).
	Estimates []estimate `json:"estimates,omitempty"`
	// Reads.
	Clients int     `json:"clients,omitempty"`
	Queries int64   `json:"queries,omitempty"`
	TPS     float64 `json:"tps,omitempty"`
	P50Ms   float64 `json:"p50_ms,omitempty"`
	P99Ms   float64 `json:"p99_ms,omitempty"`
	// RSSMiB is the mvbench process's resident memory after the phase
	// (mvserver in process: the server's memory plus the tool's).
	RSSMiB float64 `json:"rss_mib,omitempty"`
	Note   string  `json:"note,omitempty"`
	// Batch is workload T's change batch a refresh follows (RF1, RF2,
	// UPDATE); Status its statement's outcome where it can fail without
	// ending the run: ok, timeout, error or skipped.
	Batch  string `json:"batch,omitempty"`
	Status string `json:"status,omitempty"`
	// Fingerprint is workload T's hash of a result's rows as a bag;
	// OrderedFingerprint of them in order (tpch_fingerprint.go).
	Fingerprint        string `json:"fingerprint,omitempty"`
	OrderedFingerprint string `json:"ordered_fingerprint,omitempty"`
}

// Report is a run: its settings, the environment and every measurement.
type Report struct {
	Started      time.Time     `json:"started"`
	Config       ReportConfig  `json:"config"`
	Host         string        `json:"host"`
	CPUs         int           `json:"cpus"`
	GoVersion    string        `json:"go_version"`
	Commit       string        `json:"mvserver_commit,omitempty"`
	MVServer     string        `json:"mvserver"`
	Store        string        `json:"store,omitempty"` // the in-process mvserver's engine (pebble, tikvmock://, …)
	PostgreSQL   string        `json:"postgresql,omitempty"`
	Measurements []Measurement `json:"measurements"`
	PeakRSSMiB   float64       `json:"peak_rss_mib,omitempty"`
	// LoadStart and LoadEnd are /proc/loadavg at the start and the end:
	// other work on the machine skews the numbers.
	LoadStart string `json:"loadavg_start,omitempty"`
	LoadEnd   string `json:"loadavg_end,omitempty"`
}

// loadAvg is the 1, 5 and 15 minute load averages ("" where unknown).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// ReportConfig is the part of the configuration that shapes the numbers.
type ReportConfig struct {
	Rows        int64    `json:"rows"`
	Changes     []int64  `json:"changes"`
	Workloads   []string `json:"workloads"`
	Clients     []int    `json:"clients"`
	ReadSeconds float64  `json:"read_seconds"`
	DMLRows     int64    `json:"dml_rows"`
	DMLReps     int      `json:"dml_reps"`
	FullReps    int      `json:"full_reps"`
	InsertBatch int64    `json:"insert_batch"`
	Seed        uint64   `json:"seed"`
	Check       string   `json:"check"`
	InProcessMV bool     `json:"mvserver_in_process"`
	// Workload T's scale factor, per-statement timeout (seconds) and
	// whether its refresh phase ran.
	SF           float64 `json:"sf,omitempty"`
	QueryTimeout float64 `json:"query_timeout_seconds,omitempty"`
	Refresh      bool    `json:"refresh,omitempty"`
	// LoadReused: with --reuse, the systems on which workload T found
	// its tables kept and skipped the load (tpch_reuse.go).
	LoadReused   []string `json:"load_reused,omitempty"`
	WithPostgres bool     `json:"with_postgresql"`
}

func (r *Report) find(w, sys, phase, variant string, d int64, clients int) *Measurement {
	for i := range r.Measurements {
		m := &r.Measurements[i]
		if m.Workload == w && m.System == sys && m.Phase == phase && m.Variant == variant && m.D == d && m.Clients == clients {
			return m
		}
	}
	return nil
}

func (r *Report) writeJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// tableRow is one line of the printed table: an mvserver measurement, the
// PostgreSQL one it is compared with, and the ratio of their times.
type tableRow struct {
	label   string
	d       int64
	mv, pg  *Measurement
	reads   bool    // compare TPS, not time
	sameMV  bool    // the mvserver measurement is the row above's: show only the comparison
	incFull float64 // incremental / full refresh time (0: none)
	note    string
}

// printWorkload writes workload w's table.
func (r *Report) printWorkload(out io.Writer, w *workload, cfg *config) {
	fmt.Fprintf(out, "\n%s %s\n", w.id, w.title)
	var rows []*tableRow
	add := func(label string, d int64, phase, variant, pgPhase string, clients int) *tableRow {
		mv := r.find(w.id, sysMV, phase, variant, d, clients)
		var pg *Measurement
		if pgPhase != "" {
			pg = r.find(w.id, sysPG, pgPhase, variant, d, clients)
		}
		if mv == nil && pg == nil {
			return nil
		}
		row := &tableRow{label: label, d: d, mv: mv, pg: pg, reads: phase == phReads}
		rows = append(rows, row)
		return row
	}
	add("load (COPY)", r.Config.Rows, phCopy, "", phCopy, 0)
	for _, q := range w.queries {
		if row := add(q.name, 0, phQuery, q.name, phQuery, 0); row != nil {
			row.note = queryNote(row.mv, row.pg)
		}
	}
	add("CREATE MATERIALIZED VIEW", r.Config.Rows, phCreate, "", phCreate, 0)
	add("CREATE UNIQUE INDEX on view", r.Config.Rows, phIndex, "", phIndex, 0)
	for _, k := range []struct{ phase, verb string }{{phDMLInsert, "INSERT"}, {phDMLUpdate, "UPDATE"}, {phDMLDelete, "DELETE"}} {
		add(k.verb+", no view", cfg.dmlRows, k.phase, varNoView, k.phase, 0)
		if row := add(k.verb+", with view", cfg.dmlRows, k.phase, varView, k.phase, 0); row != nil && row.mv != nil {
			if base := r.find(w.id, sysMV, k.phase, varNoView, cfg.dmlRows, 0); base != nil && base.Seconds > 0 {
				row.note = fmt.Sprintf("mv: with/without view %.2f", row.mv.Seconds/base.Seconds)
			}
		}
	}
	for _, c := range cfg.clients {
		add(fmt.Sprintf("point reads, %d clients", c), 0, phReads, "", phReads, c)
	}
	for _, d := range cfg.changes {
		for _, v := range []string{varInserts, varMixed} {
			short := "+ins"
			if v == varMixed {
				short = "upd/del"
			}
			if m := r.find(w.id, sysMV, phChange, v, d, 0); m != nil && m.Note != "" && m.Seconds == 0 {
				rows = append(rows, &tableRow{label: short + ": skipped", d: d, note: m.Note})
				continue
			}
			add(short+": DML", d, phChange, v, phChange, 0)
			inc := add(short+": REFRESH", d, phRefresh, v, phRefresh, 0)
			if r.PostgreSQL != "" {
				if conc := add(short+":   vs pg CONCURRENTLY", d, phRefresh, v, phConcurrent, 0); conc != nil {
					conc.sameMV = true
				}
			}
			add(short+": REFRESH strict twin", d, phRefreshAlt, v, "", 0)
			full := add(short+": REFRESH FULL", d, phRefreshFull, v, phRefresh, 0)
			if inc != nil && full != nil && inc.mv != nil && full.mv != nil && full.mv.Seconds > 0 {
				inc.incFull = inc.mv.Seconds / full.mv.Seconds
			}
		}
	}

	t := [][]string{{"phase", "d", "mvserver", "rate", "technique / p99", "postgres", "rate", "p99", "ratio", "inc/full", "note"}}
	for _, row := range rows {
		cells := []string{row.label, fmtCount(row.d), "", "", "", "", "", "", "", "", row.note}
		if row.mv != nil && !row.sameMV {
			cells[2], cells[3] = measureCells(row.mv, row.reads)
			if row.reads {
				cells[4] = fmtMs(row.mv.P99Ms)
			} else {
				cells[4] = row.mv.Technique
			}
		}
		if row.pg != nil {
			cells[5], cells[6] = measureCells(row.pg, row.reads)
			if row.reads {
				cells[7] = fmtMs(row.pg.P99Ms)
			}
		}
		if row.mv != nil && row.pg != nil {
			if row.reads && row.mv.TPS > 0 {
				cells[8] = fmtRatio(row.pg.TPS / row.mv.TPS)
			} else if !row.reads && row.pg.Seconds > 0 {
				cells[8] = fmtRatio(row.mv.Seconds / row.pg.Seconds)
			}
		}
		if row.incFull > 0 {
			cells[9] = fmtRatio(row.incFull)
		}
		t = append(t, cells)
	}
	if r.PostgreSQL == "" {
		// No PostgreSQL columns.
		for i, row := range t {
			t[i] = append(row[:5:5], row[9:]...)
		}
		printAligned(out, t, map[int]bool{0: true, 4: true, 6: true})
		return
	}
	printAligned(out, t, map[int]bool{0: true, 4: true, 10: true})
}

// queryNote is a query row's note: its result, and whether both systems
// gave the same one.
func queryNote(mv, pg *Measurement) string {
	switch {
	case mv == nil:
		return ""
	case pg == nil:
		return mv.Note
	case mv.Note == pg.Note:
		return mv.Note + ", the same on both"
	}
	return "RESULTS DIFFER: mvserver " + mv.Note + ", postgres " + pg.Note
}

// printAligned writes rows as columns two spaces apart, the columns in
// left left-aligned and the others (numbers) right-aligned, without
// trailing blanks.
func printAligned(out io.Writer, rows [][]string, left map[int]bool) {
	width := map[int]int{}
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var sb strings.Builder
		for i, c := range r {
			if i > 0 {
				sb.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if left[i] {
				sb.WriteString(c + pad)
			} else {
				sb.WriteString(pad + c)
			}
		}
		fmt.Fprintln(out, strings.TrimRight(sb.String(), " "))
	}
}

// measureCells is a measurement's time (reads: TPS) and rate.
func measureCells(m *Measurement, reads bool) (string, string) {
	if reads {
		return fmtTPS(m.TPS), fmt.Sprintf("%d q", m.Queries)
	}
	rate := ""
	if m.RowsPerSec > 0 {
		rate = fmtRate(m.RowsPerSec)
	}
	return fmtDur(m.Seconds), rate
}

func fmtDur(s float64) string {
	switch {
	case s < 0.01:
		return fmt.Sprintf("%.2fms", s*1000)
	case s < 1:
		return fmt.Sprintf("%.0fms", s*1000)
	case s < 100:
		return fmt.Sprintf("%.2fs", s)
	}
	return fmt.Sprintf("%.0fs", s)
}

func fmtTPS(tps float64) string {
	if tps < 10 {
		return fmt.Sprintf("%.2f tps", tps)
	}
	return fmt.Sprintf("%.0f tps", tps)
}

func fmtMs(ms float64) string {
	if ms == 0 {
		return ""
	}
	return fmtDur(ms/1000) + " p99"
}

func fmtCount(n int64) string {
	switch {
	case n == 0:
		return ""
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

func fmtRate(r float64) string {
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.2fM/s", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.1fk/s", r/1e3)
	}
	return fmt.Sprintf("%.0f/s", r)
}

// fmtRatio prints r with three significant digits, and as 1/x below 0.1.
func fmtRatio(r float64) string {
	switch {
	case r == 0 || math.IsInf(r, 0) || math.IsNaN(r):
		return ""
	case r < 0.1:
		return fmt.Sprintf("1/%.0f", 1/r)
	case r < 10:
		return fmt.Sprintf("%.2f", r)
	}
	return fmt.Sprintf("%.0f", r)
}

// target is one of issue 9's goals, checked against a run's measurements.
type target struct {
	what  string
	limit float64 // the ratio must be at most this
	// ratios computes the ratios it applies to (labelled); none: not
	// measured in this run.
	ratios func(r *Report, w string) []labelled
}

type labelled struct {
	label string
	ratio float64
}

// targets are issue 9's goals as ratios (time ratios: at most limit).
var targets = []target{
	{"incremental REFRESH after 1000 changes / PostgreSQL REFRESH", 1.0 / 200, func(r *Report, w string) []labelled {
		return pairs(r, w, phRefresh, phRefresh, []string{varInserts, varMixed}, 1000)
	}},
	{"incremental REFRESH after 1000 changes / own REFRESH FULL", 1.0 / 100, func(r *Report, w string) []labelled {
		var out []labelled
		for _, v := range []string{varInserts, varMixed} {
			inc, full := r.find(w, sysMV, phRefresh, v, 1000, 0), r.find(w, sysMV, phRefreshFull, v, 1000, 0)
			if inc != nil && full != nil && full.Seconds > 0 {
				out = append(out, labelled{v, inc.Seconds / full.Seconds})
			}
		}
		return out
	}},
	{"cost model: chosen technique / the one not chosen (issue 20)", 1.25, func(r *Report, w string) []labelled {
		var out []labelled
		for _, c := range r.choices(w) {
			out = append(out, labelled{c.label, c.ratio()})
		}
		return out
	}},
	{"REFRESH FULL / PostgreSQL REFRESH", 1.5, func(r *Report, w string) []labelled {
		var out []labelled
		for _, d := range r.Config.Changes {
			for _, l := range pairs(r, w, phRefreshFull, phRefresh, []string{varInserts, varMixed}, d) {
				l.label = fmt.Sprintf("%s %s", fmtCount(d), l.label)
				out = append(out, l)
			}
		}
		return out
	}},
	{"query / PostgreSQL (issue 3: within 2×)", 2, func(r *Report, w string) []labelled {
		var out []labelled
		for _, m := range r.Measurements {
			if m.Workload == w && m.System == sysMV && m.Phase == phQuery {
				out = append(out, pairs(r, w, phQuery, phQuery, []string{m.Variant}, 0)...)
			}
		}
		return out
	}},
	{"COPY / PostgreSQL COPY", 1.5, func(r *Report, w string) []labelled {
		return pairs(r, w, phCopy, phCopy, []string{""}, r.Config.Rows)
	}},
	{"DML with the view / PostgreSQL", 1.5, func(r *Report, w string) []labelled {
		var out []labelled
		for _, p := range []string{phDMLInsert, phDMLUpdate, phDMLDelete} {
			for _, l := range pairs(r, w, p, p, []string{varView}, r.Config.DMLRows) {
				out = append(out, labelled{strings.TrimPrefix(p, "dml_"), l.ratio})
			}
		}
		return out
	}},
	{"DML with the view / without it (mvserver)", 1.1, func(r *Report, w string) []labelled {
		var out []labelled
		for _, p := range []string{phDMLInsert, phDMLUpdate, phDMLDelete} {
			with, without := r.find(w, sysMV, p, varView, r.Config.DMLRows, 0), r.find(w, sysMV, p, varNoView, r.Config.DMLRows, 0)
			if with != nil && without != nil && without.Seconds > 0 {
				out = append(out, labelled{strings.TrimPrefix(p, "dml_"), with.Seconds / without.Seconds})
			}
		}
		return out
	}},
	{"point reads: PostgreSQL TPS / mvserver TPS", 2, func(r *Report, w string) []labelled {
		var out []labelled
		for _, c := range r.Config.Clients {
			mv, pg := r.find(w, sysMV, phReads, "", 0, c), r.find(w, sysPG, phReads, "", 0, c)
			if mv != nil && pg != nil && mv.TPS > 0 {
				out = append(out, labelled{fmt.Sprintf("%d clients", c), pg.TPS / mv.TPS})
			}
		}
		return out
	}},
}

// pairs are the time ratios mvserver phase / PostgreSQL phase for the
// variants at d.
func pairs(r *Report, w, mvPhase, pgPhase string, variants []string, d int64) []labelled {
	var out []labelled
	for _, v := range variants {
		mv, pg := r.find(w, sysMV, mvPhase, v, d, 0), r.find(w, sysPG, pgPhase, v, d, 0)
		if mv != nil && pg != nil && pg.Seconds > 0 {
			out = append(out, labelled{v, mv.Seconds / pg.Seconds})
		}
	}
	return out
}

// printTargets says, for workload w, where the run meets issue 9's goals
// and where it misses them (the worst ratio decides).
func (r *Report) printTargets(out io.Writer, w string) {
	t := [][]string{{"target (issue 9)", "limit", "measured", "verdict"}}
	for _, g := range targets {
		ls := g.ratios(r, w)
		if len(ls) == 0 {
			continue
		}
		worst := ls[0]
		var parts []string
		var all []float64
		for _, l := range ls {
			if l.ratio > worst.ratio {
				worst = l
			}
			all = append(all, l.ratio)
			parts = append(parts, strings.TrimSpace(l.label+" "+fmtRatio(l.ratio)))
		}
		measured := strings.Join(parts, ", ")
		if len(ls) > 3 {
			measured = fmt.Sprintf("median %s of %d, worst %s", fmtRatio(median(all)), len(ls), strings.TrimSpace(fmtRatio(worst.ratio)+" ("+worst.label+")"))
		}
		verdict := "met"
		if worst.ratio > g.limit {
			over := fmt.Sprintf("%.1f", worst.ratio/g.limit)
			if worst.ratio/g.limit < 2 {
				over = fmt.Sprintf("%.2f", worst.ratio/g.limit)
			}
			verdict = "MISSED (" + over + "× over)"
		}
		t = append(t, []string{g.what, "≤ " + fmtRatio(g.limit), measured, verdict})
	}
	if len(t) > 1 {
		fmt.Fprintln(out)
		printAligned(out, t, map[int]bool{0: true, 2: true, 3: true})
	}
}

// choice is one refresh of a workload's view on mvserver set against the
// technique its cost model did not choose: the view's own REFRESH … FULL
// when it went incremental, its INCREMENTAL STRICT twin's refresh when it
// went full.
type choice struct {
	label           string
	chosen, other   string
	chosenS, otherS float64
	estimates       []estimate // the chosen refresh's candidates
}

// estimated prints the cost model's estimates of the candidates.
func (c choice) estimated() string {
	var parts []string
	for _, e := range c.estimates {
		if e.EstimatedSeconds > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", e.Technique, fmtDur(e.EstimatedSeconds)))
		} else if e.Cost > 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f units", e.Technique, e.Cost))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; estimated " + strings.Join(parts, ", ")
}

func (c choice) ratio() float64 { return c.chosenS / c.otherS }

// choices are workload w's refreshes with both times measured.
func (r *Report) choices(w string) []choice {
	var out []choice
	for _, d := range r.Config.Changes {
		for _, v := range []string{varInserts, varMixed} {
			inc := r.find(w, sysMV, phRefresh, v, d, 0)
			if inc == nil || inc.Seconds <= 0 || inc.Technique == "" || inc.Technique == "NO_OP" {
				continue
			}
			other := r.find(w, sysMV, phRefreshFull, v, d, 0)
			if inc.Technique == "FULL_RECOMPUTE" {
				other = r.find(w, sysMV, phRefreshAlt, v, d, 0)
				if other != nil && other.Technique == "FULL_RECOMPUTE" {
					other = nil // no incremental alternative was possible
				}
			}
			if other == nil || other.Seconds <= 0 {
				continue
			}
			out = append(out, choice{label: fmt.Sprintf("%s %s", fmtCount(d), v), chosen: inc.Technique, other: other.Technique, chosenS: inc.Seconds, otherS: other.Seconds, estimates: inc.Estimates})
		}
	}
	return out
}

// printCostModel says how often workload w's chosen technique was slower
// than the one not chosen, and names those refreshes.
func (r *Report) printCostModel(out io.Writer, w string) {
	cs := r.choices(w)
	if len(cs) == 0 {
		return
	}
	var slower []string
	for _, c := range cs {
		if c.chosenS > c.otherS {
			slower = append(slower, fmt.Sprintf("%s: %s %s against %s %s (%s)%s", c.label, c.chosen, fmtDur(c.chosenS), c.other, fmtDur(c.otherS), fmtRatio(c.ratio()), c.estimated()))
		}
	}
	fmt.Fprintf(out, "\ncost model: the chosen technique was slower than the one not chosen in %d of %d refreshes\n", len(slower), len(cs))
	for _, s := range slower {
		fmt.Fprintln(out, "  "+s)
	}
}
