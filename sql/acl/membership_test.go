package acl

import (
	"testing"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
)

func testCatalog() *catalog.Catalog {
	c := &catalog.Catalog{}
	for i, name := range []string{"admin", "alice", "bob", "grp", "mgr"} {
		r := &catalog.Role{ID: catalog.FirstObjectID + uint32(i), Name: name, Inherit: true, ConnLimit: -1}
		r.Superuser = name == "admin"
		r.CreateRole = name == "mgr"
		c.PutRole(r)
	}
	return c
}

func id(c *catalog.Catalog, name string) uint32 {
	r, _ := c.Role(name)
	return r.ID
}

func code(err error) string {
	if err == nil {
		return ""
	}
	return pgerror.Convert(err).Code
}

// GRANT and REVOKE of roles follow PostgreSQL 15: a loop is 0LP01, a
// repeated grant a notice, a revoke of nothing a warning, and the admin
// option passes the right to grant on.
func TestApplyRoleGrant(t *testing.T) {
	c := testCatalog()
	admin, alice, bob := id(c, "admin"), id(c, "alice"), id(c, "bob")
	if _, _, err := ApplyRoleGrant(c, alice, RoleGrant{Roles: []string{"grp"}, Members: []string{"bob"}, Grant: true}); code(err) != pgerror.InsufficientPrivilege {
		t.Fatalf("alice grants grp: %v", err)
	}
	changed, _, err := ApplyRoleGrant(c, admin, RoleGrant{Roles: []string{"grp"}, Members: []string{"alice"}, Grant: true, Admin: true})
	if err != nil || len(changed) != 1 || changed[0] != alice {
		t.Fatalf("admin grants grp to alice: %v %v", changed, err)
	}
	if !c.HasPrivsOfRole(alice, id(c, "grp")) || !c.IsAdminOfRole(alice, id(c, "grp")) {
		t.Fatal("alice is no admin member of grp")
	}
	if _, _, err := ApplyRoleGrant(c, admin, RoleGrant{Roles: []string{"alice"}, Members: []string{"grp"}, Grant: true}); code(err) != pgerror.InvalidGrantOperation {
		t.Fatalf("loop: %v", err)
	}
	if _, notes, err := ApplyRoleGrant(c, alice, RoleGrant{Roles: []string{"grp"}, Members: []string{"bob"}, Grant: true}); err != nil || len(notes) != 0 {
		t.Fatalf("alice (admin option) grants grp to bob: %v %v", notes, err)
	}
	if _, notes, _ := ApplyRoleGrant(c, alice, RoleGrant{Roles: []string{"grp"}, Members: []string{"bob"}, Grant: true}); len(notes) != 1 || notes[0].Severity != pgerror.SeverityNotice {
		t.Fatalf("repeated grant: %v", notes)
	}
	if _, _, err := ApplyRoleGrant(c, id(c, "mgr"), RoleGrant{Roles: []string{"admin"}, Members: []string{"bob"}, Grant: true}); code(err) != pgerror.InsufficientPrivilege {
		t.Fatalf("CREATEROLE grants a superuser role: %v", err)
	}
	if _, _, err := ApplyRoleGrant(c, id(c, "mgr"), RoleGrant{Roles: []string{"pg_signal_backend"}, Members: []string{"bob"}, Grant: true}); err != nil {
		t.Fatalf("CREATEROLE grants pg_signal_backend: %v", err)
	}
	if _, _, err := ApplyRoleGrant(c, admin, RoleGrant{Roles: []string{"grp"}, Members: []string{"bob"}}); err != nil || c.IsMemberOfRole(bob, id(c, "grp")) {
		t.Fatalf("revoke grp from bob: %v", err)
	}
	if _, notes, _ := ApplyRoleGrant(c, admin, RoleGrant{Roles: []string{"grp"}, Members: []string{"bob"}}); len(notes) != 1 || notes[0].Severity != pgerror.SeverityWarning {
		t.Fatalf("revoke of no membership: %v", notes)
	}
	if _, _, err := ApplyRoleGrant(c, admin, RoleGrant{Roles: []string{"grp"}, Members: []string{"alice"}, Admin: true}); err != nil || !c.IsMemberOfRole(alice, id(c, "grp")) || c.IsAdminOfRole(alice, id(c, "grp")) {
		t.Fatalf("revoke admin option: %v", err)
	}
	if changed := DropMemberships(c, id(c, "grp")); len(changed) != 1 || c.IsMemberOfRole(alice, id(c, "grp")) {
		t.Fatalf("drop grp's memberships: %v", changed)
	}
}

// Backends: pg_read_all_stats and pg_signal_backend widen a role's reach
// through inherited membership only; a superuser's backend stays a
// superuser's.
func TestBackends(t *testing.T) {
	c := testCatalog()
	admin, bob := id(c, "admin"), id(c, "bob")
	b := Backends{Cat: c, Actor: bob, User: "bob", RequireRoles: true}
	if b.MaySee("alice") || b.MaySignal("alice", true) == nil || !b.MaySee("bob") || b.MaySignal("bob", false) != nil {
		t.Fatal("bob without predefined roles")
	}
	for _, r := range []string{"pg_read_all_stats", "pg_signal_backend"} {
		if _, _, err := ApplyRoleGrant(c, admin, RoleGrant{Roles: []string{r}, Members: []string{"bob"}, Grant: true}); err != nil {
			t.Fatal(err)
		}
	}
	if !b.MaySee("alice") || b.MaySignal("alice", true) != nil || b.MaySignal("admin", true) == nil {
		t.Fatal("bob with pg_read_all_stats and pg_signal_backend")
	}
	nb, _ := c.Role("bob")
	nb = nb.Clone()
	nb.Inherit = false
	c.PutRole(nb)
	if b.MaySee("alice") || b.MaySignal("alice", false) == nil {
		t.Fatal("NOINHERIT bob still has the predefined roles' privileges")
	}
}
