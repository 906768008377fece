package plan

import "math"

// The semi-join pushdown rule. Decorrelation (decorrelate.go) puts the
// semi or anti join of an IN, EXISTS or NOT IN conjunct over the whole
// FROM of its query: `FROM customer, orders, lineitem WHERE o_orderkey IN
// (SELECT …)` becomes (customer ⋈ orders ⋈ lineitem) ⋉ sub, which joins
// every lineitem before the semi join drops most orders (TPC-H Q18). A
// semi or anti join whose left keys and residual read the columns of one
// input of an inner join only filters that input's rows, whatever the
// other input holds:
//
//	(A ⋈ B) ⋉ R  =  (A ⋉ R) ⋈ B     when the condition reads A and R only
//
// and likewise for anti and null-aware anti joins. The rule moves such a
// join down through inner and cross joins, projections of plain columns
// and filters (on the way to a join's input only: a filtered scan stays
// one, for its key access) to the lowest input its condition reads —
// through each join only where the estimates say it pays
// (semiPushPays) — where it becomes
// a leaf of the island of inner joins the join-order rule orders
// (joinorder.go), with its estimate (a semi join keeps the share of rows
// eqjoinsel_semi finds). A condition reading both inputs of a join, or a
// left join, stops it. Its output, the left columns, is unchanged, so
// the plan above is too.

func pushSemiJoins(o *Optimizer, n Node) (Node, bool, error) {
	return transformUp(n, func(x Node) (Node, bool, error) {
		j, ok := x.(*Join)
		if !ok || !j.Kind.LeftOnly() {
			return x, false, nil
		}
		out, pushed := pushSemi(o.est, j, j.Left, len(j.Left.Columns()), j.LeftKeys, j.Residual)
		if !pushed {
			return x, false, nil
		}
		return out, true, nil
	})
}

// pushSemi places semi join j (its kind, right side and right keys) over
// left, or below it when left is a node it passes through: keys are over
// left's columns, the residual over left's columns then the right's (the
// right's from position width). pushed reports whether it went below
// left.
func pushSemi(est *Estimator, j *Join, left Node, width int, keys []Expr, residual Expr) (Node, bool) {
	leftRefs := func(e Expr, f func(int) bool) bool {
		all := true
		Walk(e, func(x Expr) bool {
			if c, ok := x.(*ColRef); ok && c.Idx < width && !f(c.Idx) {
				all = false
			}
			return all
		})
		return all
	}
	reads := func(f func(int) bool) bool {
		for _, k := range keys {
			if !leftRefs(k, f) {
				return false
			}
		}
		return residual == nil || leftRefs(residual, f)
	}
	// remap renumbers the left columns (to[i]) and moves the right ones
	// to start at nw.
	remap := func(to func(int) int, nw int) ([]Expr, Expr) {
		ks := make([]Expr, len(keys))
		for i, k := range keys {
			ks[i] = Rewrite(k, func(x Expr) Expr {
				if c, ok := x.(*ColRef); ok {
					return &ColRef{Idx: to(c.Idx), T: c.T, Name: c.Name}
				}
				return x
			})
		}
		if residual == nil {
			return ks, nil
		}
		res := Rewrite(residual, func(x Expr) Expr {
			if c, ok := x.(*ColRef); ok {
				if c.Idx < width {
					return &ColRef{Idx: to(c.Idx), T: c.T, Name: c.Name}
				}
				return &ColRef{Idx: c.Idx - width + nw, T: c.T, Name: c.Name}
			}
			return x
		})
		return ks, res
	}
	here := func() (Node, bool) {
		return &Join{Kind: j.Kind, Left: left, Right: j.Right, LeftKeys: keys, RightKeys: j.RightKeys, Residual: residual}, false
	}
	switch x := left.(type) {
	case *Join:
		if x.Kind.LeftOnly() {
			// Two semi or anti joins filter the same rows, in either
			// order; j goes first when it keeps fewer of them, or on its
			// way further down.
			in, pushed := pushSemi(est, j, x.Left, width, keys, residual)
			if !pushed && !keepsFewer(est, j, x, keys, residual) {
				break
			}
			out, err := x.WithChildren(in, x.Right)
			if err != nil {
				return here()
			}
			return out, true
		}
		if x.Kind != JoinInner && x.Kind != JoinCross {
			break
		}
		nl := len(x.Left.Columns())
		nr := len(x.Right.Columns())
		switch {
		case reads(func(i int) bool { return i < nl }):
			ks, res := remap(func(i int) int { return i }, nl)
			if !semiPushPays(est, j, x, x.Left, ks, res) {
				break
			}
			in, _ := pushSemi(est, j, x.Left, nl, ks, res)
			out, err := x.WithChildren(in, x.Right)
			if err != nil {
				return here()
			}
			return out, true
		case reads(func(i int) bool { return i >= nl }):
			ks, res := remap(func(i int) int { return i - nl }, nr)
			if !semiPushPays(est, j, x, x.Right, ks, res) {
				break
			}
			in, _ := pushSemi(est, j, x.Right, nr, ks, res)
			out, err := x.WithChildren(x.Left, in)
			if err != nil {
				return here()
			}
			return out, true
		}
	case *Project:
		if !plainColumns(x) {
			break
		}
		nin := len(x.Input.Columns())
		ks, res := remap(func(i int) int { return x.Exprs[i].(*ColRef).Idx }, nin)
		in, pushed := pushSemi(est, j, x.Input, nin, ks, res)
		if !pushed {
			break // only on the way to a join's input
		}
		out, err := x.WithChildren(in)
		if err != nil {
			return here()
		}
		return out, true
	case *Filter:
		if volatileExpr(x.Cond) {
			break
		}
		in, pushed := pushSemi(est, j, x.Input, width, keys, residual)
		if !pushed {
			break
		}
		out, err := x.WithChildren(in)
		if err != nil {
			return here()
		}
		return out, true
	}
	return here()
}

