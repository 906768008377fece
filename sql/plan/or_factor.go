package plan

// OR factoring. A condition whose OR arms share conjuncts,
//
//	(a AND b) OR (a AND c)   ⇒   a AND (b OR c)
//	a OR (a AND b)           ⇒   a
//
// lets the shared conjuncts act on their own: TPC-H Q19 writes its join
// condition p_partkey = l_partkey inside each of three arms, and only once
// it stands alone is it a hash key rather than a filter over every pair of
// rows. Both rewrites hold in SQL's three-valued logic (AND distributes
// over OR, and absorbs it, for NULL as for true and false). A conjunct
// that calls a volatile function is never shared: each arm's call is a
// call of its own.

// factorOrs factors every OR among the conjuncts of cond.
func factorOrs(cond Expr) Expr {
	var out []Expr
	changed := false
	for _, c := range conjuncts(cond) {
		f := factorOr(c)
		changed = changed || f != c
		out = append(out, conjuncts(f)...)
	}
	if !changed {
		return cond
	}
	return andOf(out)
}

// factorOr returns e with the conjuncts every arm of its OR shares
// factored out (e itself when it is no OR or they share none).
func factorOr(e Expr) Expr {
	or, ok := e.(*Or)
	if !ok || len(or.Args) < 2 {
		return e
	}
	arms := make([][]Expr, len(or.Args))
	for i, a := range or.Args {
		arms[i] = conjuncts(a)
	}
	var common []Expr
	for _, c := range arms[0] {
		if volatileExpr(c) || containsExpr(common, c) {
			continue
		}
		shared := true
		for _, arm := range arms[1:] {
			shared = shared && containsExpr(arm, c)
		}
		if shared {
			common = append(common, c)
		}
	}
	if len(common) == 0 {
		return e
	}
	rest := make([]Expr, 0, len(arms))
	for _, arm := range arms {
		var left []Expr
		for _, c := range arm {
			if !containsExpr(common, c) {
				left = append(left, c)
			}
		}
		if len(left) == 0 {
			// This arm is the shared conjuncts alone: the OR holds
			// whenever they do.
			return andOf(common)
		}
		rest = append(rest, andOf(left))
	}
	return andOf(append(common, &Or{Args: rest}))
}

// containsExpr reports whether list holds an expression equal to e.
func containsExpr(list []Expr, e Expr) bool {
	for _, x := range list {
		if sameExpr(x, e) {
			return true
		}
	}
	return false
}
