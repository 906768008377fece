package plan

import (
	"math"

	"github.com/mvserver/mvserver/catalog"
)

// Cardinality estimates: how many rows a plan node produces, the number
// the join-order rule (joinorder.go) and EXPLAIN use. The estimator knows
// what Stats tell — each table's row count, which storage keeps per
// table, and the column statistics ANALYZE collects (estimate_stats.go:
// distinct counts, NULL shares, most common values, histograms) — and
// otherwise PostgreSQL's default selectivities
// (src/include/utils/selfuncs.h): an equality keeps 1/ndv of the rows
// (0.005 without an ndv), an inequality a third, a range on one column
// 0.005, LIKE 0.005, IS NULL 0.005.

// Stats is what the planner knows of the tables' contents.
type Stats interface {
	// TableRows returns how many rows table t holds; ok is false when
	// that is not known.
	TableRows(t *catalog.Table) (rows float64, ok bool)
	// ColumnDistinct returns how many distinct values column col (its
	// position in t.Columns) of t holds; ok is false when not known.
	ColumnDistinct(t *catalog.Table, col int) (ndv float64, ok bool)
	// Column returns what ANALYZE collected of column col of t (nil:
	// nothing).
	Column(t *catalog.Table, col int) *catalog.ColumnStats
}

// Default estimates, PostgreSQL's where it has one.
const (
	// defaultTableRows is a table's size when Stats do not know it.
	defaultTableRows = 1000
	// defaultNDV is the distinct values of a column nothing is known of
	// (DEFAULT_NUM_DISTINCT); never more than the rows that hold it.
	defaultNDV = 200
	// defaultEqSel is an equality's selectivity without an ndv
	// (DEFAULT_EQ_SEL).
	defaultEqSel = 0.005
	// defaultIneqSel is <, <=, >, >= (DEFAULT_INEQ_SEL).
	defaultIneqSel = 1.0 / 3
	// defaultRangeSel is a range bounded on both sides (DEFAULT_RANGE_INEQ_SEL).
	defaultRangeSel = 0.005
	// defaultMatchSel is LIKE and regular expressions (DEFAULT_MATCH_SEL).
	defaultMatchSel = 0.005
	// defaultNullSel is IS NULL without statistics.
	defaultNullSel = 0.005
	// defaultBoolSel is any other condition.
	defaultBoolSel = 0.5
	// srfRows is the rows a set-returning call gives per input row.
	srfRows = 10
)

// Estimator estimates the rows of plan nodes, memoized per node (nodes
// are never modified, so a node's estimate holds while it lives).
type Estimator struct {
	// Cat resolves a column's table (Column.Table) for Stats and keys.
	Cat *catalog.Catalog
	// Stats, when set, tell table sizes and distinct counts.
	Stats  Stats
	memo   map[Node]float64
	tables map[uint32]float64
	widths map[*Scan]int
}

// NewEstimator returns an estimator over cat and stats (either may be nil).
func NewEstimator(cat *catalog.Catalog, stats Stats) *Estimator {
	return &Estimator{Cat: cat, Stats: stats, memo: map[Node]float64{}, tables: map[uint32]float64{}}
}

// Rows returns the estimated number of rows n produces (at least 1, as
// PostgreSQL clamps its estimates).
func (e *Estimator) Rows(n Node) float64 {
	if r, ok := e.memo[n]; ok {
		return r
	}
	r := math.Max(1, e.rows(n))
	e.memo[n] = r
	return r
}

