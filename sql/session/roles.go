package session

import (
	"context"
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/server"
	"github.com/mvserver/mvserver/sql/acl"
	"github.com/mvserver/mvserver/sql/types"
)

// Roles: CREATE ROLE / USER, ALTER ROLE / USER (attributes, PASSWORD,
// RENAME TO) and DROP ROLE / USER, with PostgreSQL 15's privilege rules: a
// superuser may do anything; a CREATEROLE role may create, alter, rename
// and drop roles that are not superusers; any role may change its own
// password. Passwords are stored only as SCRAM-SHA-256 verifiers, never in
// clear nor as MD5 hashes; one given already as a SCRAM verifier is stored
// as it is.
//
// Without authentication (Engine.RequireRoles unset) a user name that is
// no role acts as a superuser, as every client did before roles existed;
// with it, such a name has no privileges.

func init() {
	addSetting(&setting{name: "password_encryption", def: "scram-sha-256", check: checkPasswordEncryption,
		desc: "Chooses the algorithm for encrypting passwords."})
}

func checkPasswordEncryption(v string) (string, error) {
	if strings.EqualFold(v, "scram-sha-256") {
		return "scram-sha-256", nil
	}
	e := pgerror.New(pgerror.InvalidParameterValue, "invalid value for parameter \"password_encryption\": \"%s\"", v).
		WithHint("Available values: scram-sha-256.")
	if strings.EqualFold(v, "md5") {
		e.Detail = "mvserver stores passwords only as SCRAM-SHA-256 verifiers; the md5 authentication method still works with them (the exchange is SCRAM, as in PostgreSQL)."
	}
	return "", e
}

// SessionRole is the role a session's user names in the catalog c, and
// whether it is a superuser. Without Engine.RequireRoles a name that is no
// role is a superuser (nil role).
func (e *Engine) sessionRole(c *catalog.Catalog, user string) (*catalog.Role, bool) {
	if r, ok := c.Role(user); ok {
		return r, r.Superuser
	}
	return nil, !e.RequireRoles
}

// IsSuperuser reports whether user logs in as a superuser (the server keeps
// its reserved connection slots for them).
func (e *Engine) IsSuperuser(user string) bool {
	super, err := e.loginIsSuperuser(user)
	return err == nil && super
}

// loginIsSuperuser tells Connect what is_superuser reports.
func (e *Engine) loginIsSuperuser(user string) (bool, error) {
	txn := e.DB.Begin()
	defer txn.Rollback()
	c, err := e.Catalog.Snapshot(txn)
	if err != nil {
		return false, err
	}
	_, super := e.sessionRole(c, user)
	return super, nil
}

// privileges of the session's user now: superuser, and CREATEROLE (which
// a superuser has too).
func (s *Session) privileges() (super, createRole bool) {
	r, super := s.eng.sessionRole(s.cat, s.currentUser())
	return super, super || r != nil && r.CreateRole
}

// roleOptions are the options of CREATE/ALTER ROLE; nil fields were not
// given.
type roleOptions struct {
	superuser, inherit, createRole, createDB, login *bool
	connLimit                                       *int32
	passwordGiven                                   bool
	password                                        *string // nil: PASSWORD NULL
	validUntil                                      *string
	// members: CREATE ROLE's IN ROLE, ROLE and ADMIN.
	members acl.CreateRoleMembers
}

// roleSpecList reads the role names of IN ROLE, ROLE and ADMIN.
func roleSpecList(arg *pg_query.Node) ([]string, error) {
	var names []string
	for _, n := range arg.GetList().GetItems() {
		rs := n.GetRoleSpec()
		if rs == nil || rs.Roletype != pg_query.RoleSpecType_ROLESPEC_CSTRING {
			return nil, pgerror.New(pgerror.FeatureNotSupported, "only role names are supported in IN ROLE, ROLE and ADMIN")
		}
		names = append(names, rs.Rolename)
	}
	return names, nil
}

