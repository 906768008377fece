package ddl

import (
	"testing"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/types"
)

// viewCatalog holds table r (i, j), a table s with a column i of its own,
// and views over them.
func viewCatalog(t *testing.T, views map[string]string) (*catalog.Catalog, *catalog.Table) {
	t.Helper()
	c := (&catalog.Catalog{Database: "d"}).Clone()
	pub := &catalog.Schema{ID: c.AllocID(), Name: "public"}
	c.PutSchema(pub)
	r := &catalog.Table{ID: c.AllocID(), SchemaID: pub.ID, Name: "r", Kind: catalog.KindTable,
		Columns: []catalog.Column{{ID: 1, Name: "i", Type: types.Int4}, {ID: 2, Name: "j", Type: types.Int4}}}
	s := &catalog.Table{ID: c.AllocID(), SchemaID: pub.ID, Name: "s", Kind: catalog.KindTable,
		Columns: []catalog.Column{{ID: 1, Name: "i", Type: types.Int4}}}
	c.PutTable(r)
	c.PutTable(s)
	for name, q := range views {
		v := &catalog.Table{ID: c.AllocID(), SchemaID: pub.ID, Name: name, Kind: catalog.KindView, Query: q,
			DependsOn: []uint32{r.ID, s.ID}, ViewSearchPath: []string{"public"},
			Columns: []catalog.Column{{ID: 1, Name: "x", Type: types.Int4}}}
		c.PutTable(v)
	}
	return c, r
}

func TestColumnUsers(t *testing.T) {
	c, r := viewCatalog(t, map[string]string{
		"uses_i":  "SELECT i FROM r",
		"star":    "SELECT * FROM r",
		"other_i": "SELECT s.i FROM s, r WHERE r.j > 0",
		"in_sub":  "SELECT 1 AS x FROM s WHERE s.i IN (SELECT i FROM r)",
	})
	got := map[string]bool{}
	for _, v := range ColumnUsers(c, nil, nil, r, 0) {
		got[v.Name] = true
	}
	want := map[string]bool{"uses_i": true, "star": true, "in_sub": true}
	if len(got) != len(want) {
		t.Fatalf("users of r.i: %v, want %v", got, want)
	}
	for n := range want {
		if !got[n] {
			t.Errorf("users of r.i: %v lacks %s", got, n)
		}
	}
}

func TestRenameColumnInViews(t *testing.T) {
	c, r := viewCatalog(t, map[string]string{
		"v1": "SELECT i FROM r WHERE r.i > 1 ORDER BY i",
		"v2": "SELECT s.i FROM s JOIN r ON r.j = s.i",
		"v3": "SELECT q.i FROM (SELECT i FROM r) q",
	})
	after := c.Clone()
	nr := r.Clone()
	nr.Columns[0].Name = "k"
	after.PutTable(nr)
	views, err := RenameColumnInViews(c, after, nil, r, 0, "k")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range views {
		got[v.Name] = v.Query
	}
	want := map[string]string{
		"v1": "SELECT k AS i FROM r WHERE r.k > 1 ORDER BY i", // ORDER BY names the output column
		"v3": "SELECT q.i FROM (SELECT k AS i FROM r) q",
	}
	if len(got) != len(want) || got["v1"] != want["v1"] || got["v3"] != want["v3"] {
		t.Fatalf("rewritten views:\n%v\nwant\n%v", got, want)
	}
}
