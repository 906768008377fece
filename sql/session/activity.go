package session

import (
	"time"

	"github.com/mvserver/mvserver/dataset"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/server"
	"github.com/mvserver/mvserver/sql/acl"
	"github.com/mvserver/mvserver/sql/types"
)

// Other sessions, as PostgreSQL 15 lets a role see and signal them
// (R-S5; the rules are sql/acl's Backends). pg_stat_activity shows a
// session's statement, client address, start times and state to its own
// role, members of that role, members of pg_read_all_stats and
// superusers; others see its database, process id, user and application,
// "<insufficient privilege>" for the query and NULL for the rest.
// pg_cancel_backend and pg_terminate_backend need the privileges of the
// backend's role or of pg_signal_backend, and only a superuser may signal
// a superuser's backend.

// insufficientPrivilege is what pg_stat_activity.query shows of a session
// the reader may not see.
const insufficientPrivilege = "<insufficient privilege>"

// backends is the session's view of other backends.
func (s *Session) backends() acl.Backends {
	id, super := s.subject()
	return acl.Backends{Cat: s.cat, Actor: id, Super: super, User: s.currentUser(), RequireRoles: s.eng.RequireRoles}
}

// activityRows are the pg_stat_activity rows of the server's sessions as
// the session's role may see them.
func (s *Session) activityRows() [][]types.Datum {
	if s.eng.Activity == nil {
		return nil
	}
	ts := func(t time.Time) types.Datum {
		if t.IsZero() {
			return types.NullDatum
		}
		return types.NewTimestamp(types.KindTimestampTZ, t.UnixMicro())
	}
	b := s.backends()
	var rows [][]types.Datum
	for _, a := range s.eng.Activity() {
		if !b.MaySee(a.User) {
			rows = append(rows, []types.Datum{
				types.NewText(a.Database), types.NewInt4(int64(a.PID)), types.NewText(a.User),
				types.NewText(a.App), types.NullDatum, types.NullDatum, types.NullDatum,
				types.NullDatum, types.NewText(insufficientPrivilege),
			})
			continue
		}
		rows = append(rows, []types.Datum{
			types.NewText(a.Database), types.NewInt4(int64(a.PID)), types.NewText(a.User),
			types.NewText(a.App), dataset.TextOrNull(a.ClientAddr), ts(a.BackendStart), ts(a.QueryStart),
			types.NewText(a.State), types.NewText(a.Query),
		})
	}
	return rows
}

// backend finds the session with process id pid; nil (after PostgreSQL's
// WARNING) when there is none.
func (s *Session) backend(pid int64) *server.Activity {
	if s.eng.Activity != nil {
		for _, a := range s.eng.Activity() {
			if int64(a.PID) == pid {
				return &a
			}
		}
	}
	s.warning(pgerror.Warning, "PID %d is not a PostgreSQL backend process", pid)
	return nil
}

// cancelBackend is pg_cancel_backend(pid) with PostgreSQL 15's checks.
func (s *Session) cancelBackend(pid int64) (bool, error) {
	if s.eng.CancelBackend == nil {
		return false, pgerror.New(pgerror.FeatureNotSupported, "pg_cancel_backend is not available here")
	}
	target := s.backend(pid)
	if target == nil {
		return false, nil
	}
	if err := s.backends().MaySignal(target.User, false); err != nil {
		return false, err
	}
	return s.eng.CancelBackend(pid), nil
}

// terminateBackend is pg_terminate_backend(pid, timeout) with PostgreSQL
// 15's checks: the backend leaves with FATAL 57P01; with a timeout it
// waits that many milliseconds for it to end, and says false (with a
// WARNING) when it did not.
func (s *Session) terminateBackend(pid, timeoutMS int64) (bool, error) {
	if s.eng.TerminateBackend == nil {
		return false, pgerror.New(pgerror.FeatureNotSupported, "pg_terminate_backend is not available here")
	}
	target := s.backend(pid)
	if target == nil {
		return false, nil
	}
	if err := s.backends().MaySignal(target.User, true); err != nil {
		return false, err
	}
	wait := time.Duration(timeoutMS) * time.Millisecond
	if pid == int64(s.info.ProcessID) {
		wait = 0 // this session ends when the statement returns
	}
	found, ended := s.eng.TerminateBackend(pid, wait)
	if found && !ended {
		s.warning(pgerror.Warning, "backend with PID %d did not terminate within %d milliseconds", pid, timeoutMS)
	}
	return found && ended, nil
}
