package refresh

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// TOP_K: a query ending in ORDER BY … LIMIT k (TPC-H Q2, Q3, Q10, Q18,
// Q21). The view holds the first k rows of its input X in that order. A
// refresh differentiates X and takes the first k of the view's rows plus
// X's rows gained minus those lost. That is the new answer exactly when it
// cannot depend on rows of X outside the view: when the view held fewer
// than k rows (then it held all of X), or when the new k-th row sorts
// strictly before the view's last row (rows outside sort at or after it);
// and the new k-th row does not tie with the next candidate. Otherwise (the
// top rows lost rows no candidate replaces, or a tie at the boundary) the
// refresh recomputes in full, and says so.
//
// The rows that follow the first k are kept as spares (topk_spares.go):
// the bound is then the last spare, not the view's last row, so a change
// that leaves the view's last row k-th, or removes rows the spares refill,
// does not recompute.

// topKShape is a query Limit(Sort(X)) with a constant count and no offset.
type topKShape struct {
	limit *plan.Limit
	sort  *plan.Sort
	k     int64
}

// findTopK finds the top-k shape at the root of q.
func findTopK(q plan.Node) *topKShape {
	l, ok := q.(*plan.Limit)
	if !ok || l.Offset != nil || l.Count == nil {
		return nil
	}
	c, ok := l.Count.(*plan.Const)
	if !ok || c.D.IsNull() {
		return nil
	}
	var k int64
	switch c.D.K {
	case types.KindInt2, types.KindInt4, types.KindInt8:
		k = c.D.I
	default:
		return nil
	}
	s, ok := l.Input.(*plan.Sort)
	if !ok || k <= 0 || k > topKMax {
		return nil
	}
	return &topKShape{limit: l, sort: s, k: k}
}

// topKMax is the largest k kept incrementally: the view's rows are read
// whole at each refresh.
const topKMax = 10000

type topK struct{}

// topKCost is TOP_K's estimate (costmodel.go) with input the work of the
// input's change plans, changed source rows, held view rows and k, and
// the view rows it writes: the held rows are read and ranked with the
// change, and at most k of them rewritten.
func topKCost(input float64, changed, held, k int64) (units, writes float64) {
	writes = 2 * math.Min(float64(held), float64(k))
	return input + float64(changeRowCost*changed) + resultRowCost*float64(held) + viewWriteCost*writes, writes
}

func (topK) Name() TechniqueName { return TopK }

func (topK) Applies(an *Analysis) (bool, string) {
	if ok, why := allowed(an, TopK, "the query does not end in ORDER BY … LIMIT k (a constant k up to 10000, no OFFSET)"); !ok {
		return false, why
	}
	return an.topK != nil, ""
}

