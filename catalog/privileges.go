package catalog

import (
	"github.com/mvserver/mvserver/pgerror"
)

// Who may do what (R-P2), PostgreSQL 15's rules over the catalog's roles,
// owners and grants. A superuser may do anything. Otherwise:
//
//  1. A relation's owner holds every privilege on it; another role holds
//     what was granted to it, to PUBLIC or to a role it inherits from
//     (membership.go), and acts as owner of what such a role owns. Altering, dropping, granting and
//     commenting need ownership (or, for the objects in a schema, DROP
//     SCHEMA's ownership of the schema: CASCADE then drops everything in
//     it, whoever owns it, as PostgreSQL does).
//  2. Creating an object in a schema needs CREATE on the schema: its owner
//     has it, others by GRANT CREATE ON SCHEMA. public belongs to the
//     bootstrap superuser and, as in PostgreSQL 15, PUBLIC has no CREATE
//     on it.
//  3. A view reads its sources with its owner's rights, checked at each
//     read of a plain view and at each refresh of a materialized view or
//     streaming table: REVOKE reaches existing views.
//  4. Owner 0 is the bootstrap superuser (objects created by a user that
//     is no role while authentication is off, or before owners existed).
//  5. A session user that is no role is a superuser while authentication
//     is off; with it (requireRoles) it holds nothing, not even PUBLIC's
//     grants (the server refuses its login anyway).

// NoRole is the role id of a session user that is no role while roles are
// required: no owner or grant names it.
const NoRole = ^uint32(0)

// UserRole resolves a session's user name to the role id privileges are
// checked for, and whether it is a superuser.
func (c *Catalog) UserRole(user string, requireRoles bool) (id uint32, super bool) {
	if r, ok := c.Role(user); ok {
		return r.ID, r.Superuser
	}
	if requireRoles {
		return NoRole, false
	}
	return 0, true
}

// IsSuperuserID reports whether role id is a superuser; 0 is the bootstrap
// superuser. A dropped role is not.
func (c *Catalog) IsSuperuserID(id uint32) bool {
	if id == 0 {
		return true
	}
	r, ok := c.RoleByID(id)
	return ok && r.Superuser
}

// Holds reports whether role id holds priv on t: as a superuser, its owner
// or a grantee (itself or PUBLIC). The built-in system views are readable
// by every role (their rows are filtered per reader where they need to be).
func (c *Catalog) Holds(id uint32, t *Table, priv byte) bool {
	if id == NoRole {
		return false
	}
	if c.IsSuperuserID(id) || IsSystem(t) && priv == PrivSelect {
		return true
	}
	for _, r := range c.privRoles(id) {
		if t.Granted(r, priv) {
			return true
		}
	}
	return false
}

// Owns reports whether role id may act as t's owner: its owner or a
// superuser.
func (c *Catalog) Owns(id uint32, t *Table) bool {
	if id == NoRole {
		return false
	}
	return c.IsSuperuserID(id) || t.Owner != 0 && c.HasPrivsOfRole(id, t.Owner)
}

// Noun is how PostgreSQL's messages name t's kind ("permission denied for
// materialized view m").
func (t *Table) Noun() string {
	switch t.Kind {
	case KindView:
		return "view"
	case KindMaterializedView:
		return "materialized view"
	case KindSequence:
		return "sequence"
	}
	return "table"
}

// PermissionDenied is PostgreSQL's 42501 for a privilege t's reader lacks.
func PermissionDenied(t *Table) error {
	return pgerror.New(pgerror.InsufficientPrivilege, "permission denied for %s %s", t.Noun(), t.Name)
}

// NotOwner is PostgreSQL's 42501 for an action that needs t's ownership.
func NotOwner(t *Table) error {
	return pgerror.New(pgerror.InsufficientPrivilege, "must be owner of %s %s", t.Noun(), t.Name)
}

