package plan

import "github.com/mvserver/mvserver/sql/types"

// The hashed-in-list rule (PostgreSQL's hashed ScalarArrayOpExpr): `x IN
// (c1, …, cn)` with n constants compares x with each in turn, n
// comparisons a row; from minHashedIn constants on, the executor builds a
// hash set of them once and tests each row with one lookup (In.Hashed;
// sql/exec/in_hash.go). The answer is the same, NULLs included: a NULL x
// gives NULL, and a list with a NULL gives NULL for an x not in it (FALSE
// for NOT IN becomes NULL too).
//
// Only lists whose non-NULL constants all have x's type are hashed: the
// set's keys are types.HashKey, which agrees with the comparison within
// one type. EXPLAIN shows `= ANY hashed (…)`.

// minHashedIn is the shortest list that is hashed (PostgreSQL's
// MIN_ARRAY_SIZE_FOR_HASHED_SAOP).
const minHashedIn = 9

// hashInLists is the hashed-in-list rule.
func hashInLists(_ *Optimizer, n Node) (Node, bool, error) {
	return transformUp(n, func(x Node) (Node, bool, error) {
		return mapOwnExprs(x, func(e Expr) (Expr, error) { return hashIn(e), nil })
	})
}

// hashIn returns e with its hashable IN lists marked; e itself (the same
// pointer) when there are none.
func hashIn(e Expr) Expr {
	if e == nil {
		return nil
	}
	before := Children(e)
	if len(before) == 0 {
		return e
	}
	out := MapChildren(e, hashIn)
	after := Children(out)
	changed := false
	for i := range before {
		changed = changed || before[i] != after[i]
	}
	if in, ok := out.(*In); ok && !in.Hashed && hashable(in) {
		in.Hashed = true // out is MapChildren's copy
		return in
	}
	if !changed {
		return e
	}
	return out
}

// hashable reports whether in's list is long enough and constants of its
// tested value's type only.
func hashable(in *In) bool {
	if len(in.List) < minHashedIn {
		return false
	}
	k := in.E.Type().Kind
	switch k {
	case types.KindUnknown, types.KindRecord, types.KindNull:
		return false
	}
	for _, v := range in.List {
		c, ok := v.(*Const)
		if !ok {
			return false
		}
		if !c.D.IsNull() && c.D.K != k {
			return false
		}
	}
	return true
}
