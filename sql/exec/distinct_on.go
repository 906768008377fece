package exec

import (
	"bytes"
	"fmt"

	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// distinctOnOp is SELECT DISTINCT ON: its input comes sorted with the keys
// leading, and it keeps the first row of each run of rows whose key
// columns are equal (NULLs equal, numerics by value, as types.HashKey
// compares them). It holds one key, not the groups seen.
type distinctOnOp struct {
	c       *Ctx
	in      Operator
	cols    []int
	last    []byte
	buf     []byte
	started bool
}

func newDistinctOn(c *Ctx, d *plan.DistinctOn, in Operator) (Operator, error) {
	op := &distinctOnOp{c: c, in: in}
	for _, k := range d.Keys {
		ref, ok := k.(*plan.ColRef)
		if !ok {
			return nil, fmt.Errorf("DISTINCT ON key %s is not a column of its input", k)
		}
		op.cols = append(op.cols, ref.Idx)
	}
	return op, nil
}

func (d *distinctOnOp) Next() ([]Row, error) {
	for {
		b, err := d.in.Next()
		if err != nil || b == nil {
			return nil, err
		}
		out := b[:0]
		for _, r := range b {
			d.buf = d.buf[:0]
			for _, i := range d.cols {
				d.buf = types.HashKey(d.buf, r[i])
			}
			if d.started && bytes.Equal(d.buf, d.last) {
				continue
			}
			d.started = true
			d.last, d.buf = d.buf, d.last
			out = append(out, r)
		}
		if len(out) > 0 {
			return out, nil
		}
		if err := d.c.Context.Err(); err != nil {
			return nil, err
		}
	}
}

func (d *distinctOnOp) Close() { d.in.Close() }
