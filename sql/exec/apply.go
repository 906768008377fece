package exec

import (
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// applyOp runs a LATERAL item (R-Q2) or an index nested-loop join
// (plan/access.go): for each left row it evaluates the correlation
// parameters, runs the right plan in a child context holding them (built
// for the first left row and rebound to each next one, rebind.go) and
// joins the left row with the rows it produces. Output stays within a batch per Next
// however many rows one left row yields. A semi (anti) join emits the
// left row alone when a right row matches (none does), stopping at the
// first match.
type applyOp struct {
	c        *Ctx
	node     *plan.Apply
	left     Operator
	params   []evalFn
	residual evalFn
	lw, rw   int

	// probe is the scan whose key range decides each lookup of a semi
	// or anti join (plan.Apply.KeyProbe; key_probe.go); nil: none.
	probe *plan.Scan

	lbatch  []Row
	li      int
	right   Operator // the current left row's right side
	matched bool
	// kept is the right side built for an earlier left row and read to
	// its end, to be rebound to the next one (rebind.go); outer is the
	// correlation values its context reads, overwritten per left row.
	// fresh: the right side cannot be rebound, and is built per row.
	kept    Operator
	outer   []types.Datum
	fresh   bool
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
	op.probe, _ = a.KeyProbe()
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
			r, err := a.rightFor(a.lbatch[a.li])
			if err != nil {
				return nil, err
			}
			a.right, a.matched = r, false
		}
		l := a.lbatch[a.li]
		kind := a.node.Kind
		semi := kind == plan.JoinSemi || kind == plan.JoinAnti
		var b []Row
		if !(semi && a.matched) { // one match decides a semi/anti join
			var err error
			if b, err = a.right.Next(); err != nil {
				return nil, err
			}
		}
		if b == nil {
			a.done1()
			switch {
			case !a.matched && kind == plan.JoinLeft:
				a.pending = append(a.pending, a.combine(l, make(Row, a.rw)))
			case a.matched && kind == plan.JoinSemi, !a.matched && kind == plan.JoinAnti:
				a.pending = append(a.pending, l)
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
			if semi {
				break
			}
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

// rightFor returns the right side for left row l: the kept one rebound
// to l's correlation values, or one built for them.
func (a *applyOp) rightFor(l Row) (Operator, error) {
	vals := a.outer
	if a.fresh || a.kept == nil {
		// A right side built per row keeps reading its own values.
		vals = make([]types.Datum, len(a.params))
	}
	for i, f := range a.params {
		d, err := f(l)
		if err != nil {
			return nil, err
		}
		vals[i] = d
	}
	if a.kept != nil {
		r := a.kept
		a.kept = nil
		ok, err := rebind(r)
		if err != nil {
			r.Close()
			return nil, err
		}
		if ok {
			return r, nil
		}
		r.Close()
		a.fresh = true
		vals = append([]types.Datum(nil), vals...)
	}
	r, err := a.buildRight(a.c.child(vals))
	if err != nil {
		return nil, err
	}
	// The join copies what it keeps of a right row (combine).
	reuseInput(r)
	if !a.fresh {
		a.outer = vals
	}
	return r, nil
}

// done1 ends the current left row's right side: kept to be rebound to
// the next row, or closed.
func (a *applyOp) done1() {
	if a.fresh {
		a.right.Close()
	} else {
		a.kept = a.right
	}
	a.right = nil
}

// buildRight builds the right side for one left row.
func (a *applyOp) buildRight(c *Ctx) (Operator, error) {
	if a.probe == nil {
		return Build(c, a.node.Right)
	}
	var op Operator = newKeyProbe(c, a.probe)
	if c.stmt != nil && c.stmt.analyze != nil {
		op = c.stmt.analyze.wrap(a.node.Right, op)
	}
	return op, nil
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
	if a.kept != nil {
		a.kept.Close()
		a.kept = nil
	}
	a.left.Close()
}
