package exec

import (
	"time"

	"github.com/mvserver/mvserver/sql/plan"
)

// analyzer collects EXPLAIN ANALYZE's statistics per plan node.
type analyzer struct {
	stats map[plan.Node]*plan.NodeStats
}

// Analyze makes every operator built with c (and the contexts derived from
// it) count its rows, runs and time; the returned function reads them per
// plan node (nil for a node that never ran).
func Analyze(c *Ctx) func(plan.Node) *plan.NodeStats {
	st := c.state()
	if st.analyze == nil {
		st.analyze = &analyzer{stats: map[plan.Node]*plan.NodeStats{}}
	}
	a := st.analyze
	return func(n plan.Node) *plan.NodeStats { return a.stats[n] }
}

func (a *analyzer) wrap(n plan.Node, op Operator) Operator {
	s := a.stats[n]
	if s == nil {
		s = &plan.NodeStats{}
		a.stats[n] = s
	}
	s.Loops++
	return &analyzeOp{in: op, s: s}
}

// analyzeOp times and counts the batches of the operator it wraps.
type analyzeOp struct {
	in Operator
	s  *plan.NodeStats
}

func (o *analyzeOp) Next() ([]Row, error) {
	start := time.Now()
	rows, err := o.in.Next()
	o.s.Time += time.Since(start)
	o.s.Rows += int64(len(rows))
	return rows, err
}

func (o *analyzeOp) Close() { o.in.Close() }
