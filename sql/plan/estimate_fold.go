package plan

import "github.com/mvserver/mvserver/sql/types"

// Constant folding for estimates. A comparison's bound is often an
// expression of constants — `l_quantity <= 1 + 10`, `l_shipdate <
// DATE '1994-01-01' + INTERVAL '1' YEAR` — that the statistics can only
// place once its value is known. The estimator cannot evaluate
// expressions itself (the evaluator is the executor's, which imports this
// package), so the executor registers one (RegisterConstFolder): the
// estimator then folds expressions of literals, casts and operators into
// their values. Only estimates use the values; the plan keeps the
// expressions, and an expression that fails to evaluate (an overflow, a
// division by zero) is estimated as before, without its value.

// ConstFolder evaluates an expression of constants (no columns,
// parameters, functions or subqueries); ok is false when it cannot.
type ConstFolder func(e Expr) (d types.Datum, ok bool)

var constFolder ConstFolder

// RegisterConstFolder sets the evaluator of constant expressions the
// estimator uses (the executor's; set once, at start-up).
func RegisterConstFolder(f ConstFolder) { constFolder = f }

// foldable reports whether e is built of literals, casts and operators
// only.
func foldable(e Expr) bool {
	ok := true
	Walk(e, func(x Expr) bool {
		switch x.(type) {
		case *Const, *Cast, *Binary, *Neg:
		default:
			ok = false
		}
		return ok
	})
	return ok
}

// foldConst returns the value of e when it is a foldable expression the
// registered folder evaluates.
func foldConst(e Expr) (types.Datum, bool) {
	if constFolder == nil || !foldable(e) {
		return types.Datum{}, false
	}
	return constFolder(e)
}
