package exec

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// sortInput is n random rows (k INT with many ties and NULLs, s TEXT,
// d NUMERIC, a INT[]) and the id of each row's position, so the test can
// check the order of equal keys.
func sortInput(rng *rand.Rand, n int) []Row {
	rows := make([]Row, n)
	for i := range rows {
		k := types.NewInt4(int64(rng.Intn(50)) - 10)
		if rng.Intn(10) == 0 {
			k = types.NullDatum
		}
		var d apd.Decimal
		d.SetFinite(int64(rng.Intn(100000)), -2)
		rows[i] = Row{
			types.NewInt8(int64(i)),
			k,
			types.Datum{K: types.KindText, S: fmt.Sprintf("v%06d-%s", rng.Intn(1000), string(rune('a'+rng.Intn(26))))},
			types.Datum{K: types.KindNumeric, D: &d},
			types.NewArray(types.KindArray, []types.Datum{types.NewInt4(int64(i)), types.NullDatum}),
		}
	}
	return rows
}

func runSort(t *testing.T, c *Ctx, in []Row, keys []plan.SortKey, topN int64) ([]Row, *sortOp) {
	t.Helper()
	op, err := newSort(c, &plan.Sort{Keys: keys}, &sliceOp{rows: append([]Row(nil), in...)})
	if err != nil {
		t.Fatal(err)
	}
	s := op.(*sortOp)
	s.topN = topN
	var out []Row
	if err := Drain(s, func(b []Row) error { out = append(out, b...); return nil }); err != nil {
		t.Fatal(err)
	}
	return out, s
}

// A sort past its memory budget spills sorted runs to files and merges
// them; the result is the in-memory sort's, equal keys in input order, and
// the budget is whole again afterwards. A tiny budget makes a run of each
// input batch, more than one merge takes, so runs are merged in passes.
func TestSortSpillsPastBudget(t *testing.T) {
	seed := rand.Int63()
	rng := rand.New(rand.NewSource(seed))
	in := sortInput(rng, 70000)
	keys := []plan.SortKey{
		{E: &plan.ColRef{Idx: 1, T: types.Int4}, Desc: true},
		{E: &plan.ColRef{Idx: 2, T: types.Text}},
	}
	want := append([]Row(nil), in...)
	sort.SliceStable(want, func(i, j int) bool {
		return compareKeys(keys, []types.Datum{want[i][1], want[i][2]}, []types.Datum{want[j][1], want[j][2]}) < 0
	})
	for _, limit := range []int64{0, 256 << 20, 4 << 20, 48 << 10} {
		dir := t.TempDir()
		mem := &Memory{Limit: limit, Setting: "query_memory_limit", TempDir: dir}
		c := &Ctx{Context: context.Background(), Env: types.DefaultEnv, Funcs: &funcs.Ctx{Env: types.DefaultEnv}, Mem: mem}
		got, s := runSort(t, c, in, keys, 0)
		if len(got) != len(want) {
			t.Fatalf("seed %d, limit %d: %d rows, want %d", seed, limit, len(got), len(want))
		}
		for i := range want {
			if types.Compare(got[i][0], want[i][0]) != 0 {
				t.Fatalf("seed %d, limit %d: row %d is input row %v, want %v", seed, limit, i, got[i][0].I, want[i][0].I)
			}
			for j := range want[i] {
				if types.Compare(got[i][j], want[i][j]) != 0 {
					t.Fatalf("seed %d, limit %d: row %d column %d is %v, want %v", seed, limit, i, j, got[i][j], want[i][j])
				}
			}
		}
		spilled := s.spills > 0
		if (limit > 0 && limit < 64<<20) != spilled {
			t.Errorf("limit %d: spilled=%v", limit, spilled)
		}
		if limit == 48<<10 && s.spills <= maxSortRuns {
			t.Errorf("limit %d: %d runs, want more than %d (a merge pass)", limit, s.spills, maxSortRuns)
		}
		if mem.Peak() > limit && limit > 0 {
			t.Errorf("limit %d: peak %d past the budget", limit, mem.Peak())
		}
		s.Close()
		if mem.Used() != 0 {
			t.Errorf("limit %d: %d bytes still charged after Close", limit, mem.Used())
		}
		if files, _ := os.ReadDir(dir); len(files) != 0 {
			t.Errorf("limit %d: %d spill files left in %s", limit, len(files), dir)
		}
	}
}

