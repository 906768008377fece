package session

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/acl"
	"github.com/mvserver/mvserver/sql/parse"
)

// GRANT and REVOKE of privileges on relations, sequences and schemas
// (R-P2), as PostgreSQL 15 runs them: the owner (or a superuser) grants;
// a role holding some privilege on the object but not its ownership gets
// PostgreSQL's WARNING "no privileges were granted" (mvserver has no
// grant options) and changes nothing; any other role gets 42501.

// privLetters maps GRANT's privilege names on relations to aclitem letters.
var privLetters = map[string]byte{
	"select": catalog.PrivSelect, "insert": catalog.PrivInsert, "update": catalog.PrivUpdate,
	"delete": catalog.PrivDelete, "truncate": catalog.PrivTruncate, "maintain": catalog.PrivMaintain,
	"refresh": catalog.PrivMaintain,
}

// seqPrivLetters are the privileges a sequence takes.
var seqPrivLetters = map[string]byte{"usage": catalog.PrivUsage, "select": catalog.PrivSelect, "update": catalog.PrivUpdate}

// schemaPrivLetters are the privileges a schema takes.
var schemaPrivLetters = map[string]byte{"usage": catalog.PrivUsage, "create": catalog.PrivCreate}

// warning queues a WARNING with its SQLSTATE.
func (s *Session) warning(code, format string, args ...any) {
	n := pgerror.Notice(format, args...)
	n.Severity, n.Code = pgerror.SeverityWarning, code
	s.notices = append(s.notices, n)
}

// grant runs GRANT/REVOKE privileges ON [TABLE | SEQUENCE] names | ALL
// TABLES / SEQUENCES IN SCHEMA s | SCHEMA names TO/FROM roles | PUBLIC.
func (s *Session) grant(gs *pg_query.GrantStmt) (string, error) {
	tag := "GRANT"
	if !gs.IsGrant {
		tag = "REVOKE"
	}
	if gs.GrantOption {
		return "", pgerror.New(pgerror.FeatureNotSupported, "WITH GRANT OPTION is not supported")
	}
	if gs.Targtype == pg_query.GrantTargetType_ACL_TARGET_DEFAULTS {
		return "", pgerror.New(pgerror.FeatureNotSupported, "ALTER DEFAULT PRIVILEGES is not supported")
	}
	var names []string // nil: ALL
	for _, p := range gs.Privileges {
		ap := p.GetAccessPriv()
		if len(ap.Cols) > 0 {
			return "", pgerror.New(pgerror.FeatureNotSupported, "column privileges are not supported")
		}
		names = append(names, strings.ToLower(ap.PrivName))
	}
	grantees, err := s.grantees(gs)
	if err != nil {
		return "", err
	}
	switch gs.Objtype {
	case pg_query.ObjectType_OBJECT_TABLE, pg_query.ObjectType_OBJECT_SEQUENCE:
		return s.grantRelations(gs, tag, names, grantees)
	case pg_query.ObjectType_OBJECT_SCHEMA:
		return s.grantSchemas(gs, tag, names, grantees)
	}
	return "", pgerror.New(pgerror.FeatureNotSupported, "%s on %s is not supported; privileges are on tables, views, materialized views, sequences and schemas",
		tag, strings.ToLower(strings.TrimPrefix(gs.Objtype.String(), "OBJECT_")))
}

// grantees resolves GRANT's role list (0 is PUBLIC).
func (s *Session) grantees(gs *pg_query.GrantStmt) ([]uint32, error) {
	var out []uint32
	for _, g := range gs.Grantees {
		rs := g.GetRoleSpec()
		if rs.Roletype == pg_query.RoleSpecType_ROLESPEC_PUBLIC {
			out = append(out, 0)
			continue
		}
		name, err := s.roleSpecName(rs)
		if err != nil {
			return nil, err
		}
		r, ok := s.cat.Role(name)
		if !ok {
			return nil, roleNotFound(name)
		}
		out = append(out, r.ID)
	}
	return out, nil
}

