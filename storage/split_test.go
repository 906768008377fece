package storage

import (
	"encoding/binary"
	"testing"
)

// TestSplitKeysCoverEveryRow: the ranges SplitKeys gives read every row
// once, and about equal shares of evenly spread keys.
func TestSplitKeysCoverEveryRow(t *testing.T) {
	db, err := Open(Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	txn := db.Begin()
	const n = 3000
	for i := range n {
		key := binary.BigEndian.AppendUint64([]byte{0x89}, uint64(i*7))
		if _, err := txn.Insert(TableInfo{ID: 9}, key, []byte{1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	r := db.Begin()
	defer r.Rollback()
	keys, err := r.SplitKeys(9, 4)
	if err != nil || len(keys) != 3 {
		t.Fatalf("keys %x err %v", keys, err)
	}
	bounds := append(append([][]byte{nil}, keys...), nil)
	total := 0
	for i := 0; i+1 < len(bounds); i++ {
		it := r.Scan(9, bounds[i], bounds[i+1])
		c := 0
		for it.Next() {
			c++
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if c < n/4-n/20 || c > n/4+n/20 {
			t.Errorf("range %d holds %d rows of %d", i, c, n)
		}
		total += c
	}
	if total != n {
		t.Fatalf("ranges hold %d rows, want %d", total, n)
	}
	if keys, err := r.SplitKeys(10, 4); err != nil || keys != nil {
		t.Fatalf("empty table: %x %v", keys, err)
	}
}
