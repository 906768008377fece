package storage

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestPrefetch checks that reads answered from a prefetch are the
// snapshot's answers: for rows and meta keys present, absent, deleted
// before the snapshot, written after it by another transaction, and
// written by the transaction itself (before and after the prefetch),
// Get, GetMeta and Insert's duplicate check agree with a transaction that
// prefetched nothing.
func TestPrefetch(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 1))
	db := openMem(t)
	tbl := TableInfo{ID: 1, ChangeDataFeed: true}
	createTable(t, db, tbl)
	key := func(i int) []byte { return k(fmt.Sprintf("k%04d", i)) }
	meta := func(i int) []byte { return k(fmt.Sprintf("m/%04d", i)) }
	const n = 400
	update(t, db, func(tx *Txn) error {
		for i := 0; i < n; i += 2 {
			if _, err := tx.Insert(tbl, key(i), k(fmt.Sprintf("v%d", i))); err != nil {
				return err
			}
			if err := tx.PutMeta(meta(i), k(fmt.Sprintf("s%d", i))); err != nil {
				return err
			}
		}
		return nil
	})
	update(t, db, func(tx *Txn) error { // deletion markers among the rows
		for i := 0; i < n; i += 10 {
			if err := tx.Delete(tbl, key(i)); err != nil {
				return err
			}
			if err := tx.DeleteMeta(meta(i)); err != nil {
				return err
			}
		}
		return nil
	})
	plain, fetched := db.Begin(), db.Begin()
	defer plain.Rollback()
	defer fetched.Rollback()
	// Written after both began: neither may see it.
	update(t, db, func(tx *Txn) error {
		_, err := tx.Insert(tbl, key(1), k("late"))
		return err
	})
	// Own writes, the same in both, some before the prefetch.
	own := func(tx *Txn, from, to int) {
		for i := from; i < to; i += 7 {
			if err := tx.Delete(tbl, key(i)); err != nil && !errors.Is(err, ErrNotFound) {
				t.Fatal(err)
			}
			if err := tx.PutMeta(meta(i), k("own")); err != nil {
				t.Fatal(err)
			}
		}
	}
	own(plain, 0, n/2)
	own(fetched, 0, n/2)
	var rows, metas [][]byte
	for range n {
		i := rng.IntN(n + 50)
		rows, metas = append(rows, key(i)), append(metas, meta(i))
	}
	if err := fetched.PrefetchRows(tbl.ID, rows); err != nil {
		t.Fatal(err)
	}
	if err := fetched.PrefetchMeta(metas); err != nil {
		t.Fatal(err)
	}
	if len(fetched.fetched) == 0 {
		t.Fatal("nothing was prefetched: the test misses its path")
	}
	own(plain, n/2, n)
	own(fetched, n/2, n)
	for i := range n + 50 {
		pr, pok, perr := plain.Get(tbl.ID, key(i))
		pv := append([]byte(nil), pr.Value...)
		fr, fok, ferr := fetched.Get(tbl.ID, key(i))
		if pok != fok || perr != nil || ferr != nil || !bytes.Equal(pv, fr.Value) || pr.RowID != fr.RowID || pr.CommitVersion != fr.CommitVersion {
			t.Fatalf("seed %d: Get %s: plain %v %q %v, prefetched %v %q %v", seed, key(i), pok, pv, perr, fok, fr.Value, ferr)
		}
		pm, pok, perr := plain.GetMeta(meta(i))
		pm = append([]byte(nil), pm...)
		fm, fok, ferr := fetched.GetMeta(meta(i))
		if pok != fok || perr != nil || ferr != nil || !bytes.Equal(pm, fm) {
			t.Fatalf("seed %d: GetMeta %s: plain %v %q %v, prefetched %v %q %v", seed, meta(i), pok, pm, perr, fok, fm, ferr)
		}
	}
	var dup *DuplicateKeyError
	for i := range n + 50 {
		_, perr := plain.Insert(tbl, key(i), k("new"))
		_, ferr := fetched.Insert(tbl, key(i), k("new"))
		if errors.As(perr, &dup) != errors.As(ferr, &dup) || (perr == nil) != (ferr == nil) {
			t.Fatalf("seed %d: Insert %s: plain %v, prefetched %v", seed, key(i), perr, ferr)
		}
	}
}
