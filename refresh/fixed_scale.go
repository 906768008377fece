package refresh

import (
	"slices"
	"strings"

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
func fixedScale(e plan.Expr, in plan.Node) (int32, bool) {
	s, ok := decimalScales(e, in)
	if !ok || len(s) != 1 {
		return 0, false
	}
	return s[0], true
}

// decimalScales reports the few scales, ascending, that the non-NULL values
// of a decimal expression can have (ok=false: any scale). A CASE whose
// branches have fixed scales of their own, such as TPC-H Q8's and Q14's
// CASE WHEN … THEN price * (1 - disc) ELSE 0 END, has the set of them; a
// SUM of it is kept with a count of values per scale (scaleCounted), since
// a sum prints with the largest scale among the values it holds.
//
// in is the node e reads (nil: unknown): a column of a projection below,
// such as a derived table's volume or o_year, has the scale of the
// expression that computes it.
//
// The scale is known for a DECIMAL(p,s) column or cast (s), an integer (0),
// a decimal constant (its own), extract(… FROM date) and the whole-number
// fields of extract from a timestamp (0), CASE and COALESCE (the union of
// their branches'), and +, - (the larger scale), * (the sum of the scales)
// and unary minus of such expressions, as PostgreSQL's numeric arithmetic
// and the exact decimals of sql/types compute them.
func decimalScales(e plan.Expr, in plan.Node) ([]int32, bool) {
	t := e.Type()
	if t.IsInteger() {
		return []int32{0}, true
	}
	if t.Kind != types.KindNumeric {
		return nil, false
	}
	switch x := e.(type) {
	case *plan.ColRef:
		if t.Precision > 0 {
			return []int32{t.Scale}, true
		}
		return columnScales(x.Idx, in)
	case *plan.Cast:
		if t.Precision > 0 {
			return []int32{t.Scale}, true
		}
		return decimalScales(x.E, in)
	case *plan.Const:
		if x.D.IsNull() {
			return nil, true
		}
		if x.D.D.Form != apd.Finite {
			return nil, false
		}
		return []int32{types.Scale(x.D.D)}, true
	case *plan.Neg:
		return decimalScales(x.E, in)
	case *plan.Func:
		return extractScale(x)
	case *plan.Case:
		var out []int32
		branches := make([]plan.Expr, 0, len(x.Whens)+1)
		for _, w := range x.Whens {
			branches = append(branches, w.Result)
		}
		if x.Else != nil {
			branches = append(branches, x.Else)
		}
		for _, b := range branches {
			s, ok := decimalScales(b, in)
			if !ok {
				return nil, false
			}
			out = append(out, s...)
		}
		return scaleSet(out)
	case *plan.Coalesce:
		var out []int32
		for _, a := range x.Args {
			s, ok := decimalScales(a, in)
			if !ok {
				return nil, false
			}
			out = append(out, s...)
		}
		return scaleSet(out)
	case *plan.Binary:
		l, lok := decimalScales(x.L, in)
		r, rok := decimalScales(x.R, in)
		if !lok || !rok {
			return nil, false
		}
		var out []int32
		for _, a := range l {
			for _, b := range r {
				switch x.Op {
				case plan.OpAdd, plan.OpSub:
					out = append(out, max(a, b))
				case plan.OpMul:
					out = append(out, a+b)
				default:
					return nil, false
				}
			}
		}
		return scaleSet(out)
	}
	return nil, false
}

// maxScales bounds the scales a maintained sum counts its values by.
const maxScales = 8

func scaleSet(s []int32) ([]int32, bool) {
	slices.Sort(s)
	s = slices.Compact(s)
	return s, len(s) <= maxScales
}

// extractWholeFields are the fields extract returns as whole numbers from a
// timestamp (second, milliseconds, epoch and julian have a fraction).
var extractWholeFields = map[string]bool{
	"year": true, "month": true, "day": true, "hour": true, "minute": true, "quarter": true, "week": true,
	"decade": true, "century": true, "millennium": true, "isoyear": true, "dow": true, "isodow": true,
	"doy": true, "microseconds": true,
}

// extractScale is the scale of extract(field FROM x): 0 for every field of a
// date (each is a whole number, the epoch in whole seconds) and for the
// whole-number fields of a timestamp.
func extractScale(f *plan.Func) ([]int32, bool) {
	if !strings.EqualFold(f.Name, "extract") || len(f.Args) != 2 {
		return nil, false
	}
	switch f.Args[1].Type().Kind {
	case types.KindDate:
		return []int32{0}, true
	case types.KindTimestamp, types.KindTimestampTZ:
		c, ok := f.Args[0].(*plan.Const)
		if ok && !c.D.IsNull() && extractWholeFields[strings.ToLower(c.D.S)] {
			return []int32{0}, true
		}
	}
	return nil, false
}

// columnScales are the scales of column idx of node in: through filters
// and sorts (which keep their input's columns) to the projection that
// computes it.
func columnScales(idx int, in plan.Node) ([]int32, bool) {
	for {
		switch x := in.(type) {
		case *plan.Filter:
			in = x.Input
		case *plan.Sort:
			in = x.Input
		case *plan.Project:
			if idx < 0 || idx >= len(x.Exprs) {
				return nil, false
			}
			return decimalScales(x.Exprs[idx], x.Input)
		default:
			return nil, false
		}
	}
}
