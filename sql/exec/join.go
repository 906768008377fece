package exec

import (
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// joinOp is a hash join on the equality keys (the right side is built),
// or a nested-loop join when there are none. Outer joins emit unmatched
// rows padded with NULLs.
type joinOp struct {
	c         *Ctx
	node      *plan.Join
	left      Operator
	rightRows []Row
	table     map[string][]int // key → right row indexes
	matched   []bool
	lkeys     []evalFn
	residual  evalFn
	lw, rw    int
	built     bool
	leftDone  bool
	pending   []Row
}

func newJoin(c *Ctx, j *plan.Join) (Operator, error) {
	left, err := Build(c, j.Left)
	if err != nil {
		return nil, err
	}
	op := &joinOp{c: c, node: j, left: left, lw: len(j.Left.Columns()), rw: len(j.Right.Columns())}
	if op.lkeys, err = compileAll(j.LeftKeys, c); err != nil {
		left.Close()
		return nil, err
	}
	if j.Residual != nil {
		if op.residual, err = compile(j.Residual, c); err != nil {
			left.Close()
			return nil, err
		}
	}
	// Build the right side.
	right, err := Build(c, j.Right)
	if err != nil {
		left.Close()
		return nil, err
	}
	rkeys, err := compileAll(j.RightKeys, c)
	if err != nil {
		left.Close()
		right.Close()
		return nil, err
	}
	if len(rkeys) > 0 {
		op.table = map[string][]int{}
	}
	var buf []byte
	err = Drain(right, func(b []Row) error {
		for _, r := range b {
			idx := len(op.rightRows)
			op.rightRows = append(op.rightRows, r)
			if op.table != nil {
				buf = buf[:0]
				null := false
				for _, f := range rkeys {
					d, err := f(r)
					if err != nil {
						return err
					}
					if d.IsNull() {
						null = true
						break
					}
					buf = types.HashKey(buf, d)
				}
				if !null {
					op.table[string(buf)] = append(op.table[string(buf)], idx)
				}
			}
		}
		return c.Context.Err()
	})
	if err != nil {
		left.Close()
		return nil, err
	}
	op.matched = make([]bool, len(op.rightRows))
	return op, nil
}

func (j *joinOp) combine(l, r Row) Row {
	row := make(Row, j.lw+j.rw)
	copy(row, l)
	copy(row[j.lw:], r)
	return row
}

func (j *joinOp) Next() ([]Row, error) {
	kind := j.node.Kind
	var buf []byte
	for !j.leftDone {
		b, err := j.left.Next()
		if err != nil {
			return nil, err
		}
		if b == nil {
			j.leftDone = true
			break
		}
		var out []Row
		for _, l := range b {
			var candidates []int
			if j.table != nil {
				buf = buf[:0]
				null := false
				for _, f := range j.lkeys {
					d, err := f(l)
					if err != nil {
						return nil, err
					}
					if d.IsNull() {
						null = true
						break
					}
					buf = types.HashKey(buf, d)
				}
				if !null {
					candidates = j.table[string(buf)]
				}
			}
			any := false
			try := func(ri int) error {
				row := j.combine(l, j.rightRows[ri])
				if j.residual != nil {
					d, err := j.residual(row)
					if err != nil {
						return err
					}
					if d.IsNull() || !d.Bool() {
						return nil
					}
				}
				any = true
				j.matched[ri] = true
				out = append(out, row)
				return nil
			}
			if j.table != nil {
				for _, ri := range candidates {
					if err := try(ri); err != nil {
						return nil, err
					}
				}
			} else {
				for ri := range j.rightRows {
					if err := try(ri); err != nil {
						return nil, err
					}
				}
			}
			if !any && (kind == plan.JoinLeft || kind == plan.JoinFull) {
				out = append(out, j.combine(l, make(Row, j.rw)))
			}
		}
		if err := j.c.Context.Err(); err != nil {
			return nil, err
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	if !j.built && (kind == plan.JoinRight || kind == plan.JoinFull) {
		j.built = true
		for ri, m := range j.matched {
			if !m {
				j.pending = append(j.pending, j.combine(make(Row, j.lw), j.rightRows[ri]))
			}
		}
	}
	if len(j.pending) > 0 {
		n := len(j.pending)
		if n > BatchSize {
			n = BatchSize
		}
		out := j.pending[:n:n]
		j.pending = j.pending[n:]
		return out, nil
	}
	return nil, nil
}

func (j *joinOp) Close() { j.left.Close() }
