// Package exec runs plans: it builds operators from sql/plan nodes and pulls
// batches of rows (up to BatchSize) through them, reading and writing through
// a storage transaction.
//
// Invariants:
//  1. Expressions are compiled once per plan into closures; evaluation does no
//     type dispatch on the plan tree and boxes nothing per row.
//  2. A batch returned by Next is owned by the caller: operators never reuse
//     the row slices they hand out, so Sort, joins and aggregation may keep them.
//  3. Scans decode only the columns the plan marked as needed, and use the
//     primary key for point lookups and ranges, or a secondary index's
//     ranges (storage.ScanIndex) when the plan names one.
//  4. Every operator checks for cancellation once per batch.
//  5. A subquery in an expression (and a LATERAL item) runs through its own
//     operator tree, built per evaluation with a child Ctx whose Outer holds
//     the values of its correlation parameters (so a correlated subquery's
//     expressions are compiled per evaluation, the price of one-shot
//     operators; an index nested-loop join's inner side is instead built
//     once and rebound per outer row where its operators can start again,
//     rebind.go); an uncorrelated one runs once per statement, its result
//     kept in the statement state (PostgreSQL's InitPlan), a correlated one
//     once per distinct parameter values unless it is volatile.
//  6. Rows kept in memory and read more than once (a shared WITH query, the
//     previous round of WITH RECURSIVE) are handed out in fresh batch
//     slices, since consumers may filter a batch in place.
//  7. Every row write passes StorageInfo(table): storage maintains the
//     table's index entries from it (and refuses a write without them).
//  8. What an operator holds beyond the batch it hands out — kept rows,
//     hash tables, arenas, aggregate states, a set-returning call's rows,
//     the large values of its current batch — is charged to Ctx.Mem before
//     it is allocated (memory.go, func_budget.go), and given back when the
//     operator is done with it; functions reach the budget through
//     funcs.Ctx.Mem, which compile sets from Ctx.Mem.
//  9. Past the budget, sorts spill sorted runs and hash aggregation, hash
//     joins and DISTINCT spill hash partitions (spill.go) to unlinked files
//     in Memory.TempDir, closed by the operator's Close; the other
//     operators fail with 53200.
//  10. With Ctx.Constraints set, every row INSERT, UPDATE, ON CONFLICT DO
//     UPDATE and COPY write gets its generated columns and passes NOT NULL
//     and CHECK (constraints.go) before it is written; foreign keys are
//     enforced once per statement after its writes (foreign_key.go):
//     referential actions run through the same delete and update paths,
//     so cascaded rows reach the change feed; deferred checks wait in
//     DeferredChecks for the session's commit.
//
// Vectorized path: an Aggregate over filters and projections of a
// whole-table scan runs over columnar batches (vagg.go, package vec) when
// every expression has a vector kernel, with the same rows, kinds and
// scales as the row path, which it falls back to (from a fresh scan) when
// the data or the memory budget does not suit the vectors. A filter
// fused into a scan tests its condition a batch at a time by its kernel
// (scan_vfilter.go), and a whole-table one whose condition calls no
// function reads the rest of its table in parallel key ranges, handed
// out in key order (scan_parallel.go).
//
// Imports: sql/plan, sql/funcs, sql/types, sql/exec/vec, catalog, storage, pgerror.
package exec

import (
	"context"

	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// BatchSize is the number of rows an operator returns at most per Next.
const BatchSize = 1024

// Ctx is what running a plan needs.
type Ctx struct {
	Context context.Context
	Txn     *storage.Txn
	Env     *types.Env
	Funcs   *funcs.Ctx
	Params  []types.Datum
	// Mem is the statement's (or refresh's) memory budget; nil: unlimited.
	Mem *Memory
	// Constraints, when set, makes DML enforce CHECK and FOREIGN KEY
	// constraints and compute generated columns (constraints.go).
	Constraints *Constraints
	// RowAtATime turns the vectorized path (vagg.go) off: every operator
	// runs row at a time (the differential tests' reference), and so do
	// filters inside scans (scan_filter.go), reused scan batches
	// (scan_reuse.go) and the window's packed sort (window_intsort.go).
	RowAtATime bool
	// Workers is how many goroutines besides its own a vectorized
	// aggregation may scan and aggregate key ranges on
	// (max_parallel_workers_per_gather); 0: none.
	Workers int

	// Outer holds the correlation values of the subquery (or LATERAL item)
	// evaluation this context runs: plan.OuterRef reads them.
	Outer []types.Datum
	// stmt is shared by every context of one statement run.
	stmt *stmtState
	// fc is Funcs (fcOf) completed with Context and Mem (funcCtx).
	fc, fcOf *funcs.Ctx
}

// state returns the statement-wide state, creating it on first use.
func (c *Ctx) state() *stmtState {
	if c.stmt == nil {
		c.stmt = &stmtState{}
	}
	return c.stmt
}

// child returns a context for one evaluation of a correlated subquery:
// the same statement, with outer as its correlation values.
func (c *Ctx) child(outer []types.Datum) *Ctx {
	st := c.state()
	sub := *c
	sub.Outer, sub.stmt = outer, st
	return &sub
}

// Row is one row of values.
type Row = []types.Datum

// Operator produces batches of rows. Next returns a nil batch at the end.
type Operator interface {
	Next() ([]Row, error)
	Close()
}
