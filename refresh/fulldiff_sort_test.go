package refresh

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// TestNewRowSetSort: the bucketed sort of many rows gives the
// comparator's order (hash, then value), duplicates and hash ties
// included.
func TestNewRowSetSort(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{10, 5000, 70000} {
		var s newRowSet
		for i := 0; i < n; i++ {
			s.add([]byte(fmt.Sprintf("row %d", rng.Intn(n/2+1))))
		}
		// hash ties with different values
		for i := 0; i < 50; i++ {
			s.ents[rng.Intn(n)].h = s.ents[rng.Intn(n)].h
		}
		want := slices.Clone(s.ents)
		slices.SortFunc(want, s.cmp)
		if err := s.sort(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(s.ents) != len(want) {
			t.Fatalf("n=%d: %d entries after sorting, want %d", n, len(s.ents), len(want))
		}
		for i := range want {
			if s.cmp(s.ents[i], want[i]) != 0 {
				t.Fatalf("n=%d: entry %d out of order", n, i)
			}
		}
	}
}

// The sort of a large set stops when its context ends: a cancelled
// REFRESH … FULL of millions of rows no longer finishes sorting first.
func TestNewRowSetSortCancel(t *testing.T) {
	s := &newRowSet{}
	for i := range 100000 {
		s.add([]byte(fmt.Sprint(i)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.sort(ctx); err != context.Canceled {
		t.Fatalf("sort with a cancelled context: %v, want context.Canceled", err)
	}
}