// grantRelations grants or revokes privileges on relations and sequences.
func (s *Session) grantRelations(gs *pg_query.GrantStmt, tag string, names []string, grantees []uint32) (string, error) {
	onSequences := gs.Objtype == pg_query.ObjectType_OBJECT_SEQUENCE
	// PostgreSQL checks the names against the object type first.
	for _, n := range names {
		_, isTable := privLetters[n]
		_, isSeq := seqPrivLetters[n]
		if onSequences && !isSeq {
			return "", pgerror.New(pgerror.InvalidGrantOperation, "invalid privilege type %s for sequence", strings.ToUpper(n))
		}
		if !onSequences && !isTable && !isSeq {
			return "", pgerror.New(pgerror.InvalidGrantOperation, "invalid privilege type %s for table", strings.ToUpper(n))
		}
	}
	var tables []*catalog.Table
	switch gs.Targtype {
	case pg_query.GrantTargetType_ACL_TARGET_OBJECT:
		for _, o := range gs.Objects {
			rv := o.GetRangeVar()
			t, err := s.cat.Resolve(parse.RangeVarParts(rv), s.resolvePath())
			if err != nil {
				return "", err
			}
			if onSequences && t.Kind != catalog.KindSequence {
				return "", pgerror.New(pgerror.WrongObjectType, "\"%s\" is not a sequence", t.Name)
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
				if t.SchemaID == sc.ID && (t.Kind == catalog.KindSequence) == onSequences {
					tables = append(tables, t)
				}
			}
		}
	}
	c := s.cat.Clone()
	id, _ := s.subject()
	var changed []uint32
	for _, t := range tables {
		if catalog.IsSystem(t) {
			return "", pgerror.New(pgerror.InsufficientPrivilege, "permission denied: \"%s\" is a system view", t.Name)
		}
		privs, err := s.relationPrivs(t, names)
		if err != nil {
			return "", err
		}
		if !s.cat.Owns(id, t) {
			if err := s.notGrantor(t.Name, t.ACL, id, gs.IsGrant); err != nil {
				return "", catalog.PermissionDenied(t)
			}
			continue
		}
		if privs == "" {
			continue
		}
		nt := t.Clone()
		nt.ACL = nt.ACL.Apply(grantees, privs, gs.IsGrant)
		c.PutTable(nt)
		changed = append(changed, nt.ID)
	}
	if len(changed) == 0 {
		return tag, nil
	}
	return tag, s.persist(c, changed, nil)
}

// relationPrivs are the letters names (nil: ALL) grant on t. As in
// PostgreSQL, GRANT … ON TABLE of a sequence keeps the privileges a
// sequence takes, with a WARNING for the others, and USAGE on a relation
// that is no sequence is an error.
func (s *Session) relationPrivs(t *catalog.Table, names []string) (string, error) {
	if names == nil {
		return t.AllPrivs(), nil
	}
	var b strings.Builder
	warned := false
	for _, n := range names {
		if t.Kind == catalog.KindSequence {
			l, ok := seqPrivLetters[n]
			if !ok {
				if !warned {
					s.warning(pgerror.InvalidGrantOperation, "sequence \"%s\" only supports USAGE, SELECT, and UPDATE privileges", t.Name)
					warned = true
				}
				continue
			}
			b.WriteByte(l)
			continue
		}
		l, ok := privLetters[n]
		if !ok {
			return "", pgerror.New(pgerror.InvalidGrantOperation, "invalid privilege type %s for table", strings.ToUpper(n))
		}
		b.WriteByte(l)
	}
	return b.String(), nil
}

// notGrantor handles a GRANT or REVOKE by a role that does not own the
// object: with some privilege on it, PostgreSQL's WARNING and nothing
// changes (nil); with none, an error (the caller words it).
func (s *Session) notGrantor(name string, acl catalog.ACL, id uint32, isGrant bool) error {
	if id == catalog.NoRole || !acl.GrantsAny(id) {
		return pgerror.New(pgerror.InsufficientPrivilege, "permission denied")
	}
	if isGrant {
		s.warning(pgerror.PrivilegeNotGranted, "no privileges were granted for \"%s\"", name)
	} else {
		s.warning(pgerror.PrivilegeNotRevoked, "no privileges could be revoked for \"%s\"", name)
	}
	return nil
}

