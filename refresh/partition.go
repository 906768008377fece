package refresh

import (
	"context"
	"fmt"
	"strings"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// PARTITION_OVERWRITE (R-I1): a view PARTITIONED BY columns that come
// straight from one source table's columns — through projections, filters,
// joins on the preserved side, GROUP BY keys and DISTINCT — holds, in each
// partition, rows computed only from that table's rows with the same
// values. When only that table changed, the partitions its changed rows
// (old and new images) fall in are recomputed: the query runs over that
// table's rows of those partitions alone, and the view's rows of those
// partitions are replaced (consolidated, so rows that did not change are
// not written). This serves what the other techniques cannot: aggregates
// over floating point, order-dependent aggregates.

// partitionShape is how a view's partition columns trace to a source.
type partitionShape struct {
	scan     *plan.Scan
	srcCols  []int // table column index of each partition column
	viewCols []int // view column index of each partition column
}

// findPartition traces every partition column of v to one scan of q.
func findPartition(v *catalog.Table, q plan.Node) *partitionShape {
	if v == nil || len(v.PartitionBy) == 0 {
		return nil
	}
	ps := &partitionShape{}
	for _, name := range v.PartitionBy {
		idx := -1
		for i, c := range v.Columns {
			if strings.EqualFold(c.Name, name) {
				idx = i
			}
		}
		if idx < 0 {
			return nil
		}
		scan, col, ok := traceColumn(q, idx)
		if !ok || (ps.scan != nil && scan != ps.scan) {
			return nil
		}
		// The view's values must hash like the source's (same type).
		if src := scan.Table.Columns[col].Type; src.Kind != v.Columns[idx].Type.Kind {
			return nil
		}
		ps.scan = scan
		ps.srcCols = append(ps.srcCols, col)
		ps.viewCols = append(ps.viewCols, idx)
	}
	// The table must be read once: a second read (a self-join, a CTE used
	// twice, EXISTS on it) would see every partition.
	if countScans(q, ps.scan.Table.ID) != 1 {
		return nil
	}
	return ps
}

// countScans counts the scans of table id in n (subquery plans included).
func countScans(n plan.Node, id uint32) int {
	count := 0
	var node func(n plan.Node)
	node = func(n plan.Node) {
		if n == nil {
			return
		}
		switch x := n.(type) {
		case *plan.Scan:
			if x.Table.ID == id {
				count++
			}
		case *plan.Apply:
			node(x.Right)
		}
		for _, e := range plan.NodeExprs(n) {
			plan.Walk(e, func(e plan.Expr) bool {
				if sq, ok := e.(*plan.Subquery); ok {
					node(sq.Plan)
				}
				return true
			})
		}
		for _, c := range plan.NodeInputs(n) {
			node(c)
		}
	}
	node(n)
	return count
}

// traceColumn follows output column idx of n down to the table column it
// is a copy of, through nodes that keep each output row's value of it equal
// to the value in the one source row it came from.
func traceColumn(n plan.Node, idx int) (*plan.Scan, int, bool) {
	switch x := n.(type) {
	case *plan.Scan:
		if idx < len(x.Table.Columns) {
			return x, idx, true
		}
	case *plan.Project:
		if c, ok := x.Exprs[idx].(*plan.ColRef); ok {
			return traceColumn(x.Input, c.Idx)
		}
	case *plan.Filter:
		return traceColumn(x.Input, idx)
	case *plan.Sort:
		return traceColumn(x.Input, idx)
	case *plan.Distinct:
		return traceColumn(x.Input, idx)
	case *plan.CTEScan:
		return traceColumn(x.Input, idx)
	case *plan.Aggregate:
		if idx < len(x.GroupBy) {
			if c, ok := x.GroupBy[idx].(*plan.ColRef); ok {
				return traceColumn(x.Input, c.Idx)
			}
		}
	case *plan.Join:
		nl := len(x.Left.Columns())
		switch {
		case idx < nl && (x.Kind == plan.JoinInner || x.Kind == plan.JoinCross || x.Kind == plan.JoinLeft || x.Kind.LeftOnly()):
			return traceColumn(x.Left, idx)
		case idx >= nl && (x.Kind == plan.JoinInner || x.Kind == plan.JoinCross || x.Kind == plan.JoinRight):
			return traceColumn(x.Right, idx-nl)
		}
	}
	return nil, 0, false
}

// replaceNode returns n with target replaced by repl (nodes on the way
// copied; CTE references inlined, a shared CTE's materialization belongs to
// the statement that runs it).
func replaceNode(n, target, repl plan.Node) (plan.Node, bool) {
	if n == target {
		return repl, true
	}
	switch x := n.(type) {
	case *plan.CTEScan:
		return replaceNode(x.Input, target, repl)
	case *plan.Filter, *plan.Project, *plan.Sort, *plan.Distinct, *plan.Aggregate, *plan.Limit, *plan.Join, *plan.SetOp:
		ch := append([]plan.Node(nil), n.Children()...)
		found := false
		for i, c := range ch {
			var ok bool
			if ch[i], ok = replaceNode(c, target, repl); ok {
				found = true
			}
		}
		if found {
			return rebuild(n, ch...), true
		}
	}
	return n, false
}

// planPartition prepares a PARTITION_OVERWRITE refresh: the view's rows of
// the touched partitions (lost) and the query over them (gained).
func planPartition(ctx context.Context, in *Input, ps *partitionShape, d *sourceDelta) (plus, minus plan.Node, touched int, err error) {
	keys := map[string]struct{}{}
	var buf []byte
	for _, rows := range [][][]types.Datum{d.ins, d.del} {
		for _, r := range rows {
			buf = buf[:0]
			for _, c := range ps.srcCols {
				buf = types.HashKey(buf, r[c])
			}
			keys[string(buf)] = struct{}{}
		}
	}
	cols := ps.scan.Columns()
	var keyExprs []plan.Expr
	for _, c := range ps.srcCols {
		keyExprs = append(keyExprs, &plan.ColRef{Idx: c, T: cols[c].T, Name: cols[c].Name})
	}
	// Every column the view's partition keys read must be decoded.
	scan := *ps.scan
	scan.Needed = append([]bool(nil), ps.scan.Needed...)
	for _, c := range ps.srcCols {
		scan.Needed[c] = true
	}
	q, ok := replaceNode(in.Query, ps.scan, &plan.KeyIn{Input: &scan, Keys: keyExprs, Set: keys})
	if !ok {
		return nil, nil, 0, pgerror.New(pgerror.InternalError, "refresh: the partition source of \"%s\" is not in its plan", in.View.Name)
	}
	// The view's current rows in those partitions.
	v := in.View
	ids := make([]uint32, len(v.Columns))
	viewCols := make([]plan.Column, len(v.Columns))
	for i, c := range v.Columns {
		ids[i] = c.ID
		viewCols[i] = plan.Column{Name: c.Name, T: c.Type}
	}
	dec := types.NewRowDecoder(ids)
	var old [][]types.Datum
	it := in.Txn.Scan(storage.TableID(v.ID), nil, nil)
	for it.Next() {
		row := make([]types.Datum, len(ids))
		if err := dec.Decode(it.Row().Value, row); err != nil {
			it.Close()
			return nil, nil, 0, err
		}
		buf = buf[:0]
		for _, c := range ps.viewCols {
			buf = types.HashKey(buf, row[c])
		}
		if _, ok := keys[string(buf)]; ok {
			old = append(old, row)
		}
	}
	err = it.Err()
	it.Close()
	if err != nil {
		return nil, nil, 0, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, 0, err
	}
	return q, &plan.Given{Cols: viewCols, Rows: old}, len(keys), nil
}

// partitionOverwrite is PARTITION_OVERWRITE in the planner's table: the
// view's partitions a change of its partition source touches are
// recomputed whole. It comes last: it is the technique for queries no
// row or group technique maintains (order-dependent aggregates, floating
// point).
type partitionOverwrite struct{}

func (partitionOverwrite) Name() TechniqueName { return PartitionOverwrite }

func (partitionOverwrite) Applies(an *Analysis) (bool, string) {
	why := "the view is not partitioned"
	if an.partitioned {
		why = "the view's partition columns do not all come straight from one source's columns"
	}
	if ok, why := allowed(an, PartitionOverwrite, why); !ok {
		return false, why
	}
	return an.partition != nil, why
}

func (partitionOverwrite) Run(ctx context.Context, r *techRun) (*change, error) {
	src := r.an.partition.scan.Table
	for id := range r.deltas {
		if id != src.ID {
			t, _ := r.in.Catalog.Table(id)
			return nil, &refusal{why: fmt.Sprintf("PARTITION_OVERWRITE recomputes the partitions %s's changes touch, but %s changed too", r.in.Catalog.QualifiedName(src), r.in.Catalog.QualifiedName(t))}
		}
	}
	d := r.deltas[src.ID]
	if d == nil {
		d = &sourceDelta{table: src}
	}
	plus, minus, touched, err := planPartition(ctx, r.in, r.an.partition, d)
	if err != nil {
		return nil, err
	}
	return &change{plus: plus, minus: minus, partitions: touched}, nil
}

func (partitionOverwrite) Estimate(s *sizer, r *techRun, c *change) float64 {
	return changeCost(s, c, r.changed)
}
