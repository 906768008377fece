package plan

import (
	"math"
	"sort"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/types"
)

// Selectivities from ANALYZE's column statistics (catalog.ColumnStats),
// as PostgreSQL's selfuncs.c computes them: an equality with a constant
// from the most common values, else the rest spread evenly over the
// other distinct values (var_eq_const); an inequality from the most
// common values that satisfy it plus the share of the histogram below
// or above the constant, interpolated within its bucket
// (scalarineqsel); IS NULL from null_frac. Without statistics the
// defaults of estimate.go hold.

// columnStats returns the statistics of x, a column of in's rows that
// comes from a base table (nil: none).
func (e *Estimator) columnStats(x Expr, in Node) *catalog.ColumnStats {
	c, ok := x.(*ColRef)
	if !ok || in == nil || e.Stats == nil || c.Idx >= len(in.Columns()) {
		return nil
	}
	t, pos := e.baseColumn(in.Columns()[c.Idx])
	if t == nil {
		return nil
	}
	return e.Stats.Column(t, pos)
}

// scanColumnStats returns the statistics of column i of a scan's table
// (nil: none, or i is not a table column).
func (e *Estimator) scanColumnStats(s *Scan, i int) *catalog.ColumnStats {
	if e.Stats == nil || i >= len(s.Table.Columns) {
		return nil
	}
	return e.Stats.Column(s.Table, i)
}

// constValue returns the value of a constant expression the estimator
// can evaluate: a literal, a cast of one, or an expression of them the
// executor folds (estimate_fold.go).
func constValue(x Expr) (types.Datum, bool) {
	switch c := x.(type) {
	case *Const:
		return c.D, true
	case *Cast:
		if k, ok := c.E.(*Const); ok {
			d, err := types.Cast(k.D, c.T, types.DefaultEnv, true)
			return d, err == nil
		}
	}
	return foldConst(x)
}

// comparable reports whether a column's value and d may be compared.
func comparableKinds(a, b types.Kind) bool {
	family := func(k types.Kind) int {
		switch k {
		case types.KindInt2, types.KindInt4, types.KindInt8, types.KindFloat4, types.KindFloat8, types.KindNumeric, types.KindOid:
			return 1
		case types.KindText, types.KindVarchar, types.KindChar, types.KindName, types.KindUnknown:
			return 2
		case types.KindTimestamp, types.KindTimestampTZ:
			return 3
		}
		return 100 + int(k)
	}
	return family(a) == family(b)
}

// eqConstSelectivity is col = d with col's statistics cs over rows rows.
func eqConstSelectivity(cs *catalog.ColumnStats, d types.Datum, rows float64) float64 {
	if d.IsNull() {
		return 0
	}
	sumMCF := 0.0
	for i, v := range cs.MCV {
		if comparableKinds(v.K, d.K) && types.Compare(v, d) == 0 {
			return cs.MCF[i]
		}
		sumMCF += cs.MCF[i]
	}
	ndv := cs.Distinct(rows)
	if ndv <= 0 {
		return defaultEqSel
	}
	// The rest of the non-NULL rows, spread over the other values.
	other := ndv - float64(len(cs.MCV))
	sel := 1 - sumMCF - cs.NullFrac
	if other > 1 {
		sel /= other
	}
	// Never more than the least common MCV.
	if n := len(cs.MCF); n > 0 && sel > cs.MCF[n-1] {
		sel = cs.MCF[n-1]
	}
	return clampSel(sel)
}

// eqNonConstSelectivity is col = (an unknown value).
func eqNonConstSelectivity(cs *catalog.ColumnStats, rows float64) float64 {
	ndv := cs.Distinct(rows)
	if ndv <= 0 {
		return defaultEqSel
	}
	return clampSel((1 - cs.NullFrac) / ndv)
}

