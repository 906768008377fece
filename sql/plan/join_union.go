package plan

// The join-union rule: an inner equality join of a small side with a
// UNION ALL joins each branch on its own — (A ∪ B) ⋈ S = (A ⋈ S) ∪ (B ⋈ S)
// — when that lets a branch that is a table look the small side's keys up
// through its key (the index-join rule, which runs next). An incremental
// refresh reads a table as of its checkpoint as the table less the rows
// changed since, united with their old images (refresh/delta.go): without
// the rule, the touched orders of TPC-H Q10 after deletes hashed all of
// lineitem's old side instead of looking their lineitems up. The small
// side is read once per branch.
//
// A semi or anti join (EXISTS, NOT EXISTS) with a UNION ALL on its right
// takes the union's branches one after the other: L ▷ (A ∪ B) =
// (L ▷ B) ▷ A and L ⋉ (A ∪ B) = (L ⋉ B) ∪ ((L ▷ B) ⋉ A), A being the
// branch that can be looked up (a left row matching both is kept once, by
// the first term only), so TPC-H Q21's EXISTS and NOT EXISTS over
// lineitem's old side after deletes look the touched orders up instead of
// hashing all of lineitem twice. L is read twice for a semi join.

// distributeJoins applies the rule bottom up.
func distributeJoins(o *Optimizer, n Node) (Node, bool, error) {
	return transformUp(n, func(x Node) (Node, bool, error) {
		j, ok := x.(*Join)
		if ok && (j.Kind == JoinSemi || j.Kind == JoinAnti) && len(j.LeftKeys) > 0 {
			if a, b := unionBranches(j.Right); a != nil {
				if out := distributeSemi(j, a, b, o.est); out != nil {
					return out, true, nil
				}
			}
			return x, false, nil
		}
		if !ok || j.Kind != JoinInner || len(j.LeftKeys) == 0 {
			return x, false, nil
		}
		if a, b := unionBranches(j.Right); a != nil {
			if out := distributeJoin(j, &Join{Kind: j.Kind, Left: j.Left, Right: a, LeftKeys: j.LeftKeys, RightKeys: j.RightKeys, Residual: j.Residual},
				&Join{Kind: j.Kind, Left: j.Left, Right: b, LeftKeys: j.LeftKeys, RightKeys: j.RightKeys, Residual: j.Residual}, o.est); out != nil {
				return out, true, nil
			}
		}
		if a, b := unionBranches(j.Left); a != nil {
			if out := distributeJoin(j, &Join{Kind: j.Kind, Left: a, Right: j.Right, LeftKeys: j.LeftKeys, RightKeys: j.RightKeys, Residual: j.Residual},
				&Join{Kind: j.Kind, Left: b, Right: j.Right, LeftKeys: j.LeftKeys, RightKeys: j.RightKeys, Residual: j.Residual}, o.est); out != nil {
				return out, true, nil
			}
		}
		return x, false, nil
	})
}

// distributeJoin is the union of the branch joins ja and jb of j, when
// one of them becomes an index nested-loop join; nil otherwise.
func distributeJoin(j, ja, jb *Join, est *Estimator) Node {
	if indexJoin(ja, est) == nil && indexJoin(jb, est) == nil {
		return nil
	}
	return &SetOp{Kind: Union, All: true, Left: ja, Right: jb, Cols: j.Columns()}
}

// distributeSemi is the semi or anti join j, whose right side is the
// union of a and b, as joins with one branch each, when one branch can be
// looked up (an index nested-loop join); nil otherwise.
func distributeSemi(j *Join, a, b Node, est *Estimator) Node {
	with := func(kind JoinKind, l, r Node) *Join {
		return &Join{Kind: kind, Left: l, Right: r, LeftKeys: j.LeftKeys, RightKeys: j.RightKeys, Residual: j.Residual}
	}
	looked, other := a, b
	if indexJoin(with(j.Kind, j.Left, a), est) == nil {
		if indexJoin(with(j.Kind, j.Left, b), est) == nil {
			return nil
		}
		looked, other = b, a
	}
	if j.Kind == JoinAnti {
		return with(JoinAnti, with(JoinAnti, j.Left, other), looked)
	}
	return &SetOp{Kind: Union, All: true, Left: with(JoinSemi, j.Left, other),
		Right: with(JoinSemi, with(JoinAnti, j.Left, other), looked), Cols: j.Columns()}
}

// unionBranches returns the two branches of n, a UNION ALL under
// filters and projections, each under those (they read the union's
// columns, which are each branch's, position by position); nil when n is
// no such union.
func unionBranches(n Node) (a, b Node) {
	var above []Node
	for {
		switch x := n.(type) {
		case *Filter:
			above, n = append(above, x), x.Input
			continue
		case *Project:
			above, n = append(above, x), x.Input
			continue
		}
		break
	}
	u, ok := n.(*SetOp)
	if !ok || u.Kind != Union || !u.All {
		return nil, nil
	}
	a, b = u.Left, u.Right
	for i := len(above) - 1; i >= 0; i-- {
		var err error
		if a, err = above[i].WithChildren(a); err != nil {
			return nil, nil
		}
		if b, err = above[i].WithChildren(b); err != nil {
			return nil, nil
		}
	}
	return a, b
}
