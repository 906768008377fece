package exec

import (
	"math/rand"
	"runtime"
	"slices"
	"testing"

	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// TestBatchFilterMatchesRowPath: a scan testing its condition a batch at
// a time gives the row path's rows in order, or its error, also when a
// batch holds a decimal at another scale than its column's (that batch
// is tested row at a time) or its kernel fails, with and without a key
// range, a LIMIT and excluded rows.
func TestBatchFilterMatchesRowPath(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	db := loadVecTable(t, rng, 5000, true)
	g := &vecGen{rng: rng}
	tested, retested, par := batchesTested.Load(), batchesRetested.Load(), ParallelFilteredScans()
	nonEmpty := 0
	for q := range 80 {
		s := scanAll()
		switch q % 4 {
		case 1:
			s.Start = &plan.KeyBound{Values: []plan.Expr{&plan.Const{D: types.NewInt8(int64(rng.Intn(2500))), T: types.Int8}}, Inclusive: true}
		case 2:
			s.Exclude = map[int64]struct{}{}
			for range 50 {
				s.Exclude[int64(rng.Intn(5000))] = struct{}{}
			}
		}
		var p plan.Node = &plan.Filter{Input: s, Cond: g.boolExpr(3)}
		want, wantErr := runOrdered(t, db, p, true)
		// Parallel readers (scan_parallel.go) with one or two workers.
		got, gotErr, _ := runOrderedWith(t, db, p, false, 1+q%2)
		if gotErr != wantErr || !slices.Equal(got, want) {
			t.Fatalf("seed %d query %d: got %d rows err %q, want %d rows err %q", seed, q, len(got), gotErr, len(want), wantErr)
		}
		if len(want) > 0 {
			nonEmpty++
		}
		if q%3 == 0 && wantErr == "" {
			lim := &plan.Limit{Input: p, Count: &plan.Const{D: types.NewInt8(int64(rng.Intn(40))), T: types.Int8}}
			want, _ = runOrdered(t, db, lim, true)
			got, _ = runOrdered(t, db, lim, false)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d query %d under LIMIT: got %d rows, want %d", seed, q, len(got), len(want))
			}
		}
	}
	if batchesTested.Load() == tested {
		t.Error("no batch was tested by a kernel")
	}
	if batchesRetested.Load() == retested {
		t.Error("no batch was tested again row at a time")
	}
	if ParallelFilteredScans() == par && runtime.GOMAXPROCS(0) > 1 {
		t.Error("no filtered scan read in parallel")
	}
	if nonEmpty < 15 {
		t.Errorf("only %d filters kept rows", nonEmpty)
	}
}
