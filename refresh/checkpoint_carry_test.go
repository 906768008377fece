package refresh

import (
	"testing"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// TestKeepCheckpoints: after a rewrite that renames the source in the
// views' text, a checkpoint that matched the view's fingerprint matches
// it again; one that did not (a view to refresh in full anyway) stays.
func TestKeepCheckpoints(t *testing.T) {
	db, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before := (&catalog.Catalog{Database: "d"}).Clone()
	pub := &catalog.Schema{ID: before.AllocID(), Name: "public"}
	before.PutSchema(pub)
	src := &catalog.Table{ID: before.AllocID(), SchemaID: pub.ID, Name: "s", Kind: catalog.KindTable,
		Columns: []catalog.Column{{ID: 1, Name: "a", Type: types.Int4}}}
	before.PutTable(src)
	mv := func(name string) *catalog.Table {
		v := &catalog.Table{ID: before.AllocID(), SchemaID: pub.ID, Name: name, Kind: catalog.KindMaterializedView,
			Query: "SELECT a FROM s", DependsOn: []uint32{src.ID}, Columns: []catalog.Column{{ID: 1, Name: "a", Type: types.Int4}}}
		before.PutTable(v)
		return v
	}
	kept, stale := mv("kept"), mv("stale")
	after := before.Clone()
	ns := src.Clone()
	ns.Name = "s2"
	after.PutTable(ns)
	for _, v := range []*catalog.Table{kept, stale} {
		nv := v.Clone()
		nv.Query = "SELECT a FROM s2"
		after.PutTable(nv)
	}
	txn := db.Begin()
	defer txn.Rollback()
	if err := putJSON(txn, checkpointKey(kept.ID), &Checkpoint{Definition: Fingerprint(before, kept)}); err != nil {
		t.Fatal(err)
	}
	if err := putJSON(txn, checkpointKey(stale.ID), &Checkpoint{Definition: "fp1:older"}); err != nil {
		t.Fatal(err)
	}
	if err := KeepCheckpoints(txn, before, after); err != nil {
		t.Fatal(err)
	}
	nk, _ := after.Table(kept.ID)
	if c, err := ReadCheckpoint(txn, kept.ID); err != nil || c.Definition != Fingerprint(after, nk) {
		t.Fatalf("kept view's checkpoint %+v (%v), want the fingerprint in the new catalog", c, err)
	}
	if c, err := ReadCheckpoint(txn, stale.ID); err != nil || c.Definition != "fp1:older" {
		t.Fatalf("stale view's checkpoint %+v (%v), want it untouched", c, err)
	}
}
