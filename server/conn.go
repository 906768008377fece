package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/mvserver/mvserver/pgerror"
)

// Messages without fields are shared: Encode does not modify them.
var (
	authOK             pgproto3.AuthenticationOk
	parseComplete      pgproto3.ParseComplete
	bindComplete       pgproto3.BindComplete
	closeComplete      pgproto3.CloseComplete
	noData             pgproto3.NoData
	portalSuspended    pgproto3.PortalSuspended
	emptyQueryResponse pgproto3.EmptyQueryResponse
)

// aLongTimeAgo is a deadline that makes a pending or future read fail at once.
var aLongTimeAgo = time.Unix(1, 0)

// Reasons a connection ends, returned up to serve.
var (
	// errQuietClose: Terminate, EOF or a dead socket; nothing is sent.
	errQuietClose = errors.New("connection closed")
	// errAdminShutdown: Shutdown ended the connection; FATAL 57P01 is sent.
	errAdminShutdown = errors.New("terminating connection due to administrator command")
)

// fatalError ends the connection after sending e as FATAL.
type fatalError struct{ e *pgerror.Error }

func (f *fatalError) Error() string { return f.e.Message }

func fatalf(code, format string, args ...any) error {
	return &fatalError{pgerror.New(code, format, args...)}
}

// conn is one client connection. Everything but the fields under mu belongs
// to the connection's goroutine (doc.go invariant 1).
type conn struct {
	srv *Server
	nc  net.Conn
	be  *pgproto3.Backend
	out output
	rw  resultWriter
	log *slog.Logger

	pid    uint32
	secret [4]byte

	// ctx is the parent of every statement context on this connection; it is
	// a child of the server's base context so a forced Shutdown reaches it.
	ctx     context.Context
	release context.CancelFunc

	sess    Session
	hasSlot bool

	stmts          map[string]PreparedStatement // "" is the unnamed statement
	portals        map[string]Portal            // "" is the unnamed portal
	ignoreTillSync bool

	// copyIn is the running statement's COPY FROM STDIN data (copy.go).
	copyIn *copyInStream
	// recvFn receives through notify.go's reader goroutine when set;
	// recvErr is the error of a failed receive, returned again after.
	recvFn  func() (pgproto3.FrontendMessage, error)
	recvErr error
	// atReady: the last message sent was ReadyForQuery and no message has
	// arrived since, so the client is idle (notifications may go out).
	atReady bool

	mu         sync.Mutex
	stmtCancel context.CancelFunc // of the running statement; nil when idle
	// What pg_stat_activity shows (under mu): the session, when it
	// started, the latest statement text and when it started.
	info       StartupInfo
	started    time.Time
	query      string
	queryStart time.Time
	draining   bool // Shutdown started: leave at the next blocking read
	killed     bool // Shutdown gave up waiting: leave now
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{
		srv: s,
		nc:  nc,
		pid: s.nextPID.Add(1),
	}
	c.out.w = nc
	c.out.buf = make([]byte, 0, initialBufSize)
	c.rw.out = &c.out
	c.rw.c = c
	c.log = s.log.With("pid", c.pid, "remote", nc.RemoteAddr().String())
	c.ctx, c.release = context.WithCancel(s.baseCtx)
	return c
}

// serve runs the connection from startup to close. It is the connection's
// goroutine.
func (c *conn) serve() {
	defer c.srv.unregister(c)
	defer c.close()
	defer func() {
		if r := recover(); r != nil {
			// A bug reached by this client's input ends this connection only.
			c.log.Error("panic serving connection", "panic", r, "stack", string(debug.Stack()))
			c.end(&fatalError{pgerror.New(pgerror.InternalError, "internal error: %v", r)})
		}
	}()
	err := c.startup()
	if err == nil {
		err = c.loop()
	}
	c.end(err)
}

