// Command mvserver runs the server: flags and MVSERVER_* environment
// variables configure it; SIGINT/SIGTERM shut it down cleanly.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
	_ "time/tzdata" // every time zone, also in a bare container

	"github.com/mvserver/mvserver/app"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// envDefault returns MVSERVER_<NAME> if set, else def.
func envDefault(name, def string) string {
	if v, ok := os.LookupEnv("MVSERVER_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))); ok {
		return v
	}
	return def
}

// envInt64 is envDefault for a number (an unparsable value: def, and the
// flag's parse reports nothing; set the flag to see the error).
func envInt64(name string, def int64) int64 {
	if v := envDefault(name, ""); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	}
	return def
}

func run(args []string) int {
	def := app.DefaultConfig()
	fs := flag.NewFlagSet("mvserver", flag.ContinueOnError)
	listen := fs.String("listen", envDefault("listen", def.Listen), "address to listen on (env MVSERVER_LISTEN)")
	httpAddr := fs.String("http", envDefault("http", def.HTTP), "address of the web console, /metrics, /healthz and /readyz (env MVSERVER_HTTP); empty serves no HTTP")
	dataDir := fs.String("data-dir", envDefault("data-dir", def.DataDir), "data directory (env MVSERVER_DATA_DIR)")
	store := fs.String("store", envDefault("store", def.Store), "storage engine: empty for Pebble in --data-dir, or tikv://pd-host:2379[,pd2:2379…] for a TiKV cluster (a build with -tags tikv; see README) (env MVSERVER_STORE)")
	database := fs.String("database", envDefault("database", def.Database), "name of the database (env MVSERVER_DATABASE)")
	logLevel := fs.String("log-level", envDefault("log-level", "info"), "debug, info, warn or error (env MVSERVER_LOG_LEVEL)")
	maxConnsDef, err := strconv.Atoi(envDefault("max-connections", strconv.Itoa(def.MaxConnections)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "mvserver: MVSERVER_MAX_CONNECTIONS must be a number")
		return 2
	}
	maxConns := fs.Int("max-connections", maxConnsDef, "maximum concurrent connections (env MVSERVER_MAX_CONNECTIONS)")
	reservedDef, err := strconv.Atoi(envDefault("superuser-reserved-connections", strconv.Itoa(def.ReservedConnections)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "mvserver: MVSERVER_SUPERUSER_RESERVED_CONNECTIONS must be a number")
		return 2
	}
	reserved := fs.Int("superuser-reserved-connections", reservedDef, "connection slots of max-connections kept for superusers (env MVSERVER_SUPERUSER_RESERVED_CONNECTIONS)")
	features := fs.String("table-features", envDefault("table-features", "changeDataFeed,rowTracking,deletionVectors"), "table features new tables get by default: any of changeDataFeed,rowTracking,deletionVectors, or none (env MVSERVER_TABLE_FEATURES)")
	graceDef, err := time.ParseDuration(envDefault("shutdown-grace", "5s"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "mvserver: MVSERVER_SHUTDOWN_GRACE must be a duration such as 5s")
		return 2
	}
	trigMinDef, err := time.ParseDuration(envDefault("trigger-min-interval", "1m"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "mvserver: MVSERVER_TRIGGER_MIN_INTERVAL must be a duration such as 1m")
		return 2
	}
	trigMin := fs.Duration("trigger-min-interval", trigMinDef, "shortest TRIGGER ON UPDATE … AT MOST EVERY window (env MVSERVER_TRIGGER_MIN_INTERVAL); lower it only for tests")
	leaseDef, err := time.ParseDuration(envDefault("refresh-lease", app.DefaultRefreshLease.String()))
	if err != nil || leaseDef <= 0 {
		fmt.Fprintln(os.Stderr, "mvserver: MVSERVER_REFRESH_LEASE must be a positive duration such as 10s")
		return 2
	}
	lease := fs.Duration("refresh-lease", leaseDef, "on a store several servers share (TiKV): how long a server holds a view's refresh-runner lease without renewing it; when the holder dies another server takes the view over within this time (env MVSERVER_REFRESH_LEASE)")
	retDef, err := time.ParseDuration(envDefault("history-retention", "720h"))
	if err != nil || retDef <= 0 {
		fmt.Fprintln(os.Stderr, "mvserver: MVSERVER_HISTORY_RETENTION must be a positive duration such as 720h")
		return 2
	}
	retention := fs.Duration("history-retention", retDef, "how long each view's event log and refresh history are kept; each refresh prunes older entries (env MVSERVER_HISTORY_RETENTION)")
	optimal := fs.String("optimal-refresh", envDefault("optimal-refresh", "on"), "off makes every refresh of every view a full recompute, also when nothing changed (env MVSERVER_OPTIMAL_REFRESH)")
	autoAnalyze := fs.String("autoanalyze", envDefault("autoanalyze", "on"), "off stops analyzing tables automatically once 50 + 10% of their rows changed; planner statistics then change only by ANALYZE (env MVSERVER_AUTOANALYZE)")
	grace := fs.Duration("shutdown-grace", graceDef, "how long running statements may finish at shutdown; a second signal ends them at once (env MVSERVER_SHUTDOWN_GRACE)")
	hba := fs.String("hba", envDefault("hba", ""), "pg_hba.conf-style file of authentication rules (env MVSERVER_HBA); without it and without a superuser password, loopback clients are trusted under any user name")
	superuser := fs.String("superuser", envDefault("superuser", app.DefaultSuperuser), "bootstrap superuser, created at startup when missing (env MVSERVER_SUPERUSER)")
	superuserPassword := fs.String("superuser-password", envDefault("superuser-password", ""), "password the bootstrap superuser gets at startup; alone (no --hba) it turns on SCRAM-SHA-256 from loopback (env MVSERVER_SUPERUSER_PASSWORD; prefer the variable: flags show in ps)")
	tlsCert := fs.String("tls-cert", envDefault("tls-cert", ""), "PEM certificate (chain) for TLS; with --tls-key, clients may encrypt (env MVSERVER_TLS_CERT)")
	tlsKey := fs.String("tls-key", envDefault("tls-key", ""), "PEM private key of --tls-cert (env MVSERVER_TLS_KEY)")
	queryMem := fs.String("query-memory-limit", envDefault("query-memory-limit", "default"), "memory budget of one statement, e.g. 512MB or 4GB (the default of query_memory_limit): past it sorts, hash aggregation, hash joins and DISTINCT spill to <data-dir>/tmp and the other operators fail with 53200; 0 = no limit; default a quarter of the machine's memory (env MVSERVER_QUERY_MEMORY_LIMIT)")
	rewriteRows := fs.Int64("rewrite-threshold", envInt64("rewrite-threshold", 0), "rows past which a full refresh or CREATE MATERIALIZED VIEW writes the view's new content in bounded chunks, switched in at its commit (env MVSERVER_REWRITE_THRESHOLD); 0 = the default (262144), -1 = never")
	stageRows := fs.Int64("stage-threshold", envInt64("stage-threshold", 0), "rows of one table past which an autocommit INSERT, COPY or CREATE TABLE AS writes its new rows to <data-dir>/tmp in sorted runs, ingested at its commit (on TiKV: written as a new generation of the table), instead of holding them in memory (env MVSERVER_STAGE_THRESHOLD); 0 = the default (262144), -1 = never")
	diffLimit := fs.Int64("full-refresh-diff-limit", envInt64("full-refresh-diff-limit", 0), "largest view (rows) whose full refresh is written as a difference from its stored rows, so views reading its change feed see the real row changes; its new rows are held in memory (env MVSERVER_FULL_REFRESH_DIFF_LIMIT); 0 = the default (2000000), -1 = none")
	diskReserve := fs.String("disk-reserve", envDefault("disk-reserve", "256MB"), "free space every commit leaves on the data directory's disk; commits past it fail with 53100 until space is freed; 0 = none (env MVSERVER_DISK_RESERVE)")
	cacheSize := fs.String("cache-size", envDefault("cache-size", "256MB"), "bytes of the storage engine's block cache, which keeps uncompressed table blocks for scans; a table scanned often that does not fit is read and decompressed again each time (env MVSERVER_CACHE_SIZE)")
	compression := fs.String("compression", envDefault("compression", app.DefaultCompression), "compression of the blocks the storage engine writes: none, snappy, minlz or zstd; a data directory written under one reads under any other (env MVSERVER_COMPRESSION)")
	blockSize := fs.String("block-size", envDefault("block-size", app.DefaultBlockSize), "size of the data blocks the storage engine writes, before compression, 1kB to 1MB: a scan pays per block it reads, a point read decodes one block (env MVSERVER_BLOCK_SIZE)")
	refreshMem := fs.String("refresh-memory-limit", envDefault("refresh-memory-limit", "default"), "memory budget of one refresh, as --query-memory-limit (env MVSERVER_REFRESH_MEMORY_LIMIT)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	reserve, err := app.ParseMemory(*diskReserve)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mvserver: bad --disk-reserve %q: a size such as 256MB or 0 (none)\n", *diskReserve)
		return 2
	}
	cache, err := app.ParseMemory(*cacheSize)
	if err != nil || cache <= 0 {
		fmt.Fprintf(os.Stderr, "mvserver: bad --cache-size %q: a size such as 256MB or 2GB\n", *cacheSize)
		return 2
	}
	comp, err := app.ParseCompression(*compression)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mvserver: bad --compression %q: none, snappy, minlz or zstd\n", *compression)
		return 2
	}
	block, err := app.ParseBlockSize(*blockSize)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mvserver: bad --block-size %q: a size from 1kB to 1MB\n", *blockSize)
		return 2
	}
	memLimits := map[string]*int64{}
	for name, v := range map[string]string{"query-memory-limit": *queryMem, "refresh-memory-limit": *refreshMem} {
		if v == "default" {
			continue
		}
		n, err := app.ParseMemory(v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "mvserver: bad --%s %q: a size such as 512MB, 4GB or 0 (no limit)\n", name, v)
			return 2
		}
		if n == 0 {
			n = -1
		}
		memLimits[name] = &n
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(os.Stderr, "mvserver: bad --log-level %q\n", *logLevel)
		return 2
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	cfg := def
	cfg.Listen, cfg.DataDir, cfg.Database, cfg.MaxConnections, cfg.Logger = *listen, *dataDir, *database, *maxConns, logger
	cfg.ReservedConnections = *reserved
	cfg.Store = *store
	if !explicit(fs, "superuser-reserved-connections") {
		// The default reserve leaves most slots to everyone: a small
		// max-connections keeps at most half of them back.
		cfg.ReservedConnections = min(*reserved, max(0, (*maxConns-1)/2))
	}
	if n := memLimits["query-memory-limit"]; n != nil {
		cfg.QueryMemoryLimit = *n
	}
	if n := memLimits["refresh-memory-limit"]; n != nil {
		cfg.RefreshMemoryLimit = *n
	}
	cfg.RewriteThreshold = *rewriteRows
	cfg.StageThreshold = int(*stageRows)
	cfg.FullDiffLimit = *diffLimit
	cfg.CacheSize = cache
	cfg.Compression = comp
	cfg.BlockSize = block
	cfg.DiskReserve = reserve
	if reserve == 0 {
		cfg.DiskReserve = -1
	}
	cfg.TriggerMinInterval = *trigMin
	if *lease <= 0 {
		fmt.Fprintln(os.Stderr, "mvserver: --refresh-lease must be a positive duration such as 10s")
		return 2
	}
	cfg.RefreshLease = *lease
	cfg.HistoryRetention = *retention
	cfg.HTTP = strings.TrimSpace(*httpAddr)
	cfg.HBAFile, cfg.Superuser, cfg.SuperuserPassword = *hba, *superuser, *superuserPassword
	cfg.TLSCert, cfg.TLSKey = *tlsCert, *tlsKey
	switch strings.ToLower(*optimal) {
	case "on", "true":
	case "off", "false":
		cfg.OptimalRefreshOff = true
	default:
		fmt.Fprintf(os.Stderr, "mvserver: --optimal-refresh must be on or off, not %q\n", *optimal)
		return 2
	}
	switch strings.ToLower(*autoAnalyze) {
	case "on", "true":
	case "off", "false":
		cfg.AutoAnalyzeOff = true
	default:
		fmt.Fprintf(os.Stderr, "mvserver: --autoanalyze must be on or off, not %q\n", *autoAnalyze)
		return 2
	}
	cfg.TableDefaults.ChangeDataFeed, cfg.TableDefaults.RowTracking, cfg.TableDefaults.DeletionVectors = false, false, false
	for _, f := range strings.Split(*features, ",") {
		switch strings.ToLower(strings.TrimSpace(f)) {
		case "changedatafeed":
			cfg.TableDefaults.ChangeDataFeed = true
		case "rowtracking":
			cfg.TableDefaults.RowTracking = true
		case "deletionvectors":
			cfg.TableDefaults.DeletionVectors = true
		case "none", "":
		default:
			fmt.Fprintf(os.Stderr, "mvserver: unknown table feature %q\n", f)
			return 2
		}
	}
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		fmt.Fprintf(os.Stderr, "mvserver: %v\n", err)
		return 1
	}
	// The handler is in place before the server says it listens: a
	// SIGTERM sent as soon as that line appears stops it cleanly (it
	// killed it, exit by signal, when it came first).
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	srv, err := app.Start(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mvserver: %v\n", err)
		return 1
	}
	got := <-sig
	logger.Info("shutting down", "signal", got.String())
	go func() {
		// A second signal does not wait for the grace period.
		s := <-sig
		logger.Warn("second signal: exiting without waiting for running statements", "signal", s.String())
		os.Exit(1)
	}()
	if err := srv.Shutdown(*grace); err != nil {
		logger.Error("shutdown", "err", err)
		return 1
	}
	logger.Info("stopped")
	return 0
}

// explicit reports whether the flag name was set on the command line or
// through its environment variable.
func explicit(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	_, env := os.LookupEnv("MVSERVER_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")))
	return set || env
}
