package exec

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

func init() {
	// plan.Rows{Gen: "spilltest", Arg: rows}: the test's rows, in a fresh
	// slice (consumers may filter a batch in place).
	RegisterRowSource("spilltest", func(_ *Ctx, arg any) ([]Row, error) {
		return append([]Row(nil), arg.([]Row)...), nil
	})
}

// spillCols are the columns of spillInput's rows.
var spillCols = []plan.Column{{Name: "id", T: types.Int8}, {Name: "k", T: types.Int4}, {Name: "s", T: types.Text}, {Name: "d", T: types.Numeric}}

// spillInput is n random rows (id, k INT with keys in [0, keys) and
// NULLs, s TEXT, d NUMERIC with equal values written apart: 1.5, 1.50).
func spillInput(rng *rand.Rand, n, keys int) []Row {
	rows := make([]Row, n)
	for i := range rows {
		k := types.NewInt4(int64(rng.Intn(keys)))
		if rng.Intn(20) == 0 {
			k = types.NullDatum
		}
		var d apd.Decimal
		d.SetFinite(int64(rng.Intn(50)), 0)
		if rng.Intn(2) == 0 {
			d.SetFinite(d.Coeff.Int64()*10, -1)
		}
		s := types.NewText(fmt.Sprintf("s%d", rng.Intn(40)))
		if rng.Intn(15) == 0 {
			s = types.NullDatum
		}
		rows[i] = Row{types.NewInt8(int64(i)), k, s, {K: types.KindNumeric, D: &d}}
	}
	return rows
}

func spillRows(rows []Row) *plan.Rows {
	return &plan.Rows{Cols: spillCols, Gen: "spilltest", Arg: rows}
}

func col(i int, t types.T) *plan.ColRef { return &plan.ColRef{Idx: i, T: t} }

func aggCall(t *testing.T, name string, distinct bool, args ...plan.Expr) plan.AggCall {
	t.Helper()
	f, ok := funcs.Lookup(name)
	if !ok || f.Agg == nil {
		t.Fatalf("no aggregate %s", name)
	}
	var ats []types.T
	for _, a := range args {
		ats = append(ats, a.Type())
	}
	rt, ns, ok := f.Agg.Resolve(ats)
	if !ok {
		t.Fatalf("%s does not take %v", name, ats)
	}
	return plan.AggCall{Name: name, Def: &plan.AggSpec{NewState: ns}, Args: args, Distinct: distinct, T: rt}
}