// ineqSelectivity is col < d (lt) or col > d (!lt), or with orEqual <= and
// >=, from cs; ok is false when cs cannot tell.
func ineqSelectivity(cs *catalog.ColumnStats, d types.Datum, lt, orEqual bool) (float64, bool) {
	if d.IsNull() {
		return 0, true
	}
	if len(cs.MCV) == 0 && len(cs.Histogram) < 2 {
		return 0, false
	}
	for _, v := range cs.MCV {
		if !comparableKinds(v.K, d.K) {
			return 0, false
		}
	}
	for _, v := range cs.Histogram {
		if !comparableKinds(v.K, d.K) {
			return 0, false
		}
	}
	satisfies := func(v types.Datum) bool {
		c := types.Compare(v, d)
		if c == 0 {
			return orEqual
		}
		return (c < 0) == lt
	}
	mcvSel, sumMCF := 0.0, 0.0
	for i, v := range cs.MCV {
		if satisfies(v) {
			mcvSel += cs.MCF[i]
		}
		sumMCF += cs.MCF[i]
	}
	rest := 1 - cs.NullFrac - sumMCF
	if len(cs.Histogram) >= 2 {
		frac := histogramFraction(cs.Histogram, d) // share below d
		if !lt {
			frac = 1 - frac
		}
		rest *= frac
	} else {
		rest *= 0.5
	}
	return clampSel(rest + mcvSel), true
}

// histogramFraction is the share of the histogram's population below d:
// whole buckets below it plus a linear interpolation within its bucket
// where the type has a numeric position (0.5 otherwise).
func histogramFraction(h []types.Datum, d types.Datum) float64 {
	n := len(h)
	// i: the first bound > d.
	i := sort.Search(n, func(i int) bool { return types.Compare(h[i], d) > 0 })
	switch {
	case i == 0:
		return 0
	case i == n:
		if types.Compare(h[n-1], d) == 0 {
			return 1 - 0.5/float64(n-1)/float64(n)
		}
		return 1
	}
	lo, hi := h[i-1], h[i]
	within := 0.5
	if a, ok := numericPos(lo); ok {
		if b, ok := numericPos(hi); ok {
			if x, ok := numericPos(d); ok && b > a {
				within = math.Max(0, math.Min(1, (x-a)/(b-a)))
			}
		}
	}
	return (float64(i-1) + within) / float64(n-1)
}

// numericPos maps a value onto a line where the type has one.
func numericPos(d types.Datum) (float64, bool) {
	switch d.K {
	case types.KindInt2, types.KindInt4, types.KindInt8, types.KindOid, types.KindDate, types.KindTimestamp, types.KindTimestampTZ:
		return float64(d.I), true
	case types.KindFloat4, types.KindFloat8:
		if math.IsNaN(d.F) || math.IsInf(d.F, 0) {
			return 0, false
		}
		return d.F, true
	case types.KindNumeric:
		f, err := d.D.Float64()
		return f, err == nil && !math.IsInf(f, 0)
	}
	return 0, false
}

func clampSel(s float64) float64 { return math.Max(0, math.Min(1, s)) }

// cmpWithConst splits a comparison into its column side, the constant's
// value (of the column's type) and the operator as seen from the column
// (5 > a is a < 5).
func cmpWithConst(b *Binary) (col Expr, d types.Datum, op Op, ok bool) {
	if c, isCol := statColumn(b.L); isCol {
		if v, isConst := constValue(b.R); isConst {
			if v, ok := asColumnValue(v, c.T); ok {
				return c, v, b.Op, true
			}
		}
	}
	if c, isCol := statColumn(b.R); isCol {
		if v, isConst := constValue(b.L); isConst {
			if v, ok := asColumnValue(v, c.T); ok {
				return c, v, flipOp(b.Op), true
			}
		}
	}
	return nil, types.Datum{}, 0, false
}

// statColumn returns the column x reads when its statistics tell of x:
// the column itself, or a date column widened to a timestamp (a date
// compared with DATE … + INTERVAL …, which is a timestamp).
func statColumn(x Expr) (*ColRef, bool) {
	switch c := x.(type) {
	case *ColRef:
		return c, true
	case *Cast:
		if col, ok := c.E.(*ColRef); ok && col.T.Kind == types.KindDate && (c.T.Kind == types.KindTimestamp || c.T.Kind == types.KindTimestampTZ) {
			return col, true
		}
	}
	return nil, false
}

