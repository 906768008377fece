package plan

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/types"
)

// Column is one output column of a node.
type Column struct {
	Name string
	T    types.T
	// Table and AttrNum identify a base-table column (RowDescription's
	// table OID and attribute number), 0 otherwise.
	Table   uint32
	AttrNum int16
	// Fields name the fields of a record column (a set-returning call's
	// row used whole), which (col).field selects.
	Fields []Column
}

// Node is a relational operator: plain data (children.go).
type Node interface {
	// Columns describes the rows the node produces.
	Columns() []Column
	// Children returns the nodes it reads, in a fixed order.
	Children() []Node
	// WithChildren returns a copy reading ch (as many as Children
	// returns, in its order) instead; n itself is never modified.
	WithChildren(ch ...Node) (Node, error)
}

// Hidden row-tracking columns (R-T6): a scan's row ends with them.
const (
	HiddenRowID         = "_row_id"
	HiddenCommitVersion = "_row_commit_version"
)

// KeyBound is one end of a key range: the values of a prefix of the key
// columns (of the primary key, or of the scan's Index).
type KeyBound struct {
	Values    []Expr
	Inclusive bool
}

// Scan reads a table at the statement's snapshot: all of it, or through a
// key (access.go) — the primary key, or a secondary index (R-T10).
type Scan struct {
	Table *catalog.Table
	// Needed[i] is true when table column i (or, past the table's columns,
	// the hidden column) is read by the plan.
	Needed []bool
	// Index, when set, is the secondary index whose key Point, Start/End
	// and In bound instead of the primary key's: the scan reads the rows
	// its entries name, in its order.
	Index *catalog.Index
	// Point, when set, holds one value per key column: a lookup.
	Point []Expr
	// Start/End bound a range scan on the key (nil = unbounded). When both
	// share one Values slice, the range is an equality on a key prefix.
	Start, End *KeyBound
	// In, when set, holds values of the first key column: the scan reads
	// the rows whose first key column equals one of them (IN, = ANY).
	In []Expr
	// Narrowed says In was set by an incremental refresh narrowing the
	// scan to a change's keys, with no Filter above repeating it: the
	// estimator counts the In values then (a key bound the planner chose
	// repeats a condition of the Filter above, which counts it).
	Narrowed bool
	// Exclude, when set, skips the rows with these row ids (an
	// incremental refresh reads a source as of its checkpoint: the rows
	// that changed since are left out here and their old images added).
	Exclude map[int64]struct{}
	cols    []Column
}

// Columns returns the table's columns then the hidden ones.
func (s *Scan) Columns() []Column { return s.cols }

// ClearKeyBounds makes s read the whole table.
func (s *Scan) ClearKeyBounds() {
	s.Index, s.Point, s.Start, s.End, s.In = nil, nil, nil, nil, nil
	s.Narrowed = false
}

// Keyed reports whether s reads only the rows of given key values: a
// point, a key-prefix equality or an IN list (not a range).
func (s *Scan) Keyed() bool {
	return s.Point != nil || s.In != nil || s.Start != nil && s.End != nil && len(s.Start.Values) > 0 &&
		&s.Start.Values[0] == &s.End.Values[0]
}

// KeyColumns returns the table column positions of the key the scan's
// bounds refer to: its Index's key columns, or the primary key's.
func (s *Scan) KeyColumns() []int {
	var out []int
	if s.Index != nil {
		for _, c := range s.Index.Columns {
			out = append(out, s.Table.ColumnByID(c.Col))
		}
		return out
	}
	for _, id := range s.Table.PrimaryKey {
		out = append(out, s.Table.ColumnByID(id))
	}
	return out
}

// NewScan builds a scan of every column of t.
func NewScan(t *catalog.Table) *Scan {
	s := &Scan{Table: t}
	for i, c := range t.Columns {
		s.cols = append(s.cols, Column{Name: c.Name, T: c.Type, Table: t.ID, AttrNum: int16(i + 1)})
	}
	s.cols = append(s.cols, Column{Name: HiddenRowID, T: types.Int8}, Column{Name: HiddenCommitVersion, T: types.Int8})
	s.Needed = make([]bool, len(s.cols))
	return s
}

// Values produces constant rows.
type Values struct {
	Rows [][]Expr
	Cols []Column
}

// Columns returns the output columns.
func (v *Values) Columns() []Column { return v.Cols }