// grantSchemas grants or revokes USAGE and CREATE on schemas. USAGE is
// recorded but not checked (every role may look names up in every
// schema; the privileges on the objects decide what it reaches), so
// REVOKE of USAGE, which would promise what mvserver does not do, is
// refused.
func (s *Session) grantSchemas(gs *pg_query.GrantStmt, tag string, names []string, grantees []uint32) (string, error) {
	privs := catalog.AllSchemaPrivs
	if names != nil {
		var b strings.Builder
		for _, n := range names {
			l, ok := schemaPrivLetters[n]
			if !ok {
				return "", pgerror.New(pgerror.InvalidGrantOperation, "invalid privilege type %s for schema", strings.ToUpper(n))
			}
			b.WriteByte(l)
		}
		privs = b.String()
	}
	if !gs.IsGrant && strings.IndexByte(privs, catalog.PrivUsage) >= 0 {
		return "", pgerror.New(pgerror.FeatureNotSupported, "REVOKE USAGE ON SCHEMA is not supported: mvserver does not check USAGE on schemas").
			WithDetail("Every role may look up names in every schema; the privileges on each table, view and sequence decide what it can read or change.").
			WithHint("Use REVOKE CREATE ON SCHEMA to stop a role creating objects there, and REVOKE … ON ALL TABLES IN SCHEMA to take its access to them.")
	}
	c := s.cat.Clone()
	id, _ := s.subject()
	var changed []uint32
	for _, o := range gs.Objects {
		name := o.GetString_().GetSval()
		sc, ok := c.Schema(name)
		if !ok {
			return "", pgerror.New(pgerror.UndefinedSchema, "schema \"%s\" does not exist", name)
		}
		if !s.cat.SchemaOwns(id, sc) {
			if err := s.notGrantor(sc.Name, sc.ACL, id, gs.IsGrant); err != nil {
				return "", pgerror.New(pgerror.InsufficientPrivilege, "permission denied for schema %s", sc.Name)
			}
			continue
		}
		nsc := sc.Clone()
		nsc.ACL = nsc.ACL.Apply(grantees, privs, gs.IsGrant)
		c.PutSchema(nsc)
		changed = append(changed, nsc.ID)
	}
	if len(changed) == 0 {
		return tag, nil
	}
	return tag, s.persist(c, changed, nil)
}

// grantRole runs GRANT role, … TO member, … [WITH ADMIN OPTION] [GRANTED
// BY CURRENT_USER] and REVOKE [ADMIN OPTION FOR] role, … FROM member, …
// (sql/acl has the rules).
func (s *Session) grantRole(gs *pg_query.GrantRoleStmt) (string, error) {
	tag := "GRANT ROLE"
	if !gs.IsGrant {
		tag = "REVOKE ROLE"
	}
	g := acl.RoleGrant{Grant: gs.IsGrant}
	for _, o := range gs.Opt {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		if d.Defname != "admin" {
			return "", pgerror.New(pgerror.FeatureNotSupported, "%s option %s is not supported", tag, strings.ToUpper(d.Defname)).WithPosition(d.Location + 1)
		}
		// WITH ADMIN OPTION, or REVOKE ADMIN OPTION FOR (false there).
		g.Admin = d.Arg.GetBoolean().GetBoolval() || !gs.IsGrant
	}
	if gs.Grantor != nil {
		name, err := s.roleSpecName(gs.Grantor)
		if err != nil {
			return "", err
		}
		if name != s.currentUser() {
			return "", pgerror.New(pgerror.FeatureNotSupported, "GRANTED BY another role is not supported")
		}
	}
	for _, n := range gs.GrantedRoles {
		g.Roles = append(g.Roles, n.GetAccessPriv().GetPrivName())
	}
	for _, n := range gs.GranteeRoles {
		name, err := s.roleSpecName(n.GetRoleSpec())
		if err != nil {
			return "", err
		}
		g.Members = append(g.Members, name)
	}
	id, _ := s.subject()
	c := s.cat.Clone()
	changed, notes, err := acl.ApplyRoleGrant(c, id, g)
	if err != nil {
		return "", err
	}
	s.notices = append(s.notices, notes...)
	if len(changed) == 0 {
		return tag, nil
	}
	return tag, s.persist(c, changed, nil)
}
