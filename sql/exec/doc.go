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
//     primary key for point lookups and ranges.
//  4. Every operator checks for cancellation once per batch.
//
// Imports: sql/plan, sql/funcs, sql/types, catalog, storage, pgerror.
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
}

// Row is one row of values.
type Row = []types.Datum

// Operator produces batches of rows. Next returns a nil batch at the end.
type Operator interface {
	Next() ([]Row, error)
	Close()
}
