package plan

import "github.com/mvserver/mvserver/pgerror"

// distinctOnKeys applies PostgreSQL's rule for SELECT DISTINCT ON (parse
// clause transformDistinctOnClause): the ORDER BY keys that are DISTINCT ON
// expressions must come first, and once an ORDER BY key that is not one
// has been passed, every DISTINCT ON expression must have been met
// (42P10 otherwise). on and order are ColRefs into the projection; onLocs
// are the DISTINCT ON expressions' positions. It returns the keys the
// DistinctOn compares and the sort under it: the ORDER BY keys, then the
// DISTINCT ON expressions ORDER BY did not name, ascending.
func (b *Binder) distinctOnKeys(on []SortKey, onLocs []int32, order []SortKey) ([]Expr, []SortKey, error) {
	col := func(k SortKey) int { return k.E.(*ColRef).Idx }
	firstOn := map[int]int{} // projection column → first DISTINCT ON item naming it
	var keys []Expr
	for i, k := range on {
		if _, dup := firstOn[col(k)]; !dup {
			firstOn[col(k)] = i
			keys = append(keys, k.E)
		}
	}
	covered := map[int]bool{}
	skipped := false
	for _, k := range order {
		i, isOn := firstOn[col(k)]
		switch {
		case !isOn:
			skipped = true
		case skipped:
			return nil, nil, b.errAt(onLocs[i], pgerror.InvalidColumnReference, "SELECT DISTINCT ON expressions must match initial ORDER BY expressions")
		default:
			covered[col(k)] = true
		}
	}
	sorted := append([]SortKey(nil), order...)
	for _, k := range on {
		if covered[col(k)] {
			continue
		}
		if skipped {
			return nil, nil, b.errAt(onLocs[firstOn[col(k)]], pgerror.InvalidColumnReference, "SELECT DISTINCT ON expressions must match initial ORDER BY expressions")
		}
		covered[col(k)] = true
		sorted = append(sorted, SortKey{E: k.E})
	}
	return keys, sorted, nil
}
