package catalog

import "strings"

// Table privileges, by PostgreSQL's aclitem letters. MAINTAIN (PostgreSQL
// 17's letter m) is what REFRESH needs; GRANT REFRESH is its Databricks
// spelling.
const (
	PrivSelect   = 'r'
	PrivInsert   = 'a'
	PrivUpdate   = 'w'
	PrivDelete   = 'd'
	PrivTruncate = 'D'
	PrivMaintain = 'm'
)

// AllTablePrivs are the privileges ALL grants on a relation.
const AllTablePrivs = "arwdDm"

// ACLItem grants Privs (privilege letters) on a relation to Grantee, a
// role id; 0 is PUBLIC (every role).
type ACLItem struct {
	Grantee uint32 `json:"grantee"`
	Privs   string `json:"privs"`
}

// Granted reports whether role (by id) holds priv on t through ownership
// or a grant to it or to PUBLIC. Superusers are not checked here.
func (t *Table) Granted(role uint32, priv byte) bool {
	if t.Owner != 0 && t.Owner == role {
		return true
	}
	for _, a := range t.ACL {
		if (a.Grantee == role || a.Grantee == 0) && strings.IndexByte(a.Privs, priv) >= 0 {
			return true
		}
	}
	return false
}

// Grant adds privs for grantee; Revoke removes them.
func (t *Table) Grant(grantee uint32, privs string) {
	for i, a := range t.ACL {
		if a.Grantee == grantee {
			for _, p := range []byte(privs) {
				if strings.IndexByte(a.Privs, p) < 0 {
					a.Privs += string(p)
				}
			}
			t.ACL[i] = a
			return
		}
	}
	t.ACL = append(t.ACL, ACLItem{Grantee: grantee, Privs: privs})
}

// Revoke removes privs from grantee's grant (and the grant when empty).
func (t *Table) Revoke(grantee uint32, privs string) {
	out := t.ACL[:0:0]
	for _, a := range t.ACL {
		if a.Grantee == grantee {
			kept := strings.Map(func(r rune) rune {
				if strings.ContainsRune(privs, r) {
					return -1
				}
				return r
			}, a.Privs)
			if kept == "" {
				continue
			}
			a.Privs = kept
		}
		out = append(out, a)
	}
	t.ACL = out
}

// Allowed reports whether user may use priv on t (0: needs ownership, for
// ALTER, DROP and GRANT): a superuser may do anything; a role needs to own
// t or hold a grant; a user that is no role is a superuser unless roles are
// required (authentication configured).
func (c *Catalog) Allowed(user string, requireRoles bool, t *Table, priv byte) bool {
	r, ok := c.Role(user)
	if !ok {
		return !requireRoles
	}
	if r.Superuser {
		return true
	}
	if priv == 0 {
		return t.Owner != 0 && t.Owner == r.ID
	}
	return t.Granted(r.ID, priv)
}