func (e *Estimator) rows(n Node) float64 {
	switch x := n.(type) {
	case *Scan:
		// The key bounds repeat conditions of the Filter above, which
		// counts them.
		e.scanWidth(x)
		if x.Narrowed && len(x.In) > 0 {
			return e.narrowedRows(x)
		}
		return e.tableRows(x.Table)
	case *Filter:
		in := e.Rows(x.Input)
		return in * e.Selectivity(x.Cond, x.Input)
	case *Project:
		return e.Rows(x.Input)
	case *Sort:
		return e.Rows(x.Input)
	case *Window:
		return e.Rows(x.Input)
	case *CTEScan:
		return e.Rows(x.Input)
	case *KeyIn:
		return e.Rows(x.Input)
	case *ProjectSet:
		return e.Rows(x.Input) * srfRows
	case *Values:
		return float64(len(x.Rows))
	case *Given:
		return float64(len(x.Rows))
	case *Limit:
		in := e.Rows(x.Input)
		if c, ok := x.Count.(*Const); ok && !c.D.IsNull() && c.D.I >= 0 {
			return math.Min(in, float64(c.D.I))
		}
		return in
	case *Distinct:
		return e.groups(x.Input, allColRefs(x.Input.Columns()))
	case *DistinctOn:
		return e.groups(x.Input, x.Keys)
	case *Aggregate:
		if len(x.GroupBy) == 0 {
			return 1
		}
		return e.groups(x.Input, x.GroupBy)
	case *Join:
		l, r := e.Rows(x.Left), e.Rows(x.Right)
		sel := e.joinSelectivity(x)
		inner := l * r * sel
		switch x.Kind {
		case JoinLeft:
			return math.Max(inner, l)
		case JoinRight:
			return math.Max(inner, r)
		case JoinFull:
			return math.Max(inner, math.Max(l, r))
		case JoinSemi:
			return l * e.semiSelectivity(x)
		case JoinAnti, JoinAntiNullAware:
			return l * math.Max(0.1, 1-e.semiSelectivity(x))
		}
		return inner
	case *Apply:
		l, r := e.Rows(x.Left), e.Rows(x.Right)
		sel := 1.0
		if x.Residual != nil {
			sel = e.Selectivity(x.Residual, nil)
		}
		switch x.Kind {
		case JoinLeft:
			return math.Max(l, l*r*sel)
		case JoinSemi:
			return l * math.Min(1, r*sel)
		case JoinAnti:
			return l * math.Max(0.1, 1-math.Min(1, r*sel))
		}
		return l * r * sel
	case *SetOp:
		l, r := e.Rows(x.Left), e.Rows(x.Right)
		switch x.Kind {
		case Intersect:
			return math.Min(l, r)
		case Except:
			return l
		}
		return l + r
	case *RecursiveUnion:
		return e.Rows(x.NonRec) * 10
	}
	return defaultTableRows
}

func (e *Estimator) tableRows(t *catalog.Table) float64 {
	if r, ok := e.tables[t.ID]; ok {
		return r
	}
	r := float64(defaultTableRows)
	if e.Stats != nil {
		if n, ok := e.Stats.TableRows(t); ok {
			r = n
		}
	}
	e.tables[t.ID] = r
	return r
}

// groups estimates the distinct values of keys over in's rows: the
// product of their distinct counts, at most the rows.
func (e *Estimator) groups(in Node, keys []Expr) float64 {
	rows := e.Rows(in)
	g := 1.0
	for _, k := range keys {
		g *= e.ndv(k, in)
		if g >= rows {
			return rows
		}
	}
	return g
}

// joinSelectivity is the share of the pairs of rows j keeps: each key
// equality's eqjoinsel (estimate_join.go), the residual as a filter.
func (e *Estimator) joinSelectivity(j *Join) float64 {
	sel, ndL, ndR := 1.0, 1.0, 1.0
	for i := range j.LeftKeys {
		sel *= e.eqJoinSel(j.LeftKeys[i], j.Left, j.RightKeys[i], j.Right)
		ndL *= e.ndv(j.LeftKeys[i], j.Left)
		ndR *= e.ndv(j.RightKeys[i], j.Right)
	}
	sel = compositeKeySel(sel, len(j.LeftKeys), ndL, ndR, e.Rows(j.Left), e.Rows(j.Right))
	if j.Residual != nil {
		sel *= e.Selectivity(j.Residual, nil)
	}
	return sel
}

