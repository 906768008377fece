package plan

import (
	"math"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/types"
)

// Access paths (R-T10). The binder gives a filtered scan its primary-key
// bounds (pushdown.go). Optimize, run on the plans of the statements a
// session executes, goes further with the table's secondary indexes:
//
//   - a Filter over a Scan reads through the key — primary or secondary —
//     that its conjuncts bound best: equality on every column of a unique
//     key, then the longest equality prefix (with a range on the next
//     column), then an IN list on the first column, then a range on it;
//   - an equality join whose one side is small (a handful of rows: a
//     unique lookup, an IN list, VALUES, LIMIT) and whose other side is a
//     table with a key on the join columns becomes an index nested-loop
//     join: an Apply looking the small side's keys up in that key.
//
// The Filter stays above the scan, so results are those of a full scan
// whatever the key encoding. Both are rules of Optimize (optimize.go).
// A refresh analyzes a view's bound plan and runs what it builds from it
// through Optimize too (refresh/evalplan.go): indexes change how it reads
// a view's sources, never what.

// keyAccess is one way to read a scan through a key.
type keyAccess struct {
	index  *catalog.Index // nil: the primary key
	point  []Expr
	start  *KeyBound
	end    *KeyBound
	in     []Expr
	score  int
	unique bool // at most one row per key value (point on a unique key)
}

// sameKeyFamily reports whether values of kinds a and b have one key
// encoding and compare alike, so a b value can look up an a column.
func sameKeyFamily(a, b types.Kind) bool {
	fam := func(k types.Kind) int {
		switch k {
		case types.KindInt2, types.KindInt4, types.KindInt8:
			return 1
		case types.KindText, types.KindVarchar, types.KindName:
			return 2
		}
		return 100 + int(k)
	}
	return fam(a) == fam(b)
}

// keyBounds collects, for the key columns cols (table column positions),
// the constant bounds conds put on them.
type keyBounds struct {
	eq     []Expr // per key column, an equality value
	lo, hi []*KeyBound
	in     []Expr // IN list on the first key column
}

func boundsFor(t *catalog.Table, cols []int, conds []Expr) keyBounds {
	kb := keyBounds{eq: make([]Expr, len(cols)), lo: make([]*KeyBound, len(cols)), hi: make([]*KeyBound, len(cols))}
	pos := func(e Expr) int {
		cr, ok := e.(*ColRef)
		if !ok || cr.Idx >= len(t.Columns) || cr.T.Kind != t.Columns[cr.Idx].Type.Kind {
			return -1
		}
		for k, ci := range cols {
			if ci == cr.Idx {
				return k
			}
		}
		return -1
	}
	for _, c := range conds {
		switch x := c.(type) {
		case *Binary:
			if !x.Op.IsComparison() || x.Op == OpNe {
				continue
			}
			col, val, op := x.L, x.R, x.Op
			if _, isCol := col.(*ColRef); !isCol {
				col, val, op = x.R, x.L, flip(x.Op)
			}
			k := pos(col)
			if k < 0 || !constant(val) || !sameKeyFamily(col.Type().Kind, val.Type().Kind) {
				continue
			}
			switch op {
			case OpEq:
				if kb.eq[k] == nil {
					kb.eq[k] = val
				}
			case OpGt, OpGe:
				if kb.lo[k] == nil {
					kb.lo[k] = &KeyBound{Values: []Expr{val}, Inclusive: op == OpGe}
				}
			case OpLt, OpLe:
				if kb.hi[k] == nil {
					kb.hi[k] = &KeyBound{Values: []Expr{val}, Inclusive: op == OpLe}
				}
			}
		case *In:
			if x.Not || kb.in != nil || pos(x.E) != 0 {
				continue
			}
			ok := len(x.List) > 0
			for _, v := range x.List {
				ok = ok && constant(v) && sameKeyFamily(x.E.Type().Kind, v.Type().Kind)
			}
			if ok {
				kb.in = x.List
			}
		}
	}
	return kb
}

