package plan

import (
	"math"

	"github.com/mvserver/mvserver/sql/types"
)

// EXPLAIN's costs. A node's cost follows the join-order rule's model
// (joinorder.go's joinCost) in the same unit: one row read, kept or
// produced. The total is the node's own work plus its inputs'; the
// startup is what it does before its first row (a sort, an aggregation
// and a join's build side run to the end first). The numbers compare
// plans of one statement; they are not PostgreSQL's page-based units.

type nodeCost struct{ startup, total float64 }

type coster struct {
	est  *Estimator
	memo map[Node]nodeCost
}

func newCoster(est *Estimator) *coster {
	return &coster{est: orDefault(est), memo: map[Node]nodeCost{}}
}

func (c *coster) of(n Node) nodeCost {
	if v, ok := c.memo[n]; ok {
		return v
	}
	v := c.compute(n)
	c.memo[n] = v
	return v
}

func (c *coster) compute(n Node) nodeCost {
	rows := c.est.Rows
	var in nodeCost // the inputs' (at this level)
	for _, ch := range inputs(n) {
		v := c.of(ch)
		in.startup += v.startup
		in.total += v.total
	}
	switch x := n.(type) {
	case *Scan:
		return nodeCost{total: c.est.tableRows(x.Table)}
	case *Filter:
		if s, ok := x.Input.(*Scan); ok && (s.Keyed() || s.Start != nil || s.End != nil) {
			// An index scan: its lookups and the rows they fetch, not the
			// table (the Filter repeats the key's conditions, so its rows
			// are the rows fetched, to within its other conjuncts). Under a
			// nested loop this is one loop's cost. It is at most what
			// reading and filtering the whole table costs (a small table).
			t := math.Min(keyedScanCost(s, rows(n)), in.total+rows(x.Input))
			return nodeCost{total: t}
		}
	case *Sort:
		r := rows(x.Input)
		t := in.total + r*math.Max(1, math.Log2(r))
		return nodeCost{startup: t, total: t + r}
	case *Aggregate, *Distinct, *Window:
		t := in.total + rows(inputs(n)[0])
		return nodeCost{startup: t, total: t + rows(n)}
	case *Join:
		l, r := c.of(x.Left), c.of(x.Right)
		lr, rr := rows(x.Left), rows(x.Right)
		build := r.total + 2*rr
		probe := lr
		if len(x.LeftKeys) == 0 {
			probe = lr * rr
		}
		return nodeCost{startup: l.startup + build, total: l.total + build + probe + rows(n)}
	case *Apply:
		l, r := c.of(x.Left), c.of(x.Right)
		return nodeCost{startup: l.startup + r.startup, total: l.total + rows(x.Left)*r.total + rows(n)}
	case *SetOp:
		if x.Kind == Union && x.All {
			return nodeCost{startup: in.startup, total: in.total}
		}
		t := in.total + rows(x.Left) + rows(x.Right)
		return nodeCost{startup: t, total: t + rows(n)}
	case *Limit:
		// Stops after its rows: a share of its input's work.
		share := math.Min(1, rows(n)/rows(x.Input))
		return nodeCost{startup: in.startup, total: in.startup + (in.total-in.startup)*share}
	}
	if len(inputs(n)) == 0 {
		return nodeCost{total: rows(n)}
	}
	return nodeCost{startup: in.startup, total: in.total + rows(inputs(n)[0])}
}

// keyedScanCost is the cost of reading s through its key bounds when
// they fetch rows rows: lookupRowCost per lookup (one per IN value), and
// per row lookupFetchCost through a secondary index (its rows are out of
// the table's order) or one row's read through the primary key.
func keyedScanCost(s *Scan, rows float64) float64 {
	lookups := 1.0
	if s.In != nil {
		lookups = float64(len(s.In))
	}
	fetch := 1.0
	if s.Index != nil {
		fetch = lookupFetchCost
	}
	return lookups*lookupRowCost + rows*fetch
}

// rowWidth estimates the bytes of one of n's rows as PostgreSQL's width
// does: a column ANALYZE measured its average width, other fixed-size
// types their size, others 32; a scan counts only the columns the plan
// reads, and a node passing its input's rows on (a filter, a sort, a
// join's two sides) what they count.
func (e *Estimator) rowWidth(n Node) int {
	switch x := n.(type) {
	case *Scan:
		return e.scanWidth(x)
	case *Filter:
		return e.rowWidth(x.Input)
	case *Project:
		// A permutation of its input's columns (the join-order rule's).
		if plainColumns(x) && len(x.Exprs) == len(x.Input.Columns()) {
			return e.rowWidth(x.Input)
		}
	case *Sort:
		return e.rowWidth(x.Input)
	case *Limit:
		return e.rowWidth(x.Input)
	case *Distinct:
		return e.rowWidth(x.Input)
	case *DistinctOn:
		return e.rowWidth(x.Input)
	case *KeyIn:
		return e.rowWidth(x.Input)
	case *CTEScan:
		return e.rowWidth(x.Input)
	case *Join:
		if x.Kind.LeftOnly() {
			return e.rowWidth(x.Left)
		}
		return e.rowWidth(x.Left) + e.rowWidth(x.Right)
	case *Apply:
		if x.Kind.LeftOnly() {
			return e.rowWidth(x.Left)
		}
		return e.rowWidth(x.Left) + e.rowWidth(x.Right)
	}
	w := 0
	for i := range n.Columns() {
		w += e.columnWidth(n, i)
	}
	return w
}

// columnWidth is the width of n's column i: a column read from a table
// is as wide as ANALYZE measured, a computed one as its type.
func (e *Estimator) columnWidth(n Node, i int) int {
	switch x := n.(type) {
	case *Scan:
		if cs := e.scanColumnStats(x, i); cs != nil && cs.AvgWidth > 0 {
			return int(cs.AvgWidth)
		}
	case *Project:
		if c, ok := x.Exprs[i].(*ColRef); ok && c.Idx < len(x.Input.Columns()) {
			return e.columnWidth(x.Input, c.Idx)
		}
	case *Filter:
		return e.columnWidth(x.Input, i)
	case *Sort:
		return e.columnWidth(x.Input, i)
	case *Limit:
		return e.columnWidth(x.Input, i)
	case *Join:
		if l := len(x.Left.Columns()); i < l {
			return e.columnWidth(x.Left, i)
		} else if !x.Kind.LeftOnly() {
			return e.columnWidth(x.Right, i-l)
		}
	}
	return typeWidth(n.Columns()[i].T)
}

// scanWidth is a scan's row width, memoized with its row estimate (a
// rendering after the statement's transaction ended still has it).
func (e *Estimator) scanWidth(x *Scan) int {
	if w, ok := e.widths[x]; ok {
		return w
	}
	w := 0
	for i, c := range x.Columns() {
		if i < len(x.Needed) && x.Needed[i] {
			if cs := e.scanColumnStats(x, i); cs != nil && cs.AvgWidth > 0 {
				w += int(cs.AvgWidth)
			} else {
				w += typeWidth(c.T)
			}
		}
	}
	if e.widths == nil {
		e.widths = map[*Scan]int{}
	}
	e.widths[x] = w
	return w
}

func typeWidth(t types.T) int {
	switch t.Kind {
	case types.KindBool:
		return 1
	case types.KindInt2:
		return 2
	case types.KindInt4, types.KindFloat4, types.KindDate, types.KindOid:
		return 4
	case types.KindInt8, types.KindFloat8, types.KindTimestamp, types.KindTimestampTZ:
		return 8
	case types.KindInterval:
		return 16
	}
	return 32
}
