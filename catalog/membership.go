package catalog

// Role membership (pg_auth_members) and the predefined roles, as in
// PostgreSQL 15. GRANT group TO member makes member a member of group; a
// member whose role has INHERIT holds every privilege group holds, and
// owns what group owns (has_privs_of_role), through any chain of such
// grants; membership alone, inherited or not, is pg_has_role's MEMBER
// (is_member_of_role). A member granted WITH ADMIN OPTION may grant and
// revoke group itself. Each grant is kept on the member's descriptor, so
// GRANT, REVOKE and DROP ROLE persist the members they change.
//
// The predefined roles mvserver honours exist in every catalog, with
// PostgreSQL's OIDs, and cannot be altered or dropped:
// pg_read_all_stats sees every session's pg_stat_activity row in full,
// and pg_signal_backend may cancel and terminate the backends of roles
// that are not superusers. pg_database_owner's one member is, implicitly,
// the database's owner (here a superuser, who holds every privilege
// anyway); it cannot be granted, and owns the public schema as in
// PostgreSQL 15. PostgreSQL's other predefined roles are absent: mvserver
// would not do what they promise.

// Membership is one grant of a role to the member holding it.
type Membership struct {
	Role    uint32 `json:"role"`
	Grantor uint32 `json:"grantor"`
	Admin   bool   `json:"admin,omitempty"`
}

// OIDs of the predefined roles (PostgreSQL 15's).
const (
	RoleReadAllStats  uint32 = 3375
	RoleSignalBackend uint32 = 4200
	RoleDatabaseOwner uint32 = 6171
)

var predefinedRoles = []*Role{
	{ID: RoleReadAllStats, Name: "pg_read_all_stats", Inherit: true, ConnLimit: -1},
	{ID: RoleSignalBackend, Name: "pg_signal_backend", Inherit: true, ConnLimit: -1},
	{ID: RoleDatabaseOwner, Name: "pg_database_owner", Inherit: true, ConnLimit: -1},
}

// IsPredefinedRole reports whether id is one of the predefined roles.
func IsPredefinedRole(id uint32) bool {
	for _, r := range predefinedRoles {
		if r.ID == id {
			return true
		}
	}
	return false
}

func predefinedByName(name string) (*Role, bool) {
	for _, r := range predefinedRoles {
		if r.Name == name {
			return r, true
		}
	}
	return nil, false
}

func predefinedByID(id uint32) (*Role, bool) {
	for _, r := range predefinedRoles {
		if r.ID == id {
			return r, true
		}
	}
	return nil, false
}

// MemberGrant returns member's grant of role, if it holds one directly.
func (r *Role) MemberGrant(role uint32) (Membership, bool) {
	for _, m := range r.MemberOf {
		if m.Role == role {
			return m, true
		}
	}
	return Membership{}, false
}

// roleClosure lists id and every role it reaches through membership
// grants; inheritOnly stops at members without INHERIT (their grants give
// membership but no privileges).
func (c *Catalog) roleClosure(id uint32, inheritOnly bool) []uint32 {
	out := []uint32{id}
	seen := map[uint32]bool{id: true}
	for i := 0; i < len(out); i++ {
		r, ok := c.RoleByID(out[i])
		if !ok || inheritOnly && !r.Inherit {
			continue
		}
		for _, m := range r.MemberOf {
			if !seen[m.Role] {
				seen[m.Role] = true
				out = append(out, m.Role)
			}
		}
	}
	return out
}

// privRoles are the roles whose privileges id holds: itself and the
// roles it inherits from.
func (c *Catalog) privRoles(id uint32) []uint32 {
	if r, ok := c.RoleByID(id); !ok || len(r.MemberOf) == 0 {
		return []uint32{id}
	}
	return c.roleClosure(id, true)
}

// HasPrivsOfRole is PostgreSQL's has_privs_of_role: a superuser, role
// itself, or a member inheriting from it.
func (c *Catalog) HasPrivsOfRole(member, role uint32) bool {
	if member == NoRole {
		return false
	}
	if member == role || c.IsSuperuserID(member) {
		return true
	}
	for _, id := range c.privRoles(member) {
		if id == role {
			return true
		}
	}
	return false
}

// IsMemberOfRole is PostgreSQL's is_member_of_role: a superuser, role
// itself, or a member through any chain of grants, inherited or not.
func (c *Catalog) IsMemberOfRole(member, role uint32) bool {
	if member == NoRole {
		return false
	}
	if member == role || c.IsSuperuserID(member) {
		return true
	}
	for _, id := range c.roleClosure(member, false) {
		if id == role {
			return true
		}
	}
	return false
}

// IsMemberOfRoleNoSuper is IsMemberOfRole without the superuser
// shortcut: whether the grants make member a member of role.
func (c *Catalog) IsMemberOfRoleNoSuper(member, role uint32) bool {
	for _, id := range c.roleClosure(member, false) {
		if id == role {
			return true
		}
	}
	return false
}

// IsAdminOfRole reports whether member may grant and revoke role: a
// superuser, or a member holding the grant WITH ADMIN OPTION (directly or
// through the roles it is a member of).
func (c *Catalog) IsAdminOfRole(member, role uint32) bool {
	if member == NoRole {
		return false
	}
	if c.IsSuperuserID(member) {
		return true
	}
	for _, id := range c.roleClosure(member, false) {
		if r, ok := c.RoleByID(id); ok {
			if m, ok := r.MemberGrant(role); ok && m.Admin {
				return true
			}
		}
	}
	return false
}

// MembersOf lists the roles holding a direct grant of role, by name.
func (c *Catalog) MembersOf(role uint32) []*Role {
	var out []*Role
	for _, r := range c.Roles() {
		if _, ok := r.MemberGrant(role); ok {
			out = append(out, r)
		}
	}
	return out
}