// semiSelectivity is the share of a semi join's left rows that find a
// partner: each key's eqjoinsel_semi (estimate_join.go); a residual
// keeps a left row when any of the right rows its keys match passes it,
// each with the residual's selectivity.
func (e *Estimator) semiSelectivity(j *Join) float64 {
	sel := 1.0
	group := e.Rows(j.Right)
	for i := range j.LeftKeys {
		sel *= e.semiJoinSel(j.LeftKeys[i], j.Left, j.RightKeys[i], j.Right)
		nd, _ := e.ndvKnown(j.RightKeys[i], j.Right, true)
		group /= nd
	}
	if j.Residual != nil {
		rs := clampSel(e.Selectivity(j.Residual, nil))
		sel *= 1 - math.Pow(1-rs, math.Max(1, group))
	}
	return clampSel(sel)
}

// Selectivity estimates the share of in's rows cond keeps (in may be nil
// when cond reads a row of several inputs: no distinct counts then).
func (e *Estimator) Selectivity(cond Expr, in Node) float64 {
	switch x := cond.(type) {
	case *And:
		// A range on one column (a >= x AND a <= y) keeps far less than
		// two independent inequalities (PostgreSQL's clauselist rule).
		sel := 1.0
		ranged := map[int]int{}
		for _, c := range x.Args {
			if col, ok := rangeColumn(c); ok {
				ranged[col]++
			}
		}
		done := map[int]bool{}
		for _, c := range x.Args {
			if col, ok := rangeColumn(c); ok && ranged[col] > 1 {
				if !done[col] {
					var bounds []Expr
					for _, b := range x.Args {
						if bc, ok := rangeColumn(b); ok && bc == col {
							bounds = append(bounds, b)
						}
					}
					if s, ok := e.statsRangeSelectivity(bounds, in); ok {
						sel *= s
					} else {
						sel *= defaultRangeSel
					}
					done[col] = true
				}
				continue
			}
			sel *= e.Selectivity(c, in)
		}
		return sel
	case *Or:
		miss := 1.0
		for _, c := range x.Args {
			miss *= 1 - e.Selectivity(c, in)
		}
		return 1 - miss
	case *Not:
		return 1 - e.Selectivity(x.E, in)
	case *Binary:
		switch x.Op {
		case OpEq, OpNe:
			dflt := e.eqSelectivity(x.L, x.R, in)
			if x.Op == OpNe {
				dflt = 1 - dflt
			}
			if s, ok := e.statsExprSelectivity(x, in, dflt); ok {
				return s
			}
		case OpLt, OpLe, OpGt, OpGe:
			if s, ok := e.aggThresholdSelectivity(x, in); ok {
				return s
			}
			if s, ok := e.statsExprSelectivity(x, in, defaultIneqSel); ok {
				return s
			}
		}
		switch x.Op {
		case OpEq:
			return e.eqSelectivity(x.L, x.R, in)
		case OpNe:
			nf := 0.0
			if _, ok := x.L.(*ColRef); ok {
				nf, _ = e.nullFrac(x.L, in)
			} else if _, ok := x.R.(*ColRef); ok {
				nf, _ = e.nullFrac(x.R, in)
			}
			return clampSel(1 - e.eqSelectivity(x.L, x.R, in) - nf)
		case OpLt, OpLe, OpGt, OpGe:
			if s, ok := e.statsIneqSelectivity(x, in); ok {
				return s
			}
			return defaultIneqSel
		case OpLike, OpILike, OpRegex, OpIRegex:
			if s, ok := e.statsPatternSelectivity(x, in); ok {
				return s
			}
			return defaultMatchSel
		case OpNotLike, OpNotILike, OpNotRegex, OpNotIRegex:
			if s, ok := e.statsPatternSelectivity(x, in); ok {
				return s
			}
			return 1 - defaultMatchSel
		}
	case *In:
		sel := 0.0
		for _, v := range x.List {
			sel += e.eqSelectivity(x.E, v, in)
		}
		sel = math.Min(sel, 0.5)
		if x.Not {
			sel = 1 - sel
		}
		if s, ok := e.statsExprSelectivity(x, in, sel); ok {
			return s
		}
		return sel
	case *IsNull:
		if nf, ok := e.nullFrac(x.E, in); ok {
			if x.Not {
				return 1 - nf
			}
			return nf
		}
		if x.Not {
			return 1 - defaultNullSel
		}
		return defaultNullSel
	case *Const:
		if x.D.IsNull() || !x.D.Bool() {
			return 0
		}
		return 1
	}
	return defaultBoolSel
}

