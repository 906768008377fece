package refresh

import (
	"bytes"

	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// A filter comparing with a scalar aggregate over a whole input (TPC-H Q11,
// Q15, Q22: HAVING sum(x) > (SELECT sum(x)*0.0001 …), WHERE total =
// (SELECT max(total) …), c_acctbal > (SELECT avg(c_acctbal) …)). The
// subquery is uncorrelated, so it is one value per snapshot: the scalar is
// differentiated as a one-row query of its own. When its sources did not
// change, its value is the same at the checkpoint and now, and the filter
// is linear (its condition a constant of the refresh); when they did, the
// value may have moved, and the filter runs again over its whole input as
// of the checkpoint (with the scalar's old value) and now.

// uncorrelatedScalar reports whether s is a scalar subquery that reads no
// outer column and calls no volatile function: one value per snapshot.
func uncorrelatedScalar(s *plan.Subquery) bool {
	return s.Kind == plan.SubScalar && len(s.Params) == 0 && !s.Volatile
}

// scalarSubqueries lists the uncorrelated scalar subqueries of e.
func scalarSubqueries(e plan.Expr) []*plan.Subquery {
	var out []*plan.Subquery
	plan.Walk(e, func(x plan.Expr) bool {
		if s, ok := x.(*plan.Subquery); ok {
			if uncorrelatedScalar(s) {
				out = append(out, s)
			}
			return false
		}
		return true
	})
	return out
}

// hasSubquery reports whether e holds any subquery.
func hasSubquery(e plan.Expr) bool {
	found := false
	plan.Walk(e, func(x plan.Expr) bool {
		_, found = x.(*plan.Subquery)
		return !found
	})
	return found
}

// scalarFilter differentiates a filter whose condition reads uncorrelated
// scalar subqueries. A MIN/MAX scalar with a stored state (scalar_state.go)
// is a constant of the refresh, old and new; the filter is linear when
// every scalar kept its value.
func (df *differ) scalarFilter(f *plan.Filter, subs []*plan.Subquery) (*diffResult, error) {
	moved := false
	old := map[int]plan.Node{} // by Subquery.ID (Rewrite copies nodes)
	was := map[int]plan.Expr{} // the old value of a kept scalar
	now := map[int]plan.Expr{} // its new value
	for _, s := range subs {
		if x, ok := extremeOf(s); ok {
			before, after, err := df.extremeStates(x)
			if err != nil {
				return nil, err
			}
			now[s.ID] = after.constant(s)
			if before != nil {
				was[s.ID] = before.constant(s)
				moved = moved || !sameDatum(before.val, after.val)
				continue
			}
			moved = true
		}
		d, err := df.diff(s.Plan)
		if err != nil {
			return nil, err
		}
		// A scalar whose change has no row kept its value.
		moved = moved || d.changed && (d.plus != nil || d.minus != nil)
		old[s.ID] = d.old
	}
	in, err := df.diff(f.Input)
	if err != nil {
		return nil, err
	}
	cond := withScalars(f.Cond, now, nil)
	cur := &plan.Filter{Input: f.Input, Cond: cond}
	if !moved {
		if !in.changed {
			return unchanged(cur), nil
		}
		return linear(cur, in)
	}
	// The scalar's value moved: the filter again, old and new.
	oldIn := in.old
	if oldIn == nil {
		oldIn = f.Input
	}
	then := &plan.Filter{Input: oldIn, Cond: withScalars(f.Cond, was, old)}
	return &diffResult{changed: true, plus: cur, minus: then, old: then}, nil
}

// withScalars is cond with each uncorrelated scalar subquery replaced by
// its value in consts, or else its plan in plans.
func withScalars(cond plan.Expr, consts map[int]plan.Expr, plans map[int]plan.Node) plan.Expr {
	return plan.Rewrite(cond, func(x plan.Expr) plan.Expr {
		s, ok := x.(*plan.Subquery)
		if !ok || !uncorrelatedScalar(s) {
			return x
		}
		if c, ok := consts[s.ID]; ok {
			return c
		}
		if p := plans[s.ID]; p != nil {
			c := *s
			c.Plan = p
			return &c
		}
		return x
	})
}

// sameDatum reports whether two scalar values are the same, encoding and
// all (NULLs alike; 1.0 and 1.00 differ, as they print).
func sameDatum(a, b types.Datum) bool {
	enc := func(d types.Datum) []byte { return types.AppendRowValue(nil, []uint32{1}, []types.Datum{d}) }
	return bytes.Equal(enc(a), enc(b))
}
