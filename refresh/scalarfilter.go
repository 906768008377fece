package refresh

import "github.com/mvserver/mvserver/sql/plan"

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
// scalar subqueries.
func (df *differ) scalarFilter(f *plan.Filter, subs []*plan.Subquery) (*diffResult, error) {
	moved := false
	old := map[int]plan.Node{} // by Subquery.ID (Rewrite copies nodes)
	for _, s := range subs {
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
	if !moved {
		if !in.changed {
			return unchanged(f), nil
		}
		return linear(f, in)
	}
	// The scalar's sources changed: the filter again, old and new.
	oldCond := plan.Rewrite(f.Cond, func(x plan.Expr) plan.Expr {
		if s, ok := x.(*plan.Subquery); ok && old[s.ID] != nil && uncorrelatedScalar(s) {
			c := *s
			c.Plan = old[s.ID]
			return &c
		}
		return x
	})
	oldIn := in.old
	if oldIn == nil {
		oldIn = f.Input
	}
	was := &plan.Filter{Input: oldIn, Cond: oldCond}
	return &diffResult{changed: true, plus: &plan.Filter{Input: f.Input, Cond: f.Cond}, minus: was, old: was}, nil
}
