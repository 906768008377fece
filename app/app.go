package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/notify"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/server"
	"github.com/mvserver/mvserver/sql/session"
	"github.com/mvserver/mvserver/stats"
	"github.com/mvserver/mvserver/storage"
	"github.com/mvserver/mvserver/web"
)

// Config is the server's configuration (flags and MVSERVER_* env in cmd/mvserver).
type Config struct {
	Listen         string
	DataDir        string
	InMemory       bool // tests only
	Database       string
	MaxConnections int
	// ReservedConnections of MaxConnections only superusers may take (an
	// admin reserve; PostgreSQL's superuser_reserved_connections). It
	// matters only with authentication, when users are roles.
	ReservedConnections int
	Logger              *slog.Logger
	// TableDefaults are the feature properties new tables get (R-T5).
	TableDefaults catalog.Defaults
	// TriggerMinInterval is the shortest AT MOST EVERY window (R-S3);
	// 0 = one minute.
	TriggerMinInterval time.Duration
	// OptimalRefreshOff makes every refresh full (R-I7, Fabric's switch).
	OptimalRefreshOff bool
	// HistoryRetention is how long a view's events and run records are
	// kept (0 = refresh.DefaultHistoryRetention, 30 days).
	HistoryRetention time.Duration
	// HTTP is the host:port of the console, /metrics, /healthz and
	// /readyz; "" serves no HTTP.
	HTTP string
	// ConsoleActionWait is how long a console action's POST waits for its
	// statement before answering (0 = the console's default).
	ConsoleActionWait time.Duration
	// HBAFile holds pg_hba.conf-style authentication rules ("" = none).
	HBAFile string
	// Superuser is the bootstrap superuser, created SUPERUSER LOGIN at
	// startup when missing ("" = DefaultSuperuser); the console acts as it.
	Superuser string
	// SuperuserPassword, when set, becomes the bootstrap superuser's
	// password at startup. With neither it nor HBAFile, clients are not
	// authenticated: any user name is trusted from loopback addresses.
	// With it alone, the rules are server.DefaultHBA (SCRAM from loopback).
	SuperuserPassword string
	// AuthFailureDelay holds back the answer to a failed password
	// authentication on the SQL port, per user name in turn (0 =
	// DefaultAuthFailureDelay; negative = none, for tests).
	AuthFailureDelay time.Duration
	// TLSCert and TLSKey are PEM files of the server's certificate (chain)
	// and key; both set turns TLS on.
	TLSCert, TLSKey string
	// QueryMemoryLimit and RefreshMemoryLimit are the memory budgets of a
	// statement (query_memory_limit's default) and of a refresh, in bytes:
	// past them sorts, hash aggregation, hash joins and DISTINCT spill to
	// <data-dir>/tmp and other operators fail with 53200. 0 = DefaultMemoryLimit(); negative = no limit.
	QueryMemoryLimit, RefreshMemoryLimit int64
	// RewriteThreshold is the size in rows past which a full refresh or
	// CREATE MATERIALIZED VIEW writes the view's new content as a new
	// generation in bounded chunks (refresh/rewrite.go): 0 =
	// refresh.DefaultRewriteThreshold, negative = never.
	RewriteThreshold int64
	// StageThreshold is how many rows one autocommit INSERT, COPY or
	// CREATE TABLE AS holds of a table before it writes them to disk, to
	// be ingested at its commit (storage/stage.go): 0 =
	// storage.DefaultStageRows, negative = never.
	StageThreshold int
	// Store selects the storage engine (storage.Options.Store): empty is
	// Pebble in DataDir; "tikv://pd-host:2379[,…]" a TiKV cluster (a build
	// with -tags tikv), DataDir then holding only local files (spills).
	Store string
	// RefreshLease is the refresh-runner lease time on a shared store
	// (shared.go): a server that dies hands its views' refreshes to
	// another within it. 0 = DefaultRefreshLease.
	RefreshLease time.Duration
	// FullDiffLimit is the largest view (rows) whose full refresh is
	// written as a difference (refresh.Runner.DiffLimit): 0 = the
	// default, negative = none.
	FullDiffLimit int64
	// DiskReserve is the free space every commit leaves on the data
	// directory's disk; past it commits fail with 53100 (0 = storage's
	// default, 256 MiB; negative = none).
	DiskReserve int64
	// CacheSize is the bytes of Pebble's block cache, which holds the
	// uncompressed blocks of the tables scans read (0 = storage's
	// default).
	CacheSize int64
	// Compression of the blocks the storage engine writes
	// (storage.Compression; empty = storage.DefaultCompression).
	Compression storage.Compression
	// BlockSize is the size of the data blocks the storage engine writes,
	// in bytes before compression (0 = storage.DefaultBlockSize).
	BlockSize int
	// FS, when set, is the filesystem under the data directory (tests
	// inject faults through it).
	FS vfs.FS
	// AutoAnalyzeOff turns off auto-analyze (stats.Auto): planner
	// statistics then change only by ANALYZE (PostgreSQL's autovacuum
	// = off).
	AutoAnalyzeOff bool
}

