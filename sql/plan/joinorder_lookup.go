package plan

import "math"

// Index-aware join order. The index-join rule (access.go) runs after the
// join order and turns a hash join into an index nested-loop join where
// the lookups cost less than reading the other side's table
// (lookupsCheaper); the join order used to cost every join as a hash
// join, so it never chose the order that makes a lookup possible. TPC-H
// Q7 read all of orders into a hash join when the few French and German
// customers could look their orders up through orders_cust, as
// PostgreSQL's plan does. Now a join of a tree with a leaf that is a
// table scan keyed on the join columns is also priced as lookups, by the
// index-join rule's own test and costs, and the cheaper of the two ways
// is the join's cost.

// leafKeys are the keys (primary key, then each index) of the table a
// leaf scans, as the leaf's column positions; nil for a leaf that is no
// plain scan (or a Filter over one) that lookups could read.
func (is *island) leafKeys(leaf int, leaves []Node) [][]int {
	if is.keysOf == nil {
		is.keysOf = make([][][]int, len(is.leaves))
		is.keysDone = make([]bool, len(is.leaves))
	}
	if is.keysDone[leaf] {
		return is.keysOf[leaf]
	}
	is.keysDone[leaf] = true
	scan := scanUnder(leaves[leaf])
	if scan == nil || nodeReadsOuter(leaves[leaf]) {
		return nil
	}
	t := scan.Table
	var keys [][]int
	if len(t.PrimaryKey) > 0 {
		var cols []int
		for _, id := range t.PrimaryKey {
			cols = append(cols, t.ColumnByID(id))
		}
		keys = append(keys, cols)
	}
	for _, ix := range t.Indexes {
		var cols []int
		for _, c := range ix.Columns {
			cols = append(cols, t.ColumnByID(c.Col))
		}
		keys = append(keys, cols)
	}
	is.keysOf[leaf] = keys
	return keys
}

// lookupCost is the cost of joining outer with inner, a leaf, by looking
// outer's rows up in inner's table through the key whose longest prefix
// the equalities joining them cover, into rows rows: outer's cost, a
// lookup of lookupRowCost per outer row and lookupFetchCost per row it
// finds (the table's rows over the prefix's distinct values), and the
// rows emitted. ok is false when no key's first column is joined, or when
// the index-join rule would not look them up (the lookups cost more than
// reading the table: lookupsCheaper).
func (is *island) lookupCost(outer, inner *jtree, leaves []Node, rows float64) (float64, bool) {
	if inner.l != nil {
		return 0, false
	}
	leaf := inner.leaf
	keys := is.leafKeys(leaf, leaves)
	if len(keys) == 0 {
		return 0, false
	}
	// The leaf's columns an equality class joins to outer.
	var joined uint64
	for _, ec := range is.ecs {
		if ec.mask&outer.mask == 0 || ec.mask&inner.mask == 0 {
			continue
		}
		for _, c := range ec.cols {
			if is.colOf[c] == leaf && c-is.off[leaf] < 64 {
				joined |= 1 << (c - is.off[leaf])
			}
		}
	}
	if joined == 0 {
		return 0, false
	}
	var best []int
	for _, k := range keys {
		n := 0
		for n < len(k) && k[n] >= 0 && k[n] < 64 && joined&(1<<k[n]) != 0 {
			n++
		}
		if n > len(best) {
			best = k[:n]
		}
	}
	if len(best) == 0 {
		return 0, false
	}
	scan := scanUnder(leaves[leaf])
	table := is.o.est.tableRows(scan.Table)
	distinct := 1.0
	for _, pos := range best {
		distinct *= is.o.est.ndv(&ColRef{Idx: pos, T: scan.Columns()[pos].T}, scan)
	}
	perKey := table / math.Max(1, math.Min(distinct, table))
	lookups := outer.rows * (lookupRowCost + lookupFetchCost*perKey)
	if lookups > table {
		return 0, false
	}
	return outer.cost + lookups + rows, true
}

// bestJoin is the cheaper way to join a and b into rows rows: a hash join
// (joinCost) building b, or either side when swap is set, or, with keys,
// lookups of one side's rows into the other, a leaf (lookupCost; the
// index-join rule turns either side into the lookups). l is the side the
// join takes as its left (the probe, or the side whose rows look the
// other up), r the other.
func (is *island) bestJoin(a, b *jtree, leaves []Node, rows float64, hashed, swap bool) (l, r *jtree, cost float64) {
	l, r, cost = a, b, joinCost(a, b, rows, hashed)
	if c := joinCost(b, a, rows, hashed); swap && c < cost {
		l, r, cost = b, a, c
	}
	if !hashed || is.o.est.Stats == nil {
		return l, r, cost
	}
	// The sides stay the hash join's: the index-join rule tries each side
	// as the outer one, and a join it leaves hashed builds the smaller.
	if c, ok := is.lookupCost(a, b, leaves, rows); ok && c < cost {
		cost = c
	}
	if c, ok := is.lookupCost(b, a, leaves, rows); ok && c < cost {
		cost = c
	}
	return l, r, cost
}
