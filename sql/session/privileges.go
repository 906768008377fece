package session

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/plan"
)

// Privileges (R-P2), PostgreSQL 15's rules; catalog/privileges.go holds
// the model (owners, grants, who counts as a superuser) and this file asks
// it about the session's role. A superuser may do anything. Any other role
// may read and write a relation it owns or was granted the privilege on;
// REFRESH needs MAINTAIN (GRANT REFRESH is its Databricks spelling);
// altering, dropping, commenting on and granting an object need its
// ownership; creating a schema needs CREATEDB (mvserver's stand-in for
// CREATE on the one database); creating in a schema needs CREATE on it. A
// view reads its sources with its owner's rights, checked at every read.

// subject is the role the session's privileges are checked for, and
// whether it is a superuser (catalog.UserRole).
func (s *Session) subject() (uint32, bool) {
	return s.cat.UserRole(s.currentUser(), s.eng.RequireRoles)
}

// require fails with 42501 unless the session may use priv on t.
func (s *Session) require(t *catalog.Table, priv byte) error {
	id, super := s.subject()
	if super {
		return nil
	}
	return s.cat.CheckPrivilege(id, t, priv)
}

// requireAny fails with 42501 unless the session holds one of privs on t
// (nextval: USAGE or UPDATE).
func (s *Session) requireAny(t *catalog.Table, privs ...byte) error {
	id, super := s.subject()
	if super {
		return nil
	}
	for _, p := range privs {
		if s.cat.Holds(id, t, p) {
			return nil
		}
	}
	return catalog.PermissionDenied(t)
}

// requireOwner fails with 42501 unless the session owns t (or is a
// superuser): ALTER, DROP, COMMENT, VACUUM, CREATE OR REPLACE.
func (s *Session) requireOwner(t *catalog.Table) error {
	id, _ := s.subject()
	if s.cat.Owns(id, t) {
		return nil
	}
	return catalog.NotOwner(t)
}

// requireSchemaOwner fails with 42501 unless the session owns sc: DROP
// SCHEMA (whose CASCADE then drops every object in it, whoever owns it,
// as in PostgreSQL) and GRANT … ON SCHEMA.
func (s *Session) requireSchemaOwner(sc *catalog.Schema) error {
	id, _ := s.subject()
	if s.cat.SchemaOwns(id, sc) {
		return nil
	}
	return pgerror.New(pgerror.InsufficientPrivilege, "must be owner of schema %s", sc.Name)
}

// requireCreate fails with 42501 unless the session may create objects
// in sc: CREATE on it (its owner has it). A session's temporary schema
// takes anyone's temporary objects (PUBLIC's TEMP privilege).
func (s *Session) requireCreate(sc *catalog.Schema) error {
	if catalog.IsTempSchema(sc.Name) {
		return nil
	}
	id, _ := s.subject()
	if s.cat.SchemaHolds(id, sc, catalog.PrivCreate) {
		return nil
	}
	return pgerror.New(pgerror.InsufficientPrivilege, "permission denied for schema %s", sc.Name)
}

// requireCreateSchema fails with 42501 unless the session may create
// schemas: a superuser or a CREATEDB role, mvserver's stand-in for
// PostgreSQL's CREATE privilege on the database (it has one database and
// no GRANT … ON DATABASE).
func (s *Session) requireCreateSchema() error {
	id, super := s.subject()
	if super {
		return nil
	}
	if r, ok := s.cat.RoleByID(id); ok && r.CreateDB {
		return nil
	}
	return pgerror.New(pgerror.InsufficientPrivilege, "permission denied for database %s", s.eng.Database).
		WithHint("Creating schemas needs a superuser or a role with CREATEDB.")
}

// ownerID is the owner a new object gets: the session's role (0 for a
// user that is no role: the bootstrap superuser's).
func (s *Session) ownerID() uint32 {
	if r, ok := s.cat.Role(s.currentUser()); ok {
		return r.ID
	}
	return 0
}

// checkRead is the binder's CheckRead: a relation a statement names is
// read with the session's rights, one a view's query names with that
// view's owner's (PostgreSQL checks them at every read, so a REVOKE
// reaches a view at once). A superuser bypasses the first, not the second.
func (s *Session) checkRead(t, view *catalog.Table) error {
	if view != nil {
		return s.cat.CheckViewSource(view, t)
	}
	return s.require(t, catalog.PrivSelect)
}

// checkSystem is the binder's CheckSystem: pg_authid and pg_shadow are for
// superusers (the session's, or a view's owner's when a view reads them).
func (s *Session) checkSystem(r *plan.SystemRelation, view *catalog.Table) error {
	if view != nil {
		return r.CheckRead(catalog.IsSystem(view) || s.cat.IsSuperuserID(view.Owner))
	}
	_, super := s.subject()
	return r.CheckRead(super)
}
