package refresh

import (
	"context"
	"sort"
	"strings"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/storage"
)

// TechniqueName names a refresh technique (R-I1). It is what the event log,
// refresh_history, DESCRIBE and EXPLAIN REFRESH print.
type TechniqueName string

// The techniques of R-I1.
const (
	NoOp               TechniqueName = "NO_OP"
	FullRecompute      TechniqueName = "FULL_RECOMPUTE"
	RowBased           TechniqueName = "ROW_BASED"
	AppendOnly         TechniqueName = "APPEND_ONLY"
	GroupAggregate     TechniqueName = "GROUP_AGGREGATE"
	GenericAggregate   TechniqueName = "GENERIC_AGGREGATE"
	PartitionOverwrite TechniqueName = "PARTITION_OVERWRITE"
	WindowFunction     TechniqueName = "WINDOW_FUNCTION"
	// TopK keeps ORDER BY … LIMIT k (topk.go); reported only for queries
	// of that shape.
	TopK TechniqueName = "TOP_K"
)

// IncrementalTechniques are the incremental techniques of R-I1, in the
// order the planner reports them.
var IncrementalTechniques = []TechniqueName{RowBased, AppendOnly, GroupAggregate, GenericAggregate, PartitionOverwrite, WindowFunction, TopK}

// Technique is one incremental way of refreshing a view. The planner
// (planner.go) tries the techniques of techniqueTable in order and runs the
// first that applies and does not refuse.
type Technique interface {
	Name() TechniqueName
	// Applies reports whether the technique can maintain a view of this
	// analysis; when it cannot, why not (EXPLAIN REFRESH's candidate line).
	Applies(an *Analysis) (bool, string)
	// Run builds the view's change from the sources' changes. A *refusal
	// declines this refresh (another technique may take it, or it goes
	// full); a *blockedError stops incremental refresh.
	Run(ctx context.Context, r *techRun) (*change, error)
	// Estimate is the cost of applying c, in rows-scanned units (R-I6).
	Estimate(s *sizer, r *techRun, c *change) float64
}

// techniqueTable is the planner's order of preference: a stored aggregate
// state over recomputing groups; a change of rows over whole partitions.
var techniqueTable = []Technique{
	topK{}, groupAggregate{}, genericAggregate{}, windowFunction{}, appendOnly{}, rowBased{}, partitionOverwrite{},
}

// techniqueByName finds a technique of the table.
func techniqueByName(n TechniqueName) Technique {
	for _, t := range techniqueTable {
		if t.Name() == n {
			return t
		}
	}
	return nil
}

// techRun is what a technique's Run works with: the refresh's input, the
// analysis, the change of every source since the checkpoint.
type techRun struct {
	in         *Input
	an         *Analysis
	deltas     map[uint32]*sourceDelta
	insertOnly bool
	dryRun     bool
	changed    int64 // source rows changed (net, per row)
	df         *differ
	viewRows   int64 // the view's stored rows
	// weigh, for a technique whose Run is the work, compares its
	// estimate (units, view rows written) with a full recompute before
	// the work: a refusal sends the refresh full (costmodel.go).
	weigh   func(t TechniqueName, units, writes float64) *refusal
	weighed bool // weigh ran
	// sizes estimates the work of the change plans (costmodel.go).
	sizes *sizer
	// query is the differentiation of the whole query, made once and
	// shared by the techniques that name what it did.
	query    *diffResult
	queryErr error
	diffed   bool
}

// diffQuery differentiates the whole query (once).
func (r *techRun) diffQuery() (*diffResult, error) {
	if !r.diffed {
		r.query, r.queryErr = r.df.diff(r.in.Query)
		r.diffed = true
	}
	return r.query, r.queryErr
}

// queryChange is the view's change from differentiating the whole query.
func (r *techRun) queryChange() (*change, error) {
	d, err := r.diffQuery()
	if err != nil {
		return nil, err
	}
	return &change{plus: d.plus, minus: d.minus}, nil
}

// change is what a technique built: the view's change as plans (plus −
// minus) or, for GROUP_AGGREGATE, the group states it folds.
type change struct {
	plus, minus plan.Node
	ga          *groupAggRun
	partitions  int // PARTITION_OVERWRITE: partitions recomputed
}

// refusal is a technique declining one refresh.
type refusal struct {
	why string
	// next: a later technique of the table may take the refresh; full:
	// recompute in full, whatever the policy; neither: the refresh
	// cannot be incremental (STRICT fails).
	next, full bool
	// spent: the technique ran its change plans before it refused (a
	// full refusal), so this refresh paid for both; the cost model
	// charges the incremental kind with that time (costmodel.go).
	spent bool
}

func (e *refusal) Error() string { return e.why }

// allowed is the common part of Applies: the query's shape allows t and
// no blocker rules it out. notShape is the reason when the shape does not.
func allowed(an *Analysis, t TechniqueName, notShape string) (bool, string) {
	if !has(an.Shape, t) {
		if notShape == "" {
			notShape = "does not apply to this query's shape"
		}
		return false, notShape
	}
	var why []string
	for _, b := range an.Blockers {
		if (len(b.Techniques) == 0 || has(b.Techniques, t)) && !has(why, b.Code) {
			why = append(why, b.Code)
		}
	}
	if len(why) > 0 {
		sort.Strings(why)
		return false, "blocked: " + strings.Join(why, ", ")
	}
	return true, ""
}

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

// NameStrings is names as strings.
func NameStrings(names []TechniqueName) []string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return s
}

// JoinNames joins technique names with sep, as strings.Join does.
func JoinNames(names []TechniqueName, sep string) string {
	return strings.Join(NameStrings(names), sep)
}
