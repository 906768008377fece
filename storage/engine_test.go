package storage

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
)

// engineCases opens every engine this build has: Pebble in memory, and
// with -tags tikv the mock TiKV cluster.
func engineCases(t *testing.T) map[string]func(t *testing.T) engine {
	cases := map[string]func(t *testing.T) engine{
		"pebble": func(t *testing.T) engine {
			db := openPebbleMem(t)
			return db.eng
		},
	}
	for scheme, open := range engineOpeners {
		cases[scheme] = func(t *testing.T) engine {
			if scheme == "tikv" {
				t.Fatalf("no real TiKV cluster in unit tests") // never reached: filtered below
			}
			e, err := open(nil, &Options{InMemory: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := e.close(); err != nil {
					t.Errorf("close: %v", err)
				}
			})
			return e
		}
	}
	delete(cases, "tikv") // needs a PD endpoint; tikvmock is its stand-in
	return cases
}

// openPebbleMem is an in-memory Pebble DB whatever MVSERVER_TEST_STORE says.
func openPebbleMem(t testing.TB) *DB {
	t.Helper()
	db, err := Open(Options{InMemory: true, CacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func engineKeys(t *testing.T, it engineIter, forward bool) []string {
	t.Helper()
	var out []string
	ok := it.First()
	if !forward {
		ok = it.Last()
	}
	for ; ok; ok = map[bool]func() bool{true: it.Next, false: it.Prev}[forward]() {
		v, err := it.ValueAndErr()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(it.Key())+"="+string(v))
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func commitOps(t *testing.T, e engine, ops func(b engineBatch)) {
	t.Helper()
	b := e.newBatch(0)
	defer b.close()
	ops(b)
	if err := e.commit(b); err != nil {
		t.Fatal(err)
	}
	if err := b.wait(); err != nil {
		t.Fatal(err)
	}
}

// TestEngineContract checks what the DB leans on of every engine: gets,
// bounded iteration both ways with seeks and direction changes, snapshots
// that do not move, atomic batches whose later writes win, range
// deletions, deferred sets and empty values.
func TestEngineContract(t *testing.T) {
	for name, open := range engineCases(t) {
		t.Run(name, func(t *testing.T) {
			e := open(t)
			commitOps(t, e, func(b engineBatch) {
				for _, k := range []string{"\x02a", "\x02b", "\x02c", "\x02d", "\x03x"} {
					_ = b.set([]byte(k), []byte("v"+k[1:]))
				}
				_ = b.set([]byte("\x02e"), nil) // an empty value is a value
			})
			if v, ok, err := e.get([]byte("\x02e"), nil); err != nil || !ok || len(v) != 0 {
				t.Fatalf("empty value: %q %v %v", v, ok, err)
			}
			if ok, err := e.has([]byte("\x02z")); err != nil || ok {
				t.Fatalf("absent key: %v %v", ok, err)
			}
			snap := e.snapshot()
			defer snap.close()

			// One batch: a range deletion, then a set inside the range and
			// a deferred set; the later write wins.
			commitOps(t, e, func(b engineBatch) {
				_ = b.set([]byte("\x02b"), []byte("old"))
				_ = b.delRange([]byte("\x02b"), []byte("\x02d"))
				_ = b.set([]byte("\x02c"), []byte("new"))
				k, v := b.setDeferred(2, 3)
				copy(k, "\x02f")
				copy(v, "def")
				if err := b.finishDeferred(); err != nil {
					t.Fatal(err)
				}
				_ = b.del([]byte("\x02a"))
			})

			it, err := e.newIter([]byte("\x02"), []byte("\x03"))
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"\x02c=new", "\x02d=vd", "\x02e=", "\x02f=def"}
			if got := engineKeys(t, it, true); !slices.Equal(got, want) {
				t.Fatalf("latest forward: %q, want %q", got, want)
			}
			it, _ = e.newIter([]byte("\x02"), []byte("\x03"))
			if got := engineKeys(t, it, false); !slices.Equal(got, reversed(want)) {
				t.Fatalf("latest reverse: %q", got)
			}

			// The snapshot still shows the first commit.
			sit, err := snap.newIter([]byte("\x02"), []byte("\x03"))
			if err != nil {
				t.Fatal(err)
			}
			old := []string{"\x02a=va", "\x02b=vb", "\x02c=vc", "\x02d=vd", "\x02e="}
			if got := engineKeys(t, sit, true); !slices.Equal(got, old) {
				t.Fatalf("snapshot: %q, want %q", got, old)
			}
			if v, ok, _ := snap.get([]byte("\x02a"), nil); !ok || string(v) != "va" {
				t.Fatalf("snapshot get: %q %v", v, ok)
			}

			// Seeks, direction changes, bounds moved, prefix seeks.
			sit, _ = snap.newIter([]byte("\x02b"), []byte("\x02e"))
			var steps []string
			note := func(ok bool) {
				if ok {
					steps = append(steps, string(sit.Key()[1:]))
				} else {
					steps = append(steps, "-")
				}
			}
			note(sit.SeekGE([]byte("\x02a")))
			note(sit.Next())
			note(sit.Prev())
			note(sit.Prev())
			note(sit.SeekLT([]byte("\x02z")))
			note(sit.Next())
			note(sit.SeekLT([]byte("\x02c")))
			note(sit.Next())
			note(sit.SeekPrefixGE([]byte("\x02c")))
			note(sit.SeekPrefixGE([]byte("\x02bb")))
			sit.SetBounds([]byte("\x03"), []byte("\x04"))
			note(sit.First())
			note(sit.Next())
			if err := sit.Close(); err != nil {
				t.Fatal(err)
			}
			if got, want := fmt.Sprint(steps), "[b c b - d - b c c - x -]"; got != want {
				t.Fatalf("steps %s, want %s", got, want)
			}
		})
	}
}

// TestEngineSuites runs the DB on every engine over the same writes and
// compares what each reads back: rows, versions, the change feed and a
// meta key.
func TestEngineSuites(t *testing.T) {
	results := map[string]string{}
	for name := range engineCases(t) {
		store := ""
		if name != "pebble" {
			store = name + "://"
		}
		db, err := Open(Options{InMemory: true, Store: store})
		if err != nil {
			t.Fatal(err)
		}
		info := TableInfo{ID: 7, ChangeDataFeed: true}
		for i := 0; i < 3; i++ {
			tx := db.Begin()
			for j := 0; j < 5; j++ {
				key := []byte{byte('a' + j)}
				switch {
				case i == 0:
					_, err = tx.Insert(info, key, []byte(fmt.Sprint(i, j)))
				case j%2 == 0:
					err = tx.Update(info, key, key, []byte(fmt.Sprint(i, j)))
				default:
					if i == 1 {
						err = tx.Delete(info, key)
					}
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := tx.PutMeta([]byte("m"), []byte{}); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatalf("%s: commit %d: %v", name, i, err)
			}
		}
		tx := db.Begin()
		var out bytes.Buffer
		it := tx.Scan(7, nil, nil)
		for it.Next() {
			r := it.Row()
			fmt.Fprintf(&out, "%s=%s id %d v %d; ", r.Key, r.Value, r.RowID, r.CommitVersion)
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		ci := tx.Changes(7, 0, 2)
		for ci.Next() {
			c := ci.Change()
			fmt.Fprintf(&out, "%d:%v:%s=%s; ", c.Version, c.Type, c.Key, c.Value)
		}
		if err := ci.Close(); err != nil {
			t.Fatal(err)
		}
		v, ok, err := tx.GetMeta([]byte("m"))
		fmt.Fprintf(&out, "meta %q %v %v", v, ok, err)
		tx.Rollback()
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		results[name] = out.String()
	}
	want := results["pebble"]
	t.Logf("pebble: %s", want)
	if want == "" || !bytes.Contains([]byte(want), []byte("meta \"\" true")) {
		t.Fatalf("pebble read back %q", want)
	}
	for name, got := range results {
		if got != want {
			t.Errorf("%s read back\n%s\npebble\n%s", name, got, want)
		}
	}
}

func reversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

// settle waits for the deletions an engine does after commits (TiKV
// deletes dead key spaces in the background, engine_tikv_dead.go).
func settle(db *DB) {
	if s, ok := db.eng.(interface{ settle() }); ok {
		s.settle()
	}
}
