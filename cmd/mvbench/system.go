package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mvserver/mvserver/app"
)

// schema is where mvbench creates its tables and views on every server.
const schema = "mvbench"

// system is one server under test: mvserver or PostgreSQL.
type system struct {
	name string // sysMV or sysPG
	pg   bool
	cfg  *pgx.ConnConfig
	conn *pgx.Conn
	// notices are the messages of the NOTICEs the server sent on any of
	// the system's connections since takeNotices (mvserver says with one
	// why it planned a refresh as it did).
	mu      sync.Mutex
	notices []string
}

// connect opens the system's main connection, with search_path = mvbench
// so the workloads' SQL is the same on both servers.
func connectSystem(ctx context.Context, name, url string) (*system, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("%s: bad connection URL: %w", name, err)
	}
	cfg.RuntimeParams["search_path"] = schema
	cfg.RuntimeParams["application_name"] = "mvbench"
	s := &system{name: name, pg: name == sysPG, cfg: cfg}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		s.mu.Lock()
		// Only workload T reads them; the others' stay bounded.
		if len(s.notices) >= 64 {
			s.notices = s.notices[1:]
		}
		s.notices = append(s.notices, n.Message)
		s.mu.Unlock()
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if s.conn, err = pgx.ConnectConfig(cctx, cfg); err != nil {
		return nil, fmt.Errorf("%s: connect to %s:%d: %w", name, cfg.Host, cfg.Port, err)
	}
	return s, nil
}

// takeNotices returns the notices received since the last call.
func (s *system) takeNotices() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.notices
	s.notices = nil
	return out
}

