package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// bench runs the workloads on the systems and collects the report.
type bench struct {
	cfg      *config
	out      io.Writer
	prog     *progress
	report   *Report
	inProc   bool // mvserver runs in this process (RSS is the server's)
	profiled bool // the --profile-phase profile was taken
	// dmlNext is, per workload and system, the id below which the next
	// DML repetition takes its rows (dml).
	dmlNext map[string]int64
	// twin is the current workload's INCREMENTAL STRICT copy of its view
	// on mvserver ("" when none: --alternatives off, or not possible).
	twin string
}

// record adds a measurement, with the process's resident memory when
// mvserver runs in it.
func (b *bench) record(m Measurement) {
	if m.Seconds > 0 && m.Rows > 0 && m.RowsPerSec == 0 && m.Phase != phReads {
		m.RowsPerSec = float64(m.Rows) / m.Seconds
	}
	if b.inProc && m.System == sysMV {
		m.RSSMiB = procStatusMiB("VmRSS:")
	}
	b.report.Measurements = append(b.report.Measurements, m)
}

// phase runs fn as one shown (and maybe profiled) phase.
func (b *bench) phase(w *workload, s *system, what string, total int64, fn func(t *task) error) error {
	label := w.id + " " + s.name + " " + what
	t := b.prog.start(label, total)
	defer t.end()
	if b.cfg.cpuProfile != "" && b.cfg.profilePhase != "" && !b.profiled && strings.Contains(label, b.cfg.profilePhase) {
		b.profiled = true
		f, err := os.Create(b.cfg.cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return err
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
			fmt.Fprintf(b.prog.out, "mvbench: CPU profile of %q in %s\n", label, b.cfg.cpuProfile)
		}()
	}
	return fn(t)
}

// timed runs one statement as a phase and returns its time.
func (b *bench) timed(ctx context.Context, w *workload, s *system, what, sql string) (time.Duration, error) {
	var d time.Duration
	err := b.phase(w, s, what, 0, func(*task) error {
		var err error
		d, err = s.exec(ctx, sql)
		return err
	})
	return d, err
}

// genSource feeds COPY rows [i, end) of a table.
type genSource struct {
	t      *table
	seed   uint64
	i, end int64
	base   time.Time
	vals   []any
	task   *task
}

func (g *genSource) Next() bool {
	if g.i >= g.end {
		return false
	}
	g.vals = g.t.gen(g.seed, g.i, g.base)
	g.i++
	if g.i%4096 == 0 {
		g.task.add(4096)
	}
	return true
}

func (g *genSource) Values() ([]any, error) { return g.vals, nil }
func (g *genSource) Err() error             { return nil }