// loop reads and dispatches messages until the connection ends (step 6).
func (c *conn) loop() error {
	if n, ok := c.sess.(Notifier); ok {
		if wake := n.Notifications(); wake != nil {
			return c.notifyLoop(n, wake)
		}
	}
	for {
		if c.isKilled() {
			return errAdminShutdown
		}
		idle := c.idleTimeout()
		if idle > 0 {
			c.setReadDeadline(time.Now().Add(idle))
		}
		msg, err := c.receive()
		if idle > 0 {
			if err != nil && errors.Is(err, os.ErrDeadlineExceeded) && !c.isDraining() {
				return errIdleInTransaction
			}
			c.setReadDeadline(time.Time{})
		}
		if err != nil {
			return c.readError(err)
		}
		if err := c.dispatch(msg); err != nil {
			return err
		}
	}
}

func (c *conn) dispatch(msg pgproto3.FrontendMessage) error {
	c.atReady = false
	switch m := msg.(type) {
	case *pgproto3.Query:
		return c.handleQuery(m.String)
	case *pgproto3.Parse:
		return c.handleParse(m)
	case *pgproto3.Bind:
		return c.handleBind(m)
	case *pgproto3.Describe:
		return c.handleDescribe(m)
	case *pgproto3.Execute:
		return c.handleExecute(m)
	case *pgproto3.Close:
		return c.handleClose(m)
	case *pgproto3.Sync:
		return c.handleSync()
	case *pgproto3.Flush:
		if c.ignoreTillSync {
			return nil
		}
		return c.ioErr(c.out.flush())
	case *pgproto3.Terminate:
		return errQuietClose
	case *pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
		// Outside COPY these are leftovers of a COPY that failed while the
		// client kept sending; PostgreSQL ignores them too.
		return nil
	case *pgproto3.FunctionCall:
		if c.ignoreTillSync {
			return nil
		}
		if err := c.out.errorResponse(pgerror.New(pgerror.FeatureNotSupported,
			"the function call protocol is not supported"), pgerror.SeverityError); err != nil {
			return c.ioErr(err)
		}
		return c.readyForQuery()
	default:
		// Receive decodes nothing else but the 'p' messages of
		// authentication (password, SASL, GSS), which are out of place here.
		return fatalf(pgerror.ProtocolViolation, "invalid frontend message type %d", 'p')
	}
}

// readError classifies a failed Receive: a dead or closed socket ends the
// connection quietly (or with 57P01 when Shutdown interrupted the read);
// anything else is a malformed or oversized message.
func (c *conn) readError(err error) error {
	if c.isDraining() && errors.Is(err, os.ErrDeadlineExceeded) {
		return errAdminShutdown
	}
	if isIOError(err) {
		return errQuietClose
	}
	var tooBig *pgproto3.ExceededMaxBodyLenErr
	if errors.As(err, &tooBig) {
		return fatalf(pgerror.ProtocolViolation,
			"invalid message length: %d bytes exceeds the limit of %d bytes",
			tooBig.ActualBodyLen, tooBig.MaxExpectedBodyLen)
	}
	return fatalf(pgerror.ProtocolViolation, "invalid frontend message: %v", err)
}