// openFiles counts the process's open file descriptors.
func openFiles(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// runPlan runs p under a budget of limit bytes (0: none) spilling to a
// temporary directory, and returns its rows rendered as sorted strings.
// It checks that the budget is whole again and no file is left open.
func runPlan(t *testing.T, p plan.Node, limit int64, ctx context.Context) ([]string, Operator, error) {
	t.Helper()
	mem := &Memory{Limit: limit, Setting: "query_memory_limit", TempDir: t.TempDir()}
	c := &Ctx{Context: ctx, Env: types.DefaultEnv, Funcs: &funcs.Ctx{Env: types.DefaultEnv}, Mem: mem}
	fds := openFiles(t)
	op, err := Build(c, p)
	if err != nil {
		if used := mem.Used(); used != 0 {
			t.Errorf("limit %d: %d bytes still charged after a failed build", limit, used)
		}
		return nil, nil, err
	}
	var out []string
	err = Drain(op, func(b []Row) error {
		for _, r := range b {
			out = append(out, renderRow(r))
		}
		return nil
	})
	if used := mem.Used(); used != 0 {
		t.Errorf("limit %d: %d bytes still charged after close", limit, used)
	}
	if n := openFiles(t); n > fds {
		t.Errorf("limit %d: %d more files open after close", limit, n-fds)
	}
	if ents, _ := os.ReadDir(mem.TempDir); len(ents) != 0 {
		t.Errorf("limit %d: %d files left in the spill directory", limit, len(ents))
	}
	slices.Sort(out)
	return out, op, err
}

// renderRow shows a row exactly: kinds and numeric scales included.
func renderRow(r Row) string {
	var b strings.Builder
	for _, d := range r {
		if d.IsNull() {
			b.WriteString("NULL|")
			continue
		}
		fmt.Fprintf(&b, "%d:%s|", d.K, d.String())
	}
	return b.String()
}

// spilled reports how many passes of op spilled.
func spilled(op Operator) int {
	switch o := op.(type) {
	case *aggregateOp:
		return o.spills
	case *distinctOp:
		return o.spills
	case *joinOp:
		if o.grace != nil {
			return o.grace.parts
		}
	}
	return 0
}

// checkSpills runs p in memory and under each tiny budget and wants the
// same rows, the tiny budgets having spilled; it returns how many passes
// spilled under the last.
func checkSpills(t *testing.T, name string, seed int64, p func() plan.Node, limits ...int64) int {
	t.Helper()
	return checkUnderLimits(t, name, seed, p, true, limits...)
}

// checkUnderLimits is checkSpills; with mustSpill false the plan may also
// fit the limits without spilling (a keys-only semi or anti join holds one
// entry per distinct key), and only its rows are checked.
func checkUnderLimits(t *testing.T, name string, seed int64, p func() plan.Node, mustSpill bool, limits ...int64) int {
	t.Helper()
	want, op, err := runPlan(t, p(), 0, context.Background())
	if err != nil {
		t.Fatalf("%s (seed %d) in memory: %v", name, seed, err)
	}
	if n := spilled(op); n != 0 {
		t.Fatalf("%s: spilled %d times without a budget", name, n)
	}
	var n int
	for _, limit := range limits {
		got, op, err := runPlan(t, p(), limit, context.Background())
		if err != nil {
			t.Fatalf("%s (seed %d), limit %d: %v (%s)", name, seed, limit, err, pgerror.Convert(err).Detail)
		}
		if mustSpill && spilled(op) == 0 {
			t.Errorf("%s, limit %d: did not spill", name, limit)
		}
		n = spilled(op)
		if !slices.Equal(got, want) {
			t.Fatalf("%s (seed %d), limit %d: %d rows differ from the in-memory %d rows", name, seed, limit, len(got), len(want))
		}
	}
	return n
}

// Hash aggregation past its budget spills the rows of new keys and
// aggregates them file by file (again partitioned when a file is still
// too big): the groups and every aggregate equal the in-memory run's,
// order-dependent ones (array_agg) included, NULL keys form one group and
// the budget and files are all given back.
func TestHashAggregateSpills(t *testing.T) {
	seed := rand.Int63()
	rng := rand.New(rand.NewSource(seed))
	in := spillInput(rng, 60000, 15000)
	agg := func(aggs ...plan.AggCall) func() plan.Node {
		return func() plan.Node {
			return &plan.Aggregate{
				Input:   spillRows(in),
				GroupBy: []plan.Expr{col(1, types.Int4)},
				Aggs:    aggs,
				Cols:    make([]plan.Column, 1+len(aggs)),
			}
		}
	}
	count := aggCall(t, "count", false, col(2, types.Text))
	sum := aggCall(t, "sum", false, col(3, types.Numeric))
	maxS := aggCall(t, "max", false, col(2, types.Text))
	// States of fixed size: 64kB partitions files again.
	if n := checkSpills(t, "GROUP BY k: count, sum, max", seed, agg(count, sum, maxS), 1<<20, 256<<10, 64<<10); n < 2 {
		t.Errorf("64kB: %d passes spilled, want files partitioned again", n)
	}
	// Growing states (array_agg keeps its group's values in input order,
	// count(DISTINCT) its arguments): the groups kept in memory grow past
	// the share left to them, within the overdraft.
	arr := aggCall(t, "array_agg", false, col(0, types.Int8))
	cd := aggCall(t, "count", true, col(2, types.Text))
	checkSpills(t, "GROUP BY k: array_agg, count(DISTINCT)", seed, agg(count, arr, cd), 1<<20)

	// Group keys that are numerics equal but written apart (1.5, 1.50)
	// keep the preferred one whichever pass sees them.
	byD := func() plan.Node {
		return &plan.Aggregate{
			Input:   spillRows(in),
			GroupBy: []plan.Expr{col(3, types.Numeric), col(2, types.Text)},
			Aggs:    []plan.AggCall{aggCall(t, "count", false, col(0, types.Int8))},
			Cols:    make([]plan.Column, 3),
		}
	}
	checkSpills(t, "GROUP BY d, s", seed, byD, 64<<10)
}

// DISTINCT past its budget spills the rows of values not yet seen: the
// rows are the in-memory run's, canonical numerics included.
func TestDistinctSpills(t *testing.T) {
	seed := rand.Int63()
	rng := rand.New(rand.NewSource(seed))
	in := spillInput(rng, 50000, 8000)
	proj := func(cols ...int) plan.Node {
		var exprs []plan.Expr
		var pc []plan.Column
		for _, i := range cols {
			exprs = append(exprs, col(i, spillCols[i].T))
			pc = append(pc, spillCols[i])
		}
		return &plan.Distinct{Input: &plan.Project{Input: spillRows(in), Exprs: exprs, Cols: pc}}
	}
	if n := checkSpills(t, "DISTINCT k, s", seed, func() plan.Node { return proj(1, 2) }, 256<<10, 32<<10); n < 2 {
		t.Errorf("32kB: %d passes spilled, want files partitioned again", n)
	}
	checkSpills(t, "DISTINCT k, d", seed, func() plan.Node { return proj(1, 3) }, 256<<10, 32<<10)
}

// A hash join whose build side is past the budget joins partition pairs
// (grace hash join): every join kind gives the in-memory rows, with
// duplicate keys, NULL keys on both sides and a residual condition.
func TestHashJoinSpills(t *testing.T) {
	seed := rand.Int63()
	rng := rand.New(rand.NewSource(seed))
	left := spillInput(rng, 10000, 3000)
	right := spillInput(rng, 15000, 4000)
	for _, kind := range []plan.JoinKind{plan.JoinInner, plan.JoinLeft, plan.JoinRight, plan.JoinFull, plan.JoinSemi, plan.JoinAnti} {
		for _, residual := range []bool{false, true} {
			join := func() plan.Node {
				j := &plan.Join{Kind: kind, Left: spillRows(left), Right: spillRows(right),
					LeftKeys: []plan.Expr{col(1, types.Int4)}, RightKeys: []plan.Expr{col(1, types.Int4)}}
				if residual {
					// l.s < r.s (NULL for NULL s: no match)
					j.Residual = &plan.Binary{Op: plan.OpLt, L: col(2, types.Text), R: col(len(spillCols)+2, types.Text), T: types.Bool}
				}
				return j
			}
			// A semi or anti join without a residual keeps only the build
			// side's distinct keys, which fit: it need not spill.
			keysOnly := !residual && (kind == plan.JoinSemi || kind == plan.JoinAnti)
			checkUnderLimits(t, fmt.Sprintf("join kind %d residual %v", kind, residual), seed, join, !keysOnly, 2<<20, 1<<20)
		}
	}
	// A build side four times as big: file pairs are partitioned again.
	big := spillInput(rng, 60000, 16000)
	for _, kind := range []plan.JoinKind{plan.JoinFull, plan.JoinAnti} {
		join := func() plan.Node {
			j := &plan.Join{Kind: kind, Left: spillRows(left), Right: spillRows(big),
				LeftKeys: []plan.Expr{col(1, types.Int4)}, RightKeys: []plan.Expr{col(1, types.Int4)}}
			if kind == plan.JoinAnti {
				// With a residual the anti join holds the build side's
				// rows, not only its keys, so it spills.
				j.Residual = &plan.Binary{Op: plan.OpLt, L: col(2, types.Text), R: col(len(spillCols)+2, types.Text), T: types.Bool}
			}
			return j
		}
		if n := checkSpills(t, fmt.Sprintf("join kind %d, big build side", kind), seed, join, 1<<20); n < 2 {
			t.Errorf("join kind %d: partitioned %d times, want file pairs partitioned again", kind, n)
		}
	}
}

// Past the last partitioning level — a build side whose rows all share
// one key — the join fails with 53200, giving back its budget and files;
// so does a cancelled spilling aggregation.
func TestSpillGivesUp(t *testing.T) {
	var right []Row
	for i := range 20000 {
		right = append(right, Row{types.NewInt8(int64(i)), types.NewInt4(7), types.NewText("x"), types.NullDatum})
	}
	j := &plan.Join{Kind: plan.JoinInner, Left: spillRows(right[:10]), Right: spillRows(right),
		LeftKeys: []plan.Expr{col(1, types.Int4)}, RightKeys: []plan.Expr{col(1, types.Int4)}}
	_, _, err := runPlan(t, j, 256<<10, context.Background())
	if pgerror.Code(err) != pgerror.OutOfMemory {
		t.Fatalf("one key past the budget: %v, want 53200", err)
	}

	rng := rand.New(rand.NewSource(1))
	in := spillInput(rng, 60000, 60000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	agg := &plan.Aggregate{Input: spillRows(in), GroupBy: []plan.Expr{col(0, types.Int8)},
		Aggs: []plan.AggCall{aggCall(t, "count", false, col(2, types.Text))}, Cols: make([]plan.Column, 2)}
	if _, _, err := runPlan(t, agg, 64<<10, ctx); err == nil {
		t.Fatal("a cancelled aggregation succeeded")
	}
}
