package funcs

import (
	"math"

	"github.com/mvserver/mvserver/sql/types"
)

// Memory budgets (R-X3). A function that builds a large value (a string,
// an array, a set-returning call's rows) or an aggregate whose state grows
// with its input charges the bytes to the running statement's budget
// before it allocates them, through Ctx.Mem; past the budget the call
// fails with 53200 (out of memory) naming itself, instead of growing the
// process. Small values are not charged one by one — the operators that
// keep rows count them — so the common case costs one comparison.
//
// Who holds a charge decides when it is given back:
//   - a scalar function reserves what it is about to build (Reserve) and
//     releases it when it returns: whoever keeps the value from then on (a
//     batch under construction, a sort, a hash table) counts it;
//   - an aggregate state or a set-returning call charges what it keeps
//     (Grow) to the operator running it, which gives it back when the
//     state or the call is done (Ctx.Mem is then the operator's share).

// LargeValue is the size from which a scalar function reserves the value
// it is about to build.
const LargeValue = 1 << 20

// Budget is a memory budget functions charge: the statement's, or an
// operator's share of it (sql/exec implements both).
type Budget interface {
	// Grow charges n bytes for what ("function repeat"); past the budget
	// it charges nothing and returns 53200.
	Grow(what string, n int64) error
	// Shrink gives back n bytes charged by Grow.
	Shrink(n int64)
	// Available is what the budget has left (math.MaxInt64: no limit).
	Available() int64
}

// Grow charges n bytes the function (or the state) is about to keep; with
// no budget nothing is counted.
func (c *Ctx) Grow(what string, n int64) error {
	if c == nil || c.Mem == nil || n <= 0 {
		return nil
	}
	return c.Mem.Grow(what, n)
}

// Shrink gives back n bytes charged by Grow.
func (c *Ctx) Shrink(n int64) {
	if c != nil && c.Mem != nil && n > 0 {
		c.Mem.Shrink(n)
	}
}

// Reserve charges the n bytes of a value the function is about to build
// when n is LargeValue or more, and returns what it charged; the function
// gives that back with Release once the value is built.
func (c *Ctx) Reserve(what string, n int64) (int64, error) {
	if n < LargeValue || c == nil || c.Mem == nil {
		return 0, nil
	}
	if err := c.Mem.Grow(what, n); err != nil {
		return 0, err
	}
	return n, nil
}

// Release gives back what Reserve charged.
func (c *Ctx) Release(n int64) { c.Shrink(n) }

// Available is what the budget has left: math.MaxInt64 without one.
func (c *Ctx) Available() int64 {
	if c == nil || c.Mem == nil {
		return math.MaxInt64
	}
	return c.Mem.Available()
}

// building is the reservation of a value a function builds piece by
// piece (format, regexp_replace, array_to_string): need(n) before the
// value grows to n bytes, done when it is built. It reserves in doubling
// steps, so a value of n bytes makes O(log n) charges.
type building struct {
	c    *Ctx
	what string
	held int64
}

func (c *Ctx) building(what string) building { return building{c: c, what: what} }

// need makes sure n bytes are reserved (nothing below LargeValue).
func (b *building) need(n int64) error {
	if n < LargeValue || n <= b.held || b.c == nil || b.c.Mem == nil {
		return nil
	}
	want := max(n, 2*b.held)
	err := b.c.Mem.Grow(b.what, want-b.held)
	if err != nil && want > n {
		// The doubling does not fit: perhaps the value itself does.
		want = n
		err = b.c.Mem.Grow(b.what, want-b.held)
	}
	if err != nil {
		return err
	}
	b.held = want
	return nil
}

// done gives the reservation back.
func (b *building) done() {
	b.c.Shrink(b.held)
	b.held = 0
}

// appendKept appends d to the values a state keeps (array_agg, the
// percentiles), charging what grows: the slice when it doubles and what d
// holds outside its Datum (which the state keeps alive).
func appendKept(c *Ctx, what string, vals []types.Datum, d types.Datum) ([]types.Datum, error) {
	if len(vals) == cap(vals) {
		var err error
		if vals, err = doubled(c, what, vals, types.DatumBytes); err != nil {
			return vals, err
		}
	}
	if d.S != "" || d.D != nil || d.A != nil {
		if err := c.Grow(what, types.ExtraBytes(d)); err != nil {
			return vals, err
		}
	}
	return append(vals, d), nil
}

// doubled returns vals (elements of size bytes) in an array twice as
// large, charged before it is allocated: both arrays while the elements
// are copied, the new one's growth after (the old one is garbage then).
func doubled[E any](c *Ctx, what string, vals []E, size int64) ([]E, error) {
	n := max(8, 2*cap(vals))
	if err := c.Grow(what, int64(n)*size); err != nil {
		return vals, err
	}
	c.Shrink(int64(cap(vals)) * size)
	return types.WithCap(vals, n), nil
}
