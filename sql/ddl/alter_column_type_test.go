package ddl

import (
	"testing"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/types"
)

// TestRetypedIndexesAndChecks: only the indexes and CHECKs over the
// retyped column are rebuilt and checked again; rebuilt indexes keep
// their name, columns and constraint and get new ids.
func TestRetypedIndexesAndChecks(t *testing.T) {
	cat := (&catalog.Catalog{Database: "d"}).Clone()
	tb := &catalog.Table{ID: cat.AllocID(), Name: "t", Kind: catalog.KindTable,
		Columns: []catalog.Column{{ID: 1, Name: "a", Type: types.Int4}, {ID: 2, Name: "b", Type: types.Text}},
		Indexes: []catalog.Index{
			{ID: 900, Name: "t_a", Columns: []catalog.IndexColumn{{Col: 1}}},
			{ID: 901, Name: "t_b_key", Columns: []catalog.IndexColumn{{Col: 2}}, Unique: true, ConstraintID: 902},
			{ID: 903, Name: "t_ab", Columns: []catalog.IndexColumn{{Col: 1}, {Col: 2}}},
		},
		Checks: []catalog.Check{{ID: 904, Name: "t_a_check", Expr: "(a > 0)"}, {ID: 905, Name: "t_b_check", Expr: "(b <> '')"}},
	}
	old, rebuilt := RetypedIndexes(cat, tb, 1)
	if len(old) != 2 || old[0] != 901 || old[1] != 903 {
		t.Fatalf("old %v", old)
	}
	if rebuilt[0].Name != "t_b_key" || !rebuilt[0].Unique || rebuilt[0].ConstraintID != 902 || rebuilt[0].ID == 901 || rebuilt[1].ID == rebuilt[0].ID {
		t.Fatalf("rebuilt %+v", rebuilt)
	}
	if cks := RetypedChecks(tb, 1); len(cks) != 1 || cks[0].Name != "t_b_check" {
		t.Fatalf("checks %+v", cks)
	}

	// Swapped in: the table keeps t_a and gets the new ids; the rewrite
	// writes through t_a alone.
	rw, old2, built := SwapRetypedIndexes(cat, tb, 1)
	if len(old2) != 2 || old2[0] != 901 || old2[1] != 903 || len(built) != 2 {
		t.Fatalf("swap: old %v built %v", old2, built)
	}
	if tb.Indexes[0].ID != 900 || tb.Indexes[1].ID != built[0] || tb.Indexes[2].ID != built[1] || tb.Indexes[1].Name != "t_b_key" {
		t.Fatalf("swapped indexes %+v", tb.Indexes)
	}
	if len(rw.Indexes) != 1 || rw.Indexes[0].ID != 900 {
		t.Fatalf("the rewrite's indexes %+v", rw.Indexes)
	}
}