// runWorkload runs every phase of w on s.
func (b *bench) runWorkload(ctx context.Context, w *workload, s *system) error {
	cfg := b.cfg
	m := func(phase, variant string, d, rows int64, el time.Duration) Measurement {
		return Measurement{Workload: w.id, System: s.name, Phase: phase, Variant: variant, D: d, Rows: rows, Seconds: el.Seconds()}
	}
	for _, t := range w.tables {
		if _, err := s.exec(ctx, t.createSQL()); err != nil {
			return err
		}
	}

	// Load.
	var loaded int64
	for _, t := range w.tables {
		loaded += t.count(cfg.rows)
	}
	var loadTime time.Duration
	err := b.phase(w, s, "COPY", loaded, func(task *task) error {
		base := time.Now().Truncate(time.Minute)
		start := time.Now()
		for _, t := range w.tables {
			src := &genSource{t: t, seed: cfg.seed, end: t.count(cfg.rows), base: base, task: task}
			n, err := s.conn.CopyFrom(ctx, pgx.Identifier{schema, t.name}, t.columnNames(), src)
			if err != nil {
				return fmt.Errorf("%s: COPY %s: %w", s.name, t.name, err)
			}
			if n != src.end {
				return fmt.Errorf("%s: COPY %s wrote %d rows, not %d", s.name, t.name, n, src.end)
			}
			task.add(src.end % 4096)
		}
		loadTime = time.Since(start)
		return nil
	})
	if err != nil {
		return err
	}
	b.record(m(phCopy, "", cfg.rows, loaded, loadTime))
	for _, ix := range w.sourceIndexes {
		if _, err := s.exec(ctx, ix); err != nil {
			return err
		}
	}
	if s.pg {
		// What anyone does after a bulk load; not timed.
		for _, t := range w.tables {
			if _, err := s.exec(ctx, "VACUUM ANALYZE "+t.name); err != nil {
				return err
			}
		}
	}
	if w.queries != nil {
		return b.runQueries(ctx, w, s)
	}
	live := loaded // source rows now, for the full refreshes' rate

	if err := b.dml(ctx, w, s, varNoView); err != nil {
		return err
	}

	el, err := b.timed(ctx, w, s, "CREATE MATERIALIZED VIEW", "CREATE MATERIALIZED VIEW "+w.view+" AS "+w.queryFor(s.pg))
	if err != nil {
		return err
	}
	b.record(m(phCreate, "", cfg.rows, live, el))
	// Both systems get the unique index on the view's key: the point reads
	// look rows up by it (and PostgreSQL's REFRESH CONCURRENTLY needs it).
	el, err = b.timed(ctx, w, s, "CREATE UNIQUE INDEX", "CREATE UNIQUE INDEX ON "+w.view+" ("+w.key+")")
	if err != nil {
		return err
	}
	b.record(m(phIndex, "", cfg.rows, 0, el))

	if err := b.dml(ctx, w, s, varView); err != nil {
		return err
	}
	b.twin = ""
	if !s.pg && cfg.alternatives {
		if err := b.createTwin(ctx, w, s); err != nil {
			return err
		}
	}
	if !s.pg {
		// The DML left changes that cancel out; the first measured refresh
		// should see only its own d rows.
		if _, err := s.exec(ctx, "REFRESH MATERIALIZED VIEW "+w.view); err != nil {
			return err
		}
	}

	if len(cfg.clients) > 0 {
		keys, err := viewKeys(ctx, s, w)
		if err != nil {
			return err
		}
		for _, c := range cfg.clients {
			var r readResult
			err := b.phase(w, s, fmt.Sprintf("point reads, %d clients", c), 0, func(*task) error {
				var err error
				r, err = pointReads(ctx, s, w, keys, c, cfg.readDur, cfg.seed)
				return err
			})
			if err != nil {
				return err
			}
			me := m(phReads, "", 0, r.queries, r.elapsed)
			me.Clients, me.Queries = c, r.queries
			me.TPS = float64(r.queries) / r.elapsed.Seconds()
			me.P50Ms, me.P99Ms = ms(r.p50), ms(r.p99)
			b.record(me)
		}
	}

	next, mixAt := cfg.rows, cfg.rows
	for _, d := range cfg.changes {
		stmts := w.main.insertSQL(cfg.seed, next, next+d, time.Now().Truncate(time.Minute), cfg.insertBatch)
		next += d
		var el time.Duration
		err := b.phase(w, s, fmt.Sprintf("INSERT %d rows", d), 0, func(*task) error {
			var err error
			el, err = s.execAll(ctx, stmts)
			return err
		})
		if err != nil {
			return err
		}
		live += d
		b.record(m(phChange, varInserts, d, d, el))
		if err := b.refreshes(ctx, w, s, varInserts, d, live); err != nil {
			return err
		}

		// Half updates (values and group or join keys), half deletes, in a
		// range of ids below --rows no earlier batch touched.
		lo := mixAt - d
		if lo < 0 {
			me := m(phChange, varMixed, d, 0, 0)
			me.Note = fmt.Sprintf("needs --rows ≥ %d", cfg.rows-lo)
			b.record(me)
			continue
		}
		mixAt = lo
		mid := lo + (d+1)/2
		stmts = []string{w.update(lo, mid), fmt.Sprintf("DELETE FROM %s WHERE %s >= %d AND %s < %d", w.main.name, w.main.pk, mid, w.main.pk, lo+d)}
		err = b.phase(w, s, fmt.Sprintf("UPDATE/DELETE %d rows", d), 0, func(*task) error {
			var err error
			el, err = s.execAll(ctx, stmts)
			return err
		})
		if err != nil {
			return err
		}
		live -= lo + d - mid
		b.record(m(phChange, varMixed, d, d, el))
		if err := b.refreshes(ctx, w, s, varMixed, d, live); err != nil {
			return err
		}
	}
	if !s.pg && cfg.check == "last" {
		if err := b.check(ctx, w, s, "", 0, time.Now()); err != nil {
			return err
		}
	}
	if !cfg.keep {
		if b.twin != "" {
			if _, err := s.exec(ctx, "DROP MATERIALIZED VIEW "+b.twin); err != nil {
				return err
			}
		}
		if _, err := s.exec(ctx, "DROP MATERIALIZED VIEW "+w.view); err != nil {
			return err
		}
		for _, t := range slices.Backward(w.tables) {
			if _, err := s.exec(ctx, "DROP TABLE "+t.name); err != nil {
				return err
			}
		}
	}
	return nil
}

