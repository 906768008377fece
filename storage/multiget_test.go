package storage

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestIndexScanBatchesRowReads walks an index whose order is not the
// rows' key order, across several batches, in a transaction that has
// updated, moved, deleted and inserted rows: the rows come in index order
// as the transaction sees them, and the snapshot's rows are not read one
// point read each (a batch reads them with one iterator).
func TestIndexScanBatchesRowReads(t *testing.T) {
	db := openMem(t)
	ix := colorIndex(false)
	tbl := withIndex(tA, ix)
	createTable(t, db, tA)
	colors := []string{"red", "blue", "green", "amber", "violet", "cyan", "~"}
	want := map[string]string{} // key → value, as the scanning txn sees it
	update(t, db, func(tx *Txn) error {
		if err := tx.BuildIndex(tA, ix); err != nil {
			return err
		}
		for i := range 1000 {
			key, val := fmt.Sprintf("k%04d", i), fmt.Sprintf("%s:%d", colors[i*3%len(colors)], i)
			mustInsert(t, tx, tbl, key, val)
			want[key] = val
		}
		return nil
	})
	tx := db.Begin()
	defer tx.Rollback()
	for i := 0; i < 1000; i += 7 { // move to another color
		key := fmt.Sprintf("k%04d", i)
		val := fmt.Sprintf("%s:moved%d", colors[(i+1)%len(colors)], i)
		if err := tx.Update(tbl, k(key), k(key), k(val)); err != nil {
			t.Fatal(err)
		}
		want[key] = val
	}
	for i := 3; i < 1000; i += 11 {
		key := fmt.Sprintf("k%04d", i)
		if err := tx.Delete(tbl, k(key)); err != nil {
			t.Fatal(err)
		}
		delete(want, key)
	}
	for i := range 40 {
		key, val := fmt.Sprintf("n%03d", i), fmt.Sprintf("%s:new%d", colors[i%len(colors)], i)
		mustInsert(t, tx, tbl, key, val)
		want[key] = val
	}
	type kv struct{ color, key, val string }
	var exp []kv
	for key, val := range want {
		c, _, _ := strings.Cut(val, ":")
		exp = append(exp, kv{c, key, val})
	}
	// NULL ("~") sorts first, then the colors, each by row key.
	slices.SortFunc(exp, func(a, b kv) int {
		if (a.color == "~") != (b.color == "~") {
			if a.color == "~" {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.color, b.color), cmp.Compare(a.key, b.key))
	})

	before := tx.pointReads
	it := tx.ScanIndex(tA.ID, ix.ID, nil, nil)
	var got []kv
	for it.Next() {
		r := it.Row()
		c, _, _ := strings.Cut(string(r.Value), ":")
		got = append(got, kv{c, string(r.Key), string(r.Value)})
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, exp) {
		t.Fatalf("index scan: %d rows, want %d; first difference at %d", len(got), len(exp), firstDiff(got, exp))
	}
	if reads := tx.pointReads - before; reads > 10 {
		t.Errorf("the index scan of %d rows made %d point reads; its batches read the snapshot with iterators", len(got), reads)
	}

	// A range of one color, and a scan stopped after one row.
	start := AppendString(AppendNotNullMarker(nil), "green")
	var green []string
	for _, e := range exp {
		if e.color == "green" {
			green = append(green, e.val)
		}
	}
	if g := byColor(t, tx, tA.ID, "green"); !slices.Equal(g, green) {
		t.Errorf("green: %v, want %v", g, green)
	}
	it = tx.ScanIndex(tA.ID, ix.ID, start, PrefixEnd(start))
	if !it.Next() || string(it.Row().Value) != green[0] {
		t.Errorf("first green row: %q, want %q", it.Row().Value, green[0])
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
}

func firstDiff[T comparable](a, b []T) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
