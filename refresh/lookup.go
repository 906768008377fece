package refresh

import (
	"fmt"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// Lookups into the other side of a join (DESIGN.md: "lookups into R_new go
// through primary keys, so their cost follows |Δ|, not |R|"). The term
// ΔL ⋈ R_new runs as R_new ⋈ ΔL with the hash table on the change; when R
// is a table scan joined on its primary key's first column, the scan is
// narrowed to the key values the change holds (plan.Scan.In: one key range
// per value) instead of reading the whole table each refresh.

// lookupRowsPerKey: a key range (one iterator, retargeted from range to
// range: storage.Iterator.Retarget) costs about as much as 3-4 rows of a
// full scan (measured: 1000 one-row ranges of a 100k-row table in about
// 1.1 ms, BenchmarkScanRanges; a new iterator per range took 3.1 ms);
// with more keys than rows/this, the table is read whole — the margin
// keeps cold blocks from tipping it.
const lookupRowsPerKey = 6

// lookupSide returns the right side of j to join with delta (rows of
// j.Left's shape): j.Right narrowed to delta's keys when that is cheaper,
// else j.Right itself. delta is returned materialized (it was run to find
// its keys).
func (df *differ) lookupSide(j *plan.Join, delta plan.Node) (right, rows plan.Node, err error) {
	s, k := lookupScan(j)
	if s == nil {
		return j.Right, delta, nil
	}
	n, err := df.ctx.Txn.RowCount(storage.TableID(s.Table.ID))
	if err != nil {
		return nil, nil, err
	}
	if n < 2*lookupRowsPerKey {
		return j.Right, delta, nil
	}
	given, err := df.materialize(delta)
	if err != nil {
		return nil, nil, err
	}
	if int64(len(given.Rows))*lookupRowsPerKey > n {
		return j.Right, given, nil
	}
	key, err := exec.Compile(j.LeftKeys[k], df.ctx)
	if err != nil {
		return nil, nil, err
	}
	t := j.RightKeys[k].Type()
	seen := map[string]struct{}{}
	in := []plan.Expr{}
	var hk []byte
	for _, r := range given.Rows {
		d, err := key(r)
		if err != nil {
			return nil, nil, err
		}
		if d.IsNull() { // joins no row
			continue
		}
		hk = types.HashKey(hk[:0], d)
		if _, ok := seen[string(hk)]; ok {
			continue
		}
		seen[string(hk)] = struct{}{}
		in = append(in, &plan.Const{D: d, T: t})
	}
	if int64(len(in))*lookupRowsPerKey > n {
		return j.Right, given, nil
	}
	narrowed := *s
	narrowed.In, narrowed.Narrowed = in, true
	return &narrowed, given, nil
}

// lookupScan finds j.Right as a whole-table scan and the join key pair
// whose right side is the first column of its primary key, with both sides
// of one kind whose values equal exactly when their key encodings do.
func lookupScan(j *plan.Join) (*plan.Scan, int) {
	s, ok := j.Right.(*plan.Scan)
	if !ok || s.Point != nil || s.Start != nil || s.End != nil || s.In != nil || s.Index != nil || s.Exclude != nil ||
		len(s.Table.PrimaryKey) == 0 || scanReadsTime(s) {
		return nil, -1
	}
	first := s.Table.ColumnByID(s.Table.PrimaryKey[0])
	for k, rk := range j.RightKeys {
		c, ok := rk.(*plan.ColRef)
		if !ok || c.Idx != first || k >= len(j.LeftKeys) {
			continue
		}
		lt, rt := j.LeftKeys[k].Type(), rk.Type()
		if lt.Kind != rt.Kind {
			continue
		}
		switch lt.Kind {
		case types.KindInt2, types.KindInt4, types.KindInt8, types.KindDate, types.KindText, types.KindVarchar:
			return s, k
		}
	}
	return nil, -1
}

// indexRowsPerKey: a value read through a secondary index costs a key
// range and, per row, an entry and a lookup of the row: narrowing pays
// while the values are at most a sixteenth of the table's rows (or, when
// ANALYZE knows how many rows a value matches, while reading them costs
// less than the table: indexKeyCost).
const indexRowsPerKey = 16

// narrowKeyIn makes k — the rows of touched keys (a window's partitions,
// an aggregate's groups) — read only those rows, given the touched key
// tuples (distinct, none NULL; nil: not known):
//
//   - out of a whole-table scan, when its key is one column that leads
//     the table's primary key or one of its indexes: the scan becomes an
//     IN scan of the touched values. k.Input may be the scan, a filter over
//     it, or the scan united with a change's rows (the old side of a
//     changed table); too many values for the table's size keep the scan;
//   - with several key columns, or under joins, out of the scans whose
//     columns the keys are or equal through the joins' keys, through any
//     one of them that leads a key (pushKeys, restrict.go);
//   - out of anything else (a join no key reaches), by joining k.Input with the tuples on
//     its keys (keyJoin): the optimizer then starts the join from the
//     touched keys and looks the sources up through their keys
//     (evalplan.go), instead of computing the whole input.
//
// The KeyIn stays on top and still checks every row.
func (df *differ) narrowKeyIn(k *plan.KeyIn, tuples [][]types.Datum) plan.Node {
	if len(tuples) == 0 || len(k.Keys) == 0 {
		return k
	}
	if c, ok := k.Keys[0].(*plan.ColRef); ok && len(k.Keys) == 1 {
		vals := make([]types.Datum, len(tuples))
		for i, t := range tuples {
			vals[i] = t[0]
		}
		if in := df.narrowScanIn(k.Input, c, vals); in != nil {
			return rebuild(k, in)
		}
	}
	// Any one key column read through a key narrows a scan, across the
	// joins' equality keys too (restrict.go); the KeyIn checks the whole
	// key.
	if in := df.pushKeys(k.Input, keyConds(k.Keys, tuples)); in != k.Input {
		return rebuild(k, in)
	}
	if in := keyJoin(k.Input, k.Keys, tuples); in != nil {
		return rebuild(k, in)
	}
	return k
}

// keyJoin is input ⋈ tuples on keys = the tuples' columns, projected back
// to input's columns: the same rows as KeyIn, as the tuples are distinct
// and hold no NULL, and the keys are of kinds whose join equality is the
// equality of their hash keys. nil when a key is of another kind, or when
// input is not a join (a scan is narrowed by narrowScanIn, or read whole).
func keyJoin(input plan.Node, keys []plan.Expr, tuples [][]types.Datum) plan.Node {
	if !hasJoin(input) {
		return nil
	}
	cols := make([]plan.Column, len(keys))
	rkeys := make([]plan.Expr, len(keys))
	for i, k := range keys {
		t := k.Type()
		switch t.Kind {
		case types.KindInt2, types.KindInt4, types.KindInt8, types.KindDate, types.KindText, types.KindVarchar:
		default:
			return nil
		}
		cols[i] = plan.Column{Name: fmt.Sprintf("touched%d", i+1), T: t}
		rkeys[i] = &plan.ColRef{Idx: i, T: t, Name: cols[i].Name}
	}
	for _, tu := range tuples {
		for i, d := range tu {
			if d.K != cols[i].T.Kind {
				return nil
			}
		}
	}
	j := &plan.Join{Kind: plan.JoinInner, Left: input, Right: &plan.Given{Cols: cols, Rows: tuples}, LeftKeys: keys, RightKeys: rkeys}
	in := input.Columns()
	exprs := make([]plan.Expr, len(in))
	for i, c := range in {
		exprs[i] = &plan.ColRef{Idx: i, T: c.T, Name: c.Name}
	}
	return &plan.Project{Input: j, Exprs: exprs, Cols: in}
}

// hasJoin reports whether n computes a join at its own level (below
// filters and projections).
func hasJoin(n plan.Node) bool {
	switch x := n.(type) {
	case *plan.Join:
		return true
	case *plan.Filter:
		return hasJoin(x.Input)
	case *plan.Project:
		return hasJoin(x.Input)
	}
	return false
}

// narrowScanIn returns n with its scan narrowed to rows whose column c
// (an index into the scan's columns) is in vals; nil when it cannot.
func (df *differ) narrowScanIn(n plan.Node, c *plan.ColRef, vals []types.Datum) plan.Node {
	switch x := n.(type) {
	case *plan.Filter:
		if in := df.narrowScanIn(x.Input, c, vals); in != nil {
			return rebuild(x, in)
		}
	case *plan.SetOp:
		if x.Kind != plan.Union || !x.All {
			return nil
		}
		if _, given := x.Right.(*plan.Given); !given {
			return nil
		}
		if l := df.narrowScanIn(x.Left, c, vals); l != nil {
			return rebuild(x, l, x.Right)
		}
	case *plan.Scan:
		return df.narrowScan(x, c, vals)
	}
	return nil
}

func (df *differ) narrowScan(s *plan.Scan, c *plan.ColRef, vals []types.Datum) plan.Node {
	t := s.Table
	if s.Point != nil || s.Start != nil || s.End != nil || s.In != nil || s.Index != nil || scanReadsTime(s) ||
		c.Idx >= len(t.Columns) || !s.Needed[c.Idx] {
		return nil
	}
	col := t.Columns[c.Idx]
	switch col.Type.Kind {
	case types.KindInt2, types.KindInt4, types.KindInt8, types.KindDate, types.KindText, types.KindVarchar:
	default:
		return nil // values equal exactly when their key encodings do
	}
	for _, v := range vals {
		if v.K != col.Type.Kind {
			return nil
		}
	}
	var index *catalog.Index
	perKey := int64(indexRowsPerKey)
	if len(t.PrimaryKey) > 0 && t.PrimaryKey[0] == col.ID {
		perKey = lookupRowsPerKey
	} else {
		for i := range t.Indexes {
			if ix := &t.Indexes[i]; len(ix.Columns) > 0 && ix.Columns[0].Col == col.ID {
				index = ix
				break
			}
		}
		if index == nil {
			return nil
		}
	}
	n, err := df.ctx.Txn.RowCount(storage.TableID(t.ID))
	if err != nil {
		return nil
	}
	if index != nil {
		perKey = indexKeyCost(df.ctx.Txn, t, col, n)
	}
	if int64(len(vals))*perKey > n {
		return nil
	}
	narrowed := *s
	narrowed.Index, narrowed.Narrowed = index, true
	narrowed.In = make([]plan.Expr, len(vals))
	for i, v := range vals {
		narrowed.In[i] = &plan.Const{D: v, T: col.Type}
	}
	return &narrowed
}
