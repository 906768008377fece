package exec

import (
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// nullAwareAntiOp is the null-aware anti join of NOT IN (subquery)
// (plan.JoinAntiNullAware): the right side's keys are hashed once; the
// last key is the NOT IN column, the others the subquery's correlation.
// A left row is kept when no right row has its correlation keys, or when
// its NOT IN value is not NULL, no right row of its correlation group
// has a NULL one and none equals it.
type nullAwareAntiOp struct {
	c     *Ctx
	left  Operator
	lkeys []evalFn
	// groups maps the correlation keys of the right rows to whether a
	// row of that group has a NULL NOT IN value; full holds the complete
	// keys of the rows without NULLs.
	groups map[string]bool
	full   map[string]struct{}
	mem    memAccount
	buf    []byte
}

func newNullAwareAnti(c *Ctx, j *plan.Join) (Operator, error) {
	if j.Residual != nil || len(j.LeftKeys) == 0 {
		return nil, pgerror.New(pgerror.InternalError, "null-aware anti join needs keys and no residual")
	}
	op := &nullAwareAntiOp{c: c, groups: map[string]bool{}, full: map[string]struct{}{}, mem: c.account("hash anti join")}
	var err error
	if op.lkeys, err = compileAll(j.LeftKeys, c); err != nil {
		return nil, err
	}
	rkeys, err := compileAll(j.RightKeys, c)
	if err != nil {
		return nil, err
	}
	right, err := Build(c, j.Right)
	if err != nil {
		return nil, err
	}
	nc := len(rkeys) - 1
	var buf []byte
	err = Drain(right, func(b []Row) error {
		for _, r := range b {
			buf = buf[:0]
			skip := false
			for _, f := range rkeys[:nc] {
				d, err := f(r)
				if err != nil {
					return err
				}
				if d.IsNull() {
					// Equal to no correlation value: in no left row's group.
					skip = true
					break
				}
				buf = types.HashKey(buf, d)
			}
			if skip {
				continue
			}
			d, err := rkeys[nc](r)
			if err != nil {
				return err
			}
			group := string(buf)
			hadNull, seen := op.groups[group]
			if !seen {
				if err := op.mem.grow(int64(len(group)) + mapEntryOverhead); err != nil {
					return err
				}
			}
			if d.IsNull() {
				op.groups[group] = true
				continue
			}
			op.groups[group] = hadNull
			buf = types.HashKey(buf, d)
			if _, ok := op.full[string(buf)]; !ok {
				if err := op.mem.grow(int64(len(buf)) + mapEntryOverhead); err != nil {
					return err
				}
				op.full[string(buf)] = struct{}{}
			}
		}
		return c.Context.Err()
	})
	if err != nil {
		op.mem.release()
		return nil, err
	}
	if op.left, err = Build(c, j.Left); err != nil {
		op.mem.release()
		return nil, err
	}
	return op, nil
}

// keep reports whether NOT IN holds for the left row l.
func (o *nullAwareAntiOp) keep(l Row) (bool, error) {
	o.buf = o.buf[:0]
	nc := len(o.lkeys) - 1
	for _, f := range o.lkeys[:nc] {
		d, err := f(l)
		if err != nil {
			return false, err
		}
		if d.IsNull() {
			return true, nil // no right row has a NULL correlation value's group
		}
		o.buf = types.HashKey(o.buf, d)
	}
	hasNull, nonEmpty := o.groups[string(o.buf)]
	if !nonEmpty {
		return true, nil
	}
	d, err := o.lkeys[nc](l)
	if err != nil {
		return false, err
	}
	if d.IsNull() || hasNull {
		return false, nil
	}
	o.buf = types.HashKey(o.buf, d)
	_, found := o.full[string(o.buf)]
	return !found, nil
}

func (o *nullAwareAntiOp) Next() ([]Row, error) {
	for {
		if err := o.c.Context.Err(); err != nil {
			return nil, err
		}
		b, err := o.left.Next()
		if err != nil || b == nil {
			return nil, err
		}
		out := b[:0:0]
		for _, l := range b {
			ok, err := o.keep(l)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, l)
			}
		}
		if len(out) > 0 {
			return out, nil
		}
	}
}

func (o *nullAwareAntiOp) Close() {
	o.left.Close()
	o.mem.release()
}
