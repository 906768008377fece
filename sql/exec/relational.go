package exec

import (
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

type filterOp struct {
	c    *Ctx
	in   Operator
	cond evalFn
}

func (f *filterOp) Next() ([]Row, error) {
	for {
		b, err := f.in.Next()
		if err != nil || b == nil {
			return nil, err
		}
		out, err := keepPassing(b, f.cond)
		if err != nil || len(out) > 0 {
			return out, err
		}
		if err := f.c.Context.Err(); err != nil {
			return nil, err
		}
	}
}

// keepPassing keeps, in place and in order, the rows of b for which cond
// is true.
func keepPassing(b []Row, cond evalFn) ([]Row, error) {
	out := b[:0]
	for _, r := range b {
		d, err := cond(r)
		if err != nil {
			return nil, err
		}
		if d.K == types.KindBool && d.I != 0 {
			out = append(out, r)
		}
	}
	return out, nil
}

func (f *filterOp) Close() { f.in.Close() }

// reuseBatches: the filter hands on rows of its input's batch, so its
// consumer's promise is its input's.
func (f *filterOp) reuseBatches() { reuseInput(f.in) }

// projectOp computes the select list. The large values it computes
// (funcs.LargeValue or more in a batch) are charged while the batch is
// its own, and a batch ends once they reach that size: a query that makes
// a large value per row hands them on a few at a time, not a thousand.
//
// Its rows are new, so it keeps nothing of an input batch past the next
// call of the input's Next, and lets the input reuse its batches
// (scan_reuse.go); it reuses its own when its consumer lets it.
type projectOp struct {
	in   Operator
	fns  []evalFn
	mem  memAccount
	rest []Row // input rows left over from a batch that was ended early
	// plain: no batch reuse (Ctx.RowAtATime); asked: the input was told.
	plain, asked bool
	// reuse: the consumer lets this reuse its batches, last (its rows'
	// datums: lastBacking).
	reuse       bool
	last        []Row
	lastBacking []types.Datum
}

func (p *projectOp) reuseBatches() { p.reuse = !p.plain }

func (p *projectOp) Next() ([]Row, error) {
	// The previous batch is its consumer's now: whoever keeps its rows
	// counts them.
	p.mem.release()
	if !p.asked {
		p.asked = true
		if !p.plain {
			reuseInput(p.in)
		}
	}
	b := p.rest
	p.rest = nil
	if b == nil {
		var err error
		if b, err = p.in.Next(); err != nil || b == nil {
			return nil, err
		}
	}
	w := len(p.fns)
	var backing []types.Datum
	var out []Row
	if p.reuse && cap(p.last) >= len(b) && len(p.lastBacking) >= len(b)*w {
		backing, out = p.lastBacking, p.last[:len(b)]
	} else {
		backing = make([]types.Datum, len(b)*w)
		out = make([]Row, len(b))
		if p.reuse {
			p.last, p.lastBacking = out, backing
		}
	}
	var big int64
	for i, r := range b {
		row := backing[i*w : (i+1)*w : (i+1)*w]
		for j, f := range p.fns {
			d, err := f(r)
			if err != nil {
				return nil, err
			}
			row[j] = d
		}
		out[i] = row
		if big += valueBytes(row); big >= funcs.LargeValue {
			if err := p.mem.grow(big); err != nil {
				return nil, err
			}
			if i+1 < len(b) {
				p.rest = b[i+1:]
				return out[:i+1], nil
			}
		}
	}
	return out, nil
}

func (p *projectOp) Close() {
	p.in.Close()
	p.mem.release()
}

type valuesOp struct {
	rows []Row
	done bool
}

func newValues(c *Ctx, v *plan.Values) (Operator, error) {
	op := &valuesOp{rows: make([]Row, 0, len(v.Rows))}
	for _, r := range v.Rows {
		row := make(Row, len(r))
		for i, e := range r {
			if x, ok := e.(*plan.Const); ok {
				// INSERT … VALUES of literals: the binder folded
				// them, so most rows need no closure per value.
				row[i] = constDatum(x)
				continue
			}
			f, err := compile(e, c)
			if err != nil {
				return nil, err
			}
			d, err := f(nil)
			if err != nil {
				return nil, err
			}
			row[i] = d
		}
		op.rows = append(op.rows, row)
	}
	return op, nil
}

func (v *valuesOp) Next() ([]Row, error) {
	if v.done || len(v.rows) == 0 {
		return nil, nil
	}
	n := len(v.rows)
	if n > BatchSize {
		n = BatchSize
	}
	out := v.rows[:n]
	v.rows = v.rows[n:]
	if len(v.rows) == 0 {
		v.done = true
	}
	return out, nil
}

func (v *valuesOp) Close() {}

// sliceOp returns rows from a slice in batches.
type sliceOp struct{ rows []Row }

func (s *sliceOp) Next() ([]Row, error) {
	if len(s.rows) == 0 {
		return nil, nil
	}
	n := len(s.rows)
	if n > BatchSize {
		n = BatchSize
	}
	out := s.rows[:n:n]
	s.rows = s.rows[n:]
	return out, nil
}

func (s *sliceOp) Close() {}

type limitOp struct {
	in            Operator
	count, offset int64
	hasCount      bool
}

func newLimit(c *Ctx, l *plan.Limit, in Operator) (Operator, error) {
	op := &limitOp{in: in}
	eval := func(e plan.Expr) (int64, bool, error) {
		if e == nil {
			return 0, false, nil
		}
		f, err := compile(e, c)
		if err != nil {
			return 0, false, err
		}
		d, err := f(nil)
		if err != nil || d.IsNull() {
			return 0, false, err
		}
		return d.I, true, nil
	}
	var err error
	if op.count, op.hasCount, err = eval(l.Count); err != nil {
		return nil, err
	}
	if op.offset, _, err = eval(l.Offset); err != nil {
		return nil, err
	}
	// PostgreSQL's codes: invalid_row_count_in_limit_clause (2201W) and
	// invalid_row_count_in_result_offset_clause (2201X).
	if op.count < 0 {
		return nil, pgErr("2201W", "LIMIT must not be negative")
	}
	if op.offset < 0 {
		return nil, pgErr("2201X", "OFFSET must not be negative")
	}
	if lr, ok := in.(*lockRowsOp); ok && op.hasCount && op.count+op.offset >= op.count {
		lr.max = op.count + op.offset // lock only the rows the limit takes
		if lr.max == 0 {
			lr.done = true
		}
	}
	if s, ok := in.(*sortOp); ok && op.hasCount && !s.sorted {
		// ORDER BY … LIMIT: the sort keeps only the rows that can be output.
		s.topN = op.count + op.offset
		if s.topN <= 0 || s.topN < op.count {
			s.topN = 0 // LIMIT 0 needs no sort work; overflow keeps all
		}
	}
	return op, nil
}

func (l *limitOp) Next() ([]Row, error) {
	for {
		if l.hasCount && l.count == 0 {
			return nil, nil
		}
		b, err := l.in.Next()
		if err != nil || b == nil {
			return nil, err
		}
		if l.offset > 0 {
			if int64(len(b)) <= l.offset {
				l.offset -= int64(len(b))
				continue
			}
			b = b[l.offset:]
			l.offset = 0
		}
		if l.hasCount {
			if int64(len(b)) > l.count {
				b = b[:l.count]
			}
			l.count -= int64(len(b))
		}
		return b, nil
	}
}

func (l *limitOp) Close() { l.in.Close() }
