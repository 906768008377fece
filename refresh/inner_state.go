package refresh

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/storage"
)

// Stored states of an aggregate inside the query whose whole output
// another aggregate reads: TPC-H Q13's count of orders per customer under
// the count of customers per count, Q15's revenue per supplier under its
// max. Differentiated as any aggregate (delta.go), such an inner aggregate
// recomputes each touched group from its input twice, as of the
// checkpoint and now: for Q15, every lineitem of every supplier a batch
// touches, through an index, which cost more than PostgreSQL's whole
// REFRESH. Kept as per-group states (groupagg.go's, under their own
// prefix), a batch folds its input's change into the touched groups only;
// their old and new rows are the inner aggregate's change, from which the
// nodes above it are maintained as from any change.
//
// The states are built by the full recompute, in the same pass: the inner
// aggregate is computed from its states and the query runs over those rows
// (no second evaluation). The checkpoint names the inner aggregates whose
// states match it (Checkpoint.InnerStates); an incremental refresh keeps
// an id when it folded that aggregate's change, or when none of its
// sources moved; any other refresh leaves it out, and its aggregate is
// recomputed group by group again until the next full recompute.
//
// Only an aggregate whose every row is read by an aggregate above it
// (through projections, sorts and WITH references) keeps states: there
// the states replace work proportional to the groups' inputs. Under a
// join or a filter that reads few of its groups (TPC-H Q17's per-part
// average under a join with 20 parts), states would cost a full
// recompute every group's state and save little.

// innerAgg is one inner aggregate that keeps states.
type innerAgg struct {
	// id numbers the query's aggregates in a fixed walk order (the
	// checkpoint's Definition pins the query, so the binding numbers them
	// alike every refresh).
	id  int
	agg *plan.Aggregate
}

// innerAggs are the query's inner aggregates with states, and each
// aggregate node (a shared WITH query is bound once per reference: every
// reference's node) to its innerAgg.
type innerAggs struct {
	list  []*innerAgg
	byAgg map[*plan.Aggregate]*innerAgg
}

// findInnerAggs walks q: its nodes, the plans of its uncorrelated
// subqueries, a shared WITH query's input at its first reference (the
// later ones aliased to it node for node).
func findInnerAggs(q plan.Node) *innerAggs {
	ia := &innerAggs{byAgg: map[*plan.Aggregate]*innerAgg{}}
	// Whether some reference of a shared WITH query is read whole by an
	// aggregate (Q15's revenue0: by its max, not by its join).
	wholly := map[*plan.CTE]bool{}
	var mark func(n plan.Node, read bool)
	mark = func(n plan.Node, read bool) {
		if c, ok := n.(*plan.CTEScan); ok && c.CTE.Shared && read {
			wholly[c.CTE] = true
		}
		forSubplans(n, func(s plan.Node) { mark(s, false) })
		_, isAgg := n.(*plan.Aggregate)
		for _, c := range plan.NodeInputs(n) {
			mark(c, isAgg || (read && passesWhole(n)))
		}
	}
	mark(q, false)
	next := 0
	first := map[*plan.CTE]plan.Node{}
	var walk func(n plan.Node, read bool)
	walk = func(n plan.Node, read bool) {
		if c, ok := n.(*plan.CTEScan); ok && c.CTE.Shared {
			if f, seen := first[c.CTE]; seen {
				ia.alias(f, c.Input)
				return
			}
			first[c.CTE] = c.Input
			read = read || wholly[c.CTE]
		}
		if a, ok := n.(*plan.Aggregate); ok {
			next++
			if read && innerStateBlocker(a) == "" {
				x := &innerAgg{id: next, agg: a}
				ia.list = append(ia.list, x)
				ia.byAgg[a] = x
			}
		}
		forSubplans(n, func(s plan.Node) { walk(s, false) })
		_, isAgg := n.(*plan.Aggregate)
		for _, c := range plan.NodeInputs(n) {
			walk(c, isAgg || (read && passesWhole(n)))
		}
	}
	walk(q, false)
	return ia
}

// passesWhole: a node that hands its consumer every row of its input.
func passesWhole(n plan.Node) bool {
	switch n.(type) {
	case *plan.Project, *plan.Sort, *plan.CTEScan:
		return true
	}
	return false
}

// forSubplans calls fn with the plan of each uncorrelated subquery of n's
// own expressions (a correlated one runs per outer row: not walked).
func forSubplans(n plan.Node, fn func(plan.Node)) {
	for _, e := range plan.NodeExprs(n) {
		plan.Walk(e, func(x plan.Expr) bool {
			if s, ok := x.(*plan.Subquery); ok {
				if len(s.Params) == 0 && !s.Volatile {
					fn(s.Plan)
				}
				return false
			}
			return true
		})
	}
}

