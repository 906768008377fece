package catalog

import (
	"testing"
	"time"

	"github.com/mvserver/mvserver/storage"
)

// Roles are descriptors: a committed PutRole survives a reload of the
// catalog from storage, a rolled-back one never existed, DropRole deletes
// one, and a renamed role answers only to its new name.
func TestRolesPersist(t *testing.T) {
	db, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m, err := Open(db, "d")
	if err != nil {
		t.Fatal(err)
	}
	change := func(commit bool, f func(c *Catalog) (changed, dropped []uint32)) {
		t.Helper()
		txn := db.Begin()
		c, err := m.Snapshot(txn)
		if err != nil {
			t.Fatal(err)
		}
		nc := c.Clone()
		changed, dropped := f(nc)
		if err := m.Persist(txn, nc, changed, dropped); err != nil {
			t.Fatal(err)
		}
		if !commit {
			txn.Rollback()
			return
		}
		if err := txn.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	reload := func() *Catalog {
		t.Helper()
		m2, err := Open(db, "d")
		if err != nil {
			t.Fatal(err)
		}
		txn := db.Begin()
		defer txn.Rollback()
		c, err := m2.Snapshot(txn)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	until := time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC)
	var aliceID, bobID uint32
	change(true, func(c *Catalog) ([]uint32, []uint32) {
		aliceID, bobID = c.AllocID(), c.AllocID()
		c.PutRole(&Role{ID: aliceID, Name: "alice", Login: true, Superuser: true, Inherit: true, ConnLimit: -1, Password: "SCRAM-SHA-256$x", ValidUntil: &until})
		c.PutRole(&Role{ID: bobID, Name: "bob", ConnLimit: 3, MemberOf: []Membership{{Role: RoleSignalBackend, Grantor: aliceID, Admin: true}}})
		return []uint32{aliceID, bobID}, nil
	})
	change(false, func(c *Catalog) ([]uint32, []uint32) {
		id := c.AllocID()
		c.PutRole(&Role{ID: id, Name: "ghost"})
		return []uint32{id}, nil
	})
	c := reload()
	var roles []*Role
	for _, r := range c.Roles() {
		if !IsPredefinedRole(r.ID) {
			roles = append(roles, r)
		}
	}
	if len(roles) != 2 || roles[0].Name != "alice" || roles[1].Name != "bob" {
		t.Fatalf("roles %+v", roles)
	}
	a, ok := c.Role("alice")
	if !ok || a.ID != aliceID || !a.Login || !a.Superuser || !a.Inherit || a.ConnLimit != -1 || a.Password != "SCRAM-SHA-256$x" ||
		a.ValidUntil == nil || !a.ValidUntil.Equal(until) {
		t.Fatalf("alice %+v", a)
	}
	if b, _ := c.Role("bob"); len(b.MemberOf) != 1 || b.MemberOf[0] != (Membership{Role: RoleSignalBackend, Grantor: aliceID, Admin: true}) {
		t.Fatalf("bob's membership after reload: %+v", b.MemberOf)
	}
	if b, ok := c.RoleByID(bobID); !ok || b.Name != "bob" || b.Login || b.ConnLimit != 3 || b.ValidUntil != nil {
		t.Fatalf("bob %+v", b)
	}
	if _, ok := c.Role("ghost"); ok {
		t.Fatal("a rolled-back role exists")
	}

	change(true, func(c *Catalog) ([]uint32, []uint32) {
		r, _ := c.Role("bob")
		r = r.Clone()
		r.Name = "robert"
		c.PutRole(r)
		c.DropRole(aliceID)
		return []uint32{r.ID}, []uint32{aliceID}
	})
	c = reload()
	if _, ok := c.Role("bob"); ok {
		t.Fatal("old name still answers")
	}
	if r, ok := c.Role("robert"); !ok || r.ID != bobID {
		t.Fatalf("robert %+v", r)
	}
	if _, ok := c.RoleByID(aliceID); ok || len(c.Roles()) != 1+len(predefinedRoles) {
		t.Fatal("alice not dropped")
	}
	// Clones are copy-on-write: changing one leaves the snapshot alone.
	nc := c.Clone()
	nc.DropRole(bobID)
	if _, ok := c.RoleByID(bobID); !ok {
		t.Fatal("DropRole on a clone changed the original")
	}
}
