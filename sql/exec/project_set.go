package exec

import (
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// projectSetOp runs set-returning calls on each input row (plan.ProjectSet):
// the calls advance side by side, each row of output holding the input
// row, one row of every call (NULLs once a call has ended) and the
// ordinality. Rows stream: a call's rows are pulled as the output needs
// them (generate_series(1, 1e9) LIMIT 3 reads three).
type projectSetOp struct {
	c     *Ctx
	in    Operator
	node  *plan.ProjectSet
	args  [][]evalFn
	width []int // columns per call
	out   int   // output row width

	batch []Row // the input batch being expanded
	pos   int   // next input row of batch
	cur   Row   // input row being expanded (nil: none)
	iters []funcs.RowIter
	n     int64 // rows given for cur
	done  bool
	// mem holds the large values of the batch being handed out (as
	// projectOp's does) and, through calls, what the calls of the current
	// input row keep (regexp_split_to_table's pieces), given back when
	// they end.
	mem       memAccount
	calls     stateBudget
	fctx      *funcs.Ctx
	batchHeld int64 // mem's charge for the batch handed out
}

func newProjectSet(c *Ctx, p *plan.ProjectSet) (Operator, error) {
	in, err := Build(c, p.Input)
	if err != nil {
		return nil, err
	}
	op := &projectSetOp{c: c, in: in, node: p, out: len(p.Columns()), mem: c.account("set-returning function")}
	op.calls.acct = &op.mem
	op.fctx = c.funcsFor(&op.calls)
	for _, call := range p.Calls {
		fns, err := compileAll(call.Args, c)
		if err != nil {
			in.Close()
			return nil, err
		}
		op.args = append(op.args, fns)
		op.width = append(op.width, len(call.Cols))
	}
	return op, nil
}

// start begins the calls for input row r.
func (p *projectSetOp) start(r Row) error {
	p.cur, p.n = r, 0
	p.calls.reset() // the previous row's calls are done
	p.iters = make([]funcs.RowIter, len(p.node.Calls))
	for i, call := range p.node.Calls {
		args := make([]types.Datum, len(p.args[i]))
		null := false
		for j, f := range p.args[i] {
			d, err := f(r)
			if err != nil {
				return err
			}
			args[j] = d
			null = null || d.IsNull()
		}
		if null && call.Overload.NullStrict {
			continue // no rows
		}
		it, err := call.Overload.SRF(p.fctx, args)
		if err != nil {
			return err
		}
		p.iters[i] = it
	}
	return nil
}

// next returns the next output row of the current input row, nil when
// every call has ended.
func (p *projectSetOp) next() (Row, error) {
	nin := len(p.cur)
	row := make(Row, p.out)
	copy(row, p.cur)
	at, any := nin, false
	for i, it := range p.iters {
		if it != nil {
			vals, ok, err := it()
			if err != nil {
				return nil, err
			}
			if ok {
				copy(row[at:at+p.width[i]], vals)
				any = true
			} else {
				p.iters[i] = nil
			}
		}
		at += p.width[i]
	}
	if !any {
		return nil, nil
	}
	p.n++
	if p.node.Ordinality {
		row[at] = types.NewInt8(p.n)
	}
	return row, nil
}

func (p *projectSetOp) Next() ([]Row, error) {
	// The previous batch is its consumer's now (projectOp's rule).
	p.mem.shrink(p.batchHeld)
	p.batchHeld = 0
	var out []Row
	var big int64
	for len(out) < BatchSize && !p.done && big < funcs.LargeValue {
		if p.cur == nil {
			if p.pos >= len(p.batch) {
				b, err := p.in.Next()
				if err != nil {
					return nil, err
				}
				if b == nil {
					p.done = true
					break
				}
				p.batch, p.pos = b, 0
				if err := p.c.Context.Err(); err != nil {
					return nil, err
				}
				continue
			}
			if err := p.start(p.batch[p.pos]); err != nil {
				return nil, err
			}
			p.pos++
		}
		row, err := p.next()
		if err != nil {
			return nil, err
		}
		if row == nil {
			p.cur = nil
			p.calls.reset()
			continue
		}
		out = append(out, row)
		if big += valueBytes(row[len(p.cur):]); big >= funcs.LargeValue {
			if err := p.mem.grow(big); err != nil {
				return nil, err
			}
			p.batchHeld = big
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, p.c.Context.Err()
}

func (p *projectSetOp) Close() {
	p.in.Close()
	p.mem.release()
}
