package exec

import (
	"strings"

	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// IN lists of constants on the row path. A hashed list (plan.In.Hashed,
// the planner's hashed-in-list rule) is a set of the constants' hash keys
// built once: a row costs one lookup. A shorter list of constants is
// compared value by value, without evaluating its constants again for
// every row; CHAR(n) values compare without their trailing spaces, so
// the constants are trimmed once. Either answers as the general In does:
// NULL for a NULL value, and for a value not in a list that holds a NULL.

// compileConstIn compiles x when its list is constants; ok is false
// otherwise (the general loop of compile).
func compileConstIn(x *plan.In, in evalFn) (evalFn, bool) {
	vals := make([]types.Datum, 0, len(x.List))
	sawNull := false
	for _, v := range x.List {
		c, ok := v.(*plan.Const)
		if !ok {
			return nil, false
		}
		if c.D.IsNull() {
			sawNull = true
			continue
		}
		vals = append(vals, c.D)
	}
	found, missing := types.NewBool(!x.Not), types.NewBool(x.Not)
	if sawNull {
		missing = types.NullDatum
	}
	var member func(d types.Datum) bool
	switch {
	case x.Hashed:
		member = hashedMember(vals)
	case x.E.Type().Kind == types.KindChar && allKind(vals, types.KindChar):
		trimmed := make([]string, len(vals))
		for i, v := range vals {
			trimmed[i] = strings.TrimRight(v.S, " ")
		}
		member = func(d types.Datum) bool {
			if d.K != types.KindChar {
				return slowMember(d, vals)
			}
			s := strings.TrimRight(d.S, " ")
			for _, t := range trimmed {
				if s == t {
					return true
				}
			}
			return false
		}
	default:
		member = func(d types.Datum) bool { return slowMember(d, vals) }
	}
	return func(row Row) (types.Datum, error) {
		d, err := in(row)
		if err != nil || d.IsNull() {
			return types.NullDatum, err
		}
		if member(d) {
			return found, nil
		}
		return missing, nil
	}, true
}

// hashedMember returns the membership test of a set of vals (one type).
func hashedMember(vals []types.Datum) func(types.Datum) bool {
	set := make(map[string]struct{}, len(vals))
	var buf []byte
	for _, v := range vals {
		buf = types.HashKey(buf[:0], v)
		set[string(buf)] = struct{}{}
	}
	return func(d types.Datum) bool {
		var arr [64]byte
		_, ok := set[string(types.HashKey(arr[:0], d))]
		return ok
	}
}

// slowMember compares d with each of vals.
func slowMember(d types.Datum, vals []types.Datum) bool {
	for _, v := range vals {
		if types.Compare(d, v) == 0 {
			return true
		}
	}
	return false
}

func allKind(vals []types.Datum, k types.Kind) bool {
	for _, v := range vals {
		if v.K != k {
			return false
		}
	}
	return true
}