// bestAccess picks how scan reads best under conds, among its primary key
// (when withPK) and its indexes (when withIndexes); nil when no key helps.
func bestAccess(s *Scan, conds []Expr, withPK, withIndexes bool) *keyAccess {
	t := s.Table
	var best *keyAccess
	try := func(ix *catalog.Index, cols []int, unique bool) {
		a := accessFor(t, cols, unique, conds)
		if a == nil {
			return
		}
		a.index = ix
		if ix == nil {
			a.score++ // the primary key reads the row without a second lookup
		}
		if best == nil || a.score > best.score {
			best = a
		}
	}
	if withPK && len(t.PrimaryKey) > 0 {
		var cols []int
		for _, id := range t.PrimaryKey {
			cols = append(cols, t.ColumnByID(id))
		}
		try(nil, cols, true)
	}
	if withIndexes {
		for i := range t.Indexes {
			ix := &t.Indexes[i]
			var cols []int
			for _, c := range ix.Columns {
				cols = append(cols, t.ColumnByID(c.Col))
			}
			try(ix, cols, ix.Unique)
		}
	}
	return best
}

// accessFor bounds a key of columns cols by conds; nil when they do not.
func accessFor(t *catalog.Table, cols []int, unique bool, conds []Expr) *keyAccess {
	kb := boundsFor(t, cols, conds)
	n := 0
	for n < len(cols) && kb.eq[n] != nil {
		n++
	}
	a := &keyAccess{}
	switch {
	case n == len(cols):
		a.point, a.unique = kb.eq, unique
		a.score = 100 * n
		if unique {
			a.score = 10000
		}
	case n > 0:
		// An equality prefix (Start and End share its slice), maybe with
		// a range on the next column (their own slices).
		prefix := kb.eq[:n:n]
		a.start = &KeyBound{Values: prefix, Inclusive: true}
		a.end = &KeyBound{Values: prefix, Inclusive: true}
		a.score = 100 * n
		if lo := kb.lo[n]; lo != nil {
			a.start = &KeyBound{Values: append(prefix, lo.Values[0]), Inclusive: lo.Inclusive}
			a.score += 10
		}
		if hi := kb.hi[n]; hi != nil {
			a.end = &KeyBound{Values: append(prefix, hi.Values[0]), Inclusive: hi.Inclusive}
			a.score += 10
		}
	case kb.in != nil:
		a.in = kb.in
		a.score = 50
	case kb.lo[0] != nil || kb.hi[0] != nil:
		a.start, a.end = kb.lo[0], kb.hi[0]
		a.score = 10
	default:
		return nil
	}
	return a
}

// apply sets the scan's key bounds to a.
func (a *keyAccess) apply(s *Scan) {
	s.ClearKeyBounds()
	s.Index, s.Point, s.Start, s.End, s.In = a.index, a.point, a.start, a.end, a.in
}

// same reports whether s already reads through a.
func (a *keyAccess) same(s *Scan) bool {
	exprs := func(x, y []Expr) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	bound := func(x, y *KeyBound) bool {
		if x == nil || y == nil {
			return x == y
		}
		return x.Inclusive == y.Inclusive && exprs(x.Values, y.Values)
	}
	return a.index == s.Index && exprs(a.point, s.Point) && exprs(a.in, s.In) && bound(a.start, s.Start) && bound(a.end, s.End) &&
		(a.point != nil) == (s.Point != nil) && (a.in != nil) == (s.In != nil)
}

// indexScans is the index-scan rule: a Filter over a whole-table or range
// Scan reads through the key, primary or secondary, its conjuncts bound
// best. The scan is copied; the Filter stays above it.
func indexScans(_ *Optimizer, n Node) (Node, bool, error) {
	return transformUp(n, func(x Node) (Node, bool, error) {
		f, ok := x.(*Filter)
		if !ok {
			return x, false, nil
		}
		s, ok := f.Input.(*Scan)
		if !ok || s.Exclude != nil || s.Keyed() {
			return x, false, nil
		}
		a := bestAccess(s, conjuncts(f.Cond), true, true)
		if a == nil || a.same(s) {
			return x, false, nil
		}
		cp := *s
		a.apply(&cp)
		return &Filter{Input: &cp, Cond: f.Cond}, true, nil
	})
}

// indexJoins is the index-join rule: an equality join with a small side
// and a key on the other side's join columns becomes an index
// nested-loop join (indexJoin).
func indexJoins(o *Optimizer, n Node) (Node, bool, error) {
	return transformUp(n, func(x Node) (Node, bool, error) {
		if j, ok := x.(*Join); ok {
			if a := indexJoin(j, o.est); a != nil {
				return a, true, nil
			}
		}
		return x, false, nil
	})
}