// ValuesOf is a Values node of constant rows, each datum typed as its
// column (SHOW, DESCRIBE and EXPLAIN answers).
func ValuesOf(cols []Column, rows [][]types.Datum) *Values {
	v := &Values{Cols: cols}
	for _, r := range rows {
		exprs := make([]Expr, 0, len(r))
		for i, d := range r {
			exprs = append(exprs, &Const{D: d, T: cols[i].T})
		}
		v.Rows = append(v.Rows, exprs)
	}
	return v
}

// Filter keeps rows for which Cond is true.
type Filter struct {
	Input Node
	Cond  Expr
}

// Columns returns the input's columns.
func (f *Filter) Columns() []Column { return f.Input.Columns() }

// Project computes Exprs over each input row.
type Project struct {
	Input Node
	Exprs []Expr
	Cols  []Column
}

// Columns returns the output columns.
func (p *Project) Columns() []Column { return p.Cols }

// AggCall is one aggregate computed by an Aggregate node.
type AggCall struct {
	Name     string
	Def      *AggSpec
	Args     []Expr
	Distinct bool
	Filter   Expr
	// Order sorts the group's values before they are added: the
	// aggregate's ORDER BY, or, for an order-dependent aggregate with
	// DISTINCT, its arguments (bind_array_agg.go).
	Order []SortKey
	// Direct counts the leading arguments of an ordered-set aggregate
	// that are its direct arguments (the fraction of percentile_cont):
	// evaluated on each row like the others, they may read only grouped
	// columns, so every row of a group gives them the same value.
	Direct int
	T      types.T
}

// AggSpec is the resolved aggregate implementation.
type AggSpec struct {
	NewState any // func() funcs.AggState
}

// Aggregate groups its input by GroupBy and computes Aggs; output rows are
// the group values followed by the aggregate results. With no GroupBy it
// returns exactly one row.
type Aggregate struct {
	Input   Node
	GroupBy []Expr
	Aggs    []AggCall
	Cols    []Column
}

// Columns returns the output columns.
func (a *Aggregate) Columns() []Column { return a.Cols }

// SortKey is one ORDER BY key.
type SortKey struct {
	E          Expr
	Desc       bool
	NullsFirst bool
}

// Sort orders its input.
type Sort struct {
	Input Node
	Keys  []SortKey
}

// Columns returns the input's columns.
func (s *Sort) Columns() []Column { return s.Input.Columns() }

// Limit skips Offset rows then returns at most Count rows (nil = all).
type Limit struct {
	Input         Node
	Count, Offset Expr
}

// Columns returns the input's columns.
func (l *Limit) Columns() []Column { return l.Input.Columns() }

// Distinct removes duplicate rows.
type Distinct struct {
	Input Node
}

// Columns returns the input's columns.
func (d *Distinct) Columns() []Column { return d.Input.Columns() }

// JoinKind is the kind of a join.
type JoinKind uint8

// Join kinds.
const (
	JoinInner JoinKind = iota
	JoinLeft
	JoinRight
	JoinFull
	JoinCross
	// JoinSemi returns each left row that has a match (EXISTS; Databricks
	// LEFT SEMI JOIN), once; JoinAnti each left row that has none (NOT
	// EXISTS; LEFT ANTI JOIN). Both output the left columns only.
	JoinSemi
	JoinAnti
	// JoinAntiNullAware is NOT IN (subquery) (decorrelate_in.go): each left
	// row that has no right row with its correlation keys (all keys but
	// the last), or whose last key is not NULL and matches no such right
	// row's, none of which has a NULL last key. Left columns only.
	JoinAntiNullAware
)

// LeftOnly reports whether a join of kind k outputs the left columns only
// (semi and anti joins).
func (k JoinKind) LeftOnly() bool {
	return k == JoinSemi || k == JoinAnti || k == JoinAntiNullAware
}

// Join combines Left and Right rows; output = left columns ++ right columns
// (left columns only for JoinSemi and JoinAnti).
// LeftKeys/RightKeys are equality keys extracted from On (evaluated on the
// respective side); Residual is the rest of the condition, evaluated on the
// combined row.
type Join struct {
	Kind                JoinKind
	Left, Right         Node
	LeftKeys, RightKeys []Expr
	Residual            Expr
	cols                []Column
}