// refreshes measures the refreshes after d changed rows: on mvserver
// REFRESH (incremental where it can; the technique from refresh_history)
// and REFRESH … FULL, on PostgreSQL REFRESH … CONCURRENTLY and REFRESH.
// live is the number of source rows.
func (b *bench) refreshes(ctx context.Context, w *workload, s *system, variant string, d, live int64) error {
	what := func(stmt string) string { return fmt.Sprintf("%s after %d %s", stmt, d, variant) }
	rec := func(phase string, rows int64, el time.Duration) *Measurement {
		b.record(Measurement{Workload: w.id, System: s.name, Phase: phase, Variant: variant, D: d, Rows: rows, Seconds: el.Seconds()})
		return &b.report.Measurements[len(b.report.Measurements)-1]
	}
	if s.pg {
		if b.cfg.concurrently {
			el, err := b.timed(ctx, w, s, what("REFRESH CONCURRENTLY"), "REFRESH MATERIALIZED VIEW CONCURRENTLY "+w.view)
			if err != nil {
				return err
			}
			rec(phConcurrent, live, el)
		}
		samples, err := b.repeat(ctx, w, s, what("REFRESH"), "REFRESH MATERIALIZED VIEW "+w.view)
		if err != nil {
			return err
		}
		rec(phRefresh, live, 0).setSamples(samples)
		return nil
	}
	start := time.Now()
	el, err := b.timed(ctx, w, s, what("REFRESH"), "REFRESH MATERIALIZED VIEW "+w.view)
	if err != nil {
		return err
	}
	run, err := s.lastRefresh(ctx, w.view)
	if err != nil {
		return err
	}
	if run.status != "COMPLETED" {
		return fmt.Errorf("%s: refresh of %s: %s %s", s.name, w.view, run.status, run.errText)
	}
	me := rec(phRefresh, d, el)
	me.Technique, me.RowsRead, me.RowsWritten = run.technique, run.rowsRead, run.rowsWrite
	if me.Estimates, err = s.lastEstimates(ctx, w.view); err != nil {
		return err
	}
	if b.cfg.check == "each" {
		if err := b.check(ctx, w, s, variant, d, start); err != nil {
			return err
		}
	}
	if err := b.refreshTwin(ctx, w, s, variant, d); err != nil {
		return err
	}
	samples, err := b.repeat(ctx, w, s, what("REFRESH FULL"), "REFRESH MATERIALIZED VIEW "+w.view+" FULL")
	if err != nil {
		return err
	}
	run, err = s.lastRefresh(ctx, w.view)
	if err != nil {
		return err
	}
	me = rec(phRefreshFull, live, 0)
	me.setSamples(samples)
	me.Technique, me.RowsRead, me.RowsWritten = run.technique, run.rowsRead, run.rowsWrite
	return nil
}

// repeat runs a full refresh --full-reps times (it recomputes the same
// content each time) and returns the times in seconds.
func (b *bench) repeat(ctx context.Context, w *workload, s *system, what, sql string) ([]float64, error) {
	var out []float64
	for i := range b.cfg.fullReps {
		label := what
		if b.cfg.fullReps > 1 {
			label = fmt.Sprintf("%s (%d/%d)", what, i+1, b.cfg.fullReps)
		}
		el, err := b.timed(ctx, w, s, label, sql)
		if err != nil {
			return nil, err
		}
		out = append(out, el.Seconds())
	}
	return out, nil
}

// setSamples makes m the median of samples.
func (m *Measurement) setSamples(samples []float64) {
	m.Seconds = median(samples)
	if len(samples) > 1 {
		m.Samples = samples
	}
	if m.Seconds > 0 && m.Rows > 0 {
		m.RowsPerSec = float64(m.Rows) / m.Seconds
	}
}

// check compares the view with its query and records it.
func (b *bench) check(ctx context.Context, w *workload, s *system, variant string, d int64, since time.Time) error {
	var el time.Duration
	err := b.phase(w, s, "check: view = query", 0, func(*task) error {
		t0 := time.Now()
		err := checkView(ctx, s, w, since)
		el = time.Since(t0)
		return err
	})
	if err != nil {
		return err
	}
	b.record(Measurement{Workload: w.id, System: s.name, Phase: phCheck, Variant: variant, D: d, Seconds: el.Seconds(), Note: "view = query"})
	return nil
}

