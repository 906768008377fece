package plan

import "slices"

// The semi-join-to-inner rule. A semi join whose right side has at most
// one row per value of its join keys — a table's primary key or unique
// index, a grouping by the keys, a DISTINCT over them — matches each left
// row at most once, so it is the inner join of the two sides projected on
// the left columns (PostgreSQL's unique-inner semi join):
//
//	L ⋉ R  =  π_L (L ⋈ R)     when R is unique on the join keys
//
// As an inner join it joins the island around it (joinorder.go), whose
// order may then drive the join from the right side: TPC-H Q20's
// `ps_partkey IN (SELECT p_partkey FROM part WHERE p_name LIKE …)` reads
// the 200 parts found and looks their partsupp rows up by its key, where
// the semi join hashed the parts and read all of partsupp. The output (the
// left columns, each left row once) is unchanged. Anti joins stay: a left
// row without a match is what they keep.

func semiJoinsToInner(o *Optimizer, n Node) (Node, bool, error) {
	return transformUp(n, func(x Node) (Node, bool, error) {
		j, ok := x.(*Join)
		if !ok || j.Kind != JoinSemi || len(j.RightKeys) == 0 {
			return x, false, nil
		}
		cols := make([]int, len(j.RightKeys))
		for i, k := range j.RightKeys {
			c, ok := k.(*ColRef)
			if !ok || j.LeftKeys[i].Type().Kind != c.T.Kind {
				return x, false, nil
			}
			cols[i] = c.Idx
		}
		if !uniqueOnColumns(j.Right, cols) {
			return x, false, nil
		}
		inner := &Join{Kind: JoinInner, Left: j.Left, Right: j.Right, LeftKeys: j.LeftKeys, RightKeys: j.RightKeys, Residual: j.Residual}
		left := j.Left.Columns()
		return &Project{Input: inner, Exprs: allColRefs(left), Cols: left}, true, nil
	})
}

// uniqueOnColumns reports whether n has at most one row for each value of
// its columns cols (positions in n's row) that an equality can match: a
// NULL matches none, so a unique index's several NULLs do not count.
func uniqueOnColumns(n Node, cols []int) bool {
	switch x := n.(type) {
	case *Filter:
		return uniqueOnColumns(x.Input, cols)
	case *Sort:
		return uniqueOnColumns(x.Input, cols)
	case *Limit:
		return uniqueOnColumns(x.Input, cols)
	case *Project:
		in := make([]int, len(cols))
		for i, c := range cols {
			cr, ok := x.Exprs[c].(*ColRef)
			if !ok {
				return false
			}
			in[i] = cr.Idx
		}
		return uniqueOnColumns(x.Input, in)
	case *Aggregate:
		// Its rows are one per group: the group columns come first.
		for g := range x.GroupBy {
			if !slices.Contains(cols, g) {
				return false
			}
		}
		return true
	case *Distinct:
		for c := range x.Columns() {
			if !slices.Contains(cols, c) {
				return false
			}
		}
		return true
	case *Scan:
		ids := make([]uint32, 0, len(cols))
		for _, c := range cols {
			if c >= len(x.Table.Columns) {
				return false // a hidden column
			}
			ids = append(ids, x.Table.Columns[c].ID)
		}
		return uniqueWithin(x.Table.PrimaryKey, ids) || uniqueIndexWithin(x, ids)
	}
	return false
}

// uniqueIndexWithin reports whether a unique index of the scan's table
// has every column in ids.
func uniqueIndexWithin(s *Scan, ids []uint32) bool {
	for _, ix := range s.Table.Indexes {
		if ix.Unique && uniqueWithin(ix.ColumnIDs(), ids) {
			return true
		}
	}
	return false
}

// uniqueWithin reports whether key (a unique key's columns) is non-empty
// and every one of its columns is in ids: rows equal on ids are equal on
// the key.
func uniqueWithin(key, ids []uint32) bool {
	if len(key) == 0 {
		return false
	}
	for _, k := range key {
		if !slices.Contains(ids, k) {
			return false
		}
	}
	return true
}
