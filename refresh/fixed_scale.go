package refresh

import (
	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// fixedScale reports the one scale (digits after the point) that every
// non-NULL value of a decimal expression has, whatever the row. SUM and AVG
// over such an expression are exact and invertible: a state that has taken
// values back holds the sum a fresh state would, printed alike, so
// GROUP_AGGREGATE may maintain them (an expression of varying scale, like
// x / 3, would leave a sum printed with the scale of rows long gone).
//
// The scale is known for a DECIMAL(p,s) column or cast (s), an integer (0),
// a decimal constant (its own), and +, - (the larger scale), * (the sum of
// the scales) and unary minus of such expressions, as PostgreSQL's numeric
// arithmetic and the exact decimals of sql/types compute them.
func fixedScale(e plan.Expr) (int32, bool) {
	t := e.Type()
	if t.IsInteger() {
		return 0, true
	}
	if t.Kind != types.KindNumeric {
		return 0, false
	}
	switch x := e.(type) {
	case *plan.ColRef:
		return t.Scale, t.Precision > 0
	case *plan.Cast:
		if t.Precision > 0 {
			return t.Scale, true
		}
		return fixedScale(x.E)
	case *plan.Const:
		if x.D.IsNull() || x.D.D.Form != apd.Finite {
			return 0, false
		}
		return types.Scale(x.D.D), true
	case *plan.Neg:
		return fixedScale(x.E)
	case *plan.Binary:
		l, lok := fixedScale(x.L)
		r, rok := fixedScale(x.R)
		if !lok || !rok {
			return 0, false
		}
		switch x.Op {
		case plan.OpAdd, plan.OpSub:
			return max(l, r), true
		case plan.OpMul:
			return l + r, true
		}
	}
	return 0, false
}
