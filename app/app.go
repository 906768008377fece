package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/notify"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/server"
	"github.com/mvserver/mvserver/sql/session"
	"github.com/mvserver/mvserver/storage"
)

// Config is the server's configuration (flags and MVSERVER_* env in cmd/mvserver).
type Config struct {
	Listen         string
	DataDir        string
	InMemory       bool // tests only
	Database       string
	MaxConnections int
	Logger         *slog.Logger
	// TableDefaults are the feature properties new tables get (R-T5).
	TableDefaults catalog.Defaults
	// TriggerMinInterval is the shortest AT MOST EVERY window (R-S3);
	// 0 = one minute.
	TriggerMinInterval time.Duration
	// OptimalRefreshOff makes every refresh full (R-I7, Fabric's switch).
	OptimalRefreshOff bool
}

// DefaultConfig is what `mvserver` with no flags uses.
func DefaultConfig() Config {
	return Config{
		Listen:         "127.0.0.1:5433",
		DataDir:        "./mvdata",
		Database:       "mvserver",
		MaxConnections: 100,
		TableDefaults:  catalog.AllOn,
	}
}

// Server is a running mvserver.
type Server struct {
	cfg    Config
	db     *storage.DB
	wire   *server.Server
	ln     net.Listener
	served chan error
	sched  *scheduling
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
	db, err := storage.Open(storage.Options{Dir: cfg.DataDir, InMemory: cfg.InMemory, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	cat, err := catalog.Open(db, cfg.Database)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("load catalog: %w", err)
	}
	hub := notify.New()
	runner := &refresh.Runner{DB: db, Catalog: cat, OnRun: publishRefreshEvents(hub)}
	sched := newScheduling(db, cat, runner, cfg.TriggerMinInterval, cfg.Logger)
	sched.optimalRefreshOff = cfg.OptimalRefreshOff
	eng := &session.Engine{DB: db, Catalog: cat, Database: cfg.Database, Defaults: cfg.TableDefaults, Logger: cfg.Logger,
		Refresher:         runner,
		OptimalRefreshOff: cfg.OptimalRefreshOff,
		ValidateDataset:   func(c *catalog.Catalog, t *catalog.Table) error { return validateDataset(c, t, cfg.TriggerMinInterval) },
		DatasetsChanged:   sched.datasetsChanged,
		Refreshed:         sched.refreshed,
		NextRun:           sched.sched.NextRun,
		Notify:            hub,
	}
	wire := server.New(server.Config{Listen: cfg.Listen, MaxConnections: cfg.MaxConnections, Logger: cfg.Logger}, eng)
	eng.Activity = wire.Activity
	eng.CancelBackend = func(pid int64) bool { return pid > 0 && pid <= math.MaxUint32 && wire.CancelBackend(uint32(pid)) }
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	if err := sched.start(); err != nil {
		ln.Close()
		db.Close()
		return nil, fmt.Errorf("start the scheduler: %w", err)
	}
	s := &Server{cfg: cfg, db: db, wire: wire, ln: ln, served: make(chan error, 1), sched: sched}
	go func() { s.served <- wire.Serve(ln) }()
	cfg.Logger.Info("mvserver listening", "addr", ln.Addr().String(), "data_dir", cfg.DataDir, "database", cfg.Database)
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Shutdown stops accepting, lets running statements finish within grace,
// cancels the rest, and closes storage cleanly.
func (s *Server) Shutdown(grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	// Scheduled refreshes stop first (a stopped refresh changes nothing).
	_ = s.sched.stop(ctx)
	werr := s.wire.Shutdown(ctx)
	if errors.Is(werr, context.DeadlineExceeded) {
		werr = nil // statements were canceled, as asked
	}
	<-s.served
	if err := s.db.Close(); err != nil {
		return err
	}
	return werr
}