func isIOError(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// ioErr maps a write error to a quiet close.
func (c *conn) ioErr(err error) error {
	if err != nil {
		return errQuietClose
	}
	return nil
}

// beginStatement returns the context for one statement and makes it the one
// a cancel request cancels (invariant 2).
func (c *conn) beginStatement() context.Context {
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	c.stmtCancel = cancel
	c.mu.Unlock()
	return ctx
}

func (c *conn) endStatement() {
	c.mu.Lock()
	cancel := c.stmtCancel
	c.stmtCancel = nil
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// statementError reports the outcome of a Session call. A nil result means
// the connection goes on (err, if any, was sent as an ErrorResponse); a
// non-nil one ends the connection.
func (c *conn) statementError(err error) error {
	if c.out.err != nil {
		return errQuietClose // the client went away mid-result
	}
	if err == nil {
		return nil
	}
	if c.isKilled() {
		// The statement was canceled by Shutdown, not by the user: PostgreSQL
		// reports only the FATAL in that case.
		return errAdminShutdown
	}
	pe := pgerror.Convert(err)
	if pe.Severity == pgerror.SeverityFatal || pe.Severity == "PANIC" {
		return &fatalError{pe}
	}
	if pe.Code == pgerror.InternalError {
		c.log.Error("internal error", "err", err)
	}
	return c.ioErr(c.out.errorResponse(pe, pgerror.SeverityError))
}

func (c *conn) readyForQuery() error {
	if c.sess.TxStatus() == 'I' {
		// Invariant 3: the transaction ended, and its portals with it.
		c.closePortals()
		// PostgreSQL sends pending notifications right before ReadyForQuery,
		// outside a transaction block only.
		if err := c.sendNotifications(); err != nil {
			return err
		}
	}
	c.atReady = true
	return c.ioErr(c.out.readyForQuery(c.sess.TxStatus()))
}

// end sends what the reason for ending calls for.
func (c *conn) end(reason error) {
	var fe *fatalError
	switch {
	case reason == nil, errors.Is(reason, errQuietClose):
	case errors.Is(reason, errAdminShutdown):
		c.sendFatal(pgerror.New(pgerror.AdminShutdown, "terminating connection due to administrator command"))
	case errors.As(reason, &fe):
		c.sendFatal(fe.e)
	default:
		c.log.Error("connection ended", "err", reason)
	}
}

// sendFatal is best effort: the client may be gone.
func (c *conn) sendFatal(e *pgerror.Error) {
	if c.out.err != nil {
		return
	}
	// Buffered messages are whole ones (output never keeps half a message),
	// so they may precede the FATAL.
	c.out.errorResponse(e, pgerror.SeverityFatal)
}

// close releases everything the connection holds. A panic in a session's
// Close method is logged and the rest is still released: the connection is
// going anyway, and the slot and socket must not leak.
func (c *conn) close() {
	c.safely("closing portals", c.closePortals)
	c.safely("closing statements", func() {
		for name, ps := range c.stmts {
			delete(c.stmts, name)
			ps.Close()
		}
	})
	if c.sess != nil {
		c.safely("closing session", c.sess.Close)
	}
	c.release()
	c.nc.Close()
	if c.hasSlot {
		c.srv.releaseSlot()
	}
}

func (c *conn) safely(what string, f func()) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("panic "+what, "panic", r, "stack", string(debug.Stack()))
		}
	}()
	f()
}

// cancelStatement cancels the running statement, if any (cancel.go).
func (c *conn) cancelStatement() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stmtCancel != nil {
		c.stmtCancel()
	}
}

// setReadDeadline sets the read deadline unless Shutdown already moved it
// into the past, which must stick.
func (c *conn) setReadDeadline(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.draining {
		t = aLongTimeAgo
	}
	c.nc.SetReadDeadline(t)
}

// drain makes the connection leave at its next read that would block:
// an idle connection leaves now, a busy one after the messages it already
// received.
func (c *conn) drain() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.draining = true
	c.nc.SetReadDeadline(aLongTimeAgo)
}

// terminate cancels the running statement and makes the connection leave as
// soon as it returns; writes get a short grace for the FATAL.
func (c *conn) terminate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.draining, c.killed = true, true
	if c.stmtCancel != nil {
		c.stmtCancel()
	}
	c.nc.SetReadDeadline(aLongTimeAgo)
	c.nc.SetWriteDeadline(time.Now().Add(c.srv.killGrace))
}

func (c *conn) isDraining() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.draining
}

func (c *conn) isKilled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.killed
}

// IdleTimeouter is a Session with an idle_in_transaction_session_timeout:
// a client that leaves a transaction open and sends nothing for that long
// is disconnected (FATAL 25P03), which ends the transaction.
type IdleTimeouter interface {
	IdleInTransactionTimeout() time.Duration
}

// errIdleInTransaction ends a connection idle in a transaction too long.
var errIdleInTransaction = &fatalError{pgerror.New(pgerror.IdleInTransactionSessionTimeout, "terminating connection due to idle-in-transaction timeout")}

// idleTimeout is how long the client may now stay silent: the session's
// idle_in_transaction_session_timeout while a transaction is open and the
// client was told ReadyForQuery, else 0 (no limit).
func (c *conn) idleTimeout() time.Duration {
	it, ok := c.sess.(IdleTimeouter)
	if !ok || !c.atReady {
		return 0
	}
	if st := c.sess.TxStatus(); st != 'T' && st != 'E' {
		return 0
	}
	return it.IdleInTransactionTimeout()
}
