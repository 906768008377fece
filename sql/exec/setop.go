package exec

import (
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// newSetOp builds UNION / INTERSECT / EXCEPT [ALL] (R-Q2). UNION ALL
// concatenates; UNION removes duplicates with a hash set as rows stream;
// INTERSECT and EXCEPT count the right input's rows in a hash table, then
// stream the left one. Rows match when their columns are not distinct
// (NULL matches NULL).
func newSetOp(c *Ctx, s *plan.SetOp) (Operator, error) {
	left, err := Build(c, s.Left)
	if err != nil {
		return nil, err
	}
	right, err := Build(c, s.Right)
	if err != nil {
		left.Close()
		return nil, err
	}
	if s.Kind == plan.Union {
		var op Operator = &concatOp{c: c, ins: []Operator{left, right}}
		if !s.All {
			op = newDistinct(c, op, s.Cols)
		}
		return op, nil
	}
	op := &setHashOp{c: c, node: s, left: left, right: right}
	if !s.All {
		// Equal rows written apart (1.5, 1.50): every matching left row
		// goes through a DISTINCT that keeps the preferred one, so the
		// result does not depend on the order of the left rows.
		if d := newDistinct(c, op, s.Cols); d.canonical {
			op.keepAll = true
			return d, nil
		}
	}
	return op, nil
}

// concatOp returns its inputs' rows one input after the other.
type concatOp struct {
	c   *Ctx
	ins []Operator
	i   int
}

func (o *concatOp) Next() ([]Row, error) {
	for o.i < len(o.ins) {
		if err := o.c.Context.Err(); err != nil {
			return nil, err
		}
		b, err := o.ins[o.i].Next()
		if err != nil {
			return nil, err
		}
		if b != nil {
			return b, nil
		}
		o.i++
	}
	return nil, nil
}

func (o *concatOp) Close() {
	for _, in := range o.ins {
		in.Close()
	}
}

// setHashOp is INTERSECT [ALL] and EXCEPT [ALL].
type setHashOp struct {
	c           *Ctx
	node        *plan.SetOp
	left, right Operator
	counts      map[string]int // right rows by key
	emitted     map[string]struct{}
	// keepAll: emit every matching left row (a DISTINCT above dedupes).
	keepAll bool
	built   bool
	buf     []byte
	mem     memAccount
}

func rowKey(buf []byte, r Row) []byte {
	buf = buf[:0]
	for _, d := range r {
		buf = types.HashKey(buf, d)
	}
	return buf
}

func (o *setHashOp) Next() ([]Row, error) {
	if !o.built {
		o.built = true
		o.counts = map[string]int{}
		o.emitted = map[string]struct{}{}
		var k []byte
		o.mem = o.c.account(o.node.Kind.String())
		err := Drain(o.right, func(b []Row) error {
			var size int64
			for _, r := range b {
				k = rowKey(k, r)
				if _, ok := o.counts[string(k)]; !ok {
					size += int64(len(k)) + mapEntryOverhead
				}
				o.counts[string(k)]++
			}
			if err := o.mem.grow(size); err != nil {
				return err
			}
			return o.c.Context.Err()
		})
		o.right = nil
		if err != nil {
			return nil, err
		}
	}
	intersect, all := o.node.Kind == plan.Intersect, o.node.All
	for {
		if err := o.c.Context.Err(); err != nil {
			return nil, err
		}
		b, err := o.left.Next()
		if err != nil || b == nil {
			return nil, err
		}
		out := b[:0]
		for _, r := range b {
			o.buf = rowKey(o.buf, r)
			k := string(o.buf)
			n := o.counts[k]
			keep := false
			switch {
			case all && intersect:
				// min(m, n) copies
				if n > 0 {
					o.counts[k] = n - 1
					keep = true
				}
			case all:
				// max(m - n, 0) copies
				if n > 0 {
					o.counts[k] = n - 1
				} else {
					keep = true
				}
			default:
				if (n > 0) != intersect {
					break
				}
				if o.keepAll {
					keep = true
					break
				}
				if _, done := o.emitted[k]; !done {
					if err := o.mem.grow(int64(len(k)) + mapEntryOverhead); err != nil {
						return nil, err
					}
					o.emitted[k] = struct{}{}
					keep = true
				}
			}
			if keep {
				out = append(out, r)
			}
		}
		if len(out) > 0 {
			return out, nil
		}
	}
}

func (o *setHashOp) Close() {
	o.left.Close()
	o.mem.release()
	if o.right != nil {
		o.right.Close()
	}
}
