package storage

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestWriteSetModel puts random keys (runs ascending, as loads write them,
// and scattered ones) into a writeSet beside a map, taking clones along the
// way: every Get, Len and Ascend must agree with the map, and each clone
// with the map as it was when the clone was made. It runs with the tail's
// real chunk size and with chunks of 7, so writes span many chunks.
func TestWriteSetModel(t *testing.T) {
	for _, chunk := range []int{tailChunk, 7} {
		t.Run(fmt.Sprintf("chunks of %d", chunk), func(t *testing.T) {
			defer func(c int) { tailChunk = c }(tailChunk)
			tailChunk = chunk
			testWriteSetModel(t)
		})
	}
}

func testWriteSetModel(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		s := newWriteSet()
		model := map[string]string{}
		type snap struct {
			set   *writeSet
			model map[string]string
		}
		var clones []snap
		key := func(i int) []byte { return []byte(fmt.Sprintf("k%05d", i)) }
		next := 0
		for step := range 3000 {
			var i int
			switch r := rng.IntN(10); {
			case r < 6: // ascending run
				next += 1 + rng.IntN(3)
				i = next
			default: // anywhere, often an existing key
				i = rng.IntN(next + 10)
			}
			v := fmt.Sprintf("v%d", step)
			s.Put(rowWrite{key: key(i), value: []byte(v)})
			model[string(key(i))] = v
			switch rng.IntN(50) {
			case 0:
				clones = append(clones, snap{s.clone(), maps.Clone(model)})
			case 1:
				if len(clones) > 0 {
					s.unclone()
					clones = clones[1:]
				}
			}
		}
		check := func(what string, s *writeSet, model map[string]string) {
			t.Helper()
			if s.Len() != len(model) {
				t.Fatalf("seed %d %s: Len %d, want %d", seed, what, s.Len(), len(model))
			}
			for k, v := range model {
				if w, ok := s.Get([]byte(k)); !ok || string(w.value) != v {
					t.Fatalf("seed %d %s: Get %s = %q %v, want %q", seed, what, k, w.value, ok, v)
				}
			}
			keys := slices.Sorted(maps.Keys(model))
			lo, hi := rng.IntN(len(keys)), rng.IntN(len(keys))
			if lo > hi {
				lo, hi = hi, lo
			}
			for _, r := range [][2][]byte{{nil, nil}, {[]byte(keys[lo]), []byte(keys[hi])}, {[]byte(keys[lo] + "x"), nil}} {
				var got []string
				for w := range s.Ascend(r[0], r[1]) {
					got = append(got, string(w.key)+"="+string(w.value))
				}
				var want []string
				for _, k := range keys {
					if (r[0] == nil || k >= string(r[0])) && (r[1] == nil || k < string(r[1])) {
						want = append(want, k+"="+model[k])
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d %s: Ascend(%s, %s) = %v, want %v", seed, what, r[0], r[1], got, want)
				}
			}
		}
		check("set", s, model)
		for i, c := range clones {
			check(fmt.Sprintf("clone %d", i), c.set, c.model)
		}
	}
}
