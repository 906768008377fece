package exec

// Rebinding. An index nested-loop join (plan.Apply, apply.go) runs its
// inner side once per outer row, each time with other correlation values.
// Building that side's operators afresh per row compiles its expressions
// and key values again and opens new iterators: for a few rows found per
// lookup, most of the join's CPU. Instead the side is built once, in a
// context whose Outer the join overwrites in place per row (an OuterRef
// reads its Ctx's Outer when evaluated), and rebound: each of its
// operators starts again from the beginning, with the new values.
//
// An operator that cannot start again says so (rebind returns false)
// before it changes anything; the join then builds the side afresh per
// row, as it did before.

// rebinder is an operator that can run again from its start, reading its
// Ctx's Outer values as they are at the rebind, whether it was read to
// its end, part of the way or closed. rebind reports false, having
// changed nothing, when it cannot.
type rebinder interface {
	rebind() (bool, error)
}

// rebind makes op run again from its start; false when it cannot.
func rebind(op Operator) (bool, error) {
	r, ok := op.(rebinder)
	if !ok {
		return false, nil
	}
	return r.rebind()
}

// rebind evaluates the key values again and reads from the first range;
// the iterator of the primary key or index is kept to be pointed at the
// new range (scanOp.retarget).
func (s *scanOp) rebind() (bool, error) {
	if s.ra != nil {
		// The reader is stopped before the iterator it reads is closed;
		// the batches it filled go with it.
		s.ra.stop()
		s.ra = nil
		s.last = scanBatch{}
		s.it.Close()
		s.it = nil
	}
	if s.post != nil {
		s.pred, s.post = s.post, nil
	}
	if s.it != nil {
		if s.spare == nil && retargetable(s.it) {
			s.spare = s.it
		} else {
			s.it.Close()
		}
		s.it = nil
	}
	s.done, s.batch, s.full = false, 0, 0
	s.dropped, s.passed = 0, 0
	return true, s.bindKeys()
}

func (f *filterOp) rebind() (bool, error) { return rebind(f.in) }

func (p *projectOp) rebind() (bool, error) {
	ok, err := rebind(p.in)
	if ok {
		p.rest = nil
		p.mem.release()
	}
	return ok, err
}

func (a *aggregateOp) rebind() (bool, error) {
	ok, err := rebind(a.in)
	if ok {
		closeTasks(a.tasks)
		a.tasks, a.out, a.started = nil, nil, false
		a.mem.release()
	}
	return ok, err
}

func (p *keyProbeOp) rebind() (bool, error) {
	p.done = false
	return true, nil
}

// rebind counts one more loop of the node, as building it again would.
func (o *analyzeOp) rebind() (bool, error) {
	ok, err := rebind(o.in)
	if ok {
		o.s.Loops++
	}
	return ok, err
}

// rebind starts the join again from its first left row; the right side
// of the row it was at is kept to be rebound to the next, as at a row's
// end.
func (a *applyOp) rebind() (bool, error) {
	ok, err := rebind(a.left)
	if !ok || err != nil {
		return ok, err
	}
	if a.right != nil {
		a.done1()
	}
	a.lbatch, a.li, a.pending, a.done, a.matched = nil, 0, nil, false, false
	return true, nil
}
