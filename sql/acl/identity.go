package acl

import (
	"strings"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
)

// Identity is who a session acts as, PostgreSQL 15's three users:
//
//   - Login, the role the connection authenticated as (fixed);
//   - Session, session_user: Login until SET SESSION AUTHORIZATION, which
//     only a superuser Login may change to another role;
//   - Role, the role SET ROLE chose ("" for none): current_user, the role
//     every privilege is checked for, is Role when set and Session
//     otherwise.
//
// The session keeps Session and Role as settings (session_authorization
// and role), so SET LOCAL, RESET ALL, DISCARD ALL and a rolled-back
// transaction treat them as PostgreSQL's GUCs; the rules live here.
type Identity struct {
	Login, Session, Role string
}

// NoneRole is how SHOW role spells "no role set".
const NoneRole = "none"

// Current is current_user.
func (id Identity) Current() string {
	if id.Role != "" {
		return id.Role
	}
	return id.Session
}

// ShowRole is SHOW role's answer.
func (id Identity) ShowRole() string {
	if id.Role == "" {
		return NoneRole
	}
	return id.Role
}

// IsSuperuser is is_superuser: whether current_user is a superuser (a
// user that is no role is one while roles are not required).
func (id Identity) IsSuperuser(c *catalog.Catalog, requireRoles bool) bool {
	_, super := c.UserRole(id.Current(), requireRoles)
	return super
}

// SetRole checks SET ROLE name and returns the new Role: NONE (or "")
// goes back to the session user; otherwise the role must exist (22023, PostgreSQL's code for a bad setting)
// and the session user must be a superuser or a member of it, directly
// or through other roles, with or without INHERIT (42501), as
// PostgreSQL's is_member_of_role decides.
func (id Identity) SetRole(c *catalog.Catalog, requireRoles bool, name string) (string, error) {
	if name == "" || strings.EqualFold(name, NoneRole) {
		return "", nil
	}
	r, ok := c.Role(name)
	if !ok {
		return "", pgerror.New(pgerror.InvalidParameterValue, "role \"%s\" does not exist", name)
	}
	sid, super := c.UserRole(id.Session, requireRoles)
	if !super && !c.IsMemberOfRole(sid, r.ID) {
		return "", pgerror.New(pgerror.InsufficientPrivilege, "permission denied to set role \"%s\"", name)
	}
	return r.Name, nil
}

// SetSessionAuthorization checks SET SESSION AUTHORIZATION name and
// returns the new Session ("" or DEFAULT: back to Login). Only a
// superuser Login may become another role; any Login may name itself.
// It also resets Role, as PostgreSQL does.
func (id Identity) SetSessionAuthorization(c *catalog.Catalog, requireRoles bool, name string) (string, error) {
	if name == "" {
		return id.Login, nil
	}
	r, ok := c.Role(name)
	if !ok {
		if name == id.Login {
			return name, nil
		}
		return "", pgerror.New(pgerror.InvalidParameterValue, "role \"%s\" does not exist", name)
	}
	if r.Name == id.Login {
		return r.Name, nil
	}
	if _, super := c.UserRole(id.Login, requireRoles); !super {
		return "", pgerror.New(pgerror.InsufficientPrivilege, "permission denied to set session authorization")
	}
	return r.Name, nil
}
