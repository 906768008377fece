package refresh

import (
	"context"
	"errors"
	"strings"

	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// A full computation of GROUP_AGGREGATE's group states (CREATE, REFRESH …
// FULL, a refresh that chose full) runs as one aggregate query whose
// results are the states: count(*) for a group's input rows and, per
// aggregate, plain aggregates that give its state (funcs/retract.go):
//
//	count(x)          → count(x)
//	sum(x), avg(x)    → count(x), sum(x)
//	min(x), max(x)    → min(x) / max(x)
//
// That query takes the executor's vectorized, parallel aggregation
// (sql/exec/vagg.go) as the view's SELECT does. Folding every input row
// through the states one at a time made CREATE MATERIALIZED VIEW of
// TPC-H Q1 and Q6 at SF 0.1 take 3-4x their own SELECT. Aggregates
// without such a decomposition (the variance family) keep the fold.

// errStateQueryGroups: the state query's groups are not fold's groups
// (two result rows with one hash key); the fold runs instead.
var errStateQueryGroups = errors.New("the state query's groups differ from the fold's")

// stateQueryOff makes every full computation fold (tests compare the two);
// onStateQuery, when set, is called after a state query filled the groups.
var (
	stateQueryOff bool
	onStateQuery  func()
)

// statePart says how one aggregate's state comes from the state query:
// its calls, and how their results set the state.
type statePart struct {
	calls []plan.AggCall
	// sum: the state is (count, sum), a NULL sum being the fresh
	// state's zero and an integer sum an int8 while it fits.
	sum bool
}

// stateParts returns, per aggregate, the plain aggregates whose results
// are its state; ok=false when an aggregate has none.
func (r *groupAggRun) stateParts() ([]statePart, bool) {
	parts := make([]statePart, len(r.g.agg.Aggs))
	for i, c := range r.g.agg.Aggs {
		if c.Distinct || len(c.Order) > 0 {
			return nil, false
		}
		switch strings.ToLower(c.Name) {
		case "count", "min", "max":
			parts[i] = statePart{calls: []plan.AggCall{c}}
		case "sum", "avg":
			cnt, ok1 := plainAgg("count", c.Args, c.Filter)
			sum, ok2 := plainAgg("sum", c.Args, c.Filter)
			if !ok1 || !ok2 {
				return nil, false
			}
			parts[i] = statePart{calls: []plan.AggCall{cnt, sum}, sum: true}
		default:
			return nil, false
		}
	}
	return parts, true
}

// plainAgg resolves the aggregate name over args.
func plainAgg(name string, args []plan.Expr, filter plan.Expr) (plan.AggCall, bool) {
	f, ok := funcs.Lookup(name)
	if !ok || f.Agg == nil {
		return plan.AggCall{}, false
	}
	ats := make([]types.T, len(args))
	for i, a := range args {
		ats[i] = a.Type()
	}
	rt, newState, ok := f.Agg.Resolve(ats)
	if !ok {
		return plan.AggCall{}, false
	}
	return plan.AggCall{Name: name, Def: &plan.AggSpec{NewState: newState}, Args: args, Filter: filter, T: rt}, true
}

// stateQuery is the aggregate whose rows are the groups' keys, input row
// counts and states' parts.
func (r *groupAggRun) stateQuery(parts []statePart) *plan.Aggregate {
	nk := len(r.g.agg.GroupBy)
	star, _ := plainAgg("count", nil, nil)
	q := &plan.Aggregate{Input: r.g.agg.Input, GroupBy: r.g.agg.GroupBy, Aggs: []plan.AggCall{star}}
	q.Cols = append(q.Cols, r.g.agg.Cols[:nk]...)
	q.Cols = append(q.Cols, plan.Column{Name: "count", T: star.T})
	for _, p := range parts {
		for _, c := range p.calls {
			q.Aggs = append(q.Aggs, c)
			q.Cols = append(q.Cols, plan.Column{Name: c.Name, T: c.T})
		}
	}
	return q
}

// foldByQuery fills r.groups from the state query; ok=false when an
// aggregate has no decomposition (or the groups differ), with r.groups
// left empty for the fold.
func (r *groupAggRun) foldByQuery(ctx context.Context) (read int64, ok bool, err error) {
	parts, ok := r.stateParts()
	if !ok || stateQueryOff {
		return 0, false, nil
	}
	op, err := buildOptimized(r.in.Exec, r.in.estimator(), r.stateQuery(parts))
	if err != nil {
		return 0, false, err
	}
	nk := len(r.g.agg.GroupBy)
	var vals []types.Datum
	err = exec.Drain(op, func(rows []exec.Row) error {
		for _, row := range rows {
			hk := r.groupKey(r.hk[:0], row)
			r.hk = hk
			k := string(hk)
			if r.groups[k] != nil {
				return errStateQueryGroups
			}
			grp := r.fresh(append([]types.Datum(nil), row[:nk]...))
			if row[nk].K != types.KindInt8 {
				return errStateQueryGroups
			}
			grp.n = row[nk].I
			read += grp.n
			at := nk + 1
			for i, p := range parts {
				vals = append(vals[:0], row[at:at+len(p.calls)]...)
				at += len(p.calls)
				if p.sum {
					vals[1] = sumState(grp.states[i], vals[1])
				}
				if err := grp.states[i].SetState(vals); err != nil {
					return err
				}
			}
			// as group() charges a group
			if err := r.in.Exec.Mem.Charge("group-aggregate refresh", 2*int64(len(hk))+exec.RowBytes(grp.keys)+160+int64(len(r.news))*64); err != nil {
				return err
			}
			r.groups[k] = grp
			r.order = append(r.order, k)
		}
		return ctx.Err()
	})
	if errors.Is(err, errStateQueryGroups) {
		clear(r.groups)
		r.order = r.order[:0]
		return 0, false, nil
	}
	if err == nil && onStateQuery != nil {
		onStateQuery()
	}
	return read, err == nil, err
}

// sumState is a sum's result as the state st keeps it: the fresh state's
// zero for NULL (no values), an int8 for an integer sum that fits.
func sumState(st funcs.Retractable, sum types.Datum) types.Datum {
	zero := st.State()[1] // st is fresh here
	switch {
	case sum.IsNull():
		return zero
	case zero.K == types.KindInt8 && sum.K == types.KindNumeric:
		if i, err := sum.D.Int64(); err == nil {
			return types.NewInt8(i)
		}
	}
	return sum
}
