package session

import (
	"strings"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/server"
	"github.com/mvserver/mvserver/sql/acl"
	pgsettings "github.com/mvserver/mvserver/sql/settings"
	"github.com/mvserver/mvserver/sql/types"
)

// The session's users (sql/acl's Identity holds the rules): the login
// user, session_user (the session_authorization setting) and the role of
// SET ROLE (the role setting, "none" when unset). Both are settings, so a
// rolled-back transaction undoes them and SET LOCAL lasts to its end.

// identity is who the session is now.
func (s *Session) identity() acl.Identity {
	id := acl.Identity{Login: s.info.User, Session: s.setting("session_authorization"), Role: s.setting("role")}
	if id.Session == "" {
		id.Session = s.info.User
	}
	if id.Role == acl.NoneRole {
		id.Role = ""
	}
	return id
}

// currentUser is current_user: the role privileges are checked for.
func (s *Session) currentUser() string { return s.identity().Current() }

// isIdentitySetting: SET / RESET of these go through setIdentity.
func isIdentitySetting(name string) bool {
	n := strings.ToLower(name)
	return n == "role" || n == "session_authorization"
}

// setIdentity runs SET [LOCAL] ROLE name | NONE, RESET ROLE,
// SET [LOCAL] SESSION AUTHORIZATION name | DEFAULT and RESET SESSION
// AUTHORIZATION (value "" for NONE, DEFAULT and RESET).
func (s *Session) setIdentity(name, value string, local bool) error {
	if err := s.ensureTxn(); err != nil {
		return err
	}
	id := s.identity()
	switch strings.ToLower(name) {
	case "role":
		role, err := id.SetRole(s.cat, s.eng.RequireRoles, value)
		if err != nil {
			return err
		}
		id.Role = role
	default:
		sess, err := id.SetSessionAuthorization(s.cat, s.eng.RequireRoles, value)
		if err != nil {
			return err
		}
		id.Session, id.Role = sess, ""
		s.putSetting("session_authorization", sess, local)
	}
	s.putSetting("role", id.ShowRole(), local)
	s.putSetting("is_superuser", pgsettings.OnOff(id.IsSuperuser(s.cat, s.eng.RequireRoles)), local)
	return nil
}

// putSetting stores a checked value of setting name for the session, or
// (local) for the rest of the transaction, and reports a reported
// setting's change.
func (s *Session) putSetting(name, v string, local bool) {
	st := settings[strings.ToLower(name)]
	old := s.get(st)
	k := strings.ToLower(st.name)
	if local {
		if s.locals == nil {
			s.locals = map[string]string{}
		}
		s.locals[k] = v
	} else {
		s.vals[k] = v
		delete(s.locals, k)
	}
	if st.reported && old != v {
		s.pending = append(s.pending, server.ParamStatus{Name: st.name, Value: v})
	}
}

// setLocalOutsideBlock is PostgreSQL's warning for SET LOCAL outside a
// transaction block, where it has no effect.
func (s *Session) setLocalOutsideBlock() {
	s.notices = append(s.notices, &pgerror.Error{Severity: pgerror.SeverityWarning, Code: pgerror.NoActiveSQLTransaction,
		Message: "SET LOCAL can only be used in transaction blocks"})
}

// endLocals drops the transaction's SET LOCAL values when it ends
// (committed or not) and reports the reported settings that change back.
func (s *Session) endLocals() {
	if len(s.locals) == 0 {
		s.locals = nil
		return
	}
	locals := s.locals
	s.locals = nil
	for k, v := range locals {
		st := settings[k]
		if strings.EqualFold(st.name, "TimeZone") {
			if loc, _, err := LoadZone(s.get(st)); err == nil {
				s.env = &types.Env{Loc: loc, Names: sessionNames{s}}
			}
		}
		if now := s.get(st); st.reported && now != v {
			s.pending = append(s.pending, server.ParamStatus{Name: st.name, Value: now})
		}
	}
}