// reconnect replaces the main connection (after a client-side timeout
// closed it) and runs setup on the new one.
func (s *system) reconnect(ctx context.Context, setup ...string) error {
	_ = s.conn.Close(ctx)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := pgx.ConnectConfig(cctx, s.cfg)
	if err != nil {
		return fmt.Errorf("%s: reconnect: %w", s.name, err)
	}
	s.conn = c
	for _, q := range setup {
		if _, err := s.exec(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// dial opens one more connection (read clients).
func (s *system) dial(ctx context.Context) (*pgx.Conn, error) {
	return pgx.ConnectConfig(ctx, s.cfg)
}

func (s *system) close() {
	if s.conn != nil {
		_ = s.conn.Close(context.Background())
	}
}

// exec runs one statement with the simple protocol and returns how long it
// took; the error names the system and the statement.
func (s *system) exec(ctx context.Context, sql string) (time.Duration, error) {
	start := time.Now()
	if _, err := s.conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol); err != nil {
		return 0, fmt.Errorf("%s: %.120s: %w", s.name, sql, err)
	}
	return time.Since(start), nil
}

// execAll runs statements in order; the time is their sum.
func (s *system) execAll(ctx context.Context, sqls []string) (time.Duration, error) {
	var total time.Duration
	for _, q := range sqls {
		d, err := s.exec(ctx, q)
		if err != nil {
			return 0, err
		}
		total += d
	}
	return total, nil
}

// version is the server's version string.
func (s *system) version(ctx context.Context) string {
	var v string
	if err := s.conn.QueryRow(ctx, "SELECT version()", pgx.QueryExecModeSimpleProtocol).Scan(&v); err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return v
}

// resetSchema drops and recreates the schema mvbench.
func (s *system) resetSchema(ctx context.Context) error {
	if _, err := s.exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
		return err
	}
	_, err := s.exec(ctx, "CREATE SCHEMA "+schema)
	return err
}

// lastRun is refresh_history's newest run of an mvserver view.
type lastRun struct {
	technique           string
	rowsRead, rowsWrite int64
	status, errText     string
}

func (s *system) lastRefresh(ctx context.Context, view string) (lastRun, error) {
	var r lastRun
	// A run that failed or was cancelled before it chose a technique
	// (a statement timeout, say) has none: NULL.
	var technique, errText *string
	err := s.conn.QueryRow(ctx, `SELECT technique, rows_read, rows_written, status, error FROM refresh_history
WHERE view_name = $1 ORDER BY start_time DESC LIMIT 1`, view).Scan(&technique, &r.rowsRead, &r.rowsWrite, &r.status, &errText)
	if err != nil {
		return r, fmt.Errorf("%s: refresh_history of %s: %w", s.name, view, err)
	}
	if technique != nil {
		r.technique = *technique
	}
	if errText != nil {
		r.errText = *errText
	}
	return r, nil
}

// estimate is one candidate technique of a refresh as planning_information
// records it: the cost model's estimate (units, and seconds at the view's
// learned rate) and, for the one chosen, the actual seconds.
type estimate struct {
	Technique        string  `json:"technique"`
	Chosen           bool    `json:"chosen,omitempty"`
	Cost             float64 `json:"estimated_cost"`
	EstimatedSeconds float64 `json:"estimated_seconds,omitempty"`
	ActualSeconds    float64 `json:"actual_seconds,omitempty"`
}

// lastEstimates are the estimated candidates of view's newest
// planning_information event (none for a run that recorded no estimate).
func (s *system) lastEstimates(ctx context.Context, view string) ([]estimate, error) {
	var details string
	// event_log takes a name literal, not a parameter; view is one of
	// mvbench's own names.
	err := s.conn.QueryRow(ctx, `SELECT details FROM event_log(TABLE(`+schema+"."+view+`)) WHERE event_type = 'planning_information' ORDER BY timestamp DESC, sequence DESC LIMIT 1`).Scan(&details)
	if err != nil {
		return nil, fmt.Errorf("%s: event_log of %s: %w", s.name, view, err)
	}
	var d struct {
		Planning struct {
			Candidates []estimate `json:"candidates"`
		} `json:"planning_information"`
	}
	if err := json.Unmarshal([]byte(details), &d); err != nil {
		return nil, fmt.Errorf("%s: planning_information of %s: %w", s.name, view, err)
	}
	var out []estimate
	for _, c := range d.Planning.Candidates {
		if c.Cost > 0 || c.ActualSeconds > 0 {
			out = append(out, c)
		}
	}
	return out, nil
}

// inProcess is an mvserver started by mvbench in its own process.
type inProcess struct {
	srv *app.Server
	dir string
	rm  bool
}

// serverOptions are the in-process mvserver's storage settings; zero
// values are its defaults.
type serverOptions struct {
	store       string // storage engine (empty: Pebble)
	cacheSize   int64  // block cache bytes
	compression string // block compression's name
	blockSize   int    // data block bytes before compression
}

// startMVServer starts mvserver on a loopback port with its data in dir
// (a new temporary directory when empty, removed at stop), with so's
// storage settings.
func startMVServer(dir string, so serverOptions, logger *slog.Logger) (*inProcess, string, error) {
	comp, err := app.ParseCompression(so.compression)
	if err != nil {
		return nil, "", err
	}
	p := &inProcess{dir: dir}
	if dir == "" {
		d, err := os.MkdirTemp("", "mvbench-data-")
		if err != nil {
			return nil, "", err
		}
		p.dir, p.rm = d, true
	} else if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, "", err
	}
	cfg := app.DefaultConfig()
	cfg.Listen, cfg.HTTP, cfg.DataDir, cfg.Logger = "127.0.0.1:0", "", p.dir, logger
	cfg.Store = so.store
	cfg.CacheSize = so.cacheSize
	cfg.Compression = comp
	cfg.BlockSize = so.blockSize
	srv, err := app.Start(cfg)
	if err != nil {
		if p.rm {
			os.RemoveAll(p.dir)
		}
		return nil, "", fmt.Errorf("start mvserver: %w", err)
	}
	p.srv = srv
	return p, fmt.Sprintf("postgres://mvbench@%s/%s?sslmode=disable", srv.Addr(), cfg.Database), nil
}

func (p *inProcess) stop() error {
	err := p.srv.Shutdown(10 * time.Second)
	if p.rm {
		os.RemoveAll(p.dir)
	}
	return err
}
