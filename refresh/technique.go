package refresh

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/storage"
)

// Technique names (R-I1).
const (
	NoOp          = "NO_OP"
	FullRecompute = "FULL_RECOMPUTE"
)

// IncrementalTechniques are the incremental techniques of R-I1, in the
// order the planner reports them.
var IncrementalTechniques = []string{"ROW_BASED", "APPEND_ONLY", "GROUP_AGGREGATE", "GENERIC_AGGREGATE", "PARTITION_OVERWRITE", "WINDOW_FUNCTION"}

// Input is what a refresh works with: its transaction (whose snapshot
// every source is read at), the view, its bound query and the source
// versions before (checkpoint) and now.
type Input struct {
	Txn        *storage.Txn
	Catalog    *catalog.Catalog
	View       *catalog.Table
	Query      plan.Node
	Cols       []plan.Column
	Checkpoint *Checkpoint
	Versions   map[uint32]int64
	// OwnWrites are the sources the refresh's transaction itself changed
	// (sorted): their rows include those writes, the change feed does not.
	OwnWrites []uint32
	Exec      *exec.Ctx

	// expectations are the run's compiled expectations with their counts.
	expectations []*expectation
	// rewriteAt is the size (rows) from which a full recompute writes the
	// view as a new generation (rewrite.go); <= 0: never.
	rewriteAt int64
	// diffAt is Runner.DiffLimit (0: diffFullLimit).
	diffAt int64
	// est is the estimator of Txn's snapshot and eval the optimized
	// Query (evalplan.go), made when first needed.
	est  *plan.Estimator
	eval plan.Node
}

// Stats are what a refresh did.
type Stats struct {
	RowsRead, RowsWritten, RowsDeleted int64
	// RowsDropped counts rows dropped by DROP ROW expectations (R-M2).
	RowsDropped int64
}