func parseRoleOptions(opts []*pg_query.Node) (*roleOptions, error) {
	o := &roleOptions{}
	seen := map[string]bool{}
	for _, n := range opts {
		d := n.GetDefElem()
		if d == nil {
			continue
		}
		if seen[d.Defname] {
			return nil, pgerror.New(pgerror.SyntaxError, "conflicting or redundant options").WithPosition(d.Location + 1)
		}
		seen[d.Defname] = true
		flag := func() *bool {
			b := d.Arg.GetBoolean().GetBoolval()
			return &b
		}
		switch d.Defname {
		case "superuser":
			o.superuser = flag()
		case "inherit":
			o.inherit = flag()
		case "createrole":
			o.createRole = flag()
		case "createdb":
			o.createDB = flag()
		case "canlogin":
			o.login = flag()
		case "isreplication", "bypassrls":
			if *flag() {
				word := map[string]string{"isreplication": "REPLICATION", "bypassrls": "BYPASSRLS"}[d.Defname]
				return nil, pgerror.New(pgerror.FeatureNotSupported, "%s is not supported", word).WithPosition(d.Location + 1)
			}
		case "connectionlimit":
			v := d.Arg.GetInteger().GetIval()
			if v < -1 {
				return nil, pgerror.New(pgerror.InvalidParameterValue, "invalid connection limit: %d", v)
			}
			o.connLimit = &v
		case "password":
			o.passwordGiven = true
			if sv := d.Arg.GetString_(); sv != nil {
				p := sv.Sval
				o.password = &p
			}
		case "validUntil":
			v := d.Arg.GetString_().GetSval()
			o.validUntil = &v
		case "sysid":
			// PostgreSQL ignores it with a NOTICE, so do we (below).
		case "addroleto", "rolemembers", "adminmembers":
			names, err := roleSpecList(d.Arg)
			if err != nil {
				return nil, err
			}
			switch d.Defname {
			case "addroleto":
				o.members.InRoles = names
			case "rolemembers":
				o.members.Members = names
			default:
				o.members.Admins = names
			}
		default:
			return nil, pgerror.New(pgerror.SyntaxError, "option \"%s\" not recognized", d.Defname).WithPosition(d.Location + 1)
		}
	}
	return o, nil
}

// apply sets the given options on r (a clone).
func (s *Session) applyRoleOptions(r *catalog.Role, o *roleOptions) error {
	set := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	set(&r.Superuser, o.superuser)
	set(&r.Inherit, o.inherit)
	set(&r.CreateRole, o.createRole)
	set(&r.CreateDB, o.createDB)
	set(&r.Login, o.login)
	if o.connLimit != nil {
		r.ConnLimit = *o.connLimit
	}
	if o.passwordGiven {
		r.Password = ""
		if o.password != nil {
			pw, err := s.encryptPassword(*o.password)
			if err != nil {
				return err
			}
			r.Password = pw
		}
	}
	if o.validUntil != nil {
		switch strings.ToLower(strings.TrimSpace(*o.validUntil)) {
		case "infinity":
			r.ValidUntil = nil
		case "-infinity":
			t := time.Unix(0, 0).UTC()
			r.ValidUntil = &t
		default:
			d, err := types.ParseText(*o.validUntil, types.TimestampTZ, s.env)
			if err != nil {
				return err
			}
			t := time.UnixMicro(d.I).UTC()
			r.ValidUntil = &t
		}
	}
	return nil
}

// encryptPassword turns a password into what is stored: a SCRAM-SHA-256
// verifier, as given when it is one. An MD5 hash is refused: it is
// password-equivalent (whoever reads it can log in with it), so only SCRAM
// verifiers are ever stored. An empty password clears it, as in PostgreSQL.
func (s *Session) encryptPassword(password string) (string, error) {
	switch {
	case password == "":
		s.notice("empty string is not a valid password, clearing password")
		return "", nil
	case server.IsSCRAMVerifier(password):
		return password, nil
	case server.IsMD5Verifier(password):
		return "", pgerror.New(pgerror.FeatureNotSupported, "MD5-hashed passwords are not accepted").
			WithDetail("mvserver stores passwords only as SCRAM-SHA-256 verifiers: an MD5 hash is as good as the password to whoever reads it.").
			WithHint("Give the password itself, or a SCRAM-SHA-256 verifier (psql's \\password sends one).")
	}
	return server.NewSCRAMVerifier(password), nil
}

func checkRoleName(name string) error {
	if strings.HasPrefix(name, "pg_") {
		return pgerror.New(pgerror.ReservedName, "role name \"%s\" is reserved", name).
			WithDetail("Role names starting with \"pg_\" are reserved.")
	}
	return nil
}

// reservedRole fails with 42939 for a predefined role, which ALTER ROLE
// and RENAME may not change.
func reservedRole(r *catalog.Role, detail string) error {
	if catalog.IsPredefinedRole(r.ID) {
		return pgerror.New(pgerror.ReservedName, "role name \"%s\" is reserved", r.Name).WithDetail("%s", detail)
	}
	return nil
}

func roleNotFound(name string) error {
	return pgerror.New(pgerror.UndefinedObject, "role \"%s\" does not exist", name)
}

