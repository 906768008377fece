package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/storage"
)

// TestLineageLevels: a diamond upstream and a chain downstream; each node's
// column is its longest distance from the focus, so every edge points right.
func TestLineageLevels(t *testing.T) {
	db, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m, err := catalog.Open(db, "db")
	if err != nil {
		t.Fatal(err)
	}
	txn := db.Begin()
	defer txn.Rollback()
	c0, err := m.Snapshot(txn)
	if err != nil {
		t.Fatal(err)
	}
	c := c0.Clone()
	s, ok := c.Schema("public")
	if !ok {
		t.Fatal("no public schema")
	}
	add := func(name string, kind catalog.ObjectKind, deps ...uint32) uint32 {
		tb := &catalog.Table{ID: c.AllocID(), SchemaID: s.ID, Name: name, Kind: kind, DependsOn: deps}
		if kind == catalog.KindMaterializedView {
			tb.Dataset = &catalog.Dataset{Policy: "AUTO"}
		}
		c.PutTable(tb)
		return tb.ID
	}
	a := add("a", catalog.KindTable)
	b := add("b", catalog.KindView, a)
	x := add("x", catalog.KindMaterializedView, a, b) // a reaches x directly and through b
	y := add("y", catalog.KindMaterializedView, x)
	z := add("z", catalog.KindMaterializedView, y, x)
	add("unrelated", catalog.KindTable)
	focus, _ := c.Table(x)
	g := buildLineage(c, focus, nil)
	levels := map[string]int{}
	for _, n := range g.Nodes {
		levels[n.Name] = n.Level
	}
	want := map[string]int{"public.a": -2, "public.b": -1, "public.x": 0, "public.y": 1, "public.z": 2}
	if fmt.Sprint(levels) != fmt.Sprint(want) {
		t.Fatalf("levels %v, want %v", levels, want)
	}
	if len(g.Edges) != 6 {
		t.Fatalf("%d edges, want 6 (a→b, a→x, b→x, x→y, x→z, y→z): %v", len(g.Edges), g.Edges)
	}
	for _, n := range g.Nodes {
		if (n.URL != "") != (n.Name == "public.y" || n.Name == "public.z") {
			t.Errorf("%s: link %q", n.Name, n.URL)
		}
		if n.Focus != (n.ID == x) {
			t.Errorf("%s: focus %v", n.Name, n.Focus)
		}
	}
	for _, e := range g.Edges {
		if !strings.HasPrefix(e.Path, "M") {
			t.Errorf("edge path %q", e.Path)
		}
	}
	_, _ = a, z
}