// smallSide is the most rows a join side may have (as estimateRows
// knows) to drive an index nested-loop join.
const smallSide = 1000

// lookupGain is how many times more rows than the small side the other
// side must be estimated to hold for its lookups to beat hashing it,
// when only the estimator (table sizes) tells the small side's size.
const lookupGain = 10

// drives reports whether side may drive an index nested-loop join into
// other: its shape bounds it to smallSide rows, or, where the tables'
// sizes are known (est.Stats), it is estimated at most smallSide rows and
// other lookupGain times more.
func drives(side, other Node, est *Estimator) bool {
	if rows, ok := estimateRows(side); ok {
		return rows <= smallSide
	}
	if est == nil || est.Stats == nil {
		return false
	}
	r := est.Rows(side)
	return r <= smallSide && est.Rows(other) >= lookupGain*r
}

// lookupRowCost is how many rows a scan reads in the time one key lookup
// takes (measured on workload T at SF 0.1: a lineitem key-prefix lookup
// cost as much as reading 13 (Q21) to 47 (Q4) lineitem rows in a full
// scan).
const lookupRowCost = 25

// lookupsWin reports whether side's rows looking their keys up in other
// (a Scan, or a Filter or grouping over one) cost less than the hash
// join's reading other's whole table, for a join that produces at most
// one row per row of side (semi and anti joins, a left join with a side
// grouped by the join keys), so the lookups' count is side's rows alone.
func lookupsWin(side, other Node, est *Estimator) bool {
	if est == nil || est.Stats == nil {
		return false
	}
	for {
		switch x := other.(type) {
		case *Filter:
			other = x.Input
			continue
		case *Aggregate:
			other = x.Input
			continue
		}
		break
	}
	scan, ok := other.(*Scan)
	if !ok {
		return false
	}
	return est.Rows(side)*lookupRowCost <= est.tableRows(scan.Table)
}

// lookupFetchCost is what fetching one row found by a key lookup costs,
// in rows of a full scan (the rows are read out of key order).
const lookupFetchCost = 2

// lookupsCheaper reports whether side's rows (estimated; no fixed bound
// like drives' smallSide: thousands of orders looking up lineitem by its
// key prefix beat hashing all of it, TPC-H Q5 and Q10) looking up other
// — a Scan, or a Filter over one — through
// the columns keys of other cost less than the hash join's reading all
// of other's table: a lookup costs lookupRowCost, and each row it
// fetches lookupFetchCost, the rows per key value being the table's rows
// over the keys' distinct values. A filter on other that keeps few rows
// does not make the scan cheaper: the hash join still reads the table
// (TPC-H Q19: 47 parts against 600k lineitems, estimated at 319 after
// their filter).
func lookupsCheaper(side, other Node, keys []Expr, est *Estimator) bool {
	if est == nil || est.Stats == nil {
		return false
	}
	scan := scanUnder(other)
	if scan == nil {
		return false
	}
	table := est.tableRows(scan.Table)
	return est.Rows(side)*(lookupRowCost+lookupFetchCost*rowsPerKey(scan, keys, est)) <= table
}

// scanUnder is n when it is a Scan, the scan under n when n is a Filter
// over one, and nil otherwise.
func scanUnder(n Node) *Scan {
	if f, ok := n.(*Filter); ok {
		n = f.Input
	}
	s, _ := n.(*Scan)
	return s
}

// rowsPerKey estimates the rows of scan's table a lookup of keys (over
// scan's columns) finds: the table's rows over the keys' distinct values.
func rowsPerKey(scan *Scan, keys []Expr, est *Estimator) float64 {
	table := est.tableRows(scan.Table)
	distinct := 1.0
	for _, k := range keys {
		distinct *= est.ndv(k, scan)
	}
	return table / math.Max(1, math.Min(distinct, table))
}

