package ddl

import (
	"testing"

	"github.com/mvserver/mvserver/catalog"
)

// TestMoveRelation renames r to r2 and then moves it to schema other: each
// view's text names it where it named r (FROM items and qualifiers that
// meant it), and only there.
func TestMoveRelation(t *testing.T) {
	c, r := viewCatalog(t, map[string]string{
		"plain":     "SELECT i AS x FROM r",
		"qualified": "SELECT r.i AS x FROM public.r WHERE public.r.j > 0",
		"aliased":   "SELECT r.i AS x FROM s r",                                     // r here is s
		"shadowed":  "SELECT s.i AS x FROM s WHERE s.i IN (SELECT r.i FROM r AS r)", // alias: kept
		"star":      "SELECT r.* FROM r WHERE EXISTS (SELECT 1 FROM s WHERE s.i = r.i)",
	})
	moved := func(before *catalog.Catalog, schemaID uint32, name string) map[string]string {
		t.Helper()
		after := before.Clone()
		tab, _ := before.Table(r.ID)
		ids, err := MoveRelation(before, after, nil, tab, schemaID, name)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, id := range ids[1:] {
			v, _ := after.Table(id)
			got[v.Name] = v.Query
		}
		c = after
		return got
	}
	pub, _ := c.Schema("public")
	got := moved(c, pub.ID, "r2")
	want := map[string]string{
		"plain":     "SELECT i AS x FROM r2",
		"qualified": "SELECT r2.i AS x FROM public.r2 WHERE public.r2.j > 0",
		"shadowed":  "SELECT s.i AS x FROM s WHERE s.i IN (SELECT r.i FROM r2 r)",
		"star":      "SELECT r2.* FROM r2 WHERE EXISTS (SELECT 1 FROM s WHERE s.i = r2.i)",
	}
	check(t, got, want)

	other := &catalog.Schema{ID: c.AllocID(), Name: "other"}
	c.PutSchema(other)
	got = moved(c, other.ID, "r2")
	want = map[string]string{
		"plain":     "SELECT i AS x FROM other.r2",
		"qualified": "SELECT r2.i AS x FROM other.r2 WHERE other.r2.j > 0",
		"shadowed":  "SELECT s.i AS x FROM s WHERE s.i IN (SELECT r.i FROM other.r2 r)",
		"star":      "SELECT r2.* FROM other.r2 WHERE EXISTS (SELECT 1 FROM s WHERE s.i = r2.i)",
	}
	check(t, got, want)
}

func check(t *testing.T, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("rewritten views: %v, want %v", got, want)
	}
	for n, q := range want {
		if got[n] != q {
			t.Errorf("%s: %q, want %q", n, got[n], q)
		}
	}
}

// TestMoveRelationTaken: a name another relation has fails with 42P07.
func TestMoveRelationTaken(t *testing.T) {
	c, r := viewCatalog(t, nil)
	pub, _ := c.Schema("public")
	_, err := MoveRelation(c, c.Clone(), nil, r, pub.ID, "s")
	if err == nil || err.Error() != `relation "s" already exists` {
		t.Fatalf("rename to a taken name: %v", err)
	}
}
