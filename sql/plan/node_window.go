package plan

import (
	"fmt"
	"strings"

	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/types"
)

// Window computes window functions (R-Q2); output = input columns ++ one
// column per call. Each call sees its input rows split by PartitionBy and
// sorted by OrderBy; rows equal in OrderBy are peers.
type Window struct {
	Input Node
	Calls []WindowCall
	Cols  []Column
}

// Columns returns the input's columns then one per call.
func (w *Window) Columns() []Column { return w.Cols }

// WindowCall is one window function call: a window-only function (Fn has
// a Window definition: row_number, rank, lag, …) or an aggregate computed
// over each row's frame (Agg set).
type WindowCall struct {
	Name        string
	Fn          *funcs.Func
	Args        []Expr
	PartitionBy []Expr
	OrderBy     []SortKey
	Frame       WindowFrame
	// Agg is set when an aggregate is used as a window function.
	Agg *AggSpec
	// Distinct is never set today (PostgreSQL has no DISTINCT window
	// aggregates; the binder refuses them) but kept for the shape.
	Distinct bool
	// Filter (aggregates only) drops rows from the frame.
	Filter Expr
	T      types.T
}

// FrameMode is how a frame's offsets count: rows, values of the ORDER BY
// key, or peer groups.
type FrameMode uint8

// Frame modes.
const (
	FrameRange FrameMode = iota
	FrameRows
	FrameGroups
)

func (m FrameMode) String() string { return [...]string{"RANGE", "ROWS", "GROUPS"}[m] }

// BoundKind is where a frame starts or ends.
type BoundKind uint8

// Frame bounds.
const (
	UnboundedPreceding BoundKind = iota
	OffsetPreceding
	CurrentRow
	OffsetFollowing
	UnboundedFollowing
)

// FrameBound is one end of a frame. Offset (for OffsetPreceding and
// OffsetFollowing) reads no column of the row: bigint for ROWS and GROUPS;
// for RANGE the type added to the ORDER BY key (the key's own numeric
// type, bigint for integer keys, interval for dates and timestamps).
type FrameBound struct {
	Kind   BoundKind
	Offset Expr
}

// FrameExclusion removes rows from a frame.
type FrameExclusion uint8

// Frame exclusions (EXCLUDE NO OTHERS is the default).
const (
	ExcludeNoOthers FrameExclusion = iota
	ExcludeCurrentRow
	ExcludeGroup
	ExcludeTies
)

// WindowFrame is the set of rows an aggregate (or first_value, last_value,
// nth_value) reads for each row. The default is PostgreSQL's: RANGE
// BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW, i.e. the partition up to the
// row's last peer (all of it without ORDER BY).
type WindowFrame struct {
	Mode       FrameMode
	Start, End FrameBound
	Exclude    FrameExclusion
}

// DefaultFrame is the frame of a window without a frame clause.
var DefaultFrame = WindowFrame{Mode: FrameRange, Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: CurrentRow}}

func (b FrameBound) String() string {
	switch b.Kind {
	case UnboundedPreceding:
		return "UNBOUNDED PRECEDING"
	case OffsetPreceding:
		return b.Offset.String() + " PRECEDING"
	case CurrentRow:
		return "CURRENT ROW"
	case OffsetFollowing:
		return b.Offset.String() + " FOLLOWING"
	}
	return "UNBOUNDED FOLLOWING"
}

func (f WindowFrame) String() string {
	s := fmt.Sprintf("%s BETWEEN %s AND %s", f.Mode, f.Start, f.End)
	if f.Exclude != ExcludeNoOthers {
		s += " EXCLUDE " + [...]string{"", "CURRENT ROW", "GROUP", "TIES"}[f.Exclude]
	}
	return s
}

// SpecString describes the call's window (partition, order, frame): calls
// with equal strings share one sort.
func (c *WindowCall) SpecString() string {
	var b strings.Builder
	b.WriteString("PARTITION BY (")
	b.WriteString(joinExprs(c.PartitionBy, ", "))
	b.WriteString(") ORDER BY (")
	for i, k := range c.OrderBy {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %v %v", k.E.String(), k.Desc, k.NullsFirst)
	}
	b.WriteString(")")
	return b.String()
}

// String describes the whole call (equal strings compute equal columns).
func (c *WindowCall) String() string {
	s := c.Name + "(" + joinExprs(c.Args, ", ") + ")"
	if c.Filter != nil {
		s += " FILTER (" + c.Filter.String() + ")"
	}
	return s + " OVER (" + c.SpecString() + " " + c.Frame.String() + ")"
}

// WinRef marks a window call in an expression until the binder replaces it
// with the Window node's output column.
type WinRef struct {
	Idx int
	T   types.T
}

// Type returns the call's type.
func (e *WinRef) Type() types.T { return e.T }

func (e *WinRef) String() string { return fmt.Sprintf("win#%d", e.Idx) }