// roleSpecName resolves a RoleSpec (a name, CURRENT_USER, SESSION_USER,
// CURRENT_ROLE) to a role name.
func (s *Session) roleSpecName(rs *pg_query.RoleSpec) (string, error) {
	switch rs.GetRoletype() {
	case pg_query.RoleSpecType_ROLESPEC_CSTRING:
		return rs.Rolename, nil
	case pg_query.RoleSpecType_ROLESPEC_CURRENT_USER, pg_query.RoleSpecType_ROLESPEC_CURRENT_ROLE:
		return s.currentUser(), nil
	case pg_query.RoleSpecType_ROLESPEC_SESSION_USER:
		return s.identity().Session, nil
	}
	return "", pgerror.New(pgerror.UndefinedObject, "role \"public\" does not exist")
}

// createRole runs CREATE ROLE / USER / GROUP.
func (s *Session) createRole(cs *pg_query.CreateRoleStmt) (string, error) {
	o, err := parseRoleOptions(cs.Options)
	if err != nil {
		return "", err
	}
	super, createRole := s.privileges()
	switch {
	case o.superuser != nil && *o.superuser && !super:
		return "", pgerror.New(pgerror.InsufficientPrivilege, "must be superuser to create superusers")
	case !createRole:
		return "", pgerror.New(pgerror.InsufficientPrivilege, "permission denied to create role")
	}
	if err := checkRoleName(cs.Role); err != nil {
		return "", err
	}
	if _, exists := s.cat.Role(cs.Role); exists {
		return "", pgerror.New(pgerror.DuplicateObject, "role \"%s\" already exists", cs.Role)
	}
	for _, n := range cs.Options {
		if d := n.GetDefElem(); d != nil && d.Defname == "sysid" {
			s.notice("SYSID can no longer be specified")
		}
	}
	c := s.cat.Clone()
	r := &catalog.Role{ID: c.AllocID(), Name: cs.Role, Inherit: true, ConnLimit: -1,
		Login: cs.StmtType == pg_query.RoleStmtType_ROLESTMT_USER}
	if err := s.applyRoleOptions(r, o); err != nil {
		return "", err
	}
	c.PutRole(r)
	changed := []uint32{r.ID}
	if !o.members.Empty() {
		actor, _ := s.subject()
		more, notes, err := acl.ApplyCreateRoleMembers(c, actor, r.Name, o.members)
		if err != nil {
			return "", err
		}
		s.notices = append(s.notices, notes...)
		for _, id := range more {
			if id != r.ID {
				changed = append(changed, id)
			}
		}
	}
	if err := s.persist(c, changed, nil); err != nil {
		return "", err
	}
	return "CREATE ROLE", nil
}

// alterRole runs ALTER ROLE / USER name [WITH] options.
func (s *Session) alterRole(as *pg_query.AlterRoleStmt) (string, error) {
	name, err := s.roleSpecName(as.Role)
	if err != nil {
		return "", err
	}
	o, err := parseRoleOptions(as.Options)
	if err != nil {
		return "", err
	}
	r, ok := s.cat.Role(name)
	if !ok {
		return "", roleNotFound(name)
	}
	if err := reservedRole(r, "Cannot alter reserved roles."); err != nil {
		return "", err
	}
	super, createRole := s.privileges()
	switch {
	case r.Superuser || o.superuser != nil:
		if !super {
			return "", pgerror.New(pgerror.InsufficientPrivilege, "must be superuser to alter superuser roles or change superuser attribute")
		}
	case !createRole:
		// Anyone may change their own password, and nothing else.
		onlyPassword := o.passwordGiven && o.inherit == nil && o.createRole == nil && o.createDB == nil &&
			o.login == nil && o.connLimit == nil && o.validUntil == nil
		if !onlyPassword || name != s.currentUser() {
			return "", pgerror.New(pgerror.InsufficientPrivilege, "permission denied")
		}
	}
	nr := r.Clone()
	if err := s.applyRoleOptions(nr, o); err != nil {
		return "", err
	}
	c := s.cat.Clone()
	c.PutRole(nr)
	if err := s.persist(c, []uint32{nr.ID}, nil); err != nil {
		return "", err
	}
	return "ALTER ROLE", nil
}