// CheckPrivilege fails with 42501 unless role id holds priv on t.
func (c *Catalog) CheckPrivilege(id uint32, t *Table, priv byte) error {
	if c.Holds(id, t, priv) {
		return nil
	}
	return PermissionDenied(t)
}

// CheckViewSource fails with 42501 unless the owner of view (a plain or
// materialized view or a streaming table) may read src, a relation its
// query names (invariant 3).
func (c *Catalog) CheckViewSource(view, src *Table) error {
	if IsSystem(view) {
		return nil
	}
	return c.CheckPrivilege(view.Owner, src, PrivSelect)
}

// SchemaOwns reports whether role id may act as s's owner.
func (c *Catalog) SchemaOwns(id uint32, s *Schema) bool {
	if id == NoRole {
		return false
	}
	return c.IsSuperuserID(id) || s.Owner != 0 && c.HasPrivsOfRole(id, s.Owner)
}

// SchemaHolds reports whether role id holds priv (PrivCreate, PrivUsage)
// on schema s.
func (c *Catalog) SchemaHolds(id uint32, s *Schema, priv byte) bool {
	if c.SchemaOwns(id, s) {
		return true
	}
	if id == NoRole {
		return false
	}
	for _, r := range c.privRoles(id) {
		if s.ACL.holds(r, priv) {
			return true
		}
	}
	return false
}

// MaySeeDetails reports whether user may see everything about dataset t:
// the full messages of its refresh errors (which can carry data values:
// invalid input syntax for type integer: "…") in refresh_history, its
// event log, its mv_refresh notifications and the web console. A
// superuser, t's owner, and a role holding any privilege on t (itself or
// through PUBLIC) may; every other role sees an error's SQLSTATE and a
// message without values (RedactedError). requireRoles is whether clients
// authenticate (a user that is no role is then no one).
func (c *Catalog) MaySeeDetails(user string, requireRoles bool, t *Table) bool {
	id, super := c.UserRole(user, requireRoles)
	if super {
		return true
	}
	if id == NoRole {
		return false
	}
	for _, r := range c.privRoles(id) {
		if t.Owner != 0 && t.Owner == r || t.ACL.GrantsAny(r) {
			return true
		}
	}
	return false
}

// RedactedError is what a role that may not see a dataset's details
// (MaySeeDetails) is shown of one of its refresh errors: the SQLSTATE and
// its class, never the message, which may quote the data that failed.
// code "" is an error recorded before codes were (or a run that failed
// without one).
func RedactedError(code string) string {
	if code == "" {
		return "refresh failed; the message is shown only to the owner, superusers and roles with a privilege on the view"
	}
	return "refresh failed with SQLSTATE " + code + " (" + pgerror.ClassName(code) + "); the message is shown only to the owner, superusers and roles with a privilege on the view"
}

// SchemaAllowed reports whether user may use priv (PrivCreate,
// PrivUsage) on schema s (has_schema_privilege). USAGE is not checked
// anywhere, so every role has it.
func (c *Catalog) SchemaAllowed(user string, requireRoles bool, s *Schema, priv byte) bool {
	id, super := c.UserRole(user, requireRoles)
	if super || priv == PrivUsage && id != NoRole {
		return true
	}
	return c.SchemaHolds(id, s, priv)
}

// RoleNameOf is the name checks run under for role id: its name, or for
// 0 the bootstrap superuser's (the superuser created first). ok is false
// for a dropped role, or for 0 when no superuser role exists.
func (c *Catalog) RoleNameOf(id uint32) (name string, ok bool) {
	if id != 0 {
		r, ok := c.RoleByID(id)
		if !ok {
			return "", false
		}
		return r.Name, true
	}
	var boot *Role
	for _, r := range c.roles.byID {
		if r.Superuser && (boot == nil || r.ID < boot.ID) {
			boot = r
		}
	}
	if boot == nil {
		return "", false
	}
	return boot.Name, true
}
