package acl

import (
	"testing"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
)

// TestIdentity: SET ROLE needs membership of the session user (any path,
// INHERIT or not) unless it is a superuser; SET SESSION AUTHORIZATION needs
// a superuser login; current_user follows the role.
func TestIdentity(t *testing.T) {
	c := &catalog.Catalog{}
	base := uint32(catalog.FirstObjectID + 100)
	grp := &catalog.Role{ID: base, Name: "grp", Inherit: true}
	mid := &catalog.Role{ID: base + 1, Name: "mid", Inherit: false, MemberOf: []catalog.Membership{{Role: base}}}
	alice := &catalog.Role{ID: base + 2, Name: "alice", Inherit: true, Login: true, MemberOf: []catalog.Membership{{Role: base + 1}}}
	other := &catalog.Role{ID: base + 3, Name: "other"}
	su := &catalog.Role{ID: base + 4, Name: "su", Superuser: true, Login: true}
	for _, r := range []*catalog.Role{grp, mid, alice, other, su} {
		c.PutRole(r)
	}
	id := Identity{Login: "alice", Session: "alice"}
	if r, err := id.SetRole(c, true, "grp"); err != nil || r != "grp" {
		t.Fatalf("alice SET ROLE grp (through a NOINHERIT role): %q %v", r, err)
	}
	if _, err := id.SetRole(c, true, "other"); code(err) != pgerror.InsufficientPrivilege {
		t.Fatalf("alice SET ROLE other: %v", err)
	}
	if _, err := id.SetRole(c, true, "nosuch"); code(err) != pgerror.InvalidParameterValue {
		t.Fatalf("SET ROLE nosuch: %v", err)
	}
	if r, err := id.SetRole(c, true, "NONE"); err != nil || r != "" {
		t.Fatalf("SET ROLE NONE: %q %v", r, err)
	}
	if _, err := id.SetSessionAuthorization(c, true, "other"); code(err) != pgerror.InsufficientPrivilege {
		t.Fatalf("alice SET SESSION AUTHORIZATION other: %v", err)
	}
	if s, err := id.SetSessionAuthorization(c, true, "alice"); err != nil || s != "alice" {
		t.Fatalf("alice SET SESSION AUTHORIZATION alice: %q %v", s, err)
	}
	sup := Identity{Login: "su", Session: "su"}
	if s, err := sup.SetSessionAuthorization(c, true, "other"); err != nil || s != "other" {
		t.Fatalf("su SET SESSION AUTHORIZATION other: %q %v", s, err)
	}
	if r, err := sup.SetRole(c, true, "other"); err != nil || r != "other" {
		t.Fatalf("su SET ROLE other: %q %v", r, err)
	}
	// A superuser login acting as another session user has that user's
	// reach for SET ROLE.
	asOther := Identity{Login: "su", Session: "other"}
	if _, err := asOther.SetRole(c, true, "grp"); code(err) != pgerror.InsufficientPrivilege {
		t.Fatalf("session user other SET ROLE grp: %v", err)
	}
	id.Role = "grp"
	if id.Current() != "grp" || id.ShowRole() != "grp" || id.IsSuperuser(c, true) {
		t.Fatalf("%+v: current %q show %q", id, id.Current(), id.ShowRole())
	}
	sup.Role = "other"
	if sup.IsSuperuser(c, true) {
		t.Fatalf("su as other is_superuser")
	}
	if (Identity{Login: "su", Session: "su"}).ShowRole() != NoneRole {
		t.Fatalf("no role shows as %q", NoneRole)
	}
}
