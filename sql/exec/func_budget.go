package exec

import (
	"math"

	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/types"
)

// How functions reach the budget (R-X3, funcs/budget.go): scalar
// functions compiled into an expression charge the statement's Memory
// directly (they reserve only values of funcs.LargeValue or more, and give
// them back when they return); aggregate states and set-returning calls,
// which keep what they charge, charge a stateBudget of the operator that
// runs them, given back when the state or the call is done.

// stateStep is how much a stateBudget lets pile up before it charges the
// account: most states grow by a few bytes per row, and one atomic add per
// row would cost more than the row.
const stateStep = 64 << 10

// stateBudget is the share of an operator's account that the states and
// calls it runs charge (funcs.Budget).
type stateBudget struct {
	acct    *memAccount
	pending int64 // grown, not yet charged to acct
	charged int64 // charged to acct, given back by reset
	// overdraft is how far past the budget the states may go (hash
	// aggregation's groups kept in memory once it spills).
	overdraft int64
}

var _ funcs.Budget = (*stateBudget)(nil)

func (b *stateBudget) Grow(what string, n int64) error {
	if n <= 0 {
		return nil
	}
	b.pending += n
	if b.pending < stateStep && n < funcs.LargeValue {
		return nil
	}
	if err := b.acct.growOver(what, b.pending, b.overdraft); err != nil {
		b.pending -= n
		return err
	}
	b.charged += b.pending
	b.pending = 0
	return nil
}

func (b *stateBudget) Shrink(n int64) {
	if d := min(n, b.pending); d > 0 {
		b.pending -= d
		n -= d
	}
	if n = min(n, b.charged); n > 0 {
		b.acct.shrink(n)
		b.charged -= n
	}
}

func (b *stateBudget) Available() int64 {
	if b.acct.m == nil {
		return math.MaxInt64
	}
	return max(0, b.acct.m.Available()-b.pending)
}

// reset gives back everything charged through b (the states it served
// are gone).
func (b *stateBudget) reset() {
	b.acct.shrink(b.charged)
	b.charged, b.pending = 0, 0
}

// funcCtx is the function context expressions compiled in c call with:
// c.Funcs with the statement's context (functions that wait, pg_sleep,
// stop with it) and budget.
func (c *Ctx) funcCtx() *funcs.Ctx {
	fc := c.Funcs
	if fc == nil {
		return nil
	}
	needCtx := fc.Context == nil && c.Context != nil
	needMem := fc.Mem == nil && c.Mem != nil
	if !needCtx && !needMem {
		return fc
	}
	if c.fc != nil && c.fcOf == fc {
		return c.fc
	}
	cp := *fc
	if needCtx {
		cp.Context = c.Context
	}
	if needMem {
		cp.Mem = c.Mem
	}
	c.fc, c.fcOf = &cp, fc
	return &cp
}

// funcsFor is the function context of states and calls an operator runs:
// c's, charging b.
func (c *Ctx) funcsFor(b *stateBudget) *funcs.Ctx {
	var cp funcs.Ctx
	if fc := c.funcCtx(); fc != nil {
		cp = *fc
	}
	cp.Mem = b
	return &cp
}

// valueBytes is what the values of a row hold outside their Datum
// structs, counting strings and arrays only (the values that can be
// large), an array by its elements' Datums: cheap enough to sum over every
// row an operator hands out.
func valueBytes(r Row) int64 {
	var n int64
	for i := range r {
		n += int64(len(r[i].S))
		if r[i].A != nil {
			n += 32 + int64(len(r[i].A.Elems))*types.DatumBytes
		}
	}
	return n
}
