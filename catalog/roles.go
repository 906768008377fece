package catalog

import (
	"sort"
	"time"
)

// Role is a login or group role (PostgreSQL's pg_authid row). Roles are
// descriptors like schemas and tables: persisted with Persist in the
// transaction that changes them (CREATE/ALTER/DROP ROLE are transactional
// DDL) and loaded with the catalog.
type Role struct {
	// ID is the role's OID, allocated with Catalog.AllocID, stable across
	// restarts.
	ID         uint32 `json:"id"`
	Name       string `json:"name"`
	Superuser  bool   `json:"superuser,omitempty"`
	Inherit    bool   `json:"inherit,omitempty"`
	CreateRole bool   `json:"create_role,omitempty"`
	CreateDB   bool   `json:"create_db,omitempty"`
	Login      bool   `json:"login,omitempty"`
	// ConnLimit is the role's connection limit; -1 means none.
	ConnLimit int32 `json:"conn_limit"`
	// Password is the stored verifier: "SCRAM-SHA-256$…", "md5…", or ""
	// for none. Never the password itself.
	Password string `json:"password,omitempty"`
	// ValidUntil is when the password expires; nil means never.
	ValidUntil *time.Time `json:"valid_until,omitempty"`
	// MemberOf are the roles granted to this one (membership.go).
	MemberOf []Membership `json:"member_of,omitempty"`
}

// Clone returns a copy of r for modification.
func (r *Role) Clone() *Role {
	c := *r
	if r.ValidUntil != nil {
		t := *r.ValidUntil
		c.ValidUntil = &t
	}
	c.MemberOf = append([]Membership(nil), r.MemberOf...)
	return &c
}

// roleSet indexes a catalog's roles by id and by name.
type roleSet struct {
	byID   map[uint32]*Role
	byName map[string]*Role
}

func (s roleSet) clone() roleSet {
	n := roleSet{byID: make(map[uint32]*Role, len(s.byID)), byName: make(map[string]*Role, len(s.byName))}
	for k, v := range s.byID {
		n.byID[k] = v
	}
	for k, v := range s.byName {
		n.byName[k] = v
	}
	return n
}

// Roles lists every role, the predefined ones too, ordered by name.
func (c *Catalog) Roles() []*Role {
	out := make([]*Role, 0, len(c.roles.byID)+len(predefinedRoles))
	for _, r := range c.roles.byID {
		out = append(out, r)
	}
	out = append(out, predefinedRoles...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Role returns the role with the given name (case-sensitive, as
// PostgreSQL compares role names after identifier folding).
func (c *Catalog) Role(name string) (*Role, bool) {
	if r, ok := c.roles.byName[name]; ok {
		return r, true
	}
	return predefinedByName(name)
}

// RoleByID returns the role with the given id.
func (c *Catalog) RoleByID(id uint32) (*Role, bool) {
	if r, ok := c.roles.byID[id]; ok {
		return r, true
	}
	return predefinedByID(id)
}

// PutRole adds or replaces (by ID, also under a new name) a role in a
// clone; persist it with Persist(…, changed: r.ID).
func (c *Catalog) PutRole(r *Role) {
	if c.roles.byID == nil {
		c.roles = roleSet{byID: map[uint32]*Role{}, byName: map[string]*Role{}}
	}
	if old, ok := c.roles.byID[r.ID]; ok {
		delete(c.roles.byName, old.Name)
	}
	c.roles.byID[r.ID] = r
	c.roles.byName[r.Name] = r
}

// DropRole removes a role from a clone; persist it with Persist(…,
// dropped: id).
func (c *Catalog) DropRole(id uint32) {
	if old, ok := c.roles.byID[id]; ok {
		delete(c.roles.byName, old.Name)
		delete(c.roles.byID, id)
	}
}
