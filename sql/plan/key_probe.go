package plan

// Key probes. A semi or anti join through an index (an Apply that
// lookupJoin built, access.go) needs to know only whether a right row
// exists for each left row. When its right side's conditions are exactly
// the lookup's key equalities (NOT EXISTS (SELECT * FROM orders WHERE
// o_custkey = c_custkey), TPC-H-derived Q22), the key range alone decides:
// the executor probes the index entries (or primary keys) for one in the
// range and reads no row, as PostgreSQL's Index Only Scan does. A NULL
// key value matches nothing (the equality is not true), which the probe
// checks itself, since an index keeps entries with NULLs.

// KeyProbe returns the scan whose key range decides each lookup of a, and
// true, when a is such a semi or anti join.
func (a *Apply) KeyProbe() (*Scan, bool) {
	if (a.Kind != JoinSemi && a.Kind != JoinAnti) || a.Residual != nil {
		return nil, false
	}
	f, ok := a.Right.(*Filter)
	if !ok {
		return nil, false
	}
	s, ok := f.Input.(*Scan)
	if !ok || s.Exclude != nil || !s.Keyed() || s.In != nil {
		return nil, false
	}
	vals := s.Point
	if vals == nil {
		vals = s.Start.Values
	}
	keyCols := s.KeyColumns()
	if len(vals) > len(keyCols) {
		return nil, false
	}
	// Every bound is a parameter, and every condition is the equality of
	// a bound key column with that same parameter.
	for _, v := range vals {
		if _, ok := v.(*OuterRef); !ok {
			return nil, false
		}
	}
	for _, c := range conjuncts(f.Cond) {
		b, ok := c.(*Binary)
		if !ok || b.Op != OpEq {
			return nil, false
		}
		col, lok := b.L.(*ColRef)
		ref, rok := b.R.(*OuterRef)
		if !lok || !rok {
			return nil, false
		}
		bound := false
		for k, kc := range keyCols[:len(vals)] {
			if kc == col.Idx && vals[k].(*OuterRef).Idx == ref.Idx {
				bound = true
				break
			}
		}
		if !bound {
			return nil, false
		}
	}
	return s, true
}