// rangeColumn returns the column an inequality with a constant bounds.
func rangeColumn(c Expr) (int, bool) {
	b, ok := c.(*Binary)
	if !ok || b.Op < OpLt || b.Op > OpGe {
		return 0, false
	}
	if col, ok := statColumn(b.L); ok && constant(b.R) {
		return col.Idx, true
	}
	if col, ok := statColumn(b.R); ok && constant(b.L) {
		return col.Idx, true
	}
	return 0, false
}

// eqSelectivity estimates l = r over in's rows: 1/ndv of the column side
// against a value, 1/max(ndv) between two columns.
func (e *Estimator) eqSelectivity(l, r Expr, in Node) float64 {
	if s, ok := e.statsEqSelectivity(l, r, in); ok {
		return s
	}
	_, lc := l.(*ColRef)
	_, rc := r.(*ColRef)
	switch {
	case lc && rc:
		return 1 / math.Max(e.ndv(l, in), e.ndv(r, in))
	case lc:
		return 1 / e.ndv(l, in)
	case rc:
		return 1 / e.ndv(r, in)
	}
	return defaultEqSel
}

// ndv estimates the distinct values of x over in's rows: what Stats say
// of a base-table column, all rows for a column that is a unique key by
// itself, and otherwise defaultNDV — never more than in's rows.
func (e *Estimator) ndv(x Expr, in Node) float64 {
	rows := math.Inf(1)
	if in != nil {
		rows = e.Rows(in)
	}
	if c, ok := x.(*ColRef); ok && in != nil && c.Idx < len(in.Columns()) {
		if t, pos := e.baseColumn(in.Columns()[c.Idx]); t != nil {
			if e.Stats != nil {
				if n, ok := e.Stats.ColumnDistinct(t, pos); ok {
					return math.Max(1, math.Min(n, rows))
				}
			}
			if uniqueColumn(t, pos) {
				return math.Max(1, math.Min(e.tableRows(t), rows))
			}
		}
	}
	return math.Max(1, math.Min(defaultNDV, rows))
}

// baseColumn returns the table and column position a column comes from.
func (e *Estimator) baseColumn(c Column) (*catalog.Table, int) {
	if c.Table == 0 || c.AttrNum <= 0 || e.Cat == nil {
		return nil, 0
	}
	t, ok := e.Cat.Table(c.Table)
	if !ok || int(c.AttrNum) > len(t.Columns) {
		return nil, 0
	}
	return t, int(c.AttrNum) - 1
}

// uniqueColumn reports whether column pos of t is by itself the primary
// key or a unique index.
func uniqueColumn(t *catalog.Table, pos int) bool {
	id := t.Columns[pos].ID
	if len(t.PrimaryKey) == 1 && t.PrimaryKey[0] == id {
		return true
	}
	for _, ix := range t.Indexes {
		if ix.Unique && len(ix.Columns) == 1 && ix.Columns[0].Col == id {
			return true
		}
	}
	return false
}

func allColRefs(cols []Column) []Expr {
	out := make([]Expr, len(cols))
	for i, c := range cols {
		out[i] = &ColRef{Idx: i, T: c.T, Name: c.Name}
	}
	return out
}
