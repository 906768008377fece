package exec

import (
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// applyOp runs a LATERAL item (R-Q2): for each left row it evaluates the
// correlation parameters, builds the right plan in a child context and
// joins the left row with the rows it produces. Output stays within a
// batch per Next however many rows one left row yields.
type applyOp struct {
	c        *Ctx
	node     *plan.Apply
	left     Operator
	params   []evalFn
	residual evalFn
	lw, rw   int

	lbatch  []Row
	li      int
	right   Operator // the current left row's right side
	matched bool
	pending []Row
	done    bool
}

func newApply(c *Ctx, a *plan.Apply) (Operator, error) {
	left, err := Build(c, a.Left)
	if err != nil {
		return nil, err
	}
	op := &applyOp{c: c, node: a, left: left, lw: len(a.Left.Columns()), rw: len(a.Right.Columns())}
	if op.params, err = compileAll(a.Params, c); err != nil {
		left.Close()
		return nil, err
	}
	if a.Residual != nil {
		if op.residual, err = compile(a.Residual, c); err != nil {
			left.Close()
			return nil, err
		}
	}
	return op, nil
}

func (a *applyOp) Next() ([]Row, error) {
	for len(a.pending) < BatchSize && !a.done {
		if err := a.c.Context.Err(); err != nil {
			return nil, err
		}
		if a.right == nil {
			if a.li >= len(a.lbatch) {
				b, err := a.left.Next()
				if err != nil {
					return nil, err
				}
				if b == nil {
					a.done = true
					break
				}
				a.lbatch, a.li = b, 0
				continue
			}
			l := a.lbatch[a.li]
			vals := make([]types.Datum, len(a.params))
			for i, f := range a.params {
				d, err := f(l)
				if err != nil {
					return nil, err
				}
				vals[i] = d
			}
			r, err := Build(a.c.child(vals), a.node.Right)
			if err != nil {
				return nil, err
			}
			a.right, a.matched = r, false
		}
		l := a.lbatch[a.li]
		b, err := a.right.Next()
		if err != nil {
			return nil, err
		}
		if b == nil {
			a.right.Close()
			a.right = nil
			if !a.matched && a.node.Kind == plan.JoinLeft {
				a.pending = append(a.pending, a.combine(l, make(Row, a.rw)))
			}
			a.li++
			continue
		}
		for _, r := range b {
			row := a.combine(l, r)
			if a.residual != nil {
				d, err := a.residual(row)
				if err != nil {
					return nil, err
				}
				if d.IsNull() || !d.Bool() {
					continue
				}
			}
			a.matched = true
			a.pending = append(a.pending, row)
		}
	}
	if len(a.pending) == 0 {
		return nil, nil
	}
	n := min(len(a.pending), BatchSize)
	out := a.pending[:n:n]
	a.pending = a.pending[n:]
	return out, nil
}

func (a *applyOp) combine(l, r Row) Row {
	row := make(Row, a.lw+a.rw)
	copy(row, l)
	copy(row[a.lw:], r)
	return row
}

func (a *applyOp) Close() {
	if a.right != nil {
		a.right.Close()
		a.right = nil
	}
	a.left.Close()
}
