package acl

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
)

// Other sessions' backends, as PostgreSQL 15 lets a role see and signal
// them. A superuser sees and signals every backend. Another role sees a
// backend's statement, client address, start times and state
// (pg_stat_activity) when it has the privileges of the backend's role or
// of pg_read_all_stats; it may cancel the statement of or terminate a
// backend when it has the privileges of the backend's role or of
// pg_signal_backend, and never one of a superuser.

// Backends answers for actor, the role a session's checks run under.
type Backends struct {
	Cat          *catalog.Catalog
	Actor        uint32
	Super        bool
	User         string // the actor's session user name
	RequireRoles bool
}

// hasPrivsOf reports whether the actor has the privileges of user's role.
func (b Backends) hasPrivsOf(user string) bool {
	if user == b.User {
		return true
	}
	id, _ := b.Cat.UserRole(user, b.RequireRoles)
	return id != catalog.NoRole && b.Cat.HasPrivsOfRole(b.Actor, id)
}

// MaySee reports whether the actor sees the details of a backend of user.
func (b Backends) MaySee(user string) bool {
	return b.Super || b.Cat.HasPrivsOfRole(b.Actor, catalog.RoleReadAllStats) || b.hasPrivsOf(user)
}

// MaySignal fails with PostgreSQL's 42501 unless the actor may cancel
// (terminate false) or terminate a backend of user.
func (b Backends) MaySignal(user string, terminate bool) error {
	if b.Super {
		return nil
	}
	if _, targetSuper := b.Cat.UserRole(user, b.RequireRoles); targetSuper {
		if terminate {
			return pgerror.New(pgerror.InsufficientPrivilege, "must be a superuser to terminate superuser process")
		}
		return pgerror.New(pgerror.InsufficientPrivilege, "must be a superuser to cancel superuser query")
	}
	if b.hasPrivsOf(user) || b.Cat.HasPrivsOfRole(b.Actor, catalog.RoleSignalBackend) {
		return nil
	}
	if terminate {
		return pgerror.New(pgerror.InsufficientPrivilege, "must be a member of the role whose process is being terminated or member of pg_signal_backend")
	}
	return pgerror.New(pgerror.InsufficientPrivilege, "must be a member of the role whose query is being canceled or member of pg_signal_backend")
}
