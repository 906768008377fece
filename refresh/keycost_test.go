package refresh

import (
	"testing"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// TestIndexKeyCost: without statistics a value read through an index
// costs indexRowsPerKey; with them, two scanned rows per matching row
// when that is more.
func TestIndexKeyCost(t *testing.T) {
	db, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	col := catalog.Column{ID: 1, Name: "g", Type: types.T{Kind: types.KindInt4}}
	tbl := &catalog.Table{ID: 20000, Name: "t", Columns: []catalog.Column{col}}
	txn := db.Begin()
	defer txn.Rollback()
	if got := indexKeyCost(txn, tbl, col, 100000); got != indexRowsPerKey {
		t.Fatalf("no statistics: %d, want %d", got, indexRowsPerKey)
	}
	// 5 values over 100000 rows, a fifth NULL: 16000 rows a value.
	ts := &catalog.TableStats{Rows: 100000, Columns: []catalog.ColumnStats{{ColID: 1, TypeOID: col.Type.OID(), NDistinct: 5, NullFrac: 0.2}}}
	if err := catalog.WriteStats(txn, tbl.ID, ts); err != nil {
		t.Fatal(err)
	}
	if got := indexKeyCost(txn, tbl, col, 100000); got != 32000 {
		t.Fatalf("5 values: %d, want 32000", got)
	}
	// A near-unique column stays at the floor.
	ts.Columns[0].NDistinct, ts.Columns[0].NullFrac = -1, 0
	if err := catalog.WriteStats(txn, tbl.ID, ts); err != nil {
		t.Fatal(err)
	}
	if got := indexKeyCost(txn, tbl, col, 100000); got != indexRowsPerKey {
		t.Fatalf("unique: %d, want %d", got, indexRowsPerKey)
	}
}
