package catalog

import (
	"testing"

	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// An enum column's type is persisted as a reference to its type: after a
// reload, and after the type gains a label, the column sees the current
// labels (a copy of them in the table's descriptor would go stale).
func TestEnumColumnsFollowTheirType(t *testing.T) {
	db, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m, err := Open(db, "d")
	if err != nil {
		t.Fatal(err)
	}
	persist := func(change func(c *Catalog) []uint32) *Catalog {
		t.Helper()
		txn := db.Begin()
		c, err := m.Snapshot(txn)
		if err != nil {
			t.Fatal(err)
		}
		c = c.Clone()
		if err := m.Persist(txn, c, change(c), nil); err != nil {
			t.Fatal(err)
		}
		if err := txn.Commit(); err != nil {
			t.Fatal(err)
		}
		return c
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
	var enumID, tableID uint32
	persist(func(c *Catalog) []uint32 {
		pub, _ := c.Schema("public")
		e := &EnumType{ID: c.AllocID(), ArrayID: c.AllocID(), SchemaID: pub.ID, Name: "mood",
			Labels: []types.EnumLabel{{OID: c.AllocID(), Label: "sad", Sort: 1}, {OID: c.AllocID(), Label: "happy", Sort: 2}}}
		c.PutEnum(e)
		tb := &Table{ID: c.AllocID(), SchemaID: pub.ID, Name: "p", Kind: KindTable, Columns: []Column{{ID: 1, Name: "m", Type: e.T()}}}
		c.PutTable(tb)
		enumID, tableID = e.ID, tb.ID
		return []uint32{e.ID, tb.ID}
	})
	labels := func(c *Catalog) []string {
		t.Helper()
		tb, ok := c.Table(tableID)
		if !ok {
			t.Fatal("table lost")
		}
		ct := tb.Columns[0].Type
		if ct.Kind != types.KindEnum || ct.Enum == nil || ct.Enum.OID != enumID {
			t.Fatalf("column type %+v, want enum %d", ct, enumID)
		}
		var out []string
		for _, l := range ct.Enum.Labels {
			out = append(out, l.Label)
		}
		return out
	}
	if got := labels(reload()); len(got) != 2 || got[0] != "sad" || got[1] != "happy" {
		t.Fatalf("after reload the column's labels are %v", got)
	}
	c := persist(func(c *Catalog) []uint32 {
		e, _ := c.Enum(enumID)
		n := e.Clone()
		n.Labels = append([]types.EnumLabel{{OID: c.AllocID(), Label: "awful", Sort: 0}}, n.Labels...)
		c.PutEnum(n)
		return []uint32{n.ID} // the table's descriptor is not rewritten
	})
	for name, cat := range map[string]*Catalog{"in memory": c, "reloaded": reload()} {
		if got := labels(cat); len(got) != 3 || got[0] != "awful" {
			t.Fatalf("%s after ADD VALUE the column's labels are %v", name, got)
		}
	}
	if users := c.EnumUsers(enumID); len(users) != 1 || users[0].ID != tableID {
		t.Fatalf("EnumUsers = %v", users)
	}
}
