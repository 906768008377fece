package refresh

import (
	"github.com/mvserver/mvserver/sql/plan"
)

// The change of a null-aware anti join, x NOT IN (SELECT y FROM r …) in
// WHERE (TPC-H Q16). A left row is kept when the subquery has no rows, or
// when x is not NULL, no y is NULL and none equals x. So whether a left row
// stays depends on the whole right side, not on the rows of its key alone:
//
//   - a right row with a NULL y, gained or lost, can change every left row;
//   - a right row gained or lost with y = v changes the left rows with
//     x = v, and the left rows with a NULL x (for them only the emptiness
//     of the right side counts);
//   - no other left row changes.
//
// With L_new = L_old + ΔL, and A the old left rows a right change can
// change (the above):
//
//	Δ(L ▷ₙ R) = ΔL ▷ₙ R_new + A ▷ₙ R_new − A ▷ₙ R_old
//
// The right side is read whole in each term (restricting it to the left
// keys would hide its NULLs and its emptiness); the left side only for the
// keys the right change holds. Only the uncorrelated form is maintained: a
// correlated NOT IN keeps its blocker (analyze.go).

// notInCorrelated reports whether the null-aware anti join j compares on
// correlation keys besides its NOT IN column.
func notInCorrelated(j *plan.Join) bool { return len(j.LeftKeys) != 1 || len(j.RightKeys) != 1 }

// antiNullAware differentiates the uncorrelated null-aware anti join j.
func (df *differ) antiNullAware(j *plan.Join, l, r *diffResult) (plus, minus plan.Node, err error) {
	if notInCorrelated(j) {
		return nil, nil, &blockedError{Blocker{Code: ReasonUnsupported, Object: "NOT IN", Message: "a NOT IN (subquery) correlated with the outer query cannot be maintained incrementally yet", Permanent: true}}
	}
	cols := j.Left.Columns()
	var ps, ms []plan.Node
	if l.plus != nil || l.minus != nil {
		if err := df.materializeChange(l); err != nil {
			return nil, nil, err
		}
		if p := withKind(j, plan.JoinAntiNullAware, l.plus, j.Right); p != nil {
			ps = append(ps, p)
		}
		if m := withKind(j, plan.JoinAntiNullAware, l.minus, j.Right); m != nil {
			ms = append(ms, m)
		}
	}
	if r.changed && (r.plus != nil || r.minus != nil) {
		if err := df.materializeChange(r); err != nil {
			return nil, nil, err
		}
	}
	// (materializeChange drops a side that came out empty)
	if r.changed && (r.plus != nil || r.minus != nil) {
		a, err := df.notInTouched(j, l.old, r)
		if err != nil {
			return nil, nil, err
		}
		if len(a.Rows) > 0 {
			ps = append(ps, withKind(j, plan.JoinAntiNullAware, a, j.Right))
			ms = append(ms, withKind(j, plan.JoinAntiNullAware, a, r.old))
		}
	}
	return unionAll(cols, ps...), unionAll(cols, ms...), nil
}

// notInTouched is A: the old left rows whose NOT IN the right change r can
// change — all of them when r holds a NULL y, else those whose x is one of
// r's values or NULL.
func (df *differ) notInTouched(j *plan.Join, lOld plan.Node, r *diffResult) (*plan.Given, error) {
	touched := unionAll(j.Right.Columns(), r.plus, r.minus)
	nulls, err := df.materialize(&plan.Filter{Input: touched, Cond: &plan.IsNull{E: j.RightKeys[0]}})
	if err != nil {
		return nil, err
	}
	if len(nulls.Rows) > 0 {
		return df.materialize(lOld)
	}
	tuples, err := df.keyTuples(j.RightKeys, r.plus, r.minus)
	if err != nil {
		return nil, err
	}
	cols := lOld.Columns()
	// (the restriction to r's values may keep NULL keys too, as a
	// group restriction does: they come from the second part only)
	return df.materialize(unionAll(cols,
		&plan.Filter{Input: df.pushTuples(lOld, j.LeftKeys, tuples), Cond: &plan.IsNull{E: j.LeftKeys[0], Not: true}},
		&plan.Filter{Input: lOld, Cond: &plan.IsNull{E: j.LeftKeys[0]}}))
}
