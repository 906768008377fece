package web

import (
	"context"
	"sync"
	"time"

	"github.com/mvserver/mvserver/server"
)

// InstrumentEngine wraps the SQL engine the wire server uses so that
// /metrics counts sessions and queries. The wrapped sessions keep the
// optional interfaces the wire layer looks for (server.Notifier for
// LISTEN, server.Aborter for the extended protocol's errors).
func (m *Monitor) InstrumentEngine(eng server.Engine) server.Engine {
	return &countingEngine{inner: eng, m: m}
}

type countingEngine struct {
	inner server.Engine
	m     *Monitor
}

func (e *countingEngine) Connect(ctx context.Context, info server.StartupInfo) (server.Session, error) {
	s, err := e.inner.Connect(ctx, info)
	if err != nil {
		return nil, err
	}
	e.m.connections.Inc()
	e.m.connectsTotal.Inc()
	cs := &countingSession{Session: s, m: e.m}
	n, isN := s.(server.Notifier)
	a, isA := s.(server.Aborter)
	switch {
	case isN && isA:
		return struct {
			*countingSession
			server.Notifier
			server.Aborter
		}{cs, n, a}, nil
	case isN:
		return struct {
			*countingSession
			server.Notifier
		}{cs, n}, nil
	case isA:
		return struct {
			*countingSession
			server.Aborter
		}{cs, a}, nil
	}
	return cs, nil
}

// countingSession counts a session's queries and its end.
type countingSession struct {
	server.Session
	m     *Monitor
	close sync.Once
}

func result(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

func (s *countingSession) SimpleQuery(ctx context.Context, sql string, w server.ResultWriter) error {
	err := s.Session.SimpleQuery(ctx, sql, w)
	s.m.queries.WithLabelValues("simple", result(err)).Inc()
	return err
}

func (s *countingSession) Bind(ctx context.Context, ps server.PreparedStatement, params [][]byte, paramFormats, resultFormats []int16) (server.Portal, error) {
	p, err := s.Session.Bind(ctx, ps, params, paramFormats, resultFormats)
	if err != nil {
		return nil, err
	}
	return &countingPortal{Portal: p, m: s.m}, nil
}

func (s *countingSession) Close() {
	s.close.Do(func() {
		s.Session.Close()
		s.m.connections.Dec()
	})
}

// countingPortal counts an Execute once it has run the portal to its end
// (a portal read in pieces is one query).
type countingPortal struct {
	server.Portal
	m *Monitor
}

func (p *countingPortal) Execute(ctx context.Context, maxRows int, w server.ResultWriter) (bool, error) {
	suspended, err := p.Portal.Execute(ctx, maxRows, w)
	if !suspended {
		p.m.queries.WithLabelValues("extended", result(err)).Inc()
	}
	return suspended, err
}

// IdleInTransactionTimeout forwards the wrapped session's
// idle_in_transaction_session_timeout (server.IdleTimeouter).
func (s *countingSession) IdleInTransactionTimeout() time.Duration {
	if it, ok := s.Session.(server.IdleTimeouter); ok {
		return it.IdleInTransactionTimeout()
	}
	return 0
}