func (topK) Run(ctx context.Context, r *techRun) (*change, error) {
	s := r.an.topK
	d, err := r.df.diff(s.sort.Input)
	if err != nil || !d.changed {
		return &change{}, err
	}
	r.df.recomputes = true
	in := r.in
	// Running the input's change plans is the work (an aggregate under
	// the top k recomputes its touched groups): weigh it first, with the
	// view's rows read and rewritten.
	if r.weigh != nil {
		units, writes := topKCost(r.inputWork(d), r.changed, r.viewRows, s.k)
		r.weighed = true
		if rf := r.weigh(TopK, units, writes); rf != nil {
			return nil, rf
		}
	}
	keyFns := make([]func(exec.Row) (types.Datum, error), len(s.sort.Keys))
	for i, k := range s.sort.Keys {
		if keyFns[i], err = exec.Compile(k.E, in.Exec); err != nil {
			return nil, err
		}
	}
	type cand struct {
		row  exec.Row
		keys []types.Datum
	}
	keyed := func(row exec.Row) (cand, error) {
		c := cand{row: row, keys: make([]types.Datum, len(keyFns))}
		for i, f := range keyFns {
			v, err := f(row)
			if err != nil {
				return c, err
			}
			c.keys[i] = v
		}
		return c, nil
	}
	// The view's rows, as the input's columns.
	v := in.View
	ids, cols := viewColumns(in)
	dec := types.NewRowDecoder(ids)
	var held [][]types.Datum
	it := in.Txn.Scan(storage.TableID(v.ID), nil, nil)
	for it.Next() {
		row := make([]types.Datum, len(ids))
		if err := dec.Decode(it.Row().Value, row); err != nil {
			it.Close()
			return nil, err
		}
		held = append(held, row)
	}
	err = it.Err()
	it.Close()
	if err != nil {
		return nil, err
	}
	// The spare rows that follow the view's in X (topk_spares.go).
	spares, complete, spared, err := readTopKSpares(in)
	if err != nil {
		return nil, err
	}
	// Candidates: the view's rows and the spares + gained − lost, one
	// Z-set.
	width := len(cols)
	key := func(dst []byte, row exec.Row, _ int64) ([]byte, bool, error) {
		for _, d := range row[:width] {
			dst = types.HashKey(dst, d)
		}
		return dst, true, nil
	}
	run := func(n plan.Node) rowSource {
		if n == nil {
			return nil
		}
		return func(emit func(exec.Row) error) error {
			op, err := buildOptimized(in.Exec, in.estimator(), n)
			if err != nil {
				return err
			}
			return exec.Drain(op, func(rows []exec.Row) error {
				for _, row := range rows {
					if err := emit(row); err != nil {
						return err
					}
				}
				return ctx.Err()
			})
		}
	}
	given := func(rows [][]types.Datum) rowSource {
		return func(emit func(exec.Row) error) error {
			for _, row := range rows {
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		}
	}
	z, err := consolidate([]zTerm{{given(held), 1}, {given(spares), 1}, {run(d.minus), -1}, {run(d.plus), 1}}, key, true)
	if err != nil {
		return nil, err
	}
	var cands []cand
	for _, e := range z.Entries() {
		for i := int64(0); i < e.Weight; i++ {
			c, err := keyed(e.Row)
			if err != nil {
				return nil, err
			}
			cands = append(cands, c)
		}
	}
	less := func(a, b cand) int { return exec.CompareSortKeys(s.sort.Keys, a.keys, b.keys) }
	sort.SliceStable(cands, func(i, j int) bool { return less(cands[i], cands[j]) < 0 })
	k := int(s.k)
	// bound: every row of X that is not a candidate sorts at or after it
	// (nil: there is none, every row of X is a candidate).
	var bound *cand
	what := "the view's last row"
	switch {
	case spared && complete:
	case spared && len(spares) > 0:
		b, err := keyed(spares[len(spares)-1])
		if err != nil {
			return nil, err
		}
		bound, what = &b, "the last spare row"
	case len(held) >= k:
		// No spares: rows of X outside the view sort at or after its
		// last row.
		for i, row := range held {
			c, err := keyed(row)
			if err != nil {
				return nil, err
			}
			if i == 0 || less(c, *bound) > 0 {
				bound = &c
			}
		}
	}
	if bound != nil {
		if len(cands) < k {
			return nil, &refusal{full: true, spent: true, why: fmt.Sprintf("TOP_K: the changes removed rows of the first %d and its spare rows, and gained too few to replace them", k)}
		}
		if less(cands[k-1], *bound) >= 0 {
			return nil, &refusal{full: true, spent: true, why: fmt.Sprintf("TOP_K: the new row %d does not sort before %s, so rows not kept may belong", k, what)}
		}
	}
	if len(cands) > k && less(cands[k-1], cands[k]) == 0 {
		return nil, &refusal{full: true, spent: true, why: fmt.Sprintf("TOP_K: rows %d and %d tie on the ORDER BY keys", k, k+1)}
	}
	top := cands[:min(k, len(cands))]
	if !r.dryRun {
		// The next spares: the candidates after the first k, as far as
		// they are known to be X's next rows (not after the bound).
		rest := cands[len(top):]
		n := 0
		for n < len(rest) && (bound == nil || less(rest[n], *bound) <= 0) {
			n++
		}
		next := make([][]types.Datum, 0, min(n, int(topKSpares(s.k))))
		for _, c := range rest[:min(n, int(topKSpares(s.k)))] {
			next = append(next, c.row[:width])
		}
		if err := writeTopKSpares(in, next, bound == nil && n <= int(topKSpares(s.k))); err != nil {
			return nil, err
		}
	}
	out := make([][]types.Datum, len(top))
	for i, c := range top {
		out[i] = c.row[:width]
	}
	ch := &change{plus: &plan.Given{Cols: cols, Rows: out}}
	if len(held) > 0 {
		ch.minus = &plan.Given{Cols: cols, Rows: held}
	}
	return ch, nil
}

func (topK) Estimate(s *sizer, r *techRun, c *change) float64 { return changeCost(s, c, r.changed) }
