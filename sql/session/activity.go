package session

import (
	"time"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/server"
	"github.com/mvserver/mvserver/sql/types"
)

// Other sessions, as PostgreSQL 15 lets a role see and signal them
// (R-S5). pg_stat_activity shows a session's statement, client address,
// start times and state only to its own role and to superusers; others
// see its database, process id, user and application, "<insufficient
// privilege>" for the query and NULL for the rest. pg_cancel_backend
// needs the same role, and only a superuser may cancel a superuser's
// statement. mvserver has no role membership, so neither
// pg_read_all_stats nor pg_signal_backend exists to widen that.

// insufficientPrivilege is what pg_stat_activity.query shows of a session
// the reader may not see.
const insufficientPrivilege = "<insufficient privilege>"

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
	_, super := s.subject()
	var rows [][]types.Datum
	for _, a := range s.eng.Activity() {
		if !super && a.User != s.info.User {
			rows = append(rows, []types.Datum{
				types.NewText(a.Database), types.NewInt4(int64(a.PID)), types.NewText(a.User),
				types.NewText(a.App), types.NullDatum, types.NullDatum, types.NullDatum,
				types.NullDatum, types.NewText(insufficientPrivilege),
			})
			continue
		}
		rows = append(rows, []types.Datum{
			types.NewText(a.Database), types.NewInt4(int64(a.PID)), types.NewText(a.User),
			types.NewText(a.App), textOrNull(a.ClientAddr), ts(a.BackendStart), ts(a.QueryStart),
			types.NewText(a.State), types.NewText(a.Query),
		})
	}
	return rows
}

// cancelBackend is pg_cancel_backend(pid) with PostgreSQL 15's checks.
func (s *Session) cancelBackend(pid int64) (bool, error) {
	if s.eng.CancelBackend == nil {
		return false, pgerror.New(pgerror.FeatureNotSupported, "pg_cancel_backend is not available here")
	}
	var target *server.Activity
	if s.eng.Activity != nil {
		for _, a := range s.eng.Activity() {
			if int64(a.PID) == pid {
				target = &a
				break
			}
		}
	}
	if target == nil {
		return false, nil
	}
	if err := s.maySignal(target.User); err != nil {
		return false, err
	}
	return s.eng.CancelBackend(pid), nil
}

// maySignal fails with 42501 unless the session may signal a backend of
// user: a superuser may signal any; another role only its own role's, and
// never a superuser's.
func (s *Session) maySignal(user string) error {
	_, super := s.subject()
	if super {
		return nil
	}
	if _, targetSuper := s.cat.UserRole(user, s.eng.RequireRoles); targetSuper {
		return pgerror.New(pgerror.InsufficientPrivilege, "must be a superuser to cancel superuser query")
	}
	if user != s.info.User {
		return pgerror.New(pgerror.InsufficientPrivilege, "must be a member of the role whose query is being canceled or member of pg_signal_backend")
	}
	return nil
}