// Without a place to spill, a sort past its budget fails with 53200 and
// says which budget it ran out of.
func TestSortWithoutTempDirFails(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	in := sortInput(rng, 20000)
	mem := &Memory{Limit: 64 << 10, Setting: "query_memory_limit"}
	c := &Ctx{Context: context.Background(), Env: types.DefaultEnv, Funcs: &funcs.Ctx{Env: types.DefaultEnv}, Mem: mem}
	op, err := newSort(c, &plan.Sort{Keys: []plan.SortKey{{E: &plan.ColRef{Idx: 2, T: types.Text}}}}, &sliceOp{rows: in})
	if err != nil {
		t.Fatal(err)
	}
	err = Drain(op, func([]Row) error { return nil })
	pe := pgerror.Convert(err)
	if pe.Code != pgerror.OutOfMemory || pe.Detail != "The sort needs more than the statement's memory budget of 64kB." || pe.Hint == "" {
		t.Fatalf("got %v (%s: %q, hint %q)", err, pe.Code, pe.Detail, pe.Hint)
	}
	if mem.Used() != 0 {
		t.Errorf("%d bytes still charged", mem.Used())
	}
}

// Under a LIMIT the sort keeps only the rows it may output (top-N): the
// first n of the full sort, in a budget the full sort would not fit.
func TestSortTopN(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	in := sortInput(rng, 30000)
	keys := []plan.SortKey{{E: &plan.ColRef{Idx: 1, T: types.Int4}, NullsFirst: true}}
	full, _ := runSort(t, &Ctx{Context: context.Background(), Env: types.DefaultEnv, Funcs: &funcs.Ctx{Env: types.DefaultEnv}}, in, keys, 0)
	mem := &Memory{Limit: 1 << 20}
	c := &Ctx{Context: context.Background(), Env: types.DefaultEnv, Funcs: &funcs.Ctx{Env: types.DefaultEnv}, Mem: mem}
	for _, n := range []int64{1, 7, 500} {
		got, s := runSort(t, c, in, keys, n)
		if int64(len(got)) != n {
			t.Fatalf("top %d: %d rows", n, len(got))
		}
		for i := range got {
			if got[i][0].I != full[i][0].I {
				t.Fatalf("top %d: row %d is input row %d, want %d", n, i, got[i][0].I, full[i][0].I)
			}
		}
		s.Close()
	}
	if mem.Used() != 0 {
		t.Errorf("%d bytes still charged", mem.Used())
	}
}

// TestSortTopNAllocations: under a LIMIT, a row that cannot enter the
// first n costs no allocation of its own (its keys are evaluated into
// scratch), so a top-10 of 100k rows allocates far fewer objects than it
// reads rows. A key slice per input row made ORDER BY … LIMIT 10 over
// 1M rows spend most of its time in garbage collection once the heap was
// small (issue 21).
func TestSortTopNAllocations(t *testing.T) {
	const n = 100_000
	in := make([]Row, n)
	for i := range in {
		in[i] = Row{types.NewInt8(int64(i)), types.NewInt8(int64(i*7919) % 100_003)}
	}
	keys := []plan.SortKey{{E: &plan.ColRef{Idx: 1, T: types.Int8}, Desc: true}, {E: &plan.ColRef{Idx: 0, T: types.Int8}}}
	c := &Ctx{Context: context.Background(), Env: types.DefaultEnv, Funcs: &funcs.Ctx{Env: types.DefaultEnv}}
	var got []Row
	allocs := testing.AllocsPerRun(2, func() {
		got, _ = runSort(t, c, in, keys, 10)
	})
	if len(got) != 10 || got[0][1].I != 100_002 {
		t.Fatalf("top 10: %v", got)
	}
	if allocs > n/20 {
		t.Errorf("a top-10 of %d rows made %.0f allocations, want at most %d", n, allocs, n/20)
	}
}
