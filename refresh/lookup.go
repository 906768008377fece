package refresh

import (
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
	narrowed.In = in
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