// ownKeysCheaper reports whether inner — a Scan, or a Filter over one,
// that key bounds of its own already narrow (an incremental refresh's
// change keys, Scan.Narrowed; an IN list or point the planner chose) —
// reads its rows for less than outer's rows would pay to look them up
// through innerKeys, which drops those bounds: a lookup costs
// lookupRowCost and each row it fetches lookupFetchCost, for the bounded
// scan's own keys and rows as for outer's (TPC-H Q21's refresh: its 22
// Saudi suppliers looked lineitem up by l_suppkey, 600 rows each, instead
// of reading the few hundred lineitems of the changed orders by key).
func ownKeysCheaper(outer, inner Node, innerKeys []Expr, est *Estimator) bool {
	if est == nil || est.Stats == nil {
		return false
	}
	scan := scanUnder(inner)
	if scan == nil || !scan.Keyed() || keyReadsOuter(scan) {
		return false
	}
	keys := 1.0
	if scan.In != nil {
		keys = float64(len(scan.In))
	}
	own := keys*lookupRowCost + lookupFetchCost*est.Rows(inner)
	// The lookups read the whole table's rows of each key value.
	whole := *scan
	whole.ClearKeyBounds()
	return own < est.Rows(outer)*(lookupRowCost+lookupFetchCost*rowsPerKey(&whole, innerKeys, est))
}

// estimateRows bounds the rows a plan produces when its shape tells; ok
// is false when it does not.
func estimateRows(n Node) (rows int64, ok bool) {
	switch x := n.(type) {
	case *Scan:
		switch {
		case x.Point != nil && (x.Index == nil || x.Index.Unique):
			return 1, true
		case x.In != nil && len(x.KeyColumns()) == 1 && (x.Index == nil || x.Index.Unique):
			return int64(len(x.In)), true
		case x.In != nil:
			return 10 * int64(len(x.In)), true
		case x.Keyed():
			// An equality lookup of a non-unique key: a guess (no
			// statistics), as PostgreSQL guesses without them.
			return 10, true
		}
	case *Filter:
		return estimateRows(x.Input)
	case *Project:
		return estimateRows(x.Input)
	case *Sort:
		return estimateRows(x.Input)
	case *Distinct, *DistinctOn:
		return estimateRows(x.Children()[0])
	case *Values:
		return int64(len(x.Rows)), true
	case *Given:
		return int64(len(x.Rows)), true
	case *Limit:
		in, inOK := estimateRows(x.Input)
		if c, isConst := x.Count.(*Const); isConst && !c.D.IsNull() && c.D.I >= 0 {
			if !inOK || c.D.I < in {
				return c.D.I, true
			}
		}
		return in, inOK
	case *Aggregate:
		if len(x.GroupBy) == 0 {
			return 1, true
		}
		return estimateRows(x.Input)
	case *Apply:
		l, lok := estimateRows(x.Left)
		r, rok := estimateRows(x.Right)
		return l * r, lok && rok
	case *Join:
		l, lok := estimateRows(x.Left)
		r, rok := estimateRows(x.Right)
		if x.Kind.LeftOnly() {
			return l, lok
		}
		return l * r, lok && rok && x.Kind != JoinFull
	}
	return 0, false
}

