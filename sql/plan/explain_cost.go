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

// rowWidth estimates the bytes of one of n's rows as PostgreSQL's width
// does: fixed-size types their size, others 32; a scan counts only the
// columns the plan reads, and a node passing its input's rows on (a
// filter, a sort, a join's two sides) what they count.
func rowWidth(n Node) int {
	switch x := n.(type) {
	case *Scan:
		w := 0
		for i, c := range x.Columns() {
			if i < len(x.Needed) && x.Needed[i] {
				w += typeWidth(c.T)
			}
		}
		return w
	case *Filter:
		return rowWidth(x.Input)
	case *Project:
		// A permutation of its input's columns (the join-order rule's).
		if plainColumns(x) && len(x.Exprs) == len(x.Input.Columns()) {
			return rowWidth(x.Input)
		}
	case *Sort:
		return rowWidth(x.Input)
	case *Limit:
		return rowWidth(x.Input)
	case *Distinct:
		return rowWidth(x.Input)
	case *KeyIn:
		return rowWidth(x.Input)
	case *CTEScan:
		return rowWidth(x.Input)
	case *Join:
		if x.Kind.LeftOnly() {
			return rowWidth(x.Left)
		}
		return rowWidth(x.Left) + rowWidth(x.Right)
	case *Apply:
		if x.Kind == JoinSemi || x.Kind == JoinAnti {
			return rowWidth(x.Left)
		}
		return rowWidth(x.Left) + rowWidth(x.Right)
	}
	w := 0
	for _, c := range n.Columns() {
		w += typeWidth(c.T)
	}
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
