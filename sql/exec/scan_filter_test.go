package exec

import (
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// runOrdered runs p on db and returns its rows in their order (rendered)
// and the error's SQLSTATE.
func runOrdered(t *testing.T, db *storage.DB, p plan.Node, rowAtATime bool) ([]string, string) {
	t.Helper()
	out, code, _ := runOrderedOp(t, db, p, rowAtATime)
	return out, code
}

// runOrderedOp is runOrdered that also returns the root operator (closed).
func runOrderedOp(t *testing.T, db *storage.DB, p plan.Node, rowAtATime bool) ([]string, string, Operator) {
	t.Helper()
	return runOrderedWith(t, db, p, rowAtATime, 0)
}

// runOrderedWith is runOrderedOp with workers parallel workers.
func runOrderedWith(t *testing.T, db *storage.DB, p plan.Node, rowAtATime bool, workers int) ([]string, string, Operator) {
	t.Helper()
	txn := db.Begin()
	defer txn.Rollback()
	c := testCtx(txn, rowAtATime)
	c.Workers = workers
	op, err := Build(c, p)
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := p.(*plan.Filter); ok && !rowAtATime {
		if _, isScan := f.Input.(*plan.Scan); isScan {
			if s, ok := op.(*scanOp); !ok || s.pred == nil {
				t.Fatalf("Filter over Scan built as %T, not a filtering scan", op)
			}
		}
	}
	var out []string
	err = Drain(op, func(b []Row) error {
		for _, r := range b {
			out = append(out, renderRow(r))
		}
		return nil
	})
	if err != nil {
		return nil, pgerror.Code(err), op
	}
	return out, "", op
}

func scanAll() *plan.Scan {
	s := plan.NewScan(vecTable)
	for i := range s.Needed {
		s.Needed[i] = true
	}
	return s
}

// TestScanFilterMatchesFilterOp: a random filter evaluated inside the scan
// gives the rows of the Filter operator over the plain scan, in the same
// order (or the same error), with or without a LIMIT above (batches that
// grow), a key range, and a row-id column in the condition.
func TestScanFilterMatchesFilterOp(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	db := loadVecTable(t, rng, 6000, false)
	g := &vecGen{rng: rng}
	nonEmpty, errs := 0, 0
	switched := filteredReadaheads.Load()
	for q := range 150 {
		s := scanAll()
		if q%5 == 1 {
			s.Start = &plan.KeyBound{Values: []plan.Expr{&plan.Const{D: types.NewInt8(int64(rng.Intn(3000))), T: types.Int8}}, Inclusive: rng.Intn(2) == 0}
		}
		cond := g.boolExpr(3)
		if q%7 == 3 {
			// The row id, set by the scan, not decoded.
			nt := len(vecTable.Columns)
			cond = &plan.And{Args: []plan.Expr{cond, &plan.Binary{Op: plan.OpGt, L: col(nt, types.Int8), R: &plan.Const{D: types.NewInt8(0), T: types.Int8}, T: types.Bool}}}
		}
		var p plan.Node = &plan.Filter{Input: s, Cond: cond}
		want, wantErr := runOrdered(t, db, p, true)
		got, gotErr := runOrdered(t, db, p, false)
		if gotErr != wantErr || !slices.Equal(got, want) {
			t.Fatalf("seed %d query %d: got %d rows err %q, want %d rows err %q\nplan %s", seed, q, len(got), gotErr, len(want), wantErr, strings.Join(plan.Explain(p, nil), "\n"))
		}
		if len(want) > 0 {
			nonEmpty++
		}
		if wantErr != "" {
			errs++
		}
		// Under a LIMIT a condition that fails on some row may fail on
		// one path only: each evaluates it ahead of the LIMIT up to the
		// end of a batch (of rows read on the row path, of rows kept in
		// the scan), as neither stops at the row PostgreSQL stops at.
		fullErr := wantErr
		lim := &plan.Limit{Input: p, Count: &plan.Const{D: types.NewInt8(int64(rng.Intn(50))), T: types.Int8}}
		want, wantErr = runOrdered(t, db, lim, true)
		got, gotErr = runOrdered(t, db, lim, false)
		if gotErr != wantErr && fullErr != "" && (gotErr == "" || gotErr == fullErr) && (wantErr == "" || wantErr == fullErr) {
			continue
		}
		if gotErr != wantErr || !slices.Equal(got, want) {
			t.Fatalf("seed %d query %d under LIMIT: got %d rows err %q, want %d rows err %q", seed, q, len(got), gotErr, len(want), wantErr)
		}
	}
	t.Logf("%d of 150 filters kept rows, %d failed alike", nonEmpty, errs)
	// Filters that keep most rows hand their condition to the batches
	// read ahead (scan_filter.go); the comparison above covered them.
	if filteredReadaheads.Load() == switched {
		t.Errorf("no filtering scan turned to readahead")
	}
	if nonEmpty < 30 {
		t.Errorf("only %d filters kept rows", nonEmpty)
	}
}

// TestReusedBatchesMatchRowPath: a window over a scan (random integer-like
// and other keys, NULLs, DESC: the packed sort and its fallback) and a
// top-N sort over a scan, both reading reused batches (the table is big
// enough for the scan to read ahead), give the row path's rows in the
// same order.
func TestReusedBatchesMatchRowPath(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	db := loadVecTable(t, rng, 6000, false)
	rn, _ := funcs.Lookup("row_number")
	keyCols := []int{0, 1, 2, 3, 5, 6, 8} // id, k, d, v, s, b, dt
	ra := ReadaheadScans()
	for q := range 24 {
		key := func() plan.SortKey {
			i := keyCols[rng.Intn(len(keyCols))]
			if q%2 == 0 {
				// Integer-like keys only (the packed sort, unless NULLs).
				i = []int{0, 1, 2, 8}[rng.Intn(4)]
			}
			return plan.SortKey{E: col(i, vecTable.Columns[i].Type), Desc: rng.Intn(2) == 0, NullsFirst: rng.Intn(3) == 0}
		}
		var part []plan.Expr
		for range rng.Intn(3) {
			part = append(part, key().E)
		}
		var order []plan.SortKey
		for range 1 + rng.Intn(3) {
			order = append(order, key())
		}
		s := scanAll()
		nc := len(s.Columns())
		w := &plan.Window{Input: s, Cols: append(append([]plan.Column(nil), s.Columns()...), plan.Column{Name: "rn", T: types.Int8}),
			Calls: []plan.WindowCall{{Name: "row_number", Fn: rn, T: types.Int8, PartitionBy: part, OrderBy: order}}}
		var p plan.Node = w
		if q%3 == 0 {
			p = &plan.Filter{Input: w, Cond: &plan.Binary{Op: plan.OpLe, L: col(nc, types.Int8), R: &plan.Const{D: types.NewInt8(2), T: types.Int8}, T: types.Bool}}
		}
		want, wantErr := runOrdered(t, db, p, true)
		got, gotErr := runOrdered(t, db, p, false)
		if gotErr != wantErr || !slices.Equal(got, want) {
			t.Fatalf("seed %d window %d: got %d rows err %q, want %d rows err %q\nplan %s", seed, q, len(got), gotErr, len(want), wantErr, strings.Join(plan.Explain(p, nil), "\n"))
		}
		// ORDER BY … LIMIT n over the scan (ties broken by id).
		srt := &plan.Sort{Input: scanAll(), Keys: append(order, plan.SortKey{E: col(0, types.Int8)})}
		lim := &plan.Limit{Input: srt, Count: &plan.Const{D: types.NewInt8(int64(1 + rng.Intn(3000))), T: types.Int8}}
		want, wantErr = runOrdered(t, db, lim, true)
		got, gotErr = runOrdered(t, db, lim, false)
		if gotErr != wantErr || !slices.Equal(got, want) {
			t.Fatalf("seed %d top-N %d: got %d rows err %q, want %d rows err %q\nplan %s", seed, q, len(got), gotErr, len(want), wantErr, strings.Join(plan.Explain(lim, nil), "\n"))
		}
	}
	// A row-path aggregation (DISTINCT has no vector state) over a
	// projection of the scan: both reuse their batches.
	for q := range 6 {
		s := scanAll()
		exprs := []plan.Expr{col(1, types.Int4), col(5, types.Text), col(3, vecTable.Columns[3].Type)}
		pr := &plan.Project{Input: s, Exprs: exprs, Cols: []plan.Column{{Name: "k", T: types.Int4}, {Name: "s", T: types.Text}, {Name: "v", T: exprs[2].Type()}}}
		gb := []plan.Expr{&plan.Binary{Op: plan.OpMod, L: col(0, types.Int4), R: &plan.Const{D: types.NewInt4(int64(2 + q)), T: types.Int4}, T: types.Int4}}
		aggs := []plan.AggCall{aggCall(t, "count", true, col(1, types.Text)), aggCall(t, "sum", false, col(2, exprs[2].Type())), aggCall(t, "max", false, col(1, types.Text))}
		p := &plan.Aggregate{Input: pr, GroupBy: gb, Aggs: aggs, Cols: make([]plan.Column, len(gb)+len(aggs))}
		want, wantErr, _ := runVec(t, db, p, true, 0, 0)
		got, gotErr, v := runVec(t, db, p, false, 0, 0)
		if v || gotErr != wantErr || !slices.Equal(got, want) {
			t.Fatalf("seed %d aggregation %d (vectorized %v): got %d rows err %q, want %d rows err %q", seed, q, v, len(got), gotErr, len(want), wantErr)
		}
	}
	if ReadaheadScans() == ra {
		t.Log("no scan read ahead (one core?)")
	}
}

// TestSortIntKeys: the packed sort orders like compareKeys (then the
// rows, then the input order), and declines NULLs and other kinds.
func TestSortIntKeys(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for iter := range 200 {
		n, m := 1+rng.Intn(200), 1+rng.Intn(intSortKeys)
		keys := make([]types.Datum, n*m)
		rows := make([]Row, n)
		for i := range n {
			for j := range m {
				keys[i*m+j] = types.NewInt8(int64(rng.Intn(5) - 2))
				if rng.Intn(4) == 0 {
					keys[i*m+j] = types.NewInt8([]int64{-1 << 63, 1<<63 - 1}[rng.Intn(2)])
				}
			}
			rows[i] = Row{types.NewInt4(int64(rng.Intn(3)))}
		}
		sk := make([]plan.SortKey, m)
		desc := make([]bool, m)
		for j := range m {
			desc[j] = rng.Intn(2) == 0
			sk[j].Desc = desc[j]
		}
		perm := make([]int, n)
		want := make([]int, n)
		for i := range perm {
			perm[i], want[i] = i, i
		}
		slices.SortStableFunc(want, func(a, b int) int {
			if c := compareKeys(sk, keys[a*m:(a+1)*m], keys[b*m:(b+1)*m]); c != 0 {
				return c
			}
			return compareRowValues(rows[a], rows[b])
		})
		if !sortIntKeys(perm, keys, m, desc, rows) {
			t.Fatal("integer keys declined")
		}
		if !slices.Equal(perm, want) {
			t.Fatalf("iteration %d: got %v, want %v", iter, perm, want)
		}
		keys[rng.Intn(len(keys))] = types.NullDatum
		if sortIntKeys(perm, keys, m, desc, rows) {
			t.Fatal("a NULL key accepted")
		}
		keys[rng.Intn(len(keys))] = types.NewText("x")
		if sortIntKeys(perm, keys, m, desc, rows) {
			t.Fatal("a text key accepted")
		}
	}
}