// asColumnValue returns d as a value of a column of type t, for placing
// it among the column's statistics (a timestamp bound on a date column
// becomes its date).
func asColumnValue(d types.Datum, t types.T) (types.Datum, bool) {
	if d.IsNull() || comparableKinds(d.K, t.Kind) {
		return d, true
	}
	v, err := types.Cast(d, t, types.DefaultEnv, true)
	return v, err == nil
}

func flipOp(op Op) Op {
	switch op {
	case OpLt:
		return OpGt
	case OpLe:
		return OpGe
	case OpGt:
		return OpLt
	case OpGe:
		return OpLe
	}
	return op
}

// statsIneqSelectivity is an inequality between a column with statistics
// and a constant; ok is false otherwise.
func (e *Estimator) statsIneqSelectivity(b *Binary, in Node) (float64, bool) {
	col, d, op, ok := cmpWithConst(b)
	if !ok {
		return 0, false
	}
	cs := e.columnStats(col, in)
	if cs == nil {
		return 0, false
	}
	return ineqSelectivity(cs, d, op == OpLt || op == OpLe, op == OpLe || op == OpGe)
}

// statsRangeSelectivity is a range lo <(=) col <(=) hi from the two
// bounds' selectivities: PostgreSQL's hibound + lobound − 1, NULLs added
// back as both counted them out.
func (e *Estimator) statsRangeSelectivity(conds []Expr, in Node) (float64, bool) {
	lo, hi := -1.0, -1.0
	var cs *catalog.ColumnStats
	for _, c := range conds {
		b := c.(*Binary)
		col, _, op, ok := cmpWithConst(b)
		if !ok {
			return 0, false
		}
		if cs = e.columnStats(col, in); cs == nil {
			return 0, false
		}
		s, ok := e.statsIneqSelectivity(b, in)
		if !ok {
			return 0, false
		}
		if op == OpLt || op == OpLe {
			hi = math.Min(s, hiOr1(hi))
		} else {
			lo = math.Min(s, hiOr1(lo))
		}
	}
	if lo < 0 || hi < 0 {
		return 0, false
	}
	s := hi + lo - 1 + cs.NullFrac
	if s <= 0 {
		return 1e-10, true // contradictory bounds, or rounding
	}
	return clampSel(s), true
}

func hiOr1(x float64) float64 {
	if x < 0 {
		return 1
	}
	return x
}

// statsEqSelectivity is l = r where one side is a column with statistics.
func (e *Estimator) statsEqSelectivity(l, r Expr, in Node) (float64, bool) {
	lc := e.columnStats(l, in)
	rc := e.columnStats(r, in)
	_, lcol := l.(*ColRef)
	_, rcol := r.(*ColRef)
	switch {
	case lcol && rcol:
		return 0, false
	case lc != nil:
		return e.eqColumnWith(lc, l, r, in), true
	case rc != nil:
		return e.eqColumnWith(rc, r, l, in), true
	}
	return 0, false
}

func (e *Estimator) eqColumnWith(cs *catalog.ColumnStats, col, other Expr, in Node) float64 {
	rows := e.baseRows(col, in)
	if v, ok := constValue(other); ok {
		return eqConstSelectivity(cs, v, rows)
	}
	return eqNonConstSelectivity(cs, rows)
}

// baseRows is the rows of the base table col comes from.
func (e *Estimator) baseRows(col Expr, in Node) float64 {
	c := col.(*ColRef)
	if t, _ := e.baseColumn(in.Columns()[c.Idx]); t != nil {
		return e.tableRows(t)
	}
	return e.Rows(in)
}

// nullFrac is the NULL share of x over in's rows (ok: statistics know it).
func (e *Estimator) nullFrac(x Expr, in Node) (float64, bool) {
	if cs := e.columnStats(x, in); cs != nil {
		return cs.NullFrac, true
	}
	return 0, false
}
