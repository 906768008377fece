package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/mvserver/mvserver/app"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// config is mvbench's parsed command line.
type config struct {
	rows         int64
	changes      []int64
	workloads    []*workload
	pgURL, mvURL string
	jsonPath     string
	clients      []int
	readDur      time.Duration
	dmlRows      int64
	dmlReps      int
	fullReps     int
	concurrently bool
	alternatives bool
	insertBatch  int64
	seed         uint64
	check        string
	dataDir      string
	cacheSize    int64    // the in-process mvserver's --cache-size (0: its default)
	compression  string   // the in-process mvserver's --compression ("": its default)
	blockSize    int      // the in-process mvserver's --block-size (0: its default)
	store        string   // the in-process mvserver's --store in this run ("": Pebble)
	stores       []string // --store's list: one run per engine (stores.go)
	cpuProfile   string
	profilePhase string
	quiet, keep  bool
	reuse        bool // workload T: reuse a kept load (tpch_reuse.go)
	logLevel     slog.Level
	// Workload T (tpch.go).
	sf           float64
	queryTimeout time.Duration
	refresh      bool
	tpchQueries  []int
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("mvbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `mvbench measures mvserver's COPY, materialized-view creation, incremental
and full refresh, DML and point reads of views, and the same on PostgreSQL
when --pg is given (ratio = mvserver time / PostgreSQL time).

Usage: go run ./cmd/mvbench [flags]

`)
		fs.PrintDefaults()
	}
	c := &config{}
	rows := fs.Int64("rows", 1_000_000, "source rows N each workload loads with COPY")
	changes := fs.String("changes", "1,1000,10000,100000", "changed-row counts d: after each, the tool refreshes (comma list)")
	wls := fs.String("workloads", "W1,W2,W3,W4", "workloads to run: W1 transaction_summary (GROUP BY), W2 orders⋈products, W3 latest row per account (window), W4 last hour per minute (time filter); Q the query engine's scan, GROUP BY, join and window queries (no view); T workload T, derived from TPC-H (--sf, --query-timeout, --refresh)")
	fs.Float64Var(&c.sf, "sf", 0.1, "workload T: scale factor of the generated data (0.01 to 100; SF 1 is 6M lineitems)")
	fs.DurationVar(&c.queryTimeout, "query-timeout", 300*time.Second, "workload T: statement_timeout of each query, CREATE MATERIALIZED VIEW and REFRESH on both systems; one that runs longer is reported as a timeout")
	fs.BoolVar(&c.refresh, "refresh", false, "workload T: after the queries, run RF1, RF2 and an UPDATE batch and refresh every view after each")
	tq := fs.String("tpch-queries", "", "workload T: run only these queries (comma list of 1–22; default all)")
	fs.StringVar(&c.pgURL, "pg", "", "PostgreSQL to compare with, as a URL (postgres://user@127.0.0.1:5432/db?sslmode=disable); its schema mvbench is dropped and recreated")
	fs.StringVar(&c.mvURL, "mv", "", "a running mvserver to measure, as a URL; default: start one in this process on a loopback port (its schema mvbench is dropped and recreated)")
	fs.StringVar(&c.jsonPath, "json", "", "write every measurement to this JSON file")
	clients := fs.String("clients", "2,16", "point-read client counts (comma list; empty: no reads)")
	fs.DurationVar(&c.readDur, "read-duration", 3*time.Second, "how long each point-read measurement runs")
	fs.Int64Var(&c.dmlRows, "dml-rows", 1000, "rows of the INSERT, UPDATE and DELETE measured without and with the view (0: skip)")
	fs.IntVar(&c.dmlReps, "dml-reps", 5, "repetitions of that DML (the median is reported)")
	fs.BoolVar(&c.alternatives, "alternatives", true, "workloads W1–W4: keep an INCREMENTAL STRICT copy of the view and time its refresh after each change too, so the cost model's choice is compared with the technique it did not choose")
	fs.BoolVar(&c.concurrently, "concurrently", true, "also time PostgreSQL's REFRESH … CONCURRENTLY after each change (a comparison row; slow on big views)")
	fs.IntVar(&c.fullReps, "full-reps", 1, "repetitions of each full refresh (mvserver REFRESH … FULL, PostgreSQL REFRESH; the median is reported)")
	fs.Int64Var(&c.insertBatch, "insert-batch", 1000, "rows per INSERT … VALUES statement of the changes")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the generated data")
	fs.StringVar(&c.check, "check", "last", "compare each mvserver view with its query: after the last refresh of a workload (last), after every incremental refresh (each), or never (none)")
	store := fs.String("store", "", "storage engine of the in-process mvserver (its --store): empty or pebble for Pebble, tikvmock:// for client-go's in-process mock TiKV cluster or tikv://pd-host:2379 (both need a build with -tags tikv); a comma list (pebble,tikvmock://) runs everything once per engine and prints the later engines' numbers beside the first's")
	cacheSize := fs.String("cache-size", "", "block cache of the in-process mvserver (its --cache-size, e.g. 2GB; default its own)")
	fs.StringVar(&c.compression, "compression", "", "block compression of the in-process mvserver's storage (its --compression: none, snappy, minlz, zstd; default its own); it applies to the files written from then on")
	blockSize := fs.String("block-size", "", "data block size of the in-process mvserver's storage before compression (its --block-size, e.g. 32kB; default its own); it applies to the files written from then on")
	fs.StringVar(&c.dataDir, "data-dir", "", "data directory of the in-process mvserver (default: a temporary directory, removed at the end)")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of this process (in-process mvserver included) to this file")
	fs.StringVar(&c.profilePhase, "profile-phase", "", "with --cpuprofile: profile only the first phase whose label contains this text, e.g. 'W1 mvserver REFRESH FULL after 1000 inserts'")
	fs.BoolVar(&c.quiet, "quiet", false, "no progress on stderr")
	fs.BoolVar(&c.keep, "keep", false, "keep each workload's tables and view (default: dropped after the workload)")
	fs.BoolVar(&c.reuse, "reuse", false, "workload T alone, with --data-dir or --mv: skip the load when both systems still hold this --sf and --seed's tables, unchanged, from an earlier --keep or --reuse run (otherwise load as usual); implies --keep")
	logLevel := fs.String("log-level", "warn", "log level of the in-process mvserver (debug, info, warn, error)")
	err := fs.Parse(args)
	if err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (flags only; see -h)", fs.Arg(0))
	}
	if *cacheSize != "" {
		n, err := app.ParseMemory(*cacheSize)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("--cache-size: %q is not a size such as 2GB", *cacheSize)
		}
		c.cacheSize = n
	}
	c.rows = *rows
	if c.rows < 1 {
		return nil, errors.New("--rows must be at least 1")
	}
	for _, f := range splitList(*changes) {
		d, err := strconv.ParseInt(f, 10, 64)
		if err != nil || d < 1 {
			return nil, fmt.Errorf("--changes: %q is not a positive row count", f)
		}
		if slices.Contains(c.changes, d) {
			return nil, fmt.Errorf("--changes: %d appears twice", d)
		}
		c.changes = append(c.changes, d)
	}
	all := workloads()
	for _, id := range splitList(*wls) {
		i := slices.IndexFunc(all, func(w *workload) bool { return strings.EqualFold(w.id, id) })
		if i < 0 {
			return nil, fmt.Errorf("--workloads: unknown workload %q (W1, W2, W3, W4, Q or T)", id)
		}
		if !slices.Contains(c.workloads, all[i]) {
			c.workloads = append(c.workloads, all[i])
		}
	}
	if len(c.workloads) == 0 {
		return nil, errors.New("--workloads: name at least one of W1, W2, W3, W4, Q, T")
	}
	if !(c.sf >= tpchMinSF && c.sf <= 100) {
		return nil, fmt.Errorf("--sf must be between %g and 100", tpchMinSF)
	}
	if c.queryTimeout < time.Second {
		return nil, errors.New("--query-timeout must be at least 1s")
	}
	for _, f := range splitList(*tq) {
		n, err := strconv.Atoi(strings.TrimPrefix(strings.ToUpper(f), "Q"))
		if err != nil || n < 1 || n > 22 {
			return nil, fmt.Errorf("--tpch-queries: %q is not a query number 1–22", f)
		}
		if !slices.Contains(c.tpchQueries, n) {
			c.tpchQueries = append(c.tpchQueries, n)
		}
	}
	for _, f := range splitList(*clients) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--clients: %q is not a positive client count", f)
		}
		c.clients = append(c.clients, n)
	}
	if c.readDur <= 0 {
		return nil, errors.New("--read-duration must be positive")
	}
	if c.fullReps < 1 {
		return nil, errors.New("--full-reps must be at least 1")
	}
	if c.dmlRows < 0 || c.dmlReps < 0 {
		return nil, errors.New("--dml-rows and --dml-reps must not be negative")
	}
	if c.insertBatch < 1 {
		return nil, errors.New("--insert-batch must be at least 1")
	}
	switch c.check {
	case "last", "each", "none":
	default:
		return nil, fmt.Errorf("--check must be last, each or none, not %q", c.check)
	}
	if c.profilePhase != "" && c.cpuProfile == "" {
		return nil, errors.New("--profile-phase needs --cpuprofile")
	}
	if c.stores, err = parseStores(*store); err != nil {
		return nil, err
	}
	c.store = c.stores[0]
	if len(c.stores) > 1 && c.dataDir != "" {
		return nil, errors.New("--data-dir cannot go with several --store engines: each run has its own temporary directory")
	}
	if len(c.stores) > 1 && c.cpuProfile != "" {
		return nil, errors.New("--cpuprofile cannot go with several --store engines: profile one engine at a time")
	}
	if c.mvURL != "" && c.store != "" {
		return nil, errors.New("--store is for the in-process mvserver; it cannot go with --mv")
	}
	if c.mvURL != "" && c.dataDir != "" {
		return nil, errors.New("--data-dir is for the in-process mvserver; it cannot go with --mv")
	}
	if *blockSize != "" {
		n, err := app.ParseBlockSize(*blockSize)
		if err != nil {
			return nil, fmt.Errorf("--block-size: %q is not a size from 1kB to 1MB", *blockSize)
		}
		c.blockSize = n
	}
	if c.compression != "" {
		if _, err := app.ParseCompression(c.compression); err != nil {
			return nil, fmt.Errorf("--compression: %q is none of none, snappy, minlz, zstd", c.compression)
		}
	}
	if c.reuse {
		if c.dataDir == "" && c.mvURL == "" {
			return nil, errors.New("--reuse needs --data-dir (or --mv): a temporary data directory holds nothing to reuse")
		}
		if slices.ContainsFunc(c.workloads, func(w *workload) bool { return w.run == nil }) {
			return nil, errors.New("--reuse is for workload T alone: the other workloads load their own tables each time")
		}
		c.keep = true
	}
	if err := c.logLevel.UnmarshalText([]byte(*logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return c, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "mvbench:", err)
		return 2
	}
	if len(cfg.stores) > 1 {
		_, err = runStores(ctx, cfg, stdout, stderr)
	} else {
		_, err = runBench(ctx, cfg, stdout, stderr)
	}
	if err != nil {
		fmt.Fprintln(stderr, "mvbench:", err)
		return 1
	}
	return 0
}

// runBench runs the configured workloads and prints their tables; the
// report holds every measurement.
func runBench(ctx context.Context, cfg *config, stdout, stderr io.Writer) (*Report, error) {
	if cfg.cpuProfile != "" && cfg.profilePhase == "" {
		f, err := os.Create(cfg.cpuProfile)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, err
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	host, _ := os.Hostname()
	rep := &Report{
		Started: time.Now().UTC(), Host: host, Store: storeLabel(cfg.store), LoadStart: loadAvg(), CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), Commit: vcsRevision(),
		Config: ReportConfig{Rows: cfg.rows, Changes: cfg.changes, Clients: cfg.clients, ReadSeconds: cfg.readDur.Seconds(),
			DMLRows: cfg.dmlRows, DMLReps: cfg.dmlReps, FullReps: cfg.fullReps, InsertBatch: cfg.insertBatch, Seed: cfg.seed, Check: cfg.check,
			InProcessMV: cfg.mvURL == "", WithPostgres: cfg.pgURL != ""},
	}
	if slices.ContainsFunc(cfg.workloads, func(w *workload) bool { return w.run != nil }) {
		rep.Config.SF, rep.Config.QueryTimeout, rep.Config.Refresh = cfg.sf, cfg.queryTimeout.Seconds(), cfg.refresh
	}
	for _, w := range cfg.workloads {
		rep.Config.Workloads = append(rep.Config.Workloads, w.id)
	}
	b := &bench{cfg: cfg, out: stdout, prog: newProgress(stderr, cfg.quiet), report: rep, inProc: cfg.mvURL == ""}

	mvURL := cfg.mvURL
	if mvURL == "" {
		logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.logLevel}))
		p, url, err := startMVServer(cfg.dataDir, serverOptions{store: cfg.store, cacheSize: cfg.cacheSize, compression: cfg.compression, blockSize: cfg.blockSize}, logger)
		if err != nil {
			return rep, err
		}
		defer func() {
			if err := p.stop(); err != nil {
				fmt.Fprintln(stderr, "mvbench: stop mvserver:", err)
			}
		}()
		mvURL = url
	}
	mv, err := connectSystem(ctx, sysMV, mvURL)
	if err != nil {
		return rep, err
	}
	defer mv.close()
	systems := []*system{mv}
	rep.MVServer = mv.version(ctx)
	if b.inProc {
		rep.MVServer += " (in process)"
	}
	if cfg.pgURL != "" {
		pg, err := connectSystem(ctx, sysPG, cfg.pgURL)
		if err != nil {
			return rep, err
		}
		defer pg.close()
		systems = append(systems, pg)
		rep.PostgreSQL = pg.version(ctx)
	}
	// With --reuse, workload T resets the schema only when it cannot
	// reuse it (tpch_reuse.go).
	for _, s := range systems {
		if !cfg.reuse {
			if err := s.resetSchema(ctx); err != nil {
				return rep, err
			}
		}
	}

	if slices.ContainsFunc(cfg.workloads, func(w *workload) bool { return w.run == nil }) {
		fmt.Fprintf(stdout, "mvbench: N=%d source rows; changes d = %v; %d CPUs, load average %s; %s\n", cfg.rows, cfg.changes, rep.CPUs, rep.LoadStart, rep.Started.Format(time.RFC3339))
	} else {
		fmt.Fprintf(stdout, "mvbench: %d CPUs, load average %s; %s\n", rep.CPUs, rep.LoadStart, rep.Started.Format(time.RFC3339))
	}
	fmt.Fprintf(stdout, "mvserver:   %s", rep.MVServer)
	if rep.Commit != "" {
		fmt.Fprintf(stdout, ", commit %s", rep.Commit)
	}
	if b.inProc {
		fmt.Fprintf(stdout, ", store %s", rep.Store)
	}
	fmt.Fprintln(stdout)
	if rep.PostgreSQL != "" {
		fmt.Fprintf(stdout, "postgresql: %s\n", rep.PostgreSQL)
		fmt.Fprintln(stdout, "ratio = mvserver time / PostgreSQL time (point reads: PostgreSQL TPS / mvserver TPS); below 1 mvserver is faster.")
		fmt.Fprintln(stdout, "REFRESH rows compare mvserver's REFRESH (incremental where it can) with PostgreSQL's REFRESH, then with its REFRESH CONCURRENTLY;")
		fmt.Fprintln(stdout, "REFRESH FULL compares mvserver's REFRESH … FULL with PostgreSQL's REFRESH. inc/full = mvserver incremental / its own full refresh.")
	}

	for _, w := range cfg.workloads {
		if w.run != nil {
			if err := w.run(ctx, b, systems); err != nil {
				b.flush(stdout)
				return rep, fmt.Errorf("%s: %w", w.id, err)
			}
			continue
		}
		for _, s := range systems {
			if err := b.runWorkload(ctx, w, s); err != nil {
				b.flush(stdout)
				return rep, fmt.Errorf("%s: %w", w.id, err)
			}
		}
		rep.printWorkload(stdout, w, cfg)
		rep.printTargets(stdout, w.id)
		rep.printCostModel(stdout, w.id)
	}
	rep.PeakRSSMiB = procStatusMiB("VmHWM:")
	rep.LoadEnd = loadAvg()
	fmt.Fprintf(stdout, "\nload average at the end: %s (other work on the machine skews the numbers)\n", rep.LoadEnd)
	if b.inProc && rep.PeakRSSMiB > 0 {
		fmt.Fprintf(stdout, "peak resident memory of mvbench with mvserver in process: %.0f MiB\n", rep.PeakRSSMiB)
	}
	return rep, b.flush(stdout)
}

// flush writes the JSON file, if asked for.
func (b *bench) flush(stdout io.Writer) error {
	if b.cfg.jsonPath == "" {
		return nil
	}
	if err := b.report.writeJSON(b.cfg.jsonPath); err != nil {
		return fmt.Errorf("write %s: %w", b.cfg.jsonPath, err)
	}
	fmt.Fprintf(stdout, "measurements written to %s\n", b.cfg.jsonPath)
	return nil
}

// vcsRevision is the commit the binary was built from, when go build
// recorded it.
func vcsRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && dirty {
		rev += "+dirty"
	}
	return rev
}
