package session

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
)

// Ownership changes, as PostgreSQL 15 allows them: ALTER TABLE / VIEW /
// SEQUENCE / MATERIALIZED VIEW / STREAMING TABLE … OWNER TO and ALTER
// SCHEMA … OWNER TO. A superuser gives any object to any role; another
// role must own the object and be a member of the new owner, which (with
// no role membership in mvserver) is only itself. A table's serial
// sequences follow it. Grants are kept. DROP ROLE of a role that owns
// objects or holds privileges fails with PostgreSQL's 2BP01, which these
// statements (or dropping the objects) resolve.

// newOwner resolves OWNER TO's role and checks that the session may give
// an object it owns (owns) to it.
func (s *Session) newOwner(name string, owns bool, what string) (*catalog.Role, error) {
	r, ok := s.cat.Role(name)
	if !ok {
		return nil, roleNotFound(name)
	}
	id, super := s.subject()
	if super {
		return r, nil
	}
	if !owns {
		return nil, pgerror.New(pgerror.InsufficientPrivilege, "must be owner of %s", what)
	}
	if r.ID != id {
		return nil, pgerror.New(pgerror.InsufficientPrivilege, "must be member of role \"%s\"", name)
	}
	return r, nil
}

// ownerName is the role OWNER TO names: a name, or CURRENT_USER,
// SESSION_USER, CURRENT_ROLE.
func (s *Session) ownerName(spelled string) string {
	switch strings.ToLower(spelled) {
	case "current_user", "current_role":
		return s.currentUser()
	case "session_user":
		return s.identity().Session
	}
	return spelled
}

// alterOwner gives relation t to role name (ALTER … OWNER TO).
func (s *Session) alterOwner(t *catalog.Table, name, tag string) (string, error) {
	if catalog.IsSystem(t) {
		return "", pgerror.New(pgerror.InsufficientPrivilege, "permission denied: \"%s\" is a system view", t.Name)
	}
	id, _ := s.subject()
	r, err := s.newOwner(s.ownerName(name), s.cat.Owns(id, t), t.Noun()+" "+t.Name)
	if err != nil {
		return "", err
	}
	c := s.cat.Clone()
	changed := []uint32{t.ID}
	nt := t.Clone()
	nt.Owner = r.ID
	c.PutTable(nt)
	for _, seq := range c.OwnedSequences(t.ID) {
		ns := seq.Clone()
		ns.Owner = r.ID
		c.PutTable(ns)
		changed = append(changed, ns.ID)
	}
	if t.IsDataset() {
		s.datasets = append(s.datasets, t.ID)
	}
	return tag, s.persist(c, changed, nil)
}

// alterTableOwner runs ALTER TABLE / VIEW / SEQUENCE name OWNER TO role:
// as in PostgreSQL, ALTER TABLE takes any relation, ALTER VIEW only a view
// and ALTER SEQUENCE only a sequence.
func (s *Session) alterTableOwner(t *catalog.Table, at *pg_query.AlterTableStmt, rs *pg_query.RoleSpec) (string, error) {
	tag := "ALTER TABLE"
	switch at.Objtype {
	case pg_query.ObjectType_OBJECT_VIEW:
		tag = "ALTER VIEW"
		if t.Kind != catalog.KindView {
			return "", pgerror.New(pgerror.WrongObjectType, "\"%s\" is not a view", t.Name)
		}
	case pg_query.ObjectType_OBJECT_SEQUENCE:
		tag = "ALTER SEQUENCE"
		if t.Kind != catalog.KindSequence {
			return "", pgerror.New(pgerror.WrongObjectType, "\"%s\" is not a sequence", t.Name)
		}
	}
	name, err := s.roleSpecName(rs)
	if err != nil {
		return "", err
	}
	return s.alterOwner(t, name, tag)
}

// alterSchemaOwner runs ALTER SCHEMA name OWNER TO role.
func (s *Session) alterSchemaOwner(as *pg_query.AlterOwnerStmt) (string, error) {
	if as.ObjectType != pg_query.ObjectType_OBJECT_SCHEMA {
		return "", pgerror.New(pgerror.FeatureNotSupported, "ALTER %s … OWNER TO is not supported", strings.ToUpper(strings.TrimPrefix(as.ObjectType.String(), "OBJECT_")))
	}
	name := strVal(as.Object)
	sc, ok := s.cat.Schema(name)
	if !ok {
		return "", pgerror.New(pgerror.UndefinedSchema, "schema \"%s\" does not exist", name)
	}
	role, err := s.roleSpecName(as.Newowner)
	if err != nil {
		return "", err
	}
	id, _ := s.subject()
	r, err := s.newOwner(role, s.cat.SchemaOwns(id, sc), "schema "+sc.Name)
	if err != nil {
		return "", err
	}
	c := s.cat.Clone()
	nsc := sc.Clone()
	nsc.Owner = r.ID
	c.PutSchema(nsc)
	return "ALTER SCHEMA", s.persist(c, []uint32{nsc.ID}, nil)
}

// roleDependents lists, as PostgreSQL's DETAIL does, what keeps role id
// from being dropped: the objects it owns and those it holds privileges
// on.
func roleDependents(c *catalog.Catalog, id uint32) []string {
	var out []string
	for _, t := range c.Tables() {
		if t.Owner == id {
			out = append(out, "owner of "+t.Noun()+" "+c.QualifiedName(t))
		}
		for _, a := range t.ACL {
			if a.Grantee == id {
				out = append(out, "privileges for "+t.Noun()+" "+c.QualifiedName(t))
				break
			}
		}
	}
	for _, sc := range c.Schemas() {
		if sc.Owner == id {
			out = append(out, "owner of schema "+sc.Name)
		}
		for _, a := range sc.ACL {
			if a.Grantee == id {
				out = append(out, "privileges for schema "+sc.Name)
				break
			}
		}
	}
	return out
}
