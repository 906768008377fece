package catalog

import (
	"strings"
	"testing"

	"github.com/mvserver/mvserver/pgerror"
)

// privCatalog is a catalog with a superuser (boot), two roles and a table
// of alice's with a grant of SELECT to bob.
func privCatalog() (*Catalog, *Table) {
	c := newCatalog("d")
	c.PutRole(&Role{ID: 10, Name: "boot", Superuser: true})
	c.PutRole(&Role{ID: 11, Name: "alice"})
	c.PutRole(&Role{ID: 12, Name: "bob"})
	c.PutRole(&Role{ID: 13, Name: "carol"})
	s := &Schema{ID: 20, Name: "s", Owner: 11}
	c.PutSchema(s)
	t := &Table{ID: FirstObjectID, SchemaID: 20, Name: "t", Kind: KindTable, Owner: 11}
	t.Grant(12, string(rune(PrivSelect)))
	c.PutTable(t)
	return c, t
}

// Rule 1 and 4 of privileges.go: owner, grantee, PUBLIC, superuser and
// owner 0; a dropped role and a user that is no role hold nothing.
func TestHolds(t *testing.T) {
	c, tbl := privCatalog()
	for _, tc := range []struct {
		id   uint32
		priv byte
		want bool
	}{
		{10, PrivDelete, true},  // superuser
		{0, PrivDelete, true},   // the bootstrap superuser
		{11, PrivDelete, true},  // owner
		{12, PrivSelect, true},  // grantee
		{12, PrivInsert, false}, // not granted
		{13, PrivSelect, false}, // nothing
		{99, PrivSelect, false}, // a dropped role
		{NoRole, PrivSelect, false},
	} {
		if got := c.Holds(tc.id, tbl, tc.priv); got != tc.want {
			t.Errorf("Holds(%d, %c) = %v, want %v", tc.id, tc.priv, got, tc.want)
		}
	}
	tbl.Grant(0, string(rune(PrivInsert)))
	if !c.Holds(13, tbl, PrivInsert) || c.Holds(NoRole, tbl, PrivInsert) {
		t.Error("PUBLIC's grant: every role holds it, a user that is no role does not")
	}
	if !c.Owns(10, tbl) || !c.Owns(11, tbl) || c.Owns(12, tbl) {
		t.Error("Owns: superuser and owner only")
	}
	err := c.CheckPrivilege(13, tbl, PrivSelect)
	if pgerror.Code(err) != pgerror.InsufficientPrivilege || err.Error() != "permission denied for table t" {
		t.Errorf("CheckPrivilege = %v", err)
	}
}

// Rule 3: a view's source is checked with the view owner's rights.
func TestCheckViewSource(t *testing.T) {
	c, tbl := privCatalog()
	v := &Table{ID: FirstObjectID + 1, SchemaID: 20, Name: "v", Kind: KindView, Owner: 12}
	if err := c.CheckViewSource(v, tbl); err != nil {
		t.Errorf("bob's view over what bob may read: %v", err)
	}
	tbl.Revoke(12, string(rune(PrivSelect)))
	if err := c.CheckViewSource(v, tbl); pgerror.Code(err) != pgerror.InsufficientPrivilege {
		t.Errorf("after REVOKE: %v, want 42501", err)
	}
	v.Owner = 10
	if err := c.CheckViewSource(v, tbl); err != nil {
		t.Errorf("a superuser's view: %v", err)
	}
}

// Rule 2: CREATE on a schema is its owner's and its grantees'; USAGE is
// everyone's (not checked).
func TestSchemaPrivileges(t *testing.T) {
	c, _ := privCatalog()
	s, _ := c.Schema("s")
	if !c.SchemaHolds(11, s, PrivCreate) || c.SchemaHolds(12, s, PrivCreate) || !c.SchemaHolds(10, s, PrivCreate) {
		t.Error("CREATE: owner and superuser only")
	}
	ns := s.Clone()
	ns.Grant(12, string(rune(PrivCreate)))
	if !c.SchemaHolds(12, ns, PrivCreate) || len(s.ACL) != 0 {
		t.Error("a clone's grant reaches the clone only")
	}
	if !c.SchemaAllowed("carol", true, s, PrivUsage) || c.SchemaAllowed("nobody", true, s, PrivUsage) {
		t.Error("USAGE: every role's, no one else's")
	}
	if !c.SchemaAllowed("nobody", false, s, PrivCreate) {
		t.Error("without authentication a user that is no role is a superuser")
	}
}

// MaySeeDetails (the console's question too): superuser, owner, any
// grantee (PUBLIC included); RedactedError keeps the code, never data.
func TestMaySeeDetails(t *testing.T) {
	c, tbl := privCatalog()
	for user, want := range map[string]bool{"boot": true, "alice": true, "bob": true, "carol": false} {
		if got := c.MaySeeDetails(user, true, tbl); got != want {
			t.Errorf("MaySeeDetails(%s) = %v, want %v", user, got, want)
		}
	}
	if c.MaySeeDetails("stranger", true, tbl) || !c.MaySeeDetails("stranger", false, tbl) {
		t.Error("a user that is no role: no one with authentication, a superuser without")
	}
	tbl.Grant(0, string(rune(PrivMaintain)))
	if !c.MaySeeDetails("carol", true, tbl) {
		t.Error("a grant to PUBLIC counts")
	}
	msg := RedactedError("22P02")
	if !strings.Contains(msg, "22P02") || !strings.Contains(msg, "data exception") {
		t.Errorf("RedactedError = %q", msg)
	}
}

func TestRoleNameOf(t *testing.T) {
	c, _ := privCatalog()
	if n, ok := c.RoleNameOf(0); !ok || n != "boot" {
		t.Errorf("RoleNameOf(0) = %q, %v: want the first superuser", n, ok)
	}
	if n, ok := c.RoleNameOf(12); !ok || n != "bob" {
		t.Errorf("RoleNameOf(12) = %q, %v", n, ok)
	}
	if _, ok := c.RoleNameOf(99); ok {
		t.Error("a dropped role has no name")
	}
}