// dml measures INSERT, UPDATE and DELETE of --dml-rows rows of the main
// table, the median of --dml-reps. Each repetition takes a range of
// negative ids of its own, below the last one's, and removes its rows
// again: no repetition reads the deleted rows another left behind (an
// LSM tree keeps deletion markers until compaction, PostgreSQL dead
// tuples until vacuum or pruning), so the runs without and with the view
// meet the same table and differ by the view alone.
func (b *bench) dml(ctx context.Context, w *workload, s *system, variant string) error {
	cfg := b.cfg
	n := cfg.dmlRows
	if n <= 0 || cfg.dmlReps <= 0 {
		return nil
	}
	if b.dmlNext == nil {
		b.dmlNext = map[string]int64{}
	}
	var ins, upd, del []float64
	err := b.phase(w, s, fmt.Sprintf("DML %d rows, %s", n, variant), 0, func(*task) error {
		for range cfg.dmlReps {
			hi := b.dmlNext[w.id+s.name]
			lo := hi - n
			b.dmlNext[w.id+s.name] = lo
			el, err := s.execAll(ctx, w.main.insertSQL(cfg.seed, lo, hi, time.Now().Truncate(time.Minute), cfg.insertBatch))
			if err != nil {
				return err
			}
			ins = append(ins, el.Seconds())
			if el, err = s.exec(ctx, w.update(lo, hi)); err != nil {
				return err
			}
			upd = append(upd, el.Seconds())
			if el, err = s.exec(ctx, fmt.Sprintf("DELETE FROM %s WHERE %s >= %d AND %s < %d", w.main.name, w.main.pk, lo, w.main.pk, hi)); err != nil {
				return err
			}
			del = append(del, el.Seconds())
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range []struct {
		phase   string
		samples []float64
	}{{phDMLInsert, ins}, {phDMLUpdate, upd}, {phDMLDelete, del}} {
		m := Measurement{Workload: w.id, System: s.name, Phase: k.phase, Variant: variant, D: n, Rows: n}
		m.setSamples(k.samples)
		b.record(m)
	}
	return nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// procStatusMiB reads a memory line of /proc/self/status (VmRSS:, VmHWM:)
// in MiB; 0 where there is none.
func procStatusMiB(field string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseFloat(f[0], 64)
				return kb / 1024
			}
		}
	}
	return 0
}

// createTwin creates w's view a second time on mvserver, as
// <view>_strict with REFRESH POLICY INCREMENTAL STRICT: its refreshes never
// fall back to a full recompute, so after each change batch it times the
// incremental refresh the cost model may have rejected for the view
// (--alternatives). A query that STRICT refuses gets no twin (noted).
func (b *bench) createTwin(ctx context.Context, w *workload, s *system) error {
	name := w.view + "_strict"
	_, err := s.exec(ctx, "CREATE MATERIALIZED VIEW "+name+" REFRESH POLICY INCREMENTAL STRICT AS "+w.queryFor(false))
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "0A000" {
			me := Measurement{Workload: w.id, System: s.name, Phase: phRefreshAlt, Note: "no INCREMENTAL STRICT twin: " + pe.Message}
			b.record(me)
			return nil
		}
		return err
	}
	b.twin = name
	return nil
}

// refreshTwin refreshes the twin (see createTwin) after d changed rows and
// records its time and technique. A refresh STRICT refuses is noted.
func (b *bench) refreshTwin(ctx context.Context, w *workload, s *system, variant string, d int64) error {
	if b.twin == "" {
		return nil
	}
	el, err := b.timed(ctx, w, s, fmt.Sprintf("REFRESH strict twin after %d %s", d, variant), "REFRESH MATERIALIZED VIEW "+b.twin)
	me := Measurement{Workload: w.id, System: s.name, Phase: phRefreshAlt, Variant: variant, D: d, Rows: d, Seconds: el.Seconds()}
	if err != nil {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "0A000" {
			return err
		}
		me.Seconds, me.Note = 0, pe.Message
		b.record(me)
		return nil
	}
	run, err := s.lastRefresh(ctx, b.twin)
	if err != nil {
		return err
	}
	me.Technique, me.RowsRead, me.RowsWritten = run.technique, run.rowsRead, run.rowsWrite
	b.record(me)
	return nil
}
