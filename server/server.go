package server

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mvserver/mvserver/pgerror"
)

// Defaults for the zero values of Config.
const (
	DefaultListen         = "127.0.0.1:5432"
	DefaultMaxConnections = 100 // PostgreSQL's max_connections default
	// DefaultMaxMessageSize bounds one client message. PostgreSQL allows 1 GiB;
	// a quarter of that still fits any statement or COPY chunk a client sends
	// and keeps one hostile connection from holding a gigabyte.
	DefaultMaxMessageSize = 256 << 20
	DefaultStartupTimeout = 30 * time.Second
)

// killWriteGrace is how long a forced Shutdown lets a connection write its
// FATAL message. A client that stopped reading would otherwise hold a
// connection goroutine in Write forever.
const killWriteGrace = time.Second

// ErrServerClosed is returned by Serve and ListenAndServe after Shutdown.
var ErrServerClosed = errors.New("server: closed")

// Config configures a Server. Zero values take the defaults above.
type Config struct {
	// Listen is a host:port for TCP, or a path (anything containing '/') for a
	// unix socket, used by ListenAndServe.
	Listen string
	// MaxConnections caps concurrently authenticated sessions; the next one
	// gets FATAL 53300 (R-X3).
	MaxConnections int
	// ReservedConnections of those slots only superusers may take (an
	// admin reserve, PostgreSQL's superuser_reserved_connections); 0 = none.
	// Superuser tells whether a user name is one; nil = nobody is.
	ReservedConnections int
	Superuser           func(user string) bool
	// MaxMessageSize caps the body of one client message; a larger one is a
	// protocol violation that ends the connection.
	MaxMessageSize int
	// Logger receives connection errors and recovered panics. Nil means
	// slog.Default().
	Logger *slog.Logger
	// StartupTimeout bounds everything before the first ReadyForQuery
	// (negotiation, startup packet, authentication, Engine.Connect). Negative
	// disables it.
	StartupTimeout time.Duration
	// Authenticator admits or refuses a connection. Nil means TrustLoopback.
	Authenticator Authenticator
	// TLS, when set, makes the server answer SSLRequest with 'S' and
	// encrypt the connection (tls.go); nil answers 'N'.
	TLS *tls.Config
}

// Server accepts PostgreSQL connections and serves each with a Session from
// its Engine.
type Server struct {
	cfg Config
	eng Engine
	log *slog.Logger

	// baseCtx is the parent of every connection's context. Canceling it
	// (forced Shutdown) cancels every running statement.
	baseCtx context.Context
	kill    context.CancelFunc

	// killGrace is killWriteGrace; tests shorten it.
	killGrace time.Duration

	nextPID  atomic.Uint32
	sessions atomic.Int64 // authenticated sessions holding a slot

	mu        sync.Mutex
	closing   bool
	closingCh chan struct{} // closed when Shutdown starts
	listeners map[net.Listener]struct{}
	addr      net.Addr
	conns     map[*conn]struct{}
	byPID     map[uint32]*conn // connections that got BackendKeyData (cancel.go)
	wg        sync.WaitGroup   // one per connection goroutine
}

// New returns a Server that will create sessions with eng.
func New(cfg Config, eng Engine) *Server {
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = DefaultMaxConnections
	}
	if cfg.MaxMessageSize <= 0 {
		cfg.MaxMessageSize = DefaultMaxMessageSize
	}
	if cfg.StartupTimeout == 0 {
		cfg.StartupTimeout = DefaultStartupTimeout
	}
	if cfg.Authenticator == nil {
		cfg.Authenticator = TrustLoopback
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	ctx, kill := context.WithCancel(context.Background())
	return &Server{
		cfg:       cfg,
		eng:       eng,
		killGrace: killWriteGrace,
		log:       log,
		baseCtx:   ctx,
		kill:      kill,
		closingCh: make(chan struct{}),
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[*conn]struct{}),
		byPID:     make(map[uint32]*conn),
	}
}

// ListenAndServe listens on Config.Listen and serves until Shutdown.
func (s *Server) ListenAndServe() error {
	network := "tcp"
	if strings.Contains(s.cfg.Listen, "/") {
		network = "unix"
	}
	ln, err := net.Listen(network, s.cfg.Listen)
	if err != nil {
		return err
	}
	return s.Serve(ln)
}

// Addr is the address of the first listener Serve was given, or nil before
// that.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Serve accepts connections on ln, one goroutine each, until Shutdown; then
// it returns ErrServerClosed. It may be called for several listeners (TCP and
// a unix socket).
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	if s.addr == nil {
		s.addr = ln.Addr()
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
	}()

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosing() {
				return ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// Anything else (EMFILE, ECONNABORTED) is transient: back off as
			// net/http does instead of spinning or giving up.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.log.Warn("accept failed; retrying", "err", err, "backoff", backoff)
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-s.closingCh:
				t.Stop()
				return ErrServerClosed
			}
			continue
		}
		backoff = 0
		c := s.register(nc)
		if c == nil {
			// Shutdown started between Accept and here.
			nc.Close()
			continue
		}
		go c.serve()
	}
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// register creates the conn for nc and counts its goroutine, unless the
// server is shutting down. Doing both under mu makes wg.Add never race with
// Shutdown's wg.Wait.
func (s *Server) register(nc net.Conn) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return nil
	}
	c := newConn(s, nc)
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return c
}

// unregister is the last thing a connection goroutine does.
func (s *Server) unregister(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	if s.byPID[c.pid] == c {
		delete(s.byPID, c.pid)
	}
	s.mu.Unlock()
	s.wg.Done()
}

// Shutdown stops accepting, terminates idle connections with FATAL 57P01 at
// once and lets running statements finish until ctx is done. Then it cancels
// the statements still running and terminates their connections the same way.
// It returns when every connection goroutine has ended: nil if everything
// ended on its own, ctx.Err() if statements had to be canceled. Sessions must
// honor their statement context for this to return promptly.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.closing {
		s.closing = true
		close(s.closingCh)
	}
	for ln := range s.listeners {
		ln.Close()
		delete(s.listeners, ln)
	}
	conns := s.snapshotLocked()
	s.mu.Unlock()

	for _, c := range conns {
		c.drain()
	}
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}

	s.kill()
	s.mu.Lock()
	conns = s.snapshotLocked()
	s.mu.Unlock()
	for _, c := range conns {
		c.terminate()
	}
	<-done
	return ctx.Err()
}

func (s *Server) snapshotLocked() []*conn {
	out := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, c)
	}
	return out
}

// acquireSlot takes one of MaxConnections session slots for user, or says
// why it cannot (FATAL 53300): every slot is taken, or only the superusers'
// reserve is left.
func (s *Server) acquireSlot(user string) error {
	n := s.sessions.Add(1)
	if n > int64(s.cfg.MaxConnections) {
		s.sessions.Add(-1)
		return fatalf(pgerror.TooManyConnections, "sorry, too many clients already")
	}
	if reserve := s.cfg.ReservedConnections; reserve > 0 && n > int64(s.cfg.MaxConnections-reserve) &&
		(s.cfg.Superuser == nil || !s.cfg.Superuser(user)) {
		s.sessions.Add(-1)
		return fatalf(pgerror.TooManyConnections, "remaining connection slots are reserved for non-replication superuser connections")
	}
	return nil
}

func (s *Server) releaseSlot() { s.sessions.Add(-1) }
