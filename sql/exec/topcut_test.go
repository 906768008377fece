package exec

import (
	"math/rand"
	"testing"

	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// TestTopCut: ORDER BY … LIMIT over a projection of a scan (and over a
// filter in the scan) gives the row path's rows in its order, NULLs and
// ties included, for first keys of every kind the cutoff reads (decimal,
// integer, date; ascending and descending, NULLs first and last), while
// the scan skips rows past the cutoff.
func TestTopCut(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	db := loadVecTable(t, rng, 30000, false)
	// The first keys: v NUMERIC(12,2), k INT (many ties), dt DATE.
	firsts := []int{3, 1, 8}
	for q := range 24 {
		first := firsts[q%len(firsts)]
		s := plan.NewScan(vecTable)
		for i := range vecTable.Columns {
			s.Needed[i] = true
		}
		var in plan.Node = s
		filtered := q%2 == 1
		if filtered {
			in = &plan.Filter{Input: s, Cond: &plan.Binary{Op: plan.OpNe, L: col(6, types.Bool), R: &plan.Const{D: types.NewBool(false), T: types.Bool}, T: types.Bool}}
		}
		// Project (first, d, id): the sort's keys are the first, then d
		// (ties of k), then id.
		proj := &plan.Project{Input: in, Exprs: []plan.Expr{col(first, vecTable.Columns[first].Type), col(2, types.Int8), col(0, types.Int8)}}
		for _, e := range proj.Exprs {
			proj.Cols = append(proj.Cols, plan.Column{Name: "c", T: e.Type()})
		}
		keys := []plan.SortKey{
			{E: col(0, vecTable.Columns[first].Type), Desc: rng.Intn(2) == 0, NullsFirst: rng.Intn(2) == 0},
			{E: col(1, types.Int8), Desc: rng.Intn(2) == 0},
			{E: col(2, types.Int8)},
		}
		count := int64([]int{1, 10, 100}[rng.Intn(3)])
		p := &plan.Limit{Input: &plan.Sort{Input: proj, Keys: keys}, Count: &plan.Const{D: types.NewInt8(count), T: types.Int8},
			Offset: &plan.Const{D: types.NewInt8(int64(rng.Intn(3))), T: types.Int8}}
		want, _ := runTop(t, db, p, true)
		got, skipped := runTop(t, db, p, false)
		if len(got) != len(want) {
			t.Fatalf("seed %d, query %d: %d rows, want %d", seed, q, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("seed %d, query %d (keys %+v %+v, filter %v): row %d is %s, want %s", seed, q, keys[0], keys[1], filtered, i, got[i], want[i])
			}
		}
		if skipped == 0 {
			t.Fatalf("query %d: the scan skipped no row", q)
		}
	}
}

// runTop runs p (a Limit over a Sort) and returns its rows in order and
// how many rows its scan skipped at the cutoff.
func runTop(t *testing.T, db *storage.DB, p *plan.Limit, rowAtATime bool) ([]string, int64) {
	t.Helper()
	out, code, op := runOrderedOp(t, db, p, rowAtATime)
	if code != "" {
		t.Fatalf("SQLSTATE %s", code)
	}
	if s, ok := op.(*limitOp).in.(*sortOp); ok && s.cut != nil {
		return out, s.cut.skipped
	}
	return out, 0
}
