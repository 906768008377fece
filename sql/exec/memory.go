package exec

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/types"
)

// Memory is the memory budget of one statement or one refresh (R-X3): the
// operators that hold rows (sort, hash aggregation, hash join, DISTINCT,
// set operations, window partitions, WITH queries) charge what they keep
// to it and give it back when they close. A sort that would go past the
// budget spills sorted runs to files in TempDir and merges them; hash
// aggregation, hash joins and DISTINCT partition rows into files there
// (spill.go); the other operators, and those with no TempDir, fail with
// 53200 (out of memory) rather than let the process grow without bound. Functions charge the large values they build and
// aggregates the state they keep through funcs.Ctx.Mem (funcs/budget.go):
// the statement's budget for a scalar function, the running operator's
// share (stateBudget) for an aggregate or a set-returning call. Sizes are
// estimates of the Go heap the rows take (values, strings, decimals,
// arrays), not exact accounting.
type Memory struct {
	// Limit is the budget in bytes; 0 or less means unlimited.
	Limit int64
	// Setting names the knob that sets Limit, for the error's hint: a
	// session setting, or "--refresh-memory-limit" for a refresh.
	Setting string
	// TempDir is where operators spill ("" = they cannot spill and fail
	// at the budget like the other operators).
	TempDir string

	used atomic.Int64
	peak atomic.Int64
}

// Used returns the bytes charged now.
func (m *Memory) Used() int64 { return m.used.Load() }

// Peak returns the most bytes charged at once.
func (m *Memory) Peak() int64 { return m.peak.Load() }

// Charge charges n bytes that what holds until the budget ends (state
// kept outside the operators, such as a refresh's group states); past the
// budget it returns 53200. A nil budget charges nothing.
func (m *Memory) Charge(what string, n int64) error { return m.Grow(what, n) }

// Grow charges n bytes for what, to be given back with Shrink (the
// funcs.Budget of scalar functions); past the budget it charges nothing
// and returns 53200. A nil budget charges nothing.
func (m *Memory) Grow(what string, n int64) error {
	if m == nil || n == 0 {
		return nil
	}
	used := m.used.Add(n)
	if m.Limit > 0 && used > m.Limit && n > 0 {
		m.used.Add(-n)
		return m.exceeded(what)
	}
	m.notePeak(used)
	return nil
}

func (m *Memory) notePeak(used int64) {
	for {
		p := m.peak.Load()
		if used <= p || m.peak.CompareAndSwap(p, used) {
			return
		}
	}
}

// Shrink gives back n bytes charged by Grow.
func (m *Memory) Shrink(n int64) {
	if m != nil && n > 0 {
		m.used.Add(-n)
	}
}

// Available is what the budget has left (math.MaxInt64: no limit).
func (m *Memory) Available() int64 {
	if m == nil || m.Limit <= 0 {
		return math.MaxInt64
	}
	return max(0, m.Limit-m.used.Load())
}

var _ funcs.Budget = (*Memory)(nil)

// memAccount is one operator's share of the budget.
type memAccount struct {
	m    *Memory
	what string // the operator, for the error: "hash aggregation"
	n    int64
}

// account returns an account on the context's budget (which may be nil:
// then nothing is limited and nothing is counted).
func (c *Ctx) account(what string) memAccount { return memAccount{m: c.Mem, what: what} }

// grow charges n bytes; past the budget it charges nothing and returns
// 53200.
func (a *memAccount) grow(n int64) error { return a.growAs(a.what, n) }

// growAs is grow for a part of the operator that names itself in the
// error (an aggregate's state, a set-returning call).
func (a *memAccount) growAs(what string, n int64) error {
	if a.m == nil {
		return nil
	}
	if err := a.m.Grow(what, n); err != nil {
		return err
	}
	a.n += n
	return nil
}

// growOver is growAs allowing overdraft bytes past the budget.
func (a *memAccount) growOver(what string, n, overdraft int64) error {
	err := a.growAs(what, n)
	if err != nil && overdraft > 0 && a.m.used.Load()+n <= a.m.Limit+overdraft {
		a.force(n)
		return nil
	}
	return err
}

// force charges n bytes past the budget if need be: what an operator
// already holds (at most a batch's worth) when it finds the budget spent
// and turns to spilling the rest.
func (a *memAccount) force(n int64) {
	if a.m != nil && n > 0 {
		a.m.notePeak(a.m.used.Add(n))
		a.n += n
	}
}

// shrink gives back n bytes of what the account charged.
func (a *memAccount) shrink(n int64) {
	n = min(n, a.n)
	if a.m != nil && n > 0 {
		a.m.used.Add(-n)
		a.n -= n
	}
}

// release gives back everything the account charged.
func (a *memAccount) release() {
	if a.m != nil && a.n != 0 {
		a.m.used.Add(-a.n)
	}
	a.n = 0
}

func (m *Memory) exceeded(what string) error {
	e := pgerror.New(pgerror.OutOfMemory, "out of memory")
	e.Detail = fmt.Sprintf("The %s needs more than the %s memory budget of %s.", what, budgetOwner(m.Setting), FormatBytes(m.Limit))
	if m.Setting != "" {
		e.Hint = fmt.Sprintf("Raise %s, or make the query keep fewer rows (filter earlier, fewer groups).", m.Setting)
	}
	return e
}

func budgetOwner(setting string) string {
	if setting == "--refresh-memory-limit" {
		return "refresh's"
	}
	return "statement's"
}

// FormatBytes shows a byte count as PostgreSQL shows memory settings: in
// the largest unit that keeps it whole (4MB, 1536kB).
func FormatBytes(n int64) string {
	if n <= 0 {
		return "0"
	}
	for _, u := range []struct {
		name string
		size int64
	}{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}} {
		if n%u.size == 0 {
			return fmt.Sprintf("%d%s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%dB", n)
}

const (
	datumBytes = types.DatumBytes
	// rowOverhead is a row's slice header plus the allocator's rounding.
	rowOverhead = 32
	// mapEntryOverhead approximates a Go map entry's share of buckets.
	mapEntryOverhead = 48
)

// datumExtra is what a value holds outside its Datum struct.
func datumExtra(d types.Datum) int64 { return types.ExtraBytes(d) }

// RowBytes estimates the memory a row holds.
func RowBytes(r Row) int64 { return rowBytes(r) }

// rowBytes estimates the memory a row holds.
func rowBytes(r Row) int64 {
	n := rowOverhead + int64(len(r))*datumBytes
	for _, d := range r {
		if d.S != "" || d.D != nil || d.A != nil {
			n += datumExtra(d)
		}
	}
	return n
}

// rowsBytes estimates the memory a batch of rows holds.
func rowsBytes(rows []Row) int64 {
	var n int64
	for _, r := range rows {
		n += rowBytes(r)
	}
	return n
}