// semiPushPays reports whether semi join j (keys and residual over
// input's columns) costs less below join x, over x's input, than above
// it. Above, it probes x's rows; below, input's, and x then joins only
// the share s of input's rows it keeps, emitting that share of its own:
// with a join costing its inputs and its output and a semi join its
// probes (its build side is the same either way),
//
//	above: in + other + x + x      below: in + s·in + other + s·x
//
// so it pays below when s·(in + x) < 2·x. A join that keeps few of
// input's rows (TPC-H Q21: a lineitem joined with one nation's
// suppliers keeps 1 in 25) is better filtered first and probed after —
// where its few rows may also look the semi join's side up by key —
// while a semi join that keeps few rows (Q18's IN of the large orders)
// goes down.
func semiPushPays(est *Estimator, j *Join, x *Join, input Node, keys []Expr, residual Expr) bool {
	in := est.Rows(input)
	if in <= 0 {
		return true
	}
	cand := &Join{Kind: j.Kind, Left: input, Right: j.Right, LeftKeys: keys, RightKeys: j.RightKeys, Residual: residual}
	s := math.Min(1, est.Rows(cand)/in)
	out := est.Rows(x)
	return s*(in+out) < 2*out
}

// keepsFewer reports whether semi join j (keys and residual over x's
// left columns) keeps a smaller share of x's left rows than semi join x
// does: below x, it leaves x fewer rows to probe (TPC-H Q21's NOT EXISTS
// of a late line keeps 1 in 10 of the lines its EXISTS keeps nearly all
// of).
func keepsFewer(est *Estimator, j, x *Join, keys []Expr, residual Expr) bool {
	in := est.Rows(x.Left)
	if in <= 0 {
		return false
	}
	cand := &Join{Kind: j.Kind, Left: x.Left, Right: j.Right, LeftKeys: keys, RightKeys: j.RightKeys, Residual: residual}
	return est.Rows(cand) < est.Rows(x)
}
