package acl

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
)

// RoleGrant is one GRANT role, … TO member, … [WITH ADMIN OPTION] or
// REVOKE [ADMIN OPTION FOR] role, … FROM member, …, its names resolved.
type RoleGrant struct {
	Roles, Members []string
	Grant          bool
	// Admin: WITH ADMIN OPTION on a GRANT; ADMIN OPTION FOR on a REVOKE
	// (which then takes only the option away).
	Admin bool
}

// ApplyRoleGrant runs g as role actor on c, a clone the caller owns and
// persists: it returns the ids of the member roles it changed and the
// notices and warnings PostgreSQL 15 sends (a member granted again, a
// revoke of no membership). Checks, per granted role as in PostgreSQL:
// only a superuser grants or revokes a superuser role; otherwise actor
// needs CREATEROLE or the ADMIN OPTION on the role. A grant that would
// make a membership loop (a role into itself, or into one of its own
// members) fails with 0LP01. The predefined roles are granted like any
// other.
func ApplyRoleGrant(c *catalog.Catalog, actor uint32, g RoleGrant) (changed []uint32, notes []*pgerror.Error, err error) {
	lookup := func(name string) (*catalog.Role, error) {
		r, ok := c.Role(name)
		if !ok {
			return nil, pgerror.New(pgerror.UndefinedObject, "role \"%s\" does not exist", name)
		}
		return r, nil
	}
	var members []*catalog.Role
	for _, n := range g.Members {
		r, err := lookup(n)
		if err != nil {
			return nil, nil, err
		}
		members = append(members, r)
	}
	super := c.IsSuperuserID(actor)
	createRole := super
	if r, ok := c.RoleByID(actor); ok {
		createRole = createRole || r.CreateRole
	}
	seen := map[uint32]bool{}
	for _, n := range g.Roles {
		role, err := lookup(n)
		if err != nil {
			return nil, nil, err
		}
		switch {
		case g.Grant && role.ID == catalog.RoleDatabaseOwner:
			// Its one member is the database's owner, implicitly.
			// PostgreSQL 15 raises this without a code of its own (XX000).
			return nil, nil, pgerror.New(pgerror.InternalError, "role \"%s\" cannot have explicit members", role.Name)
		case role.Superuser && !super:
			return nil, nil, pgerror.New(pgerror.InsufficientPrivilege, "must be superuser to alter superusers")
		case !role.Superuser && !createRole && !c.IsAdminOfRole(actor, role.ID):
			return nil, nil, pgerror.New(pgerror.InsufficientPrivilege, "must have admin option on role \"%s\"", role.Name)
		}
		for _, m0 := range members {
			m, _ := c.RoleByID(m0.ID) // the latest version: an earlier role of g may have changed it
			if catalog.IsPredefinedRole(m.ID) {
				return nil, nil, pgerror.New(pgerror.FeatureNotSupported, "granting roles to the predefined role \"%s\" is not supported", m.Name)
			}
			nm, note, err := changeMembership(c, actor, role, m, g)
			if err != nil {
				return nil, nil, err
			}
			if note != nil {
				notes = append(notes, note)
			}
			if nm != nil {
				c.PutRole(nm)
				if !seen[nm.ID] {
					seen[nm.ID] = true
					changed = append(changed, nm.ID)
				}
			}
		}
	}
	return changed, notes, nil
}

// changeMembership is g for one role and one member: the member's new
// descriptor (nil: unchanged) and a notice.
func changeMembership(c *catalog.Catalog, actor uint32, role, member *catalog.Role, g RoleGrant) (*catalog.Role, *pgerror.Error, error) {
	cur, has := member.MemberGrant(role.ID)
	if g.Grant {
		if role.ID == member.ID || c.IsMemberOfRoleNoSuper(role.ID, member.ID) {
			return nil, nil, pgerror.New(pgerror.InvalidGrantOperation, "role \"%s\" is a member of role \"%s\"", role.Name, member.Name)
		}
		if has && (!g.Admin || cur.Admin) {
			return nil, pgerror.Notice("role \"%s\" is already a member of role \"%s\"", member.Name, role.Name), nil
		}
		nm := member.Clone()
		nm.MemberOf = without(nm.MemberOf, role.ID)
		nm.MemberOf = append(nm.MemberOf, catalog.Membership{Role: role.ID, Grantor: actor, Admin: g.Admin})
		return nm, nil, nil
	}
	if !has {
		w := pgerror.Notice("role \"%s\" is not a member of role \"%s\"", member.Name, role.Name)
		w.Severity, w.Code = pgerror.SeverityWarning, pgerror.Warning
		return nil, w, nil
	}
	nm := member.Clone()
	nm.MemberOf = without(nm.MemberOf, role.ID)
	if g.Admin { // REVOKE ADMIN OPTION FOR: the membership stays
		cur.Admin = false
		nm.MemberOf = append(nm.MemberOf, cur)
	}
	return nm, nil, nil
}

func without(ms []catalog.Membership, role uint32) []catalog.Membership {
	out := ms[:0:0]
	for _, m := range ms {
		if m.Role != role {
			out = append(out, m)
		}
	}
	return out
}

// DropMemberships removes every grant of the dropped role from its
// members in c (a clone), as DROP ROLE does; it returns the members it
// changed.
func DropMemberships(c *catalog.Catalog, dropped uint32) []uint32 {
	var changed []uint32
	for _, m := range c.MembersOf(dropped) {
		nm := m.Clone()
		nm.MemberOf = without(nm.MemberOf, dropped)
		c.PutRole(nm)
		changed = append(changed, nm.ID)
	}
	return changed
}

// CreateRoleMembers are the memberships CREATE ROLE name sets up: IN ROLE
// (InRoles; IN GROUP is its old spelling) makes the new role a member of
// each, ROLE (Members; USER) and ADMIN (Admins) make each a member of the
// new role, ADMIN with the admin option.
type CreateRoleMembers struct {
	InRoles, Members, Admins []string
}

// Empty: CREATE ROLE named no membership.
func (m CreateRoleMembers) Empty() bool {
	return len(m.InRoles) == 0 && len(m.Members) == 0 && len(m.Admins) == 0
}

// ApplyCreateRoleMembers grants m for the role name just put in c (a
// clone), as actor, in PostgreSQL 15's order (IN ROLE, then ADMIN, then
// ROLE) and with GRANT's checks and notices.
func ApplyCreateRoleMembers(c *catalog.Catalog, actor uint32, name string, m CreateRoleMembers) (changed []uint32, notes []*pgerror.Error, err error) {
	seen := map[uint32]bool{}
	for _, g := range []RoleGrant{
		{Roles: m.InRoles, Members: []string{name}, Grant: true},
		{Roles: []string{name}, Members: m.Admins, Grant: true, Admin: true},
		{Roles: []string{name}, Members: m.Members, Grant: true},
	} {
		if len(g.Roles) == 0 || len(g.Members) == 0 {
			continue
		}
		ch, ns, err := ApplyRoleGrant(c, actor, g)
		if err != nil {
			return nil, nil, err
		}
		notes = append(notes, ns...)
		for _, id := range ch {
			if !seen[id] {
				seen[id] = true
				changed = append(changed, id)
			}
		}
	}
	return changed, notes, nil
}
