package catalog

import "strings"

// Privileges, by PostgreSQL's aclitem letters. MAINTAIN (PostgreSQL 17's
// letter m) is what REFRESH needs; GRANT REFRESH is its Databricks
// spelling. Sequences take SELECT, UPDATE and USAGE; schemas USAGE and
// CREATE.
const (
	PrivSelect   = 'r'
	PrivInsert   = 'a'
	PrivUpdate   = 'w'
	PrivDelete   = 'd'
	PrivTruncate = 'D'
	PrivMaintain = 'm'
	PrivUsage    = 'U'
	PrivCreate   = 'C'
)

// AllTablePrivs are the privileges ALL grants on a relation.
const AllTablePrivs = "arwdDm"

// AllSequencePrivs are the privileges ALL grants on a sequence.
const AllSequencePrivs = "rwU"

// AllSchemaPrivs are the privileges ALL grants on a schema.
const AllSchemaPrivs = "UC"

// AllPrivs are the privileges the owner of t holds: ALL of its kind.
func (t *Table) AllPrivs() string {
	if t.Kind == KindSequence {
		return AllSequencePrivs
	}
	return AllTablePrivs
}

// ACLItem grants Privs (privilege letters) on an object to Grantee, a
// role id; 0 is PUBLIC (every role).
type ACLItem struct {
	Grantee uint32 `json:"grantee"`
	Privs   string `json:"privs"`
}

// ACL is an object's grants (the owner's implicit ALL is not listed).
type ACL []ACLItem

// holds reports whether the grants give priv to role or to PUBLIC.
func (a ACL) holds(role uint32, priv byte) bool {
	for _, it := range a {
		if (it.Grantee == role || it.Grantee == 0) && strings.IndexByte(it.Privs, priv) >= 0 {
			return true
		}
	}
	return false
}

// GrantsAny reports whether the grants give role (or PUBLIC) anything.
func (a ACL) GrantsAny(role uint32) bool {
	for _, it := range a {
		if (it.Grantee == role || it.Grantee == 0) && it.Privs != "" {
			return true
		}
	}
	return false
}

// with returns a copy with privs added to grantee's grant.
func (a ACL) with(grantee uint32, privs string) ACL {
	out := append(ACL(nil), a...)
	for i, it := range out {
		if it.Grantee == grantee {
			for _, p := range []byte(privs) {
				if strings.IndexByte(it.Privs, p) < 0 {
					it.Privs += string(p)
				}
			}
			out[i] = it
			return out
		}
	}
	return append(out, ACLItem{Grantee: grantee, Privs: privs})
}

// without returns a copy with privs removed from grantee's grant (and the
// grant when it is left empty).
func (a ACL) without(grantee uint32, privs string) ACL {
	var out ACL
	for _, it := range a {
		if it.Grantee == grantee {
			kept := strings.Map(func(r rune) rune {
				if strings.ContainsRune(privs, r) {
					return -1
				}
				return r
			}, it.Privs)
			if kept == "" {
				continue
			}
			it.Privs = kept
		}
		out = append(out, it)
	}
	return out
}

// Apply returns the grants after GRANT (grant) or REVOKE of privs to or
// from each of grantees.
func (a ACL) Apply(grantees []uint32, privs string, grant bool) ACL {
	for _, g := range grantees {
		if grant {
			a = a.with(g, privs)
		} else {
			a = a.without(g, privs)
		}
	}
	return a
}

// Granted reports whether role (by id) holds priv on t through ownership
// or a grant to it or to PUBLIC. Superusers are not checked here
// (Catalog.Holds does).
func (t *Table) Granted(role uint32, priv byte) bool {
	if t.Owner != 0 && t.Owner == role {
		return true
	}
	return t.ACL.holds(role, priv)
}

// Grant adds privs for grantee; Revoke removes them.
func (t *Table) Grant(grantee uint32, privs string) { t.ACL = t.ACL.with(grantee, privs) }

// Revoke removes privs from grantee's grant (and the grant when empty).
func (t *Table) Revoke(grantee uint32, privs string) { t.ACL = t.ACL.without(grantee, privs) }

// Grant adds privs on the schema for grantee (a clone's).
func (s *Schema) Grant(grantee uint32, privs string) { s.ACL = s.ACL.with(grantee, privs) }

// Revoke removes privs on the schema from grantee (a clone's).
func (s *Schema) Revoke(grantee uint32, privs string) { s.ACL = s.ACL.without(grantee, privs) }

// Allowed reports whether user may use priv on t (0: needs ownership, for
// ALTER, DROP and GRANT): a superuser may do anything; a role needs to own
// t or hold a grant; a user that is no role is a superuser unless roles are
// required (authentication configured).
func (c *Catalog) Allowed(user string, requireRoles bool, t *Table, priv byte) bool {
	id, super := c.UserRole(user, requireRoles)
	if super {
		return true
	}
	if priv == 0 {
		return t.Owner != 0 && c.HasPrivsOfRole(id, t.Owner)
	}
	for _, r := range c.privRoles(id) {
		if t.Granted(r, priv) {
			return true
		}
	}
	return false
}