// alias maps the aggregates of b, another binding of the plan a, to a's.
func (ia *innerAggs) alias(a, b plan.Node) {
	if x, ok := a.(*plan.Aggregate); ok {
		if y, ok := b.(*plan.Aggregate); ok {
			if s := ia.byAgg[x]; s != nil {
				ia.byAgg[y] = s
			}
		}
	}
	ca, cb := plan.NodeInputs(a), plan.NodeInputs(b)
	if len(ca) != len(cb) {
		return
	}
	for i := range ca {
		ia.alias(ca[i], cb[i])
	}
}

// innerStateBlocker says why an inner aggregate keeps no states, "" when
// it can.
func innerStateBlocker(a *plan.Aggregate) string {
	if len(a.GroupBy) == 0 {
		return "no GROUP BY"
	}
	if len(localBlockers(a)) > 0 || exprBlockers(a) != nil {
		return "not differentiable"
	}
	for _, e := range plan.NodeExprs(a) {
		if hasSubquery(e) {
			return "a subquery in its expressions"
		}
	}
	return groupStateBlocker(a)
}

func innerStatePrefix(view uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte("r/gi/"), view)
}

func innerAggPrefix(view uint32, id int) []byte {
	return binary.BigEndian.AppendUint32(innerStatePrefix(view), uint32(id))
}

// clearInnerStates deletes every inner aggregate state of the view.
func clearInnerStates(txn *storage.Txn, view uint32) error {
	prefix := innerStatePrefix(view)
	return txn.DeleteMetaRange(prefix, storage.PrefixEnd(prefix))
}

// run is the group-state run of x in this refresh.
func (x *innerAgg) run(in *Input, a *plan.Aggregate) *groupAggRun {
	r := newGroupAggRun(&groupAggShape{agg: a}, in)
	r.prefix = innerAggPrefix(in.View.ID, x.id)
	return r
}

// buildInnerStates computes and stores the states of every inner
// aggregate of the query (a full recompute), deleting any others the view
// had. It returns the ids built and a function that rebuilds a plan of the
// query with each such aggregate replaced by its rows, so the recompute
// does not evaluate it a second time.
func buildInnerStates(ctx context.Context, in *Input, an *Analysis) (func(plan.Node) (plan.Node, error), []int, error) {
	same := func(n plan.Node) (plan.Node, error) { return n, nil }
	var ia *innerAggs
	if an != nil && an.Incremental() {
		ia = findInnerAggs(in.Query)
	}
	if ia == nil || len(ia.list) == 0 {
		return same, nil, clearInnerStates(in.Txn, in.View.ID)
	}
	// States of ids not built now (another definition's) go.
	prev := innerStatePrefix(in.View.ID)
	end := storage.PrefixEnd(prev)
	for _, x := range ia.list {
		p := innerAggPrefix(in.View.ID, x.id)
		if err := in.Txn.DeleteMetaRange(prev, p); err != nil {
			return nil, nil, err
		}
		prev = storage.PrefixEnd(p)
	}
	if err := in.Txn.DeleteMetaRange(prev, end); err != nil {
		return nil, nil, err
	}
	rows := map[*innerAgg]plan.Node{}
	var ids []int
	for _, x := range ia.list {
		r := x.run(in, x.agg)
		if _, err := r.computeAll(ctx); err != nil {
			return nil, nil, err
		}
		if err := r.storeAll(); err != nil {
			return nil, nil, err
		}
		res, err := r.results()
		if err != nil {
			return nil, nil, err
		}
		rows[x] = &plan.Given{Cols: x.agg.Cols, Rows: res}
		ids = append(ids, x.id)
	}
	return func(n plan.Node) (plan.Node, error) {
		return replaceAggs(n, func(a *plan.Aggregate) plan.Node {
			if x := ia.byAgg[a]; x != nil {
				return rows[x]
			}
			return nil
		})
	}, ids, nil
}

// replaceAggs rebuilds n with each aggregate for which with returns a
// node replaced by it, in subquery plans too.
func replaceAggs(n plan.Node, with func(*plan.Aggregate) plan.Node) (plan.Node, error) {
	if a, ok := n.(*plan.Aggregate); ok {
		if r := with(a); r != nil {
			return r, nil
		}
	}
	var err error
	if slices.ContainsFunc(plan.NodeExprs(n), hasSubquery) {
		n, err = plan.MapNodeExprs(n, func(e plan.Expr) plan.Expr {
			return plan.Rewrite(e, func(x plan.Expr) plan.Expr {
				s, ok := x.(*plan.Subquery)
				if !ok || err != nil {
					return x
				}
				p, e2 := replaceAggs(s.Plan, with)
				if e2 != nil {
					err = e2
					return x
				}
				c := *s
				c.Plan = p
				return &c
			})
		})
	}
	if err != nil {
		return nil, err
	}
	ch := n.Children()
	if len(ch) == 0 {
		return n, nil
	}
	out := make([]plan.Node, len(ch))
	for i, c := range ch {
		if out[i], err = replaceAggs(c, with); err != nil {
			return nil, err
		}
	}
	return n.WithChildren(out...)
}

