package storage

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// ingests is how many ingests Pebble has done.
func ingests(db *DB) uint64 { return db.pdb.Metrics().Ingest.Count }

// fillColors inserts n rows in random key order: key r<i>, value
// "<color>:<i>" with colors that share their first 16 bytes and colors
// of a few bytes, and NULLs ("~").
func fillColors(t *testing.T, db *DB, n int) map[string][]string {
	t.Helper()
	colors := []string{"red", "blue", "~", "a-long-color-name-sharing-a-prefix-1", "a-long-color-name-sharing-a-prefix-2", "a-long-color-name-sharing-a-prefix-10"}
	want := map[string][]string{}
	rnd := rand.New(rand.NewPCG(7, 9))
	update(t, db, func(tx *Txn) error {
		for _, i := range rnd.Perm(n) {
			c := colors[rnd.IntN(len(colors))]
			mustInsert(t, tx, tA, fmt.Sprintf("r%05d", i), fmt.Sprintf("%s:%d", c, i))
		}
		return nil
	})
	tx := db.Begin()
	defer tx.Rollback()
	it := tx.Scan(tA.ID, nil, nil)
	for it.Next() {
		v := string(it.Row().Value)
		c, _, _ := strings.Cut(v, ":")
		want[c] = append(want[c], v) // in row-key order: the index's order within a color
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return want
}

func checkColors(t *testing.T, tx *Txn, want map[string][]string) {
	t.Helper()
	for c, vs := range want {
		if c == "~" {
			continue
		}
		if got := byColor(t, tx, tA.ID, c); !slices.Equal(got, vs) {
			t.Fatalf("color %s through the index: %d rows %v, want %d", c, len(got), got, len(vs))
		}
	}
}

// TestBuiltIndexIngested: a built index past the stage threshold is
// committed as an ingested SSTable. Its entries are right and in order
// (columns past 16 bytes that share their first 16, NULLs, the build
// transaction's own later writes), they appear at once with the catalog's
// index set, a snapshot from before sees neither, and nothing is left in
// the stage directory.
func TestBuiltIndexIngested(t *testing.T) {
	for _, unique := range []bool{false, true} {
		t.Run(fmt.Sprintf("unique=%v", unique), func(t *testing.T) {
			db := openStaging(t, 50)
			createTable(t, db, tA)
			ix := colorIndex(false)
			want := fillColors(t, db, 400)
			if unique { // one row per color (and NULLs, which repeat)
				update(t, db, func(tx *Txn) error { return tx.Truncate(tA) })
				want = map[string][]string{}
				update(t, db, func(tx *Txn) error {
					for i := 0; i < 300; i++ {
						c := fmt.Sprintf("a-long-unique-color-name-%03d", (i*7)%300)
						if i%5 == 0 {
							c = "~"
						}
						v := fmt.Sprintf("%s:%d", c, i)
						mustInsert(t, tx, tA, fmt.Sprintf("r%05d", i), v)
						want[c] = append(want[c], v)
					}
					return nil
				})
				ix = colorIndex(true)
			}
			before := db.Begin()
			defer before.Rollback()
			n0 := ingests(db)
			tx := db.Begin()
			if err := tx.BuildIndex(tA, ix); err != nil {
				t.Fatal(err)
			}
			checkColors(t, tx, want)
			// Own writes after the build: they change the fresh entries.
			info := withIndex(tA, ix)
			mustInsert(t, tx, info, "r99999", "red-new:1")
			want["red-new"] = []string{"red-new:1"}
			if err := tx.Delete(info, k("r00003")); err != nil {
				t.Fatal(err)
			}
			if err := tx.Update(info, k("r00004"), k("r00004"), k("blue-new:2")); err != nil {
				t.Fatal(err)
			}
			want["blue-new"] = []string{"blue-new:2"}
			for c, vs := range want {
				want[c] = slices.DeleteFunc(vs, func(v string) bool { return strings.HasSuffix(v, ":3") || strings.HasSuffix(v, ":4") })
			}
			if err := tx.VerifyIndex(tA.ID, ix); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if got := ingests(db) - n0; got != 1 {
				t.Fatalf("the commit made %d ingests, want 1", got)
			}
			if names := stagedFiles(t, db); len(names) != 0 {
				t.Fatalf("the commit left %v in the stage directory", names)
			}
			verify(t, db, tA.ID, ix)
			after := db.Begin()
			defer after.Rollback()
			checkColors(t, after, want)
			if ids, err := after.Indexes(tA.ID); err != nil || !slices.Equal(ids, []IndexID{ix.ID}) {
				t.Fatalf("indexes after the commit: %v %v", ids, err)
			}
			if ids, err := before.Indexes(tA.ID); err != nil || len(ids) != 0 {
				t.Fatalf("a snapshot from before the build sees indexes %v (%v)", ids, err)
			}
			// Later writes maintain the ingested entries as any others.
			update(t, db, func(tx *Txn) error {
				if err := tx.Delete(info, k("r99999")); err != nil {
					return err
				}
				mustInsert(t, tx, info, "r99998", "red-new:5")
				return nil
			})
			verify(t, db, tA.ID, ix)
		})
	}
}

// TestBuiltIndexIngestFallsBack: a small index, and a commit that also
// writes a range deletion (here: it drops another index), write the
// entries through the batch, with the same result.
func TestBuiltIndexIngestFallsBack(t *testing.T) {
	db := openStaging(t, 50)
	createTable(t, db, tA)
	want := fillColors(t, db, 400)
	other := IndexInfo{ID: 8, Key: colorKey}
	update(t, db, func(tx *Txn) error { return tx.BuildIndex(tA, other) }) // ingested
	n0 := ingests(db)
	update(t, db, func(tx *Txn) error {
		if err := tx.BuildIndex(withIndex(tA, other), colorIndex(false)); err != nil {
			return err
		}
		return tx.DropIndex(tA.ID, other.ID)
	})
	if got := ingests(db) - n0; got != 0 {
		t.Fatalf("a commit with a range deletion made %d ingests", got)
	}
	verify(t, db, tA.ID, colorIndex(false))
	tx := db.Begin()
	checkColors(t, tx, want)
	tx.Rollback()

	small := openStaging(t, 1000)
	createTable(t, small, tA)
	want = fillColors(t, small, 400)
	n0 = ingests(small)
	update(t, small, func(tx *Txn) error { return tx.BuildIndex(tA, colorIndex(false)) })
	if got := ingests(small) - n0; got != 0 {
		t.Fatalf("an index below the threshold made %d ingests", got)
	}
	verify(t, small, tA.ID, colorIndex(false))
	tx = small.Begin()
	checkColors(t, tx, want)
	tx.Rollback()
}

// TestBuiltIndexDuplicates: a unique index whose rows repeat a key fails
// at BuildIndex with the index named, whichever path the commit takes.
func TestBuiltIndexDuplicates(t *testing.T) {
	db := openStaging(t, 50)
	createTable(t, db, tA)
	fillColors(t, db, 200)
	tx := db.Begin()
	defer tx.Rollback()
	err := tx.BuildIndex(tA, colorIndex(true))
	var dk *DuplicateKeyError
	if !errors.As(err, &dk) || dk.Index != 7 {
		t.Fatalf("BuildIndex of a unique index over repeated colors: %v", err)
	}
}
