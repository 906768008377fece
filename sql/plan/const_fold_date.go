package plan

import "github.com/mvserver/mvserver/sql/types"

// Part of the constant-folding rule: a date compared with a timestamp
// constant at midnight. `d < DATE '1994-01-01' + INTERVAL '1' YEAR` is
// bound as `d::timestamp < <timestamp>`, which folds to `d::timestamp <
// '1995-01-01 00:00:00'`; comparing the date itself with the date
// '1995-01-01' answers the same for every d (a date is a midnight), costs
// no cast per row, lets the date's statistics estimate the condition and
// its key bound an index scan. PostgreSQL compares the two types with its
// cross-type operators instead, to the same effect. A constant that is not
// a midnight is left as it is.

// narrowDateCompare returns b as a comparison of dates when it compares a
// date cast to timestamp with a midnight timestamp constant.
func narrowDateCompare(b *Binary) (Expr, bool) {
	if !b.Op.IsComparison() {
		return nil, false
	}
	if l, ok := dateOfMidnight(b.R); ok {
		if d, ok := castDate(b.L); ok {
			return &Binary{Op: b.Op, L: d, R: l, T: b.T}, true
		}
	}
	if l, ok := dateOfMidnight(b.L); ok {
		if d, ok := castDate(b.R); ok {
			return &Binary{Op: b.Op, L: l, R: d, T: b.T}, true
		}
	}
	return nil, false
}

// castDate returns x's date operand when x is a date cast to timestamp.
func castDate(x Expr) (Expr, bool) {
	c, ok := x.(*Cast)
	if !ok || c.T.Kind != types.KindTimestamp || c.E.Type().Kind != types.KindDate {
		return nil, false
	}
	return c.E, true
}

// dateOfMidnight returns the date constant of a timestamp constant at
// midnight within the dates a timestamp holds.
func dateOfMidnight(x Expr) (Expr, bool) {
	c, ok := x.(*Const)
	if !ok || c.T.Kind != types.KindTimestamp || c.D.IsNull() || c.D.K != types.KindTimestamp {
		return nil, false
	}
	const day = 86400e6
	if c.D.I%day != 0 {
		return nil, false
	}
	days := c.D.I / day
	if days < types.MinDate || days > types.MaxTimestamp/day {
		return nil, false
	}
	return &Const{D: types.NewDate(days), T: types.Date}, true
}