// innerRun is what one refresh's differ knows of the inner states.
type innerRun struct {
	in       *Input
	aggs     *innerAggs
	valid    map[int]bool // the checkpoint's ids
	folded   map[int]bool // ids this refresh folded or found unchanged
	memo     map[int]*diffResult
	readOnly bool
}

func newInnerRun(in *Input, readOnly bool) *innerRun {
	r := &innerRun{in: in, aggs: findInnerAggs(in.Query), valid: map[int]bool{}, folded: map[int]bool{}, memo: map[int]*diffResult{}, readOnly: readOnly}
	if in.Checkpoint != nil {
		for _, id := range in.Checkpoint.InnerStates {
			r.valid[id] = true
		}
	}
	return r
}

// of is a's innerAgg when its states are usable.
func (r *innerRun) of(a *plan.Aggregate) *innerAgg {
	if r == nil {
		return nil
	}
	x := r.aggs.byAgg[a]
	if x == nil || !r.valid[x.id] {
		return nil
	}
	return x
}

// kept are the ids whose states match the new snapshot after this
// refresh: folded, or with no source in deltas.
func (r *innerRun) kept(deltas map[uint32]*sourceDelta) []int {
	if r == nil {
		return nil
	}
	var out []int
	for _, x := range r.aggs.list {
		if !r.valid[x.id] {
			continue
		}
		ok := r.folded[x.id]
		if !ok {
			ok = true
			for id := range deltas {
				if plan.ReadsTable(x.agg.Input, id) {
					ok = false
					break
				}
			}
		}
		if ok {
			out = append(out, x.id)
		}
	}
	return out
}

// onInnerFold, when set, is called each time a refresh folds a change
// into an inner aggregate's states (tests count them).
var onInnerFold func()

// innerAggregate is the change of an inner aggregate with states: its
// input's change folded into the touched groups' states, their old rows
// lost and new rows gained. A WITH query read twice is folded once.
func (df *differ) innerAggregate(x *innerAgg, a *plan.Aggregate) (*diffResult, error) {
	if d, ok := df.inner.memo[x.id]; ok {
		c := *d
		return &c, nil
	}
	in, err := df.diff(a.Input)
	if err != nil {
		return nil, err
	}
	res := &diffResult{old: a}
	if in.changed {
		r := x.run(df.inner.in, a)
		r.readOnly = df.inner.readOnly
		ctx := df.ctx.Context
		if ctx == nil {
			ctx = context.Background()
		}
		plus, minus, _, err := r.incremental(ctx, in)
		if err != nil {
			return nil, err
		}
		res = &diffResult{changed: true, plus: plus, minus: minus, old: rebuild(a, in.old)}
	}
	df.inner.folded[x.id] = true
	df.inner.memo[x.id] = res
	if onInnerFold != nil && in.changed {
		onInnerFold()
	}
	c := *res
	return &c, nil
}

// checkInnerStates compares the stored states of ids with their
// computation over the refresh's snapshot (invariants build).
func checkInnerStates(ctx context.Context, in *Input, ids []int) error {
	ia := findInnerAggs(in.Query)
	for _, x := range ia.list {
		if !slices.Contains(ids, x.id) {
			continue
		}
		r := x.run(in, x.agg)
		if _, err := r.computeAll(ctx); err != nil {
			return err
		}
		want := map[string]*aggGroup{}
		for _, hk := range r.order {
			want[hk] = r.groups[hk]
		}
		it := in.Txn.ScanMeta(r.prefix)
		n := 0
		for it.Next() {
			row := it.Row()
			hk := string(row.Key[len(r.prefix):])
			if err := sameGroup(r, want[hk], row.Value); err != nil {
				it.Close()
				return fmt.Errorf("inner aggregate %d: group %x: %v", x.id, hk, err)
			}
			n++
		}
		err := it.Err()
		it.Close()
		if err != nil {
			return err
		}
		if n != len(want) {
			return fmt.Errorf("inner aggregate %d: %d stored states, its input has %d groups", x.id, n, len(want))
		}
	}
	return nil
}

// sameGroup compares a stored state with the group computed afresh: its
// row count and its aggregates' results, as they print.
func sameGroup(r *groupAggRun, want *aggGroup, stored []byte) error {
	if want == nil {
		return fmt.Errorf("stored, but the input has no such group")
	}
	got, err := r.decode(stored)
	if err != nil {
		return err
	}
	if got.n != want.n {
		return fmt.Errorf("stored with %d rows, the input has %d", got.n, want.n)
	}
	g, err := r.result(got)
	if err != nil {
		return err
	}
	w, err := r.result(want)
	if err != nil {
		return err
	}
	for i := range w {
		if !sameDatum(g[i], w[i]) {
			return fmt.Errorf("stored %v, the input gives %v", g, w)
		}
	}
	return nil
}
