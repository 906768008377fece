package session

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
)

// Privileges (R-P2). A superuser may do anything. Any other role may read
// and write a relation it owns (created) or was granted the privilege on
// (GRANT … ON TABLE, also for views and materialized views); REFRESH needs
// MAINTAIN (GRANT REFRESH is its Databricks spelling); altering, dropping
// and granting need ownership; creating objects needs SUPERUSER or
// CREATEDB, as mvserver has no schema privileges yet. A view reads its
// sources with its owner's rights, as in PostgreSQL.

// checkedRole is the session's role when privileges apply to it: nil for
// a superuser (or a user that is no role while authentication is off).
func (s *Session) checkedRole() *catalog.Role {
	r, super := s.eng.sessionRole(s.cat, s.info.User)
	if super {
		return nil
	}
	if r == nil {
		// authentication on and the user is no role: Connect refused it
		// already; deny everything to be safe
		return &catalog.Role{ID: ^uint32(0), Name: s.info.User}
	}
	return r
}

// objectKind is how PostgreSQL's messages name a relation's kind.
func objectKind(t *catalog.Table) string {
	switch t.Kind {
	case catalog.KindView:
		return "view"
	case catalog.KindMaterializedView:
		return "materialized view"
	case catalog.KindSequence:
		return "sequence"
	}
	return "table"
}

// require fails with 42501 unless the session may use priv on t.
func (s *Session) require(t *catalog.Table, priv byte) error {
	r := s.checkedRole()
	if r == nil || catalog.IsSystem(t) || t.Granted(r.ID, priv) {
		return nil
	}
	return pgerror.New(pgerror.InsufficientPrivilege, "permission denied for %s %s", objectKind(t), t.Name)
}

// requireOwner fails with 42501 unless the session owns t (or is a
// superuser): ALTER, DROP, COMMENT, GRANT, VACUUM.
func (s *Session) requireOwner(t *catalog.Table) error {
	r := s.checkedRole()
	if r == nil || t.Owner != 0 && t.Owner == r.ID {
		return nil
	}
	return pgerror.New(pgerror.InsufficientPrivilege, "must be owner of %s %s", objectKind(t), t.Name)
}

// requireCreate fails with 42501 unless the session may create objects.
func (s *Session) requireCreate(schema string) error {
	r := s.checkedRole()
	if r == nil || r.CreateDB {
		return nil
	}
	return pgerror.New(pgerror.InsufficientPrivilege, "permission denied for schema %s", schema).
		WithHint("Creating objects needs a superuser or a role with CREATEDB.")
}

// ownerID is the owner a new object gets: the session's role (0 for a
// user that is no role).
func (s *Session) ownerID() uint32 {
	if r, ok := s.cat.Role(s.info.User); ok {
		return r.ID
	}
	return 0
}

// privLetters maps GRANT's privilege names to aclitem letters.
var privLetters = map[string]byte{
	"select": catalog.PrivSelect, "insert": catalog.PrivInsert, "update": catalog.PrivUpdate,
	"delete": catalog.PrivDelete, "truncate": catalog.PrivTruncate, "maintain": catalog.PrivMaintain,
	"refresh": catalog.PrivMaintain,
}

// grant runs GRANT/REVOKE privileges ON [TABLE] names | ALL TABLES IN
// SCHEMA s TO/FROM roles | PUBLIC.
func (s *Session) grant(gs *pg_query.GrantStmt) (string, error) {
	tag := "GRANT"
	if !gs.IsGrant {
		tag = "REVOKE"
	}
	if gs.Objtype != pg_query.ObjectType_OBJECT_TABLE {
		return "", pgerror.New(pgerror.FeatureNotSupported, "%s on %s is not supported; privileges are on tables, views and materialized views",
			tag, strings.ToLower(strings.TrimPrefix(gs.Objtype.String(), "OBJECT_")))
	}
	if gs.GrantOption {
		return "", pgerror.New(pgerror.FeatureNotSupported, "WITH GRANT OPTION is not supported")
	}
	privs := catalog.AllTablePrivs
	if len(gs.Privileges) > 0 {
		var b strings.Builder
		for _, p := range gs.Privileges {
			ap := p.GetAccessPriv()
			if len(ap.Cols) > 0 {
				return "", pgerror.New(pgerror.FeatureNotSupported, "column privileges are not supported")
			}
			l, ok := privLetters[strings.ToLower(ap.PrivName)]
			if !ok {
				return "", pgerror.New(pgerror.InvalidGrantOperation, "invalid privilege type %s for relation", strings.ToUpper(ap.PrivName))
			}
			b.WriteByte(l)
		}
		privs = b.String()
	}
	var grantees []uint32
	for _, g := range gs.Grantees {
		rs := g.GetRoleSpec()
		switch rs.Roletype {
		case pg_query.RoleSpecType_ROLESPEC_PUBLIC:
			grantees = append(grantees, 0)
		case pg_query.RoleSpecType_ROLESPEC_CSTRING:
			r, ok := s.cat.Role(rs.Rolename)
			if !ok {
				return "", pgerror.New(pgerror.UndefinedObject, "role \"%s\" does not exist", rs.Rolename)
			}
			grantees = append(grantees, r.ID)
		default:
			r, ok := s.cat.Role(s.info.User)
			if !ok {
				return "", pgerror.New(pgerror.UndefinedObject, "role \"%s\" does not exist", s.info.User)
			}
			grantees = append(grantees, r.ID)
		}
	}
	var tables []*catalog.Table
	switch gs.Targtype {
	case pg_query.GrantTargetType_ACL_TARGET_OBJECT:
		for _, o := range gs.Objects {
			rv := o.GetRangeVar()
			t, err := s.cat.Resolve(rangeVarParts(rv), s.resolvePath())
			if err != nil {
				return "", err
			}
			tables = append(tables, t)
		}
	case pg_query.GrantTargetType_ACL_TARGET_ALL_IN_SCHEMA:
		for _, o := range gs.Objects {
			name := o.GetString_().GetSval()
			sc, ok := s.cat.Schema(name)
			if !ok {
				return "", pgerror.New(pgerror.UndefinedSchema, "schema \"%s\" does not exist", name)
			}
			for _, t := range s.cat.Tables() {
				if t.SchemaID == sc.ID && t.Kind != catalog.KindSequence {
					tables = append(tables, t)
				}
			}
		}
	default:
		return "", pgerror.New(pgerror.FeatureNotSupported, "ALTER DEFAULT PRIVILEGES is not supported")
	}
	c := s.cat.Clone()
	var changed []uint32
	for _, t := range tables {
		if catalog.IsSystem(t) {
			return "", pgerror.New(pgerror.InsufficientPrivilege, "permission denied: \"%s\" is a system view", t.Name)
		}
		if err := s.requireOwner(t); err != nil {
			return "", err
		}
		nt := t.Clone()
		for _, g := range grantees {
			if gs.IsGrant {
				nt.Grant(g, privs)
			} else {
				nt.Revoke(g, privs)
			}
		}
		c.PutTable(nt)
		changed = append(changed, nt.ID)
	}
	if len(changed) == 0 {
		return tag, nil
	}
	return tag, s.persist(c, changed, nil)
}
