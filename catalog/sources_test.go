package catalog

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// sourcesCatalog: tables a, b; plain view v over a and b; plain view w over
// v and a; materialized view m over w and a missing id 99.
func sourcesCatalog() *Catalog {
	c := newCatalog("d")
	c.PutSchema(&Schema{ID: 20, Name: "s"})
	for _, t := range []*Table{
		{ID: 1, Name: "a", Kind: KindTable},
		{ID: 2, Name: "b", Kind: KindTable},
		{ID: 3, Name: "v", Kind: KindView, DependsOn: []uint32{2, 1}},
		{ID: 4, Name: "w", Kind: KindView, DependsOn: []uint32{3, 1}},
		{ID: 5, Name: "m", Kind: KindMaterializedView, DependsOn: []uint32{4, 99}},
		{ID: 6, Name: "n", Kind: KindMaterializedView, DependsOn: []uint32{5, 4}},
	} {
		t.SchemaID = 20
		c.PutTable(t)
	}
	return c
}

func TestWalkSources(t *testing.T) {
	c := sourcesCatalog()
	var got []string
	err := c.WalkSources([]uint32{4, 99, 1}, func(id uint32, tb *Table, viaView bool) error {
		name := "missing"
		if tb != nil {
			name = tb.Name
		}
		got = append(got, fmt.Sprintf("%d:%s:%v", id, name, viaView))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Depth first, a view before its sources, each id once (a is read by
	// v and by w, and named again at the top level).
	want := []string{"4:w:false", "3:v:true", "2:b:true", "1:a:true", "99:missing:false"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("walk = %v, want %v", got, want)
	}

	// A materialized view is a stored source: the walk does not enter it.
	var names []string
	for _, tb := range c.StoredSources([]uint32{5, 4}) {
		names = append(names, tb.Name)
	}
	if want := []string{"m", "b", "a"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("stored sources = %v, want %v", names, want)
	}

	// The first error stops the walk.
	stop := errors.New("stop")
	n := 0
	err = c.WalkSources([]uint32{4}, func(id uint32, _ *Table, _ bool) error {
		n++
		if id == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 2 {
		t.Fatalf("err = %v after %d visits, want stop after 2", err, n)
	}
}
