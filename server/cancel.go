package server

import (
	"crypto/subtle"
	"net"
	"sort"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// A CancelRequest arrives on a connection of its own, before any startup, and
// names its target by the (process id, secret) pair sent in BackendKeyData.
// PostgreSQL answers nothing, whether or not the pair matched: the client
// learns the outcome from the canceled statement's 57014 error (R-P1; R-S5
// stops a manual REFRESH this way).

// registerCancel makes c reachable by cancel requests. It is called before
// BackendKeyData is sent, so a client can never hold a key that is not yet
// valid.
func (s *Server) registerCancel(c *conn) {
	s.mu.Lock()
	s.byPID[c.pid] = c
	s.mu.Unlock()
}

// cancel cancels the statement running on the connection with process id
// pid if key is its secret. It reports whether the pair matched.
func (s *Server) cancel(pid uint32, key []byte) bool {
	s.mu.Lock()
	target := s.byPID[pid]
	s.mu.Unlock()
	// Constant time: the secret is the only thing standing between any
	// client that can reach the port and other sessions' statements.
	if target == nil || subtle.ConstantTimeCompare(target.secret[:], key) != 1 {
		return false
	}
	target.cancelStatement()
	return true
}

// handleCancelRequest serves a CancelRequest packet (its body after the
// length word).
func (c *conn) handleCancelRequest(body []byte) {
	var req pgproto3.CancelRequest
	if err := req.Decode(body); err != nil {
		c.log.Debug("malformed cancel request", "err", err)
		return
	}
	if !c.srv.cancel(req.ProcessID, req.SecretKey) {
		c.log.Debug("cancel request matched no connection", "target", req.ProcessID)
	}
}

// CancelBackend cancels the statement running on the connection with
// process id pid, without its secret: pg_cancel_backend(pid) (R-S5). It
// reports whether such a connection exists.
func (s *Server) CancelBackend(pid uint32) bool {
	s.mu.Lock()
	target := s.byPID[pid]
	s.mu.Unlock()
	if target == nil {
		return false
	}
	target.cancelStatement()
	return true
}

// TerminateBackend ends the connection with process id pid as Shutdown
// does (its statement is canceled and it leaves with FATAL 57P01
// "terminating connection due to administrator command"):
// pg_terminate_backend(pid). With wait > 0 it waits that long for the
// connection to end. found reports whether such a connection exists,
// ended whether it is gone (always true with wait 0: the connection
// leaves as soon as its statement returns).
func (s *Server) TerminateBackend(pid uint32, wait time.Duration) (found, ended bool) {
	s.mu.Lock()
	target := s.byPID[pid]
	s.mu.Unlock()
	if target == nil {
		return false, false
	}
	target.terminate()
	if wait <= 0 {
		return true, true
	}
	deadline := time.Now().Add(wait)
	for {
		s.mu.Lock()
		gone := s.byPID[pid] != target
		s.mu.Unlock()
		if gone {
			return true, true
		}
		if time.Now().After(deadline) {
			return true, false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Activity is one session as pg_stat_activity shows it.
type Activity struct {
	PID                 uint32
	User, Database, App string
	ClientAddr          string
	BackendStart        time.Time
	State               string // "active" or "idle"
	Query               string
	QueryStart          time.Time
}

// noteQuery records the statement text a session runs now.
func (c *conn) noteQuery(sql string) {
	c.mu.Lock()
	c.query, c.queryStart = sql, time.Now()
	c.mu.Unlock()
}

// Activity lists the sessions that completed their startup (R-S5: a user
// finds the pid to give pg_cancel_backend).
func (s *Server) Activity() []Activity {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.byPID))
	for _, c := range s.byPID {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	var out []Activity
	for _, c := range conns {
		c.mu.Lock()
		if c.started.IsZero() {
			c.mu.Unlock()
			continue
		}
		a := Activity{PID: c.pid, User: c.info.User, Database: c.info.Database, App: c.info.ApplicationName,
			BackendStart: c.started, State: "idle", Query: c.query, QueryStart: c.queryStart}
		if c.stmtCancel != nil {
			a.State = "active"
		}
		if c.info.RemoteAddr != nil {
			if h, _, err := net.SplitHostPort(c.info.RemoteAddr.String()); err == nil {
				a.ClientAddr = h
			}
		}
		c.mu.Unlock()
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out
}
