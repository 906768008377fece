package plan

// Conditions on an expression of one column. The statistics describe a
// column, not an expression of it, so `substring(c_phone FROM 1 FOR 2)
// IN ('13', '31', …)` got the defaults (0.005 per value: 0.035 for
// TPC-H Q22's seven country codes, which keep 28% of customers; its
// customers were estimated at 175 against 1,874). Such a condition —
// one column, constants, casts, operators and immutable functions — is
// evaluated instead on the column's most common values and histogram
// bounds (sampledSelectivity, estimate_like.go), which stand for its
// values as they do for pattern matches.

// statsExprSelectivity estimates cond, a comparison or IN list whose
// non-constant side is an expression (not the plain column, which the
// statistics answer directly) of one column of in; ok is false when cond
// is not such a condition or the statistics cannot tell.
func (e *Estimator) statsExprSelectivity(cond Expr, in Node, dflt float64) (float64, bool) {
	var subject Expr
	switch x := cond.(type) {
	case *In:
		subject = x.E
	case *Binary:
		subject = x.L
		if _, isConst := constValue(x.L); isConst {
			subject = x.R
		}
	default:
		return 0, false
	}
	if _, plain := subject.(*ColRef); plain {
		return 0, false
	}
	col, ok := soleColumn(cond)
	if !ok {
		return 0, false
	}
	return e.sampledSelectivity(cond, col, in, dflt)
}

// soleColumn returns the one column e reads, when e is built of that
// column, constants, casts, operators, IN lists and immutable functions.
func soleColumn(e Expr) (*ColRef, bool) {
	var col *ColRef
	ok := true
	Walk(e, func(x Expr) bool {
		switch y := x.(type) {
		case *ColRef:
			if col != nil && col.Idx != y.Idx {
				ok = false
			}
			col = y
		case *Func:
			ok = ok && y.Fn != nil && y.Fn.Deterministic
		case *Const, *Cast, *Binary, *Neg, *Not, *And, *Or, *In, *IsNull:
		default:
			ok = false
		}
		return ok
	})
	return col, ok && col != nil
}
