package refresh

import (
	"context"

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

// Input is what a technique sees: the refresh's transaction (its snapshot is
// the one every source is read at), the view, its bound query and the
// source versions before (checkpoint) and now.
type Input struct {
	Txn        *storage.Txn
	Catalog    *catalog.Catalog
	View       *catalog.Table
	Query      plan.Node
	Cols       []plan.Column
	Checkpoint *Checkpoint
	Versions   map[uint32]int64
	Exec       *exec.Ctx

	// expectations are the run's compiled expectations with their counts.
	expectations []*expectation
}

// Stats are what a technique did.
type Stats struct {
	RowsRead, RowsWritten, RowsDeleted int64
	// RowsDropped counts rows dropped by DROP ROW expectations (R-M2).
	RowsDropped int64
}

// Technique computes a refresh. Plan says whether it applies now and at what
// cost; Run writes the view's changes through in.Txn (never commits).
type Technique interface {
	Name() string
	Plan(in *Input) (cost float64, ok bool, reason string)
	Run(ctx context.Context, in *Input) (Stats, error)
}