// DefaultMemoryLimit is the default budget of a statement and of a
// refresh: a quarter of the machine's memory (1 GiB where that is unknown).
func DefaultMemoryLimit() int64 {
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil && kb > 0 {
					return kb << 10 / 4
				}
			}
		}
	}
	return 1 << 30
}

// ParseMemory reads a memory size in the units of PostgreSQL's memory
// settings (512MB, 4GB; a bare number is kilobytes).
func ParseMemory(v string) (int64, error) { return session.ParseMemory(v) }

// DefaultCompression names the storage engine's block compression when
// Config.Compression is empty.
const DefaultCompression = string(storage.DefaultCompression)

// DefaultBlockSize is the storage engine's data block size when
// Config.BlockSize is 0, as mvserver's --block-size spells it.
var DefaultBlockSize = fmt.Sprintf("%dkB", storage.DefaultBlockSize>>10)

// ParseBlockSize reads a data block size for Config.BlockSize in the
// units of ParseMemory (32kB).
func ParseBlockSize(v string) (int, error) {
	n, err := ParseMemory(v)
	if err != nil {
		return 0, err
	}
	if err := storage.CheckBlockSize(int(n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// ParseCompression reads a block compression's name (none, snappy,
// minlz, zstd) for Config.Compression.
func ParseCompression(v string) (storage.Compression, error) { return storage.ParseCompression(v) }

// memoryLimit resolves a Config memory limit: 0 is the default, negative
// none (0 for exec.Memory).
func memoryLimit(v int64) int64 {
	switch {
	case v == 0:
		return DefaultMemoryLimit()
	case v < 0:
		return 0
	}
	return v
}

// DefaultConfig is what `mvserver` with no flags uses.
func DefaultConfig() Config {
	return Config{
		Listen:              "127.0.0.1:5433",
		DataDir:             "./mvdata",
		Database:            "mvserver",
		MaxConnections:      100,
		ReservedConnections: 3,
		TableDefaults:       catalog.AllOn,
		HTTP:                "127.0.0.1:8433",
	}
}

// prepareTempDir returns where sorts spill: <data-dir>/tmp, emptied of
// anything a crashed run left (spill files are unlinked when created, so
// normally there is nothing), or the system's temporary directory for an
// in-memory server.
func prepareTempDir(cfg Config) (string, error) {
	if cfg.InMemory {
		return os.TempDir(), nil
	}
	dir := filepath.Join(cfg.DataDir, "tmp")
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("clear temporary directory: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create temporary directory: %w", err)
	}
	return dir, nil
}

// Server is a running mvserver.
type Server struct {
	cfg    Config
	db     *storage.DB
	cat    *catalog.Manager
	wire   *server.Server
	ln     net.Listener
	served chan error
	sched  *scheduling
	// auto is auto-analyze (nil when off or read-only).
	auto *stats.Auto
	// console serves HTTP (nil without Config.HTTP); mon keeps the
	// metrics it serves.
	console *web.Console
	mon     *web.Monitor
	closing atomic.Bool
	// stopNotices ends relaying NOTIFY through a shared store
	// (shared_notify.go; nil on Pebble).
	stopNotices func()
}

// Start opens the data directory and starts serving. It fails at once when
// another server holds the data directory.
func Start(cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Database == "" {
		cfg.Database = "mvserver"
	}
	storage.SetKillPointFromEnv() // tests of crashes only (generation.go)
	db, err := storage.Open(storage.Options{Dir: cfg.DataDir, InMemory: cfg.InMemory, Logger: cfg.Logger, FS: cfg.FS, DiskReserve: cfg.DiskReserve, CacheSize: cfg.CacheSize, Compression: cfg.Compression, BlockSize: cfg.BlockSize, StageRows: cfg.StageThreshold, Store: cfg.Store})
	if err != nil {
		return nil, err
	}
	cat, err := catalog.Open(db, cfg.Database)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("load catalog: %w", err)
	}
	auth, err := setupAuth(cfg, db, cat)
	if err != nil {
		db.Close()
		return nil, err
	}
	tempDir, err := prepareTempDir(cfg)
	if err != nil {
		if db.ReadOnly() == nil {
			db.Close()
			return nil, err
		}
		// A read-only start on a full disk: sorts spill elsewhere.
		cfg.Logger.Warn("read-only start: spilling sorts to the system's temporary directory", "err", err)
		tempDir = os.TempDir()
	}
	hub := notify.New()
	mon := web.NewMonitor(db.WALSyncLatency)
	publish := publishRefreshEvents(hub)
	runner := &refresh.Runner{DB: db, Catalog: cat, HistoryRetention: cfg.HistoryRetention, OnRun: func(ev refresh.RunEvent) {
		publish(ev)
		mon.OnRun(ev)
	}, MemoryLimit: memoryLimit(cfg.RefreshMemoryLimit), TempDir: tempDir, RewriteThreshold: cfg.RewriteThreshold, DiffLimit: cfg.FullDiffLimit}
	sched := newScheduling(db, cat, runner, cfg.TriggerMinInterval, cfg.Logger)
	sched.optimalRefreshOff = cfg.OptimalRefreshOff
	sched.leaseTTL = cfg.RefreshLease
	sched.onResult = mon.OnResult
	eng := &session.Engine{DB: db, Catalog: cat, Database: cfg.Database, Defaults: cfg.TableDefaults, Logger: cfg.Logger,
		Refresher:         runner,
		OptimalRefreshOff: cfg.OptimalRefreshOff,
		ValidateDataset:   func(c *catalog.Catalog, t *catalog.Table) error { return validateDataset(c, t, cfg.TriggerMinInterval) },
		DatasetsChanged:   sched.datasetsChanged,
		Refreshed:         sched.refreshed,
		NextRun:           sched.sched.NextRun,
		Notify:            hub,
		RequireRoles:      auth.auth != nil,
		QueryMemoryLimit:  memoryLimit(cfg.QueryMemoryLimit),
		TempDir:           tempDir,
	}
	// Temporary tables of sessions a crash ended are dropped before any
	// session starts (sessions drop their own when they end).
	if err := eng.DropTempSchemas(); err != nil {
		if !readOnlyStart(db, err) {
			db.Close()
			return nil, fmt.Errorf("drop temporary tables: %w", err)
		}
		cfg.Logger.Warn("read-only start: temporary tables of sessions a crash ended stay until a writable start", "err", err)
	}
	sqlEngine := mon.InstrumentEngine(eng)
	if cfg.ReservedConnections < 0 || cfg.MaxConnections > 0 && cfg.ReservedConnections >= cfg.MaxConnections {
		db.Close()
		return nil, fmt.Errorf("superuser-reserved connections (%d) must be less than max-connections (%d)", cfg.ReservedConnections, cfg.MaxConnections)
	}
	wire := server.New(server.Config{Listen: cfg.Listen, MaxConnections: cfg.MaxConnections, Logger: cfg.Logger,
		ReservedConnections: cfg.ReservedConnections, Superuser: eng.IsSuperuser,
		Authenticator: auth.auth, TLS: auth.tls}, sqlEngine)
	eng.Activity = wire.Activity
	eng.CancelBackend = func(pid int64) bool { return pid > 0 && pid <= math.MaxUint32 && wire.CancelBackend(uint32(pid)) }
	eng.TerminateBackend = func(pid int64, wait time.Duration) (bool, bool) {
		if pid <= 0 || pid > math.MaxUint32 {
			return false, false
		}
		return wire.TerminateBackend(uint32(pid), wait)
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	s := &Server{cfg: cfg, db: db, cat: cat, wire: wire, ln: ln, served: make(chan error, 1), sched: sched, mon: mon}
	if cfg.HTTP != "" {
		// Without authentication the console acts as the bootstrap
		// superuser for loopback clients, as SQL trusts them; with it, a
		// browser logs in as a role and acts with its privileges.
		var consoleAuth web.Authenticator = web.LoopbackOnly{User: auth.superuser}
		if auth.auth != nil {
			consoleAuth = &web.PasswordLogin{Check: consolePasswordCheck(db, cat)}
		}
		s.console, err = web.New(web.Config{Addr: cfg.HTTP, Monitor: mon, Logger: cfg.Logger, ActionWait: cfg.ConsoleActionWait,
			Auth: consoleAuth,
			Backend: web.Backend{DB: db, Catalog: cat, Database: cfg.Database, Engine: sqlEngine, NextRun: sched.sched.NextRun, Ready: s.ready,
				RequireRoles: auth.auth != nil}})
		if err == nil {
			err = s.console.Listen()
		}
		if err != nil {
			ln.Close()
			db.Close()
			return nil, err
		}
	}
	if err := sched.start(); err != nil {
		if s.console != nil {
			_ = s.console.Shutdown(context.Background())
		}
		ln.Close()
		db.Close()
		return nil, fmt.Errorf("start the scheduler: %w", err)
	}
	if !cfg.AutoAnalyzeOff && db.ReadOnly() == nil {
		s.auto = stats.StartAuto(db, cat, cfg.Logger)
	}
	if db.Shared() {
		s.stopNotices = startSharedNotices(db, hub, cfg.Logger)
	}
	go func() { s.served <- wire.Serve(ln) }()
	if s.console != nil {
		cfg.Logger.Info("mvserver console listening", "url", "http://"+s.console.Addr().String()+"/")
	}
	cfg.Logger.Info("mvserver listening", "addr", ln.Addr().String(), "data_dir", cfg.DataDir, "database", cfg.Database)
	return s, nil
}

// readOnlyStart reports whether err is a write refused because the store
// started read-only (storage/startup.go): start-up then goes on without
// the write, to serve reads.
func readOnlyStart(db *storage.DB, err error) bool {
	return db.ReadOnly() != nil && errors.Is(err, storage.ErrDiskFull)
}

// ready is /readyz: the server takes work while it is not shutting down,
// its write-ahead log has not failed, and it can read its catalog.
func (s *Server) ready() error {
	if s.closing.Load() {
		return errors.New("shutting down")
	}
	if err := s.db.WriteFailure(); err != nil {
		return fmt.Errorf("read-only until restarted: %w", err)
	}
	if err := s.db.ReadOnly(); err != nil {
		return fmt.Errorf("read-only until restarted with space freed: %w", err)
	}
	txn := s.db.Begin()
	defer txn.Rollback()
	_, err := s.cat.Snapshot(txn)
	return err
}

// ConsoleHandler is the HTTP handler the console serves (nil without
// HTTP), for tests that craft requests a loopback socket cannot send.
func (s *Server) ConsoleHandler() http.Handler {
	if s.console == nil {
		return nil
	}
	return s.console.Handler()
}

// HTTPAddr is the address of the console and /metrics (nil without HTTP).
func (s *Server) HTTPAddr() net.Addr {
	if s.console == nil {
		return nil
	}
	return s.console.Addr()
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Shutdown stops accepting, lets running statements finish within grace,
// cancels the rest, and closes storage cleanly.
func (s *Server) Shutdown(grace time.Duration) error {
	s.closing.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	// Scheduled refreshes stop first (a stopped refresh changes nothing),
	// then the console and the statements of its actions.
	_ = s.sched.stop(ctx)
	if s.auto != nil {
		s.auto.Close()
	}
	if s.console != nil {
		_ = s.console.Shutdown(ctx)
	}
	werr := s.wire.Shutdown(ctx)
	if errors.Is(werr, context.DeadlineExceeded) {
		werr = nil // statements were canceled, as asked
	}
	<-s.served
	if s.stopNotices != nil {
		s.stopNotices()
	}
	if err := s.db.Close(); err != nil {
		return err
	}
	return werr
}