// dropRoles runs DROP ROLE / USER [IF EXISTS] a, b, ….
func (s *Session) dropRoles(ds *pg_query.DropRoleStmt) (string, error) {
	super, createRole := s.privileges()
	if !createRole {
		return "", pgerror.New(pgerror.InsufficientPrivilege, "permission denied to drop role")
	}
	c := s.cat.Clone()
	var dropped, members []uint32
	for _, n := range ds.Roles {
		name, err := s.roleSpecName(n.GetRoleSpec())
		if err != nil {
			return "", err
		}
		r, ok := c.Role(name)
		if !ok {
			if ds.MissingOk {
				s.notice("role \"%s\" does not exist, skipping", name)
				continue
			}
			return "", roleNotFound(name)
		}
		if name == s.currentUser() {
			return "", pgerror.New(pgerror.ObjectInUse, "current user cannot be dropped")
		}
		if name == s.identity().Session {
			return "", pgerror.New(pgerror.ObjectInUse, "session user cannot be dropped")
		}
		if catalog.IsPredefinedRole(r.ID) {
			return "", pgerror.New(pgerror.DependentObjectsStillExist, "cannot drop role %s because it is required by the database system", name)
		}
		if r.Superuser && !super {
			return "", pgerror.New(pgerror.InsufficientPrivilege, "must be superuser to drop superusers")
		}
		// A dropped owner would leave its objects owned by no one (and its
		// views unreadable): PostgreSQL refuses, so does mvserver.
		if deps := roleDependents(c, r.ID); len(deps) > 0 {
			return "", pgerror.New(pgerror.DependentObjectsStillExist, "role \"%s\" cannot be dropped because some objects depend on it", name).
				WithDetail("%s", strings.Join(deps, "\n"))
		}
		c.DropRole(r.ID)
		dropped = append(dropped, r.ID)
		members = append(members, acl.DropMemberships(c, r.ID)...)
	}
	if len(dropped) > 0 {
		if err := s.persist(c, members, dropped); err != nil {
			return "", err
		}
	}
	return "DROP ROLE", nil
}

// renameRole runs ALTER ROLE / USER old RENAME TO new. An MD5 password is
// salted with the name, so the rename clears it.
func (s *Session) renameRole(rs *pg_query.RenameStmt) (string, error) {
	r, ok := s.cat.Role(rs.Subname)
	if !ok {
		return "", roleNotFound(rs.Subname)
	}
	if err := reservedRole(r, "Role names starting with \"pg_\" are reserved."); err != nil {
		return "", err
	}
	if rs.Subname == s.identity().Session {
		return "", pgerror.New(pgerror.FeatureNotSupported, "session user cannot be renamed")
	}
	if rs.Subname == s.currentUser() {
		return "", pgerror.New(pgerror.FeatureNotSupported, "current user cannot be renamed")
	}
	if _, exists := s.cat.Role(rs.Newname); exists {
		return "", pgerror.New(pgerror.DuplicateObject, "role \"%s\" already exists", rs.Newname)
	}
	if err := checkRoleName(rs.Newname); err != nil {
		return "", err
	}
	super, createRole := s.privileges()
	switch {
	case r.Superuser && !super:
		return "", pgerror.New(pgerror.InsufficientPrivilege, "must be superuser to rename superusers")
	case !createRole:
		return "", pgerror.New(pgerror.InsufficientPrivilege, "permission denied to rename role")
	}
	nr := r.Clone()
	nr.Name = rs.Newname
	if server.IsMD5Verifier(nr.Password) {
		nr.Password = ""
		s.notice("MD5 password cleared because of role rename")
	}
	c := s.cat.Clone()
	c.PutRole(nr)
	if err := s.persist(c, []uint32{nr.ID}, nil); err != nil {
		return "", err
	}
	return "ALTER ROLE", nil
}

// roleAction is the prepared action of a role statement, nil for other
// statements.
func (s *Session) roleAction(n *pg_query.Node) func(context.Context, []types.Datum) (string, error) {
	switch x := n.Node.(type) {
	case *pg_query.Node_CreateRoleStmt:
		return func(context.Context, []types.Datum) (string, error) { return s.createRole(x.CreateRoleStmt) }
	case *pg_query.Node_AlterRoleStmt:
		return func(context.Context, []types.Datum) (string, error) { return s.alterRole(x.AlterRoleStmt) }
	case *pg_query.Node_DropRoleStmt:
		return func(context.Context, []types.Datum) (string, error) { return s.dropRoles(x.DropRoleStmt) }
	case *pg_query.Node_RenameStmt:
		if x.RenameStmt.RenameType == pg_query.ObjectType_OBJECT_ROLE {
			return func(context.Context, []types.Datum) (string, error) { return s.renameRole(x.RenameStmt) }
		}
	}
	return nil
}
