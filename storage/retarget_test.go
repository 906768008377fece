package storage

import (
	"fmt"
	"slices"
	"testing"
)

// TestRetarget: an iterator pointed at another key range reads exactly
// that range's rows (forwards, backwards, empty, unbounded), and refuses
// — changing nothing — when a new Scan would see something it cannot:
// the transaction's own writes of the table.
func TestRetarget(t *testing.T) {
	db := openMem(t)
	tbl := TableInfo{ID: 1, ChangeDataFeed: true}
	other := TableInfo{ID: 2}
	createTable(t, db, tbl)
	createTable(t, db, other)
	key := func(i int) []byte { return k(fmt.Sprintf("k%03d", i)) }
	update(t, db, func(tx *Txn) error {
		for i := 0; i < 100; i++ {
			if _, err := tx.Insert(tbl, key(i), k(fmt.Sprint(i))); err != nil {
				return err
			}
		}
		_, err := tx.Insert(other, key(0), k("other"))
		return err
	})
	update(t, db, func(tx *Txn) error { return tx.Delete(tbl, key(52)) })
	tx := db.Begin()
	defer tx.Rollback()
	read := func(it *Iterator) []string {
		t.Helper()
		var out []string
		for it.Next() {
			out = append(out, string(it.Row().Key))
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := func(from, to int) []string {
		var out []string
		for i := from; i < to; i++ {
			if i != 52 {
				out = append(out, string(key(i)))
			}
		}
		return out
	}
	it := tx.Scan(tbl.ID, key(10), key(20))
	defer it.Close()
	if got := read(it); !slices.Equal(got, want(10, 20)) {
		t.Fatalf("first range: %v", got)
	}
	for _, r := range [][2]int{{50, 55}, {5, 7}, {60, 60 + 1}, {99, 100}, {30, 31}} {
		if !it.Retarget(tbl.ID, key(r[0]), key(r[1])) {
			t.Fatalf("retarget to %v refused", r)
		}
		if got := read(it); !slices.Equal(got, want(r[0], r[1])) {
			t.Fatalf("range %v: %v, want %v", r, got, want(r[0], r[1]))
		}
	}
	if !it.Retarget(tbl.ID, key(95), nil) {
		t.Fatal("retarget to an unbounded range refused")
	}
	if got := read(it); !slices.Equal(got, want(95, 100)) {
		t.Fatalf("unbounded: %v", got)
	}
	if !it.Retarget(tbl.ID, nil, key(2)) {
		t.Fatal("retarget to a range from the start refused")
	}
	if got := read(it); !slices.Equal(got, want(0, 2)) {
		t.Fatalf("from the start: %v", got)
	}
	if it.Retarget(tbl.ID, key(5), key(5)) {
		t.Fatal("an empty range was accepted")
	}
	// Another table's rows through the same iterator.
	if !it.Retarget(other.ID, nil, nil) {
		t.Fatal("retarget to another table refused")
	}
	if got := read(it); !slices.Equal(got, []string{string(key(0))}) {
		t.Fatalf("other table: %v", got)
	}
	// Own writes of the table: a new Scan is needed to merge them.
	if _, err := tx.Insert(tbl, key(200), k("own")); err != nil {
		t.Fatal(err)
	}
	if it.Retarget(tbl.ID, key(0), key(5)) {
		t.Fatal("retarget accepted with own writes of the table")
	}
	s := tx.Scan(tbl.ID, key(199), nil)
	defer s.Close()
	if got := read(s); !slices.Equal(got, []string{string(key(200))}) {
		t.Fatalf("own write: %v", got)
	}
	if s.Retarget(other.ID, nil, nil) {
		t.Fatal("an iterator merging own writes was retargeted")
	}
}

// TestIndexRetarget: an index iterator pointed at another range of its
// index reads exactly that range's rows, as a new ScanIndex would (ranges
// forwards and backwards, empty, long enough for several row batches,
// after stopping part of the way), and refuses — changing nothing — a
// range of another index, or when the transaction has own writes of the
// index.
func TestIndexRetarget(t *testing.T) {
	db := openMem(t)
	ix := colorIndex(false)
	tbl := createIndexed(t, db, ix)
	color := func(i int) string { return fmt.Sprintf("c%02d", i) }
	update(t, db, func(tx *Txn) error {
		for i := range 400 {
			// Color c is on c*3 rows (c00 on none), spread over the keys.
			c := i % 20
			if i/20 < c*3 {
				mustInsert(t, tx, tbl, fmt.Sprintf("k%04d", (i*7919)%400), color(c)+":"+fmt.Sprint(i))
			}
		}
		return nil
	})
	tx := db.Begin()
	defer tx.Rollback()
	rangeOf := func(c string) ([]byte, []byte) {
		start := AppendString(AppendNotNullMarker(nil), c)
		return start, PrefixEnd(start)
	}
	read := func(it *IndexIterator, limit int) []string {
		t.Helper()
		var out []string
		for len(out) != limit && it.Next() {
			out = append(out, string(it.Row().Value))
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	start, end := rangeOf(color(1))
	it := tx.ScanIndex(tbl.ID, ix.ID, start, end)
	defer it.Close()
	if got, want := read(it, -1), byColor(t, tx, tbl.ID, color(1)); !slices.Equal(got, want) {
		t.Fatalf("first range: %v, want %v", got, want)
	}
	for n, c := range []int{2, 19, 19, 0, 7, 3, 18, 5} {
		start, end := rangeOf(color(c))
		if !it.Retarget(tbl.ID, ix.ID, start, end) {
			t.Fatalf("retarget to %s refused", color(c))
		}
		want := byColor(t, tx, tbl.ID, color(c))
		limit := -1
		if n%3 == 2 && len(want) > 2 {
			// Stop part of the way, as a semi join does.
			limit = len(want) / 2
			want = want[:limit]
		}
		if got := read(it, limit); !slices.Equal(got, want) {
			t.Fatalf("%s: %v, want %v", color(c), got, want)
		}
	}
	if it.Retarget(tbl.ID, ix.ID+1, start, end) {
		t.Fatal("retarget to another index accepted")
	}
	if it.Retarget(tbl.ID, ix.ID, end, start) {
		t.Fatal("an empty range was accepted")
	}
	mustInsert(t, tx, tbl, "own", color(4)+":own")
	start, end = rangeOf(color(4))
	if it.Retarget(tbl.ID, ix.ID, start, end) {
		t.Fatal("retarget accepted with own writes of the index")
	}
}