// indexJoin turns an equality join whose left side is small and whose
// right side is a table with a key on the join columns into an Apply that
// looks each left row's keys up; for an inner join, the sides may be
// swapped (a Project restores the column order). nil when it does not
// apply.
func indexJoin(j *Join, est *Estimator) Node {
	if len(j.LeftKeys) == 0 {
		return nil
	}
	switch j.Kind {
	case JoinInner, JoinLeft, JoinSemi, JoinAnti:
	default:
		return nil
	}
	if (drives(j.Left, j.Right, est) || j.Kind.LeftOnly() && lookupsWin(j.Left, j.Right, est) ||
		j.Kind == JoinInner && lookupsCheaper(j.Left, j.Right, j.RightKeys, est)) && !ownKeysCheaper(j.Left, j.Right, j.RightKeys, est) {
		if a := lookupJoin(j.Kind, j.Left, j.Right, j.LeftKeys, j.RightKeys, j.Residual); a != nil {
			return a
		}
	}
	if drives(j.Left, j.Right, est) || lookupsWin(j.Left, j.Right, est) {
		if a := lookupGroups(j); a != nil {
			return a
		}
	}
	if j.Kind != JoinInner {
		return nil
	}
	if !drives(j.Right, j.Left, est) && !lookupsCheaper(j.Right, j.Left, j.LeftKeys, est) ||
		ownKeysCheaper(j.Right, j.Left, j.LeftKeys, est) {
		return nil
	}
	nl, nr := len(j.Left.Columns()), len(j.Right.Columns())
	// The swapped join's row is right ++ left.
	var residual Expr
	if j.Residual != nil {
		residual = Rewrite(j.Residual, func(x Expr) Expr {
			if c, ok := x.(*ColRef); ok {
				if c.Idx < nl {
					return &ColRef{Idx: c.Idx + nr, T: c.T, Name: c.Name}
				}
				return &ColRef{Idx: c.Idx - nl, T: c.T, Name: c.Name}
			}
			return x
		})
	}
	a := lookupJoin(JoinInner, j.Right, j.Left, j.RightKeys, j.LeftKeys, residual)
	if a == nil {
		return nil
	}
	cols := j.Columns()
	exprs := make([]Expr, len(cols))
	for i, c := range cols {
		src := i + nr // a left column, after the right ones
		if i >= nl {
			src = i - nl
		}
		exprs[i] = &ColRef{Idx: src, T: c.T, Name: c.Name}
	}
	return &Project{Input: a, Exprs: exprs, Cols: cols}
}

// lookupJoin builds the Apply of an index nested-loop join: outer's rows
// drive lookups into inner, a Scan (or Filter over one) of a table with a
// key on innerKeys; nil when inner is not such a scan.
func lookupJoin(kind JoinKind, outer, inner Node, outerKeys, innerKeys []Expr, residual Expr) Node {
	var cond Expr
	scan, ok := inner.(*Scan)
	if f, isFilter := inner.(*Filter); isFilter {
		scan, ok = f.Input.(*Scan)
		cond = f.Cond
	}
	// A scan with Exclude (an incremental refresh's old side of a table)
	// may be looked up too: every read of the scan leaves those rows out.
	if !ok || nodeReadsOuter(inner) {
		return nil
	}
	conds := []Expr{}
	if cond != nil {
		conds = conjuncts(cond)
	}
	for i, rk := range innerKeys {
		lk := outerKeys[i]
		if rk.Type().Kind != lk.Type().Kind {
			return nil
		}
		ref := &OuterRef{Idx: i, T: lk.Type(), Name: exprString(lk, outer.Columns())}
		conds = append(conds, &Binary{Op: OpEq, L: rk, R: ref, T: types.Bool})
	}
	cp := *scan
	cp.ClearKeyBounds()
	a := bestAccess(&cp, conds, true, true)
	if a == nil {
		return nil
	}
	a.apply(&cp)
	if !cp.Keyed() || !keyReadsOuter(&cp) {
		return nil // the join columns are no key of the table
	}
	return &Apply{Kind: kind, Left: outer, Right: &Filter{Input: &cp, Cond: andOf(conds)}, Params: outerKeys, Residual: residual}
}

// lookupGroups builds the index nested-loop join of a left join whose
// right side groups a table by the join keys (a decorrelated scalar
// subquery, decorrelate_scalar.go): each left row looks its keys up and
// aggregates the rows found, the scalar subquery's per-row form. nil
// when j is not such a join or the keys are no key of the table.
func lookupGroups(j *Join) Node {
	agg, ok := j.Right.(*Aggregate)
	if !ok || j.Kind != JoinLeft || len(agg.GroupBy) == 0 {
		return nil
	}
	inner := make([]Expr, len(j.RightKeys))
	for i, k := range j.RightKeys {
		c, ok := k.(*ColRef)
		if !ok || c.Idx >= len(agg.GroupBy) {
			return nil
		}
		inner[i] = agg.GroupBy[c.Idx]
	}
	a, ok := lookupJoin(JoinLeft, j.Left, agg.Input, j.LeftKeys, inner, j.Residual).(*Apply)
	if !ok {
		return nil
	}
	grouped := *agg
	grouped.Input = a.Right
	a.Right = &grouped
	return a
}

// keyReadsOuter reports whether the scan's key values read the outer row.
func keyReadsOuter(s *Scan) bool {
	for _, e := range ownExprs(s) {
		if readsOuter(e) {
			return true
		}
	}
	return false
}