// Columns returns left columns then right columns.
func (j *Join) Columns() []Column {
	if j.cols == nil {
		if j.Kind.LeftOnly() {
			return j.Left.Columns()
		}
		j.cols = append(append([]Column(nil), j.Left.Columns()...), j.Right.Columns()...)
	}
	return j.cols
}

// Apply joins each Left row with the rows Right produces for it: a LATERAL
// item (R-Q2). Right is bound one evaluation level down; its OuterRefs read
// the values of Params, expressions over the left row. Residual (the ON
// condition) is over the combined row; with JoinLeft a left row without
// any matching right row is kept, padded with NULLs.
type Apply struct {
	Kind        JoinKind // JoinInner or JoinLeft (JoinSemi, JoinAnti: access.go)
	Left, Right Node
	Params      []Expr
	Residual    Expr
	cols        []Column
}

// Columns returns left columns then right columns (left columns only for
// JoinSemi and JoinAnti, which an index nested-loop join may be).
func (a *Apply) Columns() []Column {
	if a.Kind == JoinSemi || a.Kind == JoinAnti {
		return a.Left.Columns()
	}
	if a.cols == nil {
		a.cols = append(append([]Column(nil), a.Left.Columns()...), a.Right.Columns()...)
	}
	return a.cols
}

// SetOpKind is UNION, INTERSECT or EXCEPT.
type SetOpKind uint8

// Set operations.
const (
	Union SetOpKind = iota
	Intersect
	Except
)

func (k SetOpKind) String() string { return [...]string{"UNION", "INTERSECT", "EXCEPT"}[k] }

// SetOp combines two inputs of the same column types (R-Q2). Without All,
// the result has no duplicates; with All, INTERSECT keeps min(m, n) and
// EXCEPT max(m - n, 0) copies of a row found m times left and n right.
// Rows compare as IS NOT DISTINCT FROM (NULLs are equal).
type SetOp struct {
	Kind        SetOpKind
	All         bool
	Left, Right Node
	Cols        []Column
}

// Columns returns the output columns (names from the left input).
func (s *SetOp) Columns() []Column { return s.Cols }

// RecursiveUnion evaluates WITH RECURSIVE: NonRec once, then Rec over and
// over, each time reading the rows the previous round produced through a
// WorkTableScan of its Work table, until a round produces nothing. Without
// All, rows already produced are dropped (UNION).
type RecursiveUnion struct {
	Work        *WorkTable
	NonRec, Rec Node
	All         bool
}

// WorkTable names the rows of a recursive query's previous round. It is
// the identity its RecursiveUnion and WorkTableScans share: a rewritten
// copy of the union (WithChildren) still feeds the scans of its Rec.
type WorkTable struct {
	Name string
	Cols []Column
}

// Columns returns the output columns.
func (r *RecursiveUnion) Columns() []Column { return r.Work.Cols }

// WorkTableScan reads the rows the previous round of a recursive query
// produced.
type WorkTableScan struct {
	Work *WorkTable
}

// Columns returns the recursive query's columns.
func (w *WorkTableScan) Columns() []Column { return w.Work.Cols }

// CTE identifies one WITH query of a statement. When Shared, every CTEScan
// of it reads one materialization, computed once per statement (the query
// is referenced several times and is uncorrelated).
type CTE struct {
	Name   string
	Shared bool
}

// CTEScan reads a WITH query. Input is the query bound at this reference
// (each reference is bound on its own, so an unshared CTE is simply inlined).
type CTEScan struct {
	CTE   *CTE
	Input Node
}

// Columns returns the query's columns.
func (c *CTEScan) Columns() []Column { return c.Input.Columns() }

// TableChanges reads a table's change data feed (R-T7).
type TableChanges struct {
	Table      *catalog.Table
	Start, End int64 // versions; End < 0 = latest
	StartTime  *int64
	EndTime    *int64
	cols       []Column
}

// Columns returns the table's columns then _change_type, _commit_version,
// _commit_timestamp.
func (t *TableChanges) Columns() []Column { return t.cols }

// Rows is a virtual relation whose rows are produced by a function at run
// time (DESCRIBE HISTORY, SHOW TBLPROPERTIES, system views).
type Rows struct {
	Cols []Column
	Gen  string // which generator: "history", …
	Arg  any
}

// Columns returns the output columns.
func (r *Rows) Columns() []Column { return r.Cols }
