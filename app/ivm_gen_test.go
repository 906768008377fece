package app

import (
	"fmt"
	"math/rand"
	"strings"
)

// Generators for TestIVMProperty (ivm_property_test.go): random source
// tables, random materialized-view queries drawn from every construct of
// R-I2, and random DML batches. Everything is drawn from one seeded
// *rand.Rand and never from the server's answers, so a seed replays the
// same SQL script exactly.

// ivmKind is the kind of value a column holds; generators pick columns and
// expressions by kind so that the same shapes work over tables and over
// views (whose columns are c0, c1, …).
type ivmKind int

const (
	ivmInt ivmKind = iota
	ivmText
	ivmDec
	ivmFloat
	ivmTS
	// ivmNum is a decimal whose printed form can differ between equal
	// values: a mix of scales (coalesce(d, 0) prints 0 or 0.00; avg's
	// scale follows its operands) or a zero that prints as -0.00. Such
	// values are never grouped, made DISTINCT or fed to MIN/MAX, since the
	// text of the one row that stands for its equals is then arbitrary.
	ivmNum
)

type ivmCol struct {
	name string
	kind ivmKind
}

// ivmTable is a source table and what the generator knows of it. The
// generator keeps no copy of the rows: statements pick rows by predicates
// evaluated by the server.
type ivmTable struct {
	name string
	cols []ivmCol
	pk   bool
	// cdf and rowTracking are the table's current feature properties
	// (R-T5); cdfChangedBatch is the batch that last toggled the change
	// data feed (-1: never).
	cdf, rowTracking bool
	cdfChangedBatch  int
	// hiID bounds every id ever written: new rows take ids above it and
	// statements that move ids add hiID+1, so primary keys never collide.
	hiID int
}

func (t *ivmTable) has(col string) bool {
	for _, c := range t.cols {
		if c.name == col {
			return true
		}
	}
	return false
}

// ivmView is a generated materialized view.
type ivmView struct {
	name, shape, query string
	clauses            string
	cols               []ivmCol
	// incr: the shape is incrementalizable by R-I2 (given the change data
	// feed and row tracking on its sources).
	incr   bool
	tables []*ivmTable // base tables read, also through upstream views
	views  []*ivmView  // views read directly
}

// ivmSrc is something a FROM clause can read: a table, a view, a CTE or a
// derived table.
type ivmSrc struct {
	from  string // the text before the alias: a name or "(SELECT …)"
	cols  []ivmCol
	table *ivmTable
	view  *ivmView
}

// ivmRef is a source in scope under an alias.
type ivmRef struct {
	alias string
	src   *ivmSrc
}

type ivmScope []ivmRef

// ivmQuery is what a shape generator returns.
type ivmQuery struct {
	sql  string
	cols []ivmCol
	incr bool
	// clauses go between the view's name and AS (PARTITIONED BY …).
	clauses string
}

// ivmShape is one kind of view query. Generators may decline (ok=false)
// when the schema offers nothing they can use; another shape is drawn.
type ivmShape struct {
	name string
	// incr: R-I2 lists every construct the shape uses.
	incr bool
	gen  func(g *ivmGen) (ivmQuery, bool)
	// chain: the shape can read an upstream view (views on views, R-M7).
	chain bool
	// gate, when set, turns the shape on and off.
	gate *bool
}

// ivmWindowShapes turns on the window-function shapes (R-I2: OVER
// (PARTITION BY …), QUALIFY).
var ivmWindowShapes = true

// ivmShapes is the list of view shapes; add new ones here.
var ivmShapes = []ivmShape{
	{"project_filter", true, (*ivmGen).genProject, true, nil},
	{"join_inner", true, (*ivmGen).genJoinInner, true, nil},
	{"join_three", true, (*ivmGen).genJoinThree, false, nil},
	{"join_outer", true, (*ivmGen).genJoinOuter, true, nil},
	{"union_all", true, (*ivmGen).genUnionAll, false, nil},
	{"cte", true, (*ivmGen).genCTE, true, nil},
	{"cte_reused", true, (*ivmGen).genCTEReused, false, nil},
	{"derived_table", true, (*ivmGen).genDerived, true, nil},
	{"semi_anti", false, (*ivmGen).genSemiAnti, true, nil},
	{"group_by_cols", true, (*ivmGen).genGroupCols, true, nil},
	{"group_by_expr", true, (*ivmGen).genGroupExpr, true, nil},
	{"agg_global", true, (*ivmGen).genAggGlobal, true, nil},
	{"distinct", true, (*ivmGen).genDistinct, true, nil},
	{"count_distinct", true, (*ivmGen).genCountDistinct, true, nil},
	{"agg_join", true, (*ivmGen).genAggJoin, true, nil},
	{"min_max", true, (*ivmGen).genMinMax, true, nil},
	// A fact joined with a dimension in a derived table, grouped by a
	// computed key, summing a CASE whose branches differ in scale (TPC-H
	// Q7, Q8, Q9, Q14).
	{"agg_star_join", true, (*ivmGen).genAggStarJoin, true, nil},
	// R-I2: SUM/AVG over REAL/DOUBLE are not incremental.
	{"agg_float", false, (*ivmGen).genAggFloat, false, nil},
	{"agg_float_partitioned", true, (*ivmGen).genAggFloatPartitioned, false, nil},
	// R-I5: time functions in WHERE.
	{"time_filter", true, (*ivmGen).genTimeFilter, false, nil},
	{"window", true, (*ivmGen).genWindow, false, &ivmWindowShapes},
	// Comparison with a scalar aggregate over a whole input (TPC-H Q11,
	// Q15, Q22).
	{"scalar_filter", true, (*ivmGen).genScalarFilter, true, nil},
	{"having_scalar", true, (*ivmGen).genHavingScalar, false, nil},
	// TPC-H Q15: the groups of an aggregate at its maximum (minimum),
	// kept with the extreme's value and count at it
	// (refresh/scalar_state.go).
	{"extreme_of_groups", true, (*ivmGen).genExtremeOfGroups, false, nil},
	// TPC-H Q13: an aggregate over an aggregate's groups (the inner one
	// kept as per-group states: refresh/inner_state.go), its input an
	// outer join at times.
	{"agg_of_groups", true, (*ivmGen).genAggOfGroups, false, nil},
	// Comparison with a correlated scalar aggregate (TPC-H Q17, Q20):
	// decorrelated into a join with a grouped side, whose touched groups
	// the join narrows to the keys its other side holds.
	{"correlated_scalar", false, (*ivmGen).genCorrelatedScalar, false, nil},
	// ORDER BY … LIMIT k (TOP_K). Not required to be incremental: with no
	// spare rows kept, a change that takes rows out of the top k, or a tie
	// at row k, recomputes in full (and says so).
	{"top_k", false, (*ivmGen).genTopK, true, nil},
	{"top_k_group", false, (*ivmGen).genTopKGroup, false, nil},
}

type ivmGen struct {
	r      *rand.Rand
	tables []*ivmTable
	views  []*ivmView
	// chainFrom, while set, is the first source pickSource returns.
	chainFrom *ivmView
	// reads collects the sources the query under construction reads.
	reads []*ivmSrc
	// big: the tables start with a few dozen rows, not a few.
	big bool
}

func newIVMGen(seed int64) *ivmGen {
	return &ivmGen{r: rand.New(rand.NewSource(seed))}
}

func (g *ivmGen) n(n int) int              { return g.r.Intn(n) }
func (g *ivmGen) p(prob float64) bool      { return g.r.Float64() < prob }
func (g *ivmGen) pick(xs ...string) string { return xs[g.r.Intn(len(xs))] }

// ---- schemas and values ----

var (
	ivmTexts = []string{"a", "b", "c", "ab", "NULL", ""}
	ivmDecs  = []string{"0.00", "1.50", "-2.25", "10.00", "3.33", "99.99", "0.01", "-0.50"}
	// Dyadic fractions of small magnitude: any sum of them is exact in a
	// double, so the order a sum visits rows in cannot change its result.
	ivmFloats = []string{"0", "0.5", "-1.25", "2", "1000", "0.25", "-3"}
	ivmTSs    = []string{"2024-01-01 00:00:00", "2024-01-01 10:30:00", "2024-01-02 23:59:59", "2024-02-29 12:00:00", "2023-12-31 23:00:00"}
)

func (g *ivmGen) valK() string {
	if g.p(0.15) {
		return "NULL"
	}
	return fmt.Sprint(g.n(6))
}

func (g *ivmGen) valG() string {
	if g.p(0.15) {
		return "NULL"
	}
	if g.p(0.1) {
		return "''"
	}
	return "'" + ivmTexts[g.n(len(ivmTexts)-1)] + "'"
}

func (g *ivmGen) valD() string {
	if g.p(0.15) {
		return "NULL"
	}
	return ivmDecs[g.n(len(ivmDecs))]
}

func (g *ivmGen) valF() string {
	if g.p(0.15) {
		return "NULL"
	}
	return ivmFloats[g.n(len(ivmFloats))]
}

func (g *ivmGen) valTS() string {
	if g.p(0.15) {
		return "NULL"
	}
	if g.p(0.5) {
		return "TIMESTAMP '" + ivmTSs[g.n(len(ivmTSs))] + "'"
	}
	return "'" + ivmTSs[g.n(len(ivmTSs))] + "'"
}

func (g *ivmGen) valV() string {
	if g.p(0.1) {
		return "NULL"
	}
	return fmt.Sprint(g.n(41) - 20)
}

// schema draws 2–4 tables and returns their DDL.
func (g *ivmGen) schema() []string {
	var ddl []string
	nt := 2 + g.n(3)
	for i := 1; i <= nt; i++ {
		t := &ivmTable{name: fmt.Sprintf("t%d", i), cdf: true, rowTracking: true, cdfChangedBatch: -1}
		t.cols = []ivmCol{{"id", ivmInt}, {"k", ivmInt}, {"g", ivmText}, {"d", ivmDec}}
		if g.p(0.7) {
			t.cols = append(t.cols, ivmCol{"v", ivmInt})
		}
		if g.p(0.6) {
			t.cols = append(t.cols, ivmCol{"f", ivmFloat})
		}
		if g.p(0.6) {
			t.cols = append(t.cols, ivmCol{"ts", ivmTS})
		}
		g.r.Shuffle(len(t.cols)-1, func(a, b int) { t.cols[a+1], t.cols[b+1] = t.cols[b+1], t.cols[a+1] })
		pkStyle := g.n(10) // 0..6 inline, 7 table constraint, 8..9 none
		t.pk = pkStyle < 8
		var defs []string
		for _, c := range t.cols {
			var typ string
			switch c.kind {
			case ivmInt:
				typ = g.pick("INT", "INT", "INTEGER", "BIGINT")
			case ivmText:
				typ = g.pick("TEXT", "STRING", "VARCHAR(10)")
			case ivmDec:
				typ = g.pick("DECIMAL(12,2)", "NUMERIC(12,2)")
			case ivmFloat:
				typ = g.pick("DOUBLE", "DOUBLE PRECISION", "FLOAT8")
			case ivmTS:
				typ = "TIMESTAMP"
			}
			def := c.name + " " + typ
			if c.name == "id" && pkStyle < 7 {
				def += " PRIMARY KEY"
			}
			defs = append(defs, def)
		}
		if pkStyle == 7 {
			defs = append(defs, "PRIMARY KEY (id)")
		}
		stmt := fmt.Sprintf("CREATE TABLE %s (%s)", t.name, strings.Join(defs, ", "))
		// Some tables go without the change data feed or row tracking, so
		// that the fallback paths run too (R-I3).
		var props []string
		if g.p(0.2) {
			t.cdf = false
		}
		if g.p(0.1) {
			t.rowTracking = false
		}
		if !t.cdf {
			props = append(props, "delta.enableChangeDataFeed = false")
		}
		if !t.rowTracking {
			props = append(props, "delta.enableRowTracking = false")
		}
		if len(props) > 0 && g.p(0.5) {
			stmt += " TBLPROPERTIES (" + strings.Join(props, ", ") + ")"
			ddl = append(ddl, stmt)
		} else {
			ddl = append(ddl, stmt)
			if len(props) > 0 {
				ddl = append(ddl, fmt.Sprintf("ALTER TABLE %s SET TBLPROPERTIES (%s)", t.name, strings.Join(props, ", ")))
			}
		}
		g.tables = append(g.tables, t)
	}
	return ddl
}

// rowValues draws one row for t with a fresh id.
func (g *ivmGen) rowValues(t *ivmTable) string {
	var vals []string
	for _, c := range t.cols {
		switch c.name {
		case "id":
			if !t.pk && t.hiID > 0 && g.p(0.15) {
				vals = append(vals, fmt.Sprint(g.n(t.hiID+1))) // a repeated id
			} else {
				t.hiID++
				vals = append(vals, fmt.Sprint(t.hiID))
			}
		case "k":
			vals = append(vals, g.valK())
		case "g":
			vals = append(vals, g.valG())
		case "d":
			vals = append(vals, g.valD())
		case "v":
			vals = append(vals, g.valV())
		case "f":
			vals = append(vals, g.valF())
		case "ts":
			vals = append(vals, g.valTS())
		}
	}
	return "(" + strings.Join(vals, ", ") + ")"
}

func (t *ivmTable) colList() string {
	names := make([]string, len(t.cols))
	for i, c := range t.cols {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

func (g *ivmGen) insertRows(t *ivmTable, n int) string {
	rows := make([]string, n)
	for i := range rows {
		rows[i] = g.rowValues(t)
	}
	if g.p(0.5) {
		return fmt.Sprintf("INSERT INTO %s VALUES %s", t.name, strings.Join(rows, ", "))
	}
	return fmt.Sprintf("INSERT INTO %s (%s) VALUES %s", t.name, t.colList(), strings.Join(rows, ", "))
}

// initialData fills every table with a few rows; in some cases with a
// few dozen, so that the cost model (R-I6) finds a small batch cheaper to
// apply incrementally than a recompute.
func (g *ivmGen) initialData() []string {
	var out []string
	g.big = g.p(0.25)
	for _, t := range g.tables {
		n := 4 + g.n(14)
		if g.big {
			n = 30 + g.n(30)
		}
		for n > 0 {
			m := min(n, 1+g.n(8))
			out = append(out, g.insertRows(t, m))
			n -= m
		}
	}
	return out
}

// ---- expressions ----

func (g *ivmGen) table() *ivmTable { return g.tables[g.n(len(g.tables))] }

func tableSrc(t *ivmTable) *ivmSrc { return &ivmSrc{from: t.name, cols: t.cols, table: t} }

func viewSrc(v *ivmView) *ivmSrc { return &ivmSrc{from: v.name, cols: v.cols, view: v} }

// pickSource returns the upstream view while a chained view is being
// generated (once), otherwise a random table.
func (g *ivmGen) pickSource() *ivmSrc {
	if g.chainFrom != nil {
		s := viewSrc(g.chainFrom)
		g.chainFrom = nil
		g.reads = append(g.reads, s)
		return s
	}
	return g.tableSource()
}

func (g *ivmGen) tableSource() *ivmSrc {
	s := tableSrc(g.table())
	g.reads = append(g.reads, s)
	return s
}

// colOf returns a column of kind in ref, preferring the named one.
func (g *ivmGen) colOf(ref ivmRef, kind ivmKind, prefer string) (string, bool) {
	var cands []string
	for _, c := range ref.src.cols {
		if c.kind == kind {
			if c.name == prefer && g.p(0.7) {
				return ref.alias + "." + c.name, true
			}
			cands = append(cands, ref.alias+"."+c.name)
		}
	}
	if len(cands) == 0 {
		return "", false
	}
	return cands[g.n(len(cands))], true
}

// anyCol returns a random column of the scope with its kind.
func (g *ivmGen) anyCol(sc ivmScope) (string, ivmKind) {
	ref := sc[g.n(len(sc))]
	c := ref.src.cols[g.n(len(ref.src.cols))]
	return ref.alias + "." + c.name, c.kind
}

// keyCol returns a column that may be grouped on, made DISTINCT or fed
// to MIN/MAX: any but an ivmNum one.
func (g *ivmGen) keyCol(sc ivmScope) (string, ivmKind, bool) {
	var refs []string
	var kinds []ivmKind
	for _, r := range sc {
		for _, c := range r.src.cols {
			if c.kind != ivmNum {
				refs, kinds = append(refs, r.alias+"."+c.name), append(kinds, c.kind)
			}
		}
	}
	if len(refs) == 0 {
		return "", 0, false
	}
	i := g.n(len(refs))
	return refs[i], kinds[i], true
}

func hasKeyCol(cols []ivmCol) bool {
	for _, c := range cols {
		if c.kind != ivmNum {
			return true
		}
	}
	return false
}

// colOfKind returns a column of kind from any source of the scope.
func (g *ivmGen) colOfKind(sc ivmScope, kind ivmKind) (string, bool) {
	start := g.n(len(sc))
	for i := range sc {
		if c, ok := g.colOf(sc[(start+i)%len(sc)], kind, ""); ok {
			return c, true
		}
	}
	return "", false
}

// exprOf returns an expression over column ref of kind, and its kind.
func (g *ivmGen) exprOf(sc ivmScope, ref string, kind ivmKind) (string, ivmKind) {
	if g.p(0.4) {
		return ref, kind
	}
	switch kind {
	case ivmInt:
		switch g.n(9) {
		case 0:
			return fmt.Sprintf("%s + %d", ref, g.n(5)+1), ivmInt
		case 1:
			return fmt.Sprintf("%s * 2 - 1", ref), ivmInt
		case 2:
			return fmt.Sprintf("abs(%s - 3)", ref), ivmInt
		case 3:
			return fmt.Sprintf("coalesce(%s, -1)", ref), ivmInt
		case 4:
			return fmt.Sprintf("CASE WHEN %s > 2 THEN %s ELSE 0 END", ref, ref), ivmInt
		case 5:
			return fmt.Sprintf("%s %% 3", ref), ivmInt
		case 6:
			return fmt.Sprintf("nullif(%s, 1)", ref), ivmInt
		case 7:
			if o, ok := g.colOfKind(sc, ivmInt); ok {
				return fmt.Sprintf("%s + %s", ref, o), ivmInt
			}
			return ref, ivmInt
		default:
			return fmt.Sprintf("CASE WHEN %s IS NULL THEN 'none' WHEN %s < 2 THEN 'low' ELSE 'high' END", ref, ref), ivmText
		}
	case ivmText:
		switch g.n(9) {
		case 0:
			return "upper(" + ref + ")", ivmText
		case 1:
			return "lower(" + ref + ")", ivmText
		case 2:
			return "coalesce(" + ref + ", 'none')", ivmText
		case 3:
			return ref + " || '-x'", ivmText
		case 4:
			if o, ok := g.colOfKind(sc, ivmInt); ok {
				return fmt.Sprintf("concat(%s, '/', %s)", ref, o), ivmText
			}
			return "concat(" + ref + ", '!')", ivmText
		case 5:
			return "substr(" + ref + ", 1, 1)", ivmText
		case 6:
			return "length(" + ref + ")", ivmInt
		case 7:
			return fmt.Sprintf("CASE WHEN %s IN ('a', 'ab') THEN 'A' ELSE %s END", ref, ref), ivmText
		default:
			return fmt.Sprintf("nullif(%s, 'b')", ref), ivmText
		}
	case ivmDec:
		switch g.n(8) {
		case 0:
			return ref + " * 2", ivmDec
		case 1:
			return ref + " + 1.25", ivmDec
		case 2:
			return "coalesce(" + ref + ", 0)", ivmNum
		case 3:
			return "round(" + ref + ", 1)", ivmDec
		case 4:
			return "abs(" + ref + ")", ivmDec
		case 5:
			return "-" + ref, ivmDec
		case 6:
			if o, ok := g.colOfKind(sc, ivmInt); ok {
				return fmt.Sprintf("%s * %s", ref, o), ivmNum
			}
			return ref, ivmDec
		default:
			return fmt.Sprintf("CASE WHEN %s > 0 THEN %s ELSE NULL END", ref, ref), ivmDec
		}
	case ivmFloat:
		switch g.n(4) {
		case 0:
			return ref + " * 2", ivmFloat
		case 1:
			return ref + " + 0.5", ivmFloat
		case 2:
			return "coalesce(" + ref + ", 0)", ivmFloat
		default:
			return "abs(" + ref + ")", ivmFloat
		}
	case ivmNum:
		return ref, ivmNum
	case ivmTS:
		switch g.n(2) {
		case 0:
			return "date_trunc('day', " + ref + ")", ivmTS
		default:
			return ref + " + INTERVAL 1 HOUR", ivmTS
		}
	}
	return ref, kind
}

// expr returns a random expression over the scope.
func (g *ivmGen) expr(sc ivmScope) (string, ivmKind) {
	ref, kind := g.anyCol(sc)
	return g.exprOf(sc, ref, kind)
}

// predOf returns a predicate over column ref of kind.
func (g *ivmGen) predOf(ref string, kind ivmKind) string {
	if g.p(0.12) {
		return ref + g.pick(" IS NULL", " IS NOT NULL")
	}
	switch kind {
	case ivmInt:
		switch g.n(6) {
		case 0:
			return fmt.Sprintf("%s > %d", ref, g.n(5))
		case 1:
			return fmt.Sprintf("%s <= %d", ref, g.n(5))
		case 2:
			return fmt.Sprintf("%s IN (%d, %d)", ref, g.n(6), g.n(6))
		case 3:
			return fmt.Sprintf("%s BETWEEN 1 AND 3", ref)
		case 4:
			return fmt.Sprintf("coalesce(%s, 0) %% 2 = 0", ref)
		default:
			return fmt.Sprintf("%s <> %d", ref, g.n(6))
		}
	case ivmText:
		switch g.n(5) {
		case 0:
			return fmt.Sprintf("%s = '%s'", ref, ivmTexts[g.n(len(ivmTexts))])
		case 1:
			return fmt.Sprintf("%s <> '%s'", ref, ivmTexts[g.n(len(ivmTexts))])
		case 2:
			return ref + " LIKE 'a%'"
		case 3:
			return ref + " IN ('a', 'c', 'NULL')"
		default:
			return fmt.Sprintf("%s IS DISTINCT FROM 'b'", ref)
		}
	case ivmDec, ivmNum:
		return fmt.Sprintf("%s %s %s", ref, g.pick("<", ">=", "<>", "="), ivmDecs[g.n(len(ivmDecs))])
	case ivmFloat:
		return fmt.Sprintf("%s %s %s", ref, g.pick("<", ">", "="), ivmFloats[g.n(len(ivmFloats))])
	case ivmTS:
		return fmt.Sprintf("%s %s TIMESTAMP '%s'", ref, g.pick("<", ">=", "="), ivmTSs[g.n(len(ivmTSs))])
	}
	return "TRUE"
}

// pred returns a WHERE condition over the scope.
func (g *ivmGen) pred(sc ivmScope) string {
	ref, kind := g.anyCol(sc)
	p := g.predOf(ref, kind)
	switch g.n(6) {
	case 0:
		return p + " AND " + g.predOf(g.anyCol(sc))
	case 1:
		return "(" + p + " OR " + g.predOf(g.anyCol(sc)) + ")"
	case 2:
		return "NOT (" + p + ")"
	}
	return p
}

// selectList returns 1..max expressions aliased c0, c1, …
func (g *ivmGen) selectList(sc ivmScope, max int) (string, []ivmCol) {
	n := 1 + g.n(max)
	var items []string
	var cols []ivmCol
	for i := 0; i < n; i++ {
		e, k := g.expr(sc)
		name := fmt.Sprintf("c%d", i)
		items = append(items, e+" AS "+name)
		cols = append(cols, ivmCol{name, k})
	}
	return strings.Join(items, ", "), cols
}

// joinCond returns an ON condition between a and b: an equality on columns
// of one kind, sometimes a second equality and a non-equi residual.
func (g *ivmGen) joinCond(a, b ivmRef) (string, bool) {
	kinds := []ivmKind{ivmInt, ivmText}
	if g.p(0.35) {
		kinds[0], kinds[1] = ivmText, ivmInt
	}
	var conds []string
	for _, kind := range kinds {
		prefer := "k"
		if kind == ivmText {
			prefer = "g"
		}
		x, ok1 := g.colOf(a, kind, prefer)
		y, ok2 := g.colOf(b, kind, prefer)
		if ok1 && ok2 {
			conds = append(conds, x+" = "+y)
			if g.p(0.7) {
				break
			}
		}
	}
	if len(conds) == 0 {
		return "", false
	}
	if g.p(0.35) {
		sc := ivmScope{a, b}
		switch g.n(4) {
		case 0:
			if x, ok := g.colOf(a, ivmDec, "d"); ok {
				if y, ok := g.colOf(b, ivmDec, "d"); ok {
					conds = append(conds, x+" < "+y)
				}
			}
		case 1:
			if x, ok := g.colOf(a, ivmInt, "id"); ok {
				if y, ok := g.colOf(b, ivmInt, "id"); ok {
					conds = append(conds, x+" <> "+y)
				}
			}
		case 2:
			if x, ok := g.colOf(a, ivmInt, "v"); ok {
				if y, ok := g.colOf(b, ivmInt, "v"); ok {
					conds = append(conds, x+" + "+y+" > 0")
				}
			}
		default:
			conds = append(conds, g.predOf(g.anyCol(sc[1:])))
		}
	}
	return strings.Join(conds, " AND "), true
}

// ---- aggregates ----

// agg returns an aggregate over the scope (SUM/AVG never over doubles) and
// its kind.
func (g *ivmGen) agg(sc ivmScope) (string, ivmKind) {
	switch g.n(7) {
	case 0:
		return "count(*)", ivmInt
	case 1:
		ref, _ := g.anyCol(sc)
		return "count(" + ref + ")", ivmInt
	case 2, 3:
		kind := ivmInt
		if g.p(0.5) {
			kind = ivmDec
		}
		ref, ok := g.colOfKind(sc, kind)
		if !ok {
			return "count(*)", ivmInt
		}
		e, k := g.exprOf(sc, ref, kind)
		if k != ivmInt && k != ivmDec {
			e, k = ref, kind
		}
		if g.p(0.5) {
			return "sum(" + e + ")", k
		}
		return "avg(" + e + ")", ivmNum
	default:
		ref, kind, ok := g.keyCol(sc)
		if !ok {
			return "count(*)", ivmInt
		}
		return g.pick("min", "max") + "(" + ref + ")", kind
	}
}

// aggList returns 1..max aggregates aliased from c<first>.
func (g *ivmGen) aggList(sc ivmScope, first, max int) ([]string, []ivmCol) {
	n := 1 + g.n(max)
	var items []string
	var cols []ivmCol
	for i := 0; i < n; i++ {
		e, k := g.agg(sc)
		name := fmt.Sprintf("c%d", first+i)
		items = append(items, e+" AS "+name)
		cols = append(cols, ivmCol{name, k})
	}
	return items, cols
}

func (g *ivmGen) having(sc ivmScope) string {
	switch g.n(4) {
	case 0:
		return fmt.Sprintf("count(*) > %d", g.n(3))
	case 1:
		if ref, ok := g.colOfKind(sc, ivmInt); ok {
			return fmt.Sprintf("sum(%s) > %d", ref, g.n(10)-3)
		}
		return "count(*) >= 1"
	case 2:
		ref, _ := g.anyCol(sc)
		return "min(" + ref + ") IS NOT NULL"
	default:
		ref, _ := g.anyCol(sc)
		return "count(" + ref + ") < count(*)"
	}
}

// groupQuery groups sc (already in FROM text from) by keys.
func (g *ivmGen) groupQuery(sc ivmScope, from string, keys []string, keyKinds []ivmKind, useOrdinal bool) ivmQuery {
	var items []string
	var cols []ivmCol
	var group []string
	for i, k := range keys {
		name := fmt.Sprintf("c%d", i)
		items = append(items, k+" AS "+name)
		cols = append(cols, ivmCol{name, keyKinds[i]})
		if useOrdinal {
			group = append(group, fmt.Sprint(i+1))
		} else {
			group = append(group, k)
		}
	}
	aggs, acols := g.aggList(sc, len(keys), 3)
	items = append(items, aggs...)
	cols = append(cols, acols...)
	q := "SELECT " + strings.Join(items, ", ") + " FROM " + from
	if g.p(0.3) {
		q += " WHERE " + g.pred(sc)
	}
	if len(group) > 0 {
		q += " GROUP BY " + strings.Join(group, ", ")
		if g.p(0.3) {
			q += " HAVING " + g.having(sc)
		}
	}
	return ivmQuery{sql: q, cols: cols, incr: true}
}

// ---- shapes ----

func (g *ivmGen) genProject() (ivmQuery, bool) {
	a := ivmRef{"a", g.pickSource()}
	sc := ivmScope{a}
	list, cols := g.selectList(sc, 4)
	q := "SELECT " + list + " FROM " + a.src.from + " AS a"
	if g.p(0.7) {
		q += " WHERE " + g.pred(sc)
	}
	return ivmQuery{sql: q, cols: cols, incr: true}, true
}

func (g *ivmGen) genJoinInner() (ivmQuery, bool) {
	a := ivmRef{"a", g.pickSource()}
	b := ivmRef{"b", g.tableSource()}
	on, ok := g.joinCond(a, b)
	if !ok {
		return ivmQuery{}, false
	}
	sc := ivmScope{a, b}
	list, cols := g.selectList(sc, 4)
	var q string
	if g.p(0.25) {
		q = fmt.Sprintf("SELECT %s FROM %s AS a, %s AS b WHERE %s", list, a.src.from, b.src.from, on)
		if g.p(0.4) {
			q += " AND " + g.pred(sc)
		}
	} else {
		q = fmt.Sprintf("SELECT %s FROM %s AS a %s %s AS b ON %s", list, a.src.from, g.pick("JOIN", "INNER JOIN"), b.src.from, on)
		if g.p(0.4) {
			q += " WHERE " + g.pred(sc)
		}
	}
	return ivmQuery{sql: q, cols: cols, incr: true}, true
}

func (g *ivmGen) genJoinThree() (ivmQuery, bool) {
	a := ivmRef{"a", g.pickSource()}
	b := ivmRef{"b", g.tableSource()}
	c := ivmRef{"c", g.tableSource()}
	on1, ok1 := g.joinCond(a, b)
	left := b
	if g.p(0.4) {
		left = a
	}
	on2, ok2 := g.joinCond(left, c)
	if !ok1 || !ok2 {
		return ivmQuery{}, false
	}
	sc := ivmScope{a, b, c}
	list, cols := g.selectList(sc, 4)
	q := fmt.Sprintf("SELECT %s FROM %s AS a JOIN %s AS b ON %s JOIN %s AS c ON %s", list, a.src.from, b.src.from, on1, c.src.from, on2)
	// Keep three-way results small.
	q += " WHERE " + g.pred(sc)
	return ivmQuery{sql: q, cols: cols, incr: true}, true
}

func (g *ivmGen) genJoinOuter() (ivmQuery, bool) {
	a := ivmRef{"a", g.pickSource()}
	b := ivmRef{"b", g.tableSource()}
	on, ok := g.joinCond(a, b)
	if !ok {
		return ivmQuery{}, false
	}
	kind := g.pick("LEFT", "LEFT OUTER", "RIGHT", "FULL OUTER", "FULL")
	sc := ivmScope{a, b}
	list, cols := g.selectList(sc, 4)
	q := fmt.Sprintf("SELECT %s FROM %s AS a %s JOIN %s AS b ON %s", list, a.src.from, kind, b.src.from, on)
	switch g.n(5) {
	case 0:
		q += " WHERE " + g.pred(sc)
	case 1:
		// Rows without a partner (an anti-join written as an outer join).
		side := b
		if strings.HasPrefix(kind, "RIGHT") {
			side = a
		}
		ref, _ := g.anyCol(ivmScope{side})
		q += " WHERE " + ref + " IS NULL"
	}
	return ivmQuery{sql: q, cols: cols, incr: true}, true
}

func (g *ivmGen) genUnionAll() (ivmQuery, bool) {
	sig := [][]ivmKind{{ivmInt}, {ivmInt, ivmText}, {ivmText, ivmDec}, {ivmInt, ivmText, ivmDec}}[g.n(4)]
	n := 2 + g.n(2)
	var branches []string
	var cols []ivmCol
	for i := 0; i < n; i++ {
		a := ivmRef{"x", g.tableSource()}
		sc := ivmScope{a}
		var items []string
		for j, kind := range sig {
			ref, _ := g.colOf(a, kind, "")
			e, k := g.exprOf(sc, ref, kind)
			if k != kind {
				e = ref
			}
			if i == 0 {
				items = append(items, fmt.Sprintf("%s AS c%d", e, j))
				cols = append(cols, ivmCol{fmt.Sprintf("c%d", j), kind})
			} else {
				items = append(items, e)
			}
		}
		if i == 0 {
			cols = append(cols, ivmCol{fmt.Sprintf("c%d", len(sig)), ivmText})
			items = append(items, fmt.Sprintf("'b%d' AS c%d", i, len(sig)))
		} else {
			items = append(items, fmt.Sprintf("'b%d'", i))
		}
		br := "SELECT " + strings.Join(items, ", ") + " FROM " + a.src.from + " AS x"
		if g.p(0.6) {
			br += " WHERE " + g.pred(sc)
		}
		branches = append(branches, br)
	}
	return ivmQuery{sql: strings.Join(branches, " UNION ALL "), cols: cols, incr: true}, true
}

// inner returns a filtered projection of a source as a derived source (a
// CTE or a derived table) named name.
func (g *ivmGen) inner(from func(string) string) (*ivmSrc, string) {
	a := ivmRef{"a", g.pickSource()}
	sc := ivmScope{a}
	list, cols := g.selectList(sc, 4)
	if _, ok := colKind(cols, ivmInt); !ok && g.p(0.8) {
		// Most consumers join or group on an integer column.
		ref, _ := g.colOf(a, ivmInt, "k")
		if ref != "" {
			list += fmt.Sprintf(", %s AS c%d", ref, len(cols))
			cols = append(cols, ivmCol{fmt.Sprintf("c%d", len(cols)), ivmInt})
		}
	}
	if !hasKeyCol(cols) {
		// Consumers group on it.
		ref, kind := g.groupKey(a)
		list += fmt.Sprintf(", %s AS c%d", ref, len(cols))
		cols = append(cols, ivmCol{fmt.Sprintf("c%d", len(cols)), kind})
	}
	q := "SELECT " + list + " FROM " + a.src.from + " AS a"
	if g.p(0.6) {
		q += " WHERE " + g.pred(sc)
	}
	return &ivmSrc{from: from(q), cols: cols}, q
}

func colKind(cols []ivmCol, kind ivmKind) (string, bool) {
	for _, c := range cols {
		if c.kind == kind {
			return c.name, true
		}
	}
	return "", false
}

// outer builds a query over the derived source s: a projection, a join
// with a table or a grouping.
func (g *ivmGen) outer(s *ivmSrc) (ivmQuery, bool) {
	a := ivmRef{"s", s}
	switch g.n(3) {
	case 0:
		sc := ivmScope{a}
		list, cols := g.selectList(sc, 3)
		q := "SELECT " + list + " FROM " + s.from + " AS s"
		if g.p(0.5) {
			q += " WHERE " + g.pred(sc)
		}
		return ivmQuery{sql: q, cols: cols, incr: true}, true
	case 1:
		b := ivmRef{"b", g.tableSource()}
		on, ok := g.joinCond(a, b)
		if !ok {
			return ivmQuery{}, false
		}
		sc := ivmScope{a, b}
		list, cols := g.selectList(sc, 4)
		return ivmQuery{sql: fmt.Sprintf("SELECT %s FROM %s AS s %s %s AS b ON %s", list, s.from, g.pick("JOIN", "LEFT JOIN"), b.src.from, on), cols: cols, incr: true}, true
	default:
		sc := ivmScope{a}
		ref, kind := g.groupKey(a)
		return g.groupQuery(sc, s.from+" AS s", []string{ref}, []ivmKind{kind}, g.p(0.2)), true
	}
}

func (g *ivmGen) genCTE() (ivmQuery, bool) {
	s, body := g.inner(func(string) string { return "w" })
	q, ok := g.outer(s)
	if !ok {
		return q, false
	}
	q.sql = "WITH w AS (" + body + ") " + q.sql
	return q, true
}

// genCTEReused reads one CTE twice: joined with its own aggregate.
func (g *ivmGen) genCTEReused() (ivmQuery, bool) {
	s, body := g.inner(func(string) string { return "w1" })
	key, ok := colKind(s.cols, ivmInt)
	if !ok {
		key, ok = colKind(s.cols, ivmText)
	}
	if !ok {
		return ivmQuery{}, false
	}
	w2 := fmt.Sprintf("SELECT %s AS k2, count(*) AS n FROM w1 GROUP BY %s", key, key)
	sel, cols := g.selectList(ivmScope{{"x", s}}, 2)
	cols = append(cols, ivmCol{fmt.Sprintf("c%d", len(cols)), ivmInt})
	q := fmt.Sprintf("WITH w1 AS (%s), w2 AS (%s) SELECT %s, y.n AS c%d FROM w1 AS x JOIN w2 AS y ON x.%s = y.k2", body, w2, sel, len(cols)-1, key)
	if g.p(0.4) {
		q += fmt.Sprintf(" WHERE y.n > %d", g.n(3))
	}
	return ivmQuery{sql: q, cols: cols, incr: true}, true
}

func (g *ivmGen) genDerived() (ivmQuery, bool) {
	if g.p(0.4) {
		// An aggregate in FROM, joined with a table.
		a := ivmRef{"a", g.pickSource()}
		sc := ivmScope{a}
		ref, ok := g.colOf(a, ivmInt, "k")
		if !ok {
			return ivmQuery{}, false
		}
		inner := g.groupQuery(sc, a.src.from+" AS a", []string{ref}, []ivmKind{ivmInt}, false)
		s := &ivmSrc{from: "(" + inner.sql + ")", cols: inner.cols}
		b := ivmRef{"b", g.tableSource()}
		sel, cols := g.selectList(ivmScope{{"s", s}, b}, 4)
		bk, _ := g.colOf(b, ivmInt, "k")
		q := fmt.Sprintf("SELECT %s FROM %s AS s %s %s AS b ON s.c0 = %s", sel, s.from, g.pick("JOIN", "LEFT JOIN", "RIGHT JOIN"), b.src.from, bk)
		return ivmQuery{sql: q, cols: cols, incr: true}, true
	}
	s, _ := g.inner(func(q string) string { return "(" + q + ")" })
	return g.outer(s)
}

func (g *ivmGen) genSemiAnti() (ivmQuery, bool) {
	a := ivmRef{"a", g.pickSource()}
	b := ivmRef{"b", g.tableSource()}
	sc := ivmScope{a}
	list, cols := g.selectList(sc, 3)
	kind := ivmInt
	if g.p(0.3) {
		kind = ivmText
	}
	x, ok1 := g.colOf(a, kind, "k")
	y, ok2 := g.colOf(b, kind, "k")
	if kind == ivmText {
		x, ok1 = g.colOf(a, kind, "g")
		y, ok2 = g.colOf(b, kind, "g")
	}
	if !ok1 || !ok2 {
		return ivmQuery{}, false
	}
	var cond string
	bp := ""
	if g.p(0.5) {
		bp = " AND " + g.predOf(g.anyCol(ivmScope{b}))
	}
	switch g.n(4) {
	case 0:
		cond = fmt.Sprintf("EXISTS (SELECT 1 FROM %s AS b WHERE %s = %s%s)", b.src.from, y, x, bp)
	case 1:
		cond = fmt.Sprintf("NOT EXISTS (SELECT 1 FROM %s AS b WHERE %s = %s%s)", b.src.from, y, x, bp)
	case 2:
		cond = fmt.Sprintf("%s IN (SELECT %s FROM %s AS b WHERE TRUE%s)", x, y, b.src.from, bp)
	default:
		cond = fmt.Sprintf("%s NOT IN (SELECT %s FROM %s AS b WHERE TRUE%s)", x, y, b.src.from, bp)
	}
	q := "SELECT " + list + " FROM " + a.src.from + " AS a WHERE " + cond
	if g.p(0.3) {
		q += " AND " + g.pred(sc)
	}
	return ivmQuery{sql: q, cols: cols}, true
}

// groupKey returns a grouping column of a (small domains: k, g, ts, v, or
// any column of a view).
func (g *ivmGen) groupKey(a ivmRef) (string, ivmKind) {
	if a.src.table != nil {
		for tries := 0; tries < 4; tries++ {
			c := a.src.cols[g.n(len(a.src.cols))]
			if c.name != "id" && c.name != "d" && c.name != "f" || tries == 3 {
				return a.alias + "." + c.name, c.kind
			}
		}
	}
	if ref, kind, ok := g.keyCol(ivmScope{a}); ok {
		return ref, kind
	}
	// Unreachable: tables always have key columns, a view is chained on
	// only when it has one, and inner() gives every derived source one.
	panic("ivm: a source without a key column")
}

func (g *ivmGen) genGroupCols() (ivmQuery, bool) {
	a := ivmRef{"a", g.pickSource()}
	sc := ivmScope{a}
	n := 1 + g.n(2)
	var keys []string
	var kinds []ivmKind
	for i := 0; i < n; i++ {
		k, kind := g.groupKey(a)
		if i > 0 && k == keys[0] {
			continue
		}
		keys, kinds = append(keys, k), append(kinds, kind)
	}
	return g.groupQuery(sc, a.src.from+" AS a", keys, kinds, g.p(0.2)), true
}

func (g *ivmGen) genGroupExpr() (ivmQuery, bool) {
	a := ivmRef{"a", g.pickSource()}
	sc := ivmScope{a}
	var key string
	var kind ivmKind
	for tries := 0; tries < 5; tries++ {
		ref, k := g.groupKey(a)
		key, kind = g.exprOf(sc, ref, k)
		if kind == ivmNum {
			key, kind = ref, k
		}
		if key != ref {
			break
		}
	}
	return g.groupQuery(sc, a.src.from+" AS a", []string{key}, []ivmKind{kind}, g.p(0.3)), true
}

func (g *ivmGen) genAggGlobal() (ivmQuery, bool) {
	a := ivmRef{"a", g.pickSource()}
	sc := ivmScope{a}
	items, cols := g.aggList(sc, 0, 4)
	if g.p(0.5) {
		items = append([]string{"count(*) AS cn"}, items...)
		cols = append([]ivmCol{{"cn", ivmInt}}, cols...)
	}
	q := "SELECT " + strings.Join(items, ", ") + " FROM " + a.src.from + " AS a"
	if g.p(0.4) {
		q += " WHERE " + g.pred(sc)
	}
	return ivmQuery{sql: q, cols: cols, incr: true}, true
}

func (g *ivmGen) genDistinct() (ivmQuery, bool) {
	a := ivmRef{"a", g.pickSource()}
	sc := ivmScope{a}
	n := 1 + g.n(2)
	var items []string
	var cols []ivmCol
	for i := 0; i < n; i++ {
		ref, kind := g.groupKey(a)
		e, k := g.exprOf(sc, ref, kind)
		if k == ivmNum {
			e, k = ref, kind
		}
		name := fmt.Sprintf("c%d", i)
		items = append(items, e+" AS "+name)
		cols = append(cols, ivmCol{name, k})
	}
	q := "SELECT DISTINCT " + strings.Join(items, ", ") + " FROM " + a.src.from + " AS a"
	if g.p(0.4) {
		q += " WHERE " + g.pred(sc)
	}
	return ivmQuery{sql: q, cols: cols, incr: true}, true
}

func (g *ivmGen) genCountDistinct() (ivmQuery, bool) {
	a := ivmRef{"a", g.pickSource()}
	sc := ivmScope{a}
	var items []string
	var cols []ivmCol
	var group string
	if g.p(0.6) {
		k, kind := g.groupKey(a)
		items = append(items, k+" AS c0")
		cols = append(cols, ivmCol{"c0", kind})
		group = " GROUP BY " + k
	}
	ref, _ := g.groupKey(a)
	items = append(items, "count(DISTINCT "+ref+") AS cd", "count(*) AS cn")
	cols = append(cols, ivmCol{"cd", ivmInt}, ivmCol{"cn", ivmInt})
	if g.p(0.3) {
		if r2, ok := g.colOf(a, ivmInt, "v"); ok {
			items = append(items, "sum(DISTINCT "+r2+") AS sd")
			cols = append(cols, ivmCol{"sd", ivmInt})
		}
	}
	q := "SELECT " + strings.Join(items, ", ") + " FROM " + a.src.from + " AS a"
	if g.p(0.3) {
		q += " WHERE " + g.pred(sc)
	}
	return ivmQuery{sql: q + group, cols: cols, incr: true}, true
}

func (g *ivmGen) genAggJoin() (ivmQuery, bool) {
	a := ivmRef{"a", g.pickSource()}
	b := ivmRef{"b", g.tableSource()}
	on, ok := g.joinCond(a, b)
	if !ok {
		return ivmQuery{}, false
	}
	sc := ivmScope{a, b}
	from := fmt.Sprintf("%s AS a %s %s AS b ON %s", a.src.from, g.pick("JOIN", "LEFT JOIN", "FULL JOIN"), b.src.from, on)
	var keys []string
	var kinds []ivmKind
	if g.p(0.85) {
		side := a
		if g.p(0.4) {
			side = b
		}
		k, kind := g.groupKey(side)
		keys, kinds = []string{k}, []ivmKind{kind}
	}
	return g.groupQuery(sc, from, keys, kinds, false), true
}

// genAggStarJoin is TPC-H Q8's shape: SELECT key, sum(CASE WHEN flag THEN
// volume ELSE 0 END), sum(volume) FROM (SELECT extract(… FROM ts) AS key,
// a.d * (1 - b.d) AS volume, pred AS flag FROM a JOIN b …) GROUP BY key.
// The CASE's values have two scales (4 and 0), so a group that loses its
// last flagged row prints its sum as a fresh group would.
func (g *ivmGen) genAggStarJoin() (ivmQuery, bool) {
	a := ivmRef{"a", g.pickSource()}
	b := ivmRef{"b", g.tableSource()}
	on, ok := g.joinCond(a, b)
	if !ok {
		return ivmQuery{}, false
	}
	sc := ivmScope{a, b}
	ad, ok := g.colOf(a, ivmDec, "d")
	if !ok {
		return ivmQuery{}, false
	}
	key, kind := g.groupKey(a)
	for _, r := range []ivmRef{b, a} {
		if ts, ok := g.colOf(r, ivmTS, "ts"); ok && g.p(0.7) {
			key, kind = "extract("+g.pick("year", "month", "day", "hour", "minute")+" FROM "+ts+")", ivmDec
			break
		}
	}
	vol := g.pick(ad+" * (1 - b.d)", ad+" * b.k - b.d", ad+" - b.d", ad+" * b.d")
	els := g.pick(" ELSE 0", " ELSE 0", " ELSE 1.5", " ELSE s.alt", "")
	inner := fmt.Sprintf("SELECT %s AS key, %s AS vol, %s AS flag, b.k AS alt FROM %s AS a %s %s AS b ON %s", key, vol, g.pred(sc), a.src.from, g.pick("JOIN", "INNER JOIN"), b.src.from, on)
	if g.p(0.4) {
		inner += " WHERE " + g.pred(sc)
	}
	q := fmt.Sprintf("SELECT s.key AS c0, sum(CASE WHEN s.flag THEN s.vol%s END) AS c1, sum(s.vol) AS c2, count(*) AS c3 FROM (%s) AS s GROUP BY s.key", els, inner)
	cols := []ivmCol{{"c0", kind}, {"c1", ivmNum}, {"c2", ivmDec}, {"c3", ivmInt}}
	if g.p(0.3) {
		// Q14: one group, the ratio of the two sums above it.
		q = fmt.Sprintf("SELECT 100.00 * sum(CASE WHEN s.flag THEN s.vol%s END) / nullif(sum(s.vol), 0) AS c0, count(*) AS c1 FROM (%s) AS s", els, inner)
		cols = []ivmCol{{"c0", ivmNum}, {"c1", ivmInt}}
	}
	return ivmQuery{sql: q, cols: cols, incr: true}, true
}

func (g *ivmGen) genMinMax() (ivmQuery, bool) {
	a := ivmRef{"a", g.pickSource()}
	sc := ivmScope{a}
	key, kind := g.groupKey(a)
	items := []string{key + " AS c0"}
	cols := []ivmCol{{"c0", kind}}
	n := 2 + g.n(3)
	for i := 1; i <= n; i++ {
		ref, k, _ := g.keyCol(sc)
		items = append(items, fmt.Sprintf("%s(%s) AS c%d", g.pick("min", "max"), ref, i))
		cols = append(cols, ivmCol{fmt.Sprintf("c%d", i), k})
	}
	q := "SELECT " + strings.Join(items, ", ") + " FROM " + a.src.from + " AS a"
	if g.p(0.2) {
		q += " WHERE " + g.pred(sc)
	}
	q += " GROUP BY " + key
	return ivmQuery{sql: q, cols: cols, incr: true}, true
}

func (g *ivmGen) genAggFloat() (ivmQuery, bool) {
	var withF []*ivmTable
	for _, t := range g.tables {
		if t.has("f") {
			withF = append(withF, t)
		}
	}
	if len(withF) == 0 {
		return ivmQuery{}, false
	}
	s := tableSrc(withF[g.n(len(withF))])
	g.reads = append(g.reads, s)
	a := ivmRef{"a", s}
	items := []string{"sum(a.f) AS c1", "avg(a.f) AS c2", "count(a.f) AS c3"}
	cols := []ivmCol{{"c1", ivmFloat}, {"c2", ivmFloat}, {"c3", ivmInt}}
	q := "FROM " + s.from + " AS a"
	if g.p(0.6) {
		key, kind := g.groupKey(a)
		items = append([]string{key + " AS c0"}, items...)
		cols = append([]ivmCol{{"c0", kind}}, cols...)
		q += " GROUP BY " + key
	}
	return ivmQuery{sql: "SELECT " + strings.Join(items, ", ") + " " + q, cols: cols}, true
}

// genAggFloatPartitioned: a floating-point aggregate grouped by a source
// column and PARTITIONED BY it (R-I1 PARTITION_OVERWRITE: the partitions
// the changes touch are recomputed whole).
func (g *ivmGen) genAggFloatPartitioned() (ivmQuery, bool) {
	var withF []*ivmTable
	for _, t := range g.tables {
		if t.has("f") && t.has("k") {
			withF = append(withF, t)
		}
	}
	if len(withF) == 0 {
		return ivmQuery{}, false
	}
	s := tableSrc(withF[g.n(len(withF))])
	g.reads = append(g.reads, s)
	q := "SELECT a.k AS c0, sum(a.f) AS c1, avg(a.f) AS c2, count(*) AS c3 FROM " + s.from + " AS a"
	if g.p(0.4) {
		q += " WHERE " + g.pred(ivmScope{{"a", s}})
	}
	q += " GROUP BY a.k"
	return ivmQuery{sql: q, cols: []ivmCol{{"c0", ivmInt}, {"c1", ivmFloat}, {"c2", ivmFloat}, {"c3", ivmInt}}, incr: true, clauses: "PARTITIONED BY (c0) "}, true
}

func (g *ivmGen) tableWith(col string) (*ivmSrc, bool) {
	var ts []*ivmTable
	for _, t := range g.tables {
		if t.has(col) {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return nil, false
	}
	s := tableSrc(ts[g.n(len(ts))])
	g.reads = append(g.reads, s)
	return s, true
}

// genTimeFilter compares a timestamp with the refresh's time (R-I5). The
// data's timestamps lie years away from every boundary, so the view and
// the query agree although they are evaluated a moment apart.
func (g *ivmGen) genTimeFilter() (ivmQuery, bool) {
	s, ok := g.tableWith("ts")
	if !ok {
		return ivmQuery{}, false
	}
	a := ivmRef{"a", s}
	sc := ivmScope{a}
	cond := g.pick("a.ts < current_timestamp()", "a.ts < now()", "a.ts <= current_timestamp",
		"a.ts > now() - INTERVAL 3650 DAY", "CAST(a.ts AS DATE) < current_date()", "a.ts > current_date() - INTERVAL 3650 DAY",
		"a.ts > now()")
	if g.p(0.4) {
		cond += " AND " + g.pred(sc)
	}
	if g.p(0.5) {
		key, kind := g.groupKey(a)
		aggs, cols := g.aggList(sc, 1, 3)
		q := fmt.Sprintf("SELECT %s AS c0, %s FROM %s AS a WHERE %s GROUP BY %s", key, strings.Join(aggs, ", "), s.from, cond, key)
		return ivmQuery{sql: q, cols: append([]ivmCol{{"c0", kind}}, cols...), incr: true}, true
	}
	list, cols := g.selectList(sc, 4)
	return ivmQuery{sql: "SELECT " + list + " FROM " + s.from + " AS a WHERE " + cond, cols: cols, incr: true}, true
}

// genWindow draws window functions (R-I2). Every ORDER BY either orders by
// every column of the table or feeds a function that gives ties equal
// values (rank, dense_rank, whole-partition aggregates), so the result is
// the same bag however ties are broken.
func (g *ivmGen) genWindow() (ivmQuery, bool) {
	a := ivmRef{"a", g.tableSource()}
	t := a.src.table
	var all []string
	for _, c := range t.cols {
		all = append(all, "a."+c.name)
	}
	allOrder := strings.Join(all, ", ")
	part, _ := g.groupKey(a)
	over := "PARTITION BY " + part
	incr := true
	if g.p(0.15) {
		// R-I2: a window without PARTITION BY is refreshed in full.
		over, incr = "", false
	}
	fns := []struct {
		sql  string
		kind ivmKind
	}{
		{"count(*) OVER (" + over + ")", ivmInt},
		{"min(a.d) OVER (" + over + ")", ivmDec},
		{"sum(a.k) OVER (" + over + ")", ivmInt},
		{"rank() OVER (" + over + " ORDER BY a.d)", ivmInt},
		{"dense_rank() OVER (" + over + " ORDER BY a.k DESC, a.g)", ivmInt},
		{"row_number() OVER (" + over + " ORDER BY " + allOrder + ")", ivmInt},
		// Ties in ORDER BY: peers are ordered by their whole rows, so the
		// numbering does not depend on the order rows are read in.
		{"row_number() OVER (" + over + " ORDER BY a.k)", ivmInt},
		{"lead(a.k, 1, -1) OVER (" + over + " ORDER BY a.g NULLS FIRST)", ivmInt},
		{"lag(a.d) OVER (" + over + " ORDER BY " + allOrder + ")", ivmDec},
		{"sum(a.d) OVER (" + over + " ORDER BY " + allOrder + " ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)", ivmDec},
	}
	sc := ivmScope{a}
	list, cols := g.selectList(sc, 2)
	n := 1 + g.n(2)
	for i := 0; i < n; i++ {
		f := fns[g.n(len(fns))]
		name := fmt.Sprintf("c%d", len(cols))
		list += ", " + f.sql + " AS " + name
		cols = append(cols, ivmCol{name, f.kind})
	}
	q := "SELECT " + list + " FROM " + t.name + " AS a"
	if g.p(0.3) {
		q += " WHERE " + g.pred(sc)
	}
	if g.p(0.3) {
		q += " QUALIFY " + g.pick("rank() OVER ("+over+" ORDER BY a.d) = 1", "count(*) OVER ("+over+") > 1")
	}
	return ivmQuery{sql: q, cols: cols, incr: incr}, true
}

// view draws the next view's query: usually a fresh shape over tables,
// sometimes (views on views, R-M7) a shape over an existing view.
func (g *ivmGen) view(name string) *ivmView {
	for {
		g.reads = nil
		shape := ivmShapes[g.n(len(ivmShapes))]
		if shape.gate != nil && !*shape.gate {
			continue
		}
		var up *ivmView
		if shape.chain && len(g.views) > 0 && g.p(0.35) {
			up = g.views[g.n(len(g.views))]
			if !hasKeyCol(up.cols) {
				continue
			}
			g.chainFrom = up
		}
		q, ok := shape.gen(g)
		g.chainFrom = nil
		if !ok {
			continue
		}
		v := &ivmView{name: name, shape: shape.name, query: q.sql, clauses: q.clauses, cols: q.cols, incr: shape.incr && q.incr}
		if up != nil {
			v.shape = "chain/" + shape.name
			v.incr = v.incr && up.incr
		}
		seen := map[string]bool{}
		for _, s := range g.reads {
			switch {
			case s.view != nil:
				v.views = append(v.views, s.view)
				for _, t := range s.view.tables {
					if !seen[t.name] {
						seen[t.name] = true
						v.tables = append(v.tables, t)
					}
				}
			case s.table != nil && !seen[s.table.name]:
				seen[s.table.name] = true
				v.tables = append(v.tables, s.table)
			}
		}
		g.views = append(g.views, v)
		return v
	}
}

// ---- batches ----

// ivmBatch is one batch of changes.
type ivmBatch struct {
	stmts []string
	// small: every statement touches a few rows (point predicates, short
	// inserts); no TRUNCATE, no change of table features.
	small bool
	// features: the batch changes a table's feature properties.
	features bool
}

// rowPred picks rows of t: a point (one row, by its rank), a group, or a
// range. point reports whether it is a point predicate.
func (g *ivmGen) rowPred(t *ivmTable) (pred string, point bool) {
	switch g.n(10) {
	case 0, 1, 2, 3:
		return fmt.Sprintf("id = (SELECT id FROM %s ORDER BY id LIMIT 1 OFFSET %d)", t.name, g.n(12)), true
	case 4, 5:
		if g.p(0.2) {
			return "k IS NULL", false
		}
		return fmt.Sprintf("k = %d", g.n(6)), false
	case 6:
		if g.p(0.25) {
			return "g IS NULL", false
		}
		return fmt.Sprintf("g = '%s'", ivmTexts[g.n(len(ivmTexts))]), false
	case 7:
		return fmt.Sprintf("k = %d AND g IS NOT DISTINCT FROM '%s'", g.n(6), ivmTexts[g.n(3)]), true
	case 8:
		return fmt.Sprintf("id %% %d = %d", 3+g.n(3), g.n(3)), false
	default:
		return fmt.Sprintf("d %s %s", g.pick("<", ">"), ivmDecs[g.n(len(ivmDecs))]), false
	}
}

// shift returns an offset that moves ids of t above every id ever used.
func (t *ivmTable) shift() int {
	m := t.hiID + 1
	t.hiID = 2*t.hiID + 1
	return m
}

// stmt draws one DML statement and whether it touches few rows.
func (g *ivmGen) stmt() (string, bool) {
	t := g.table()
	pred, point := g.rowPred(t)
	switch g.n(16) {
	case 0, 1, 2:
		n := 1 + g.n(3)
		return g.insertRows(t, n), true
	case 3:
		// Duplicates of existing rows (new ids where id is the key).
		if t.pk {
			if t.hiID > 50_000_000 {
				return g.insertRows(t, 1), true
			}
			var sel []string
			m := t.shift()
			for _, c := range t.cols {
				if c.name == "id" {
					sel = append(sel, fmt.Sprintf("id + %d", m))
				} else {
					sel = append(sel, c.name)
				}
			}
			return fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s WHERE %s", t.name, t.colList(), strings.Join(sel, ", "), t.name, pred), point
		}
		return fmt.Sprintf("INSERT INTO %s SELECT * FROM %s WHERE %s", t.name, t.name, pred), point
	case 4, 5:
		var sets []string
		for _, c := range t.cols {
			if !g.p(0.4) {
				continue
			}
			switch c.name {
			case "d":
				sets = append(sets, "d = "+g.pick("d + 1.25", "d - 0.50", g.valD()))
			case "v":
				sets = append(sets, "v = "+g.pick("v + 1", "-v", g.valV()))
			case "f":
				sets = append(sets, "f = "+g.pick("f * 2", "f + 0.5", g.valF()))
			case "ts":
				sets = append(sets, "ts = "+g.pick("ts + INTERVAL 1 DAY", g.valTS()))
			}
		}
		if len(sets) == 0 {
			sets = []string{"d = " + g.valD()}
		}
		return fmt.Sprintf("UPDATE %s SET %s WHERE %s", t.name, strings.Join(sets, ", "), pred), point
	case 6, 7:
		// Join and group keys move.
		set := g.pick("k = CASE WHEN k IS NULL THEN 0 ELSE (k + 1) % 6 END", "k = NULL", "k = "+fmt.Sprint(g.n(6)),
			"g = "+g.valG(), "g = upper(g)", "k = "+fmt.Sprint(g.n(6))+", g = "+g.valG())
		return fmt.Sprintf("UPDATE %s SET %s WHERE %s", t.name, set, pred), point
	case 8:
		if t.pk && t.hiID <= 50_000_000 {
			return fmt.Sprintf("UPDATE %s SET id = id + %d WHERE %s", t.name, t.shift(), pred), point
		}
		return fmt.Sprintf("UPDATE %s SET k = %d WHERE %s", t.name, g.n(6), pred), point
	case 9, 10, 11:
		return fmt.Sprintf("DELETE FROM %s WHERE %s", t.name, pred), point
	case 12, 13:
		// The current extreme of each group, or of the table.
		col := "d"
		if t.has("v") && g.p(0.3) {
			col = "v"
		} else if t.has("ts") && g.p(0.3) {
			col = "ts"
		}
		agg := g.pick("min", "max")
		if g.p(0.5) {
			return fmt.Sprintf("DELETE FROM %s WHERE %s = (SELECT %s(%s) FROM %s)", t.name, col, agg, col, t.name), false
		}
		return fmt.Sprintf("DELETE FROM %s WHERE %s = (SELECT %s(x.%s) FROM %s AS x WHERE x.k = %s.k)", t.name, col, agg, col, t.name, t.name), false
	case 14:
		// Every row of a group.
		if g.p(0.3) {
			return fmt.Sprintf("DELETE FROM %s WHERE k IS NULL", t.name), false
		}
		return fmt.Sprintf("DELETE FROM %s WHERE k = %d", t.name, g.n(6)), false
	default:
		// Touches nothing.
		return g.pick(
			fmt.Sprintf("DELETE FROM %s WHERE id < 0", t.name),
			fmt.Sprintf("UPDATE %s SET k = k WHERE FALSE", t.name),
			fmt.Sprintf("INSERT INTO %s SELECT * FROM %s WHERE 1 = 0", t.name, t.name),
		), true
	}
}

// nextBatch draws batch number b.
func (g *ivmGen) nextBatch(b int) ivmBatch {
	switch x := g.n(100); {
	case x < 4:
		return ivmBatch{small: true} // an empty batch: every refresh is NO_OP
	case x < 8:
		t := g.table()
		stmts := []string{g.pick("TRUNCATE ", "TRUNCATE TABLE ") + t.name}
		if g.p(0.5) {
			stmts = append(stmts, g.insertRows(t, 1+g.n(4)))
		}
		return ivmBatch{stmts: stmts}
	case x < 11:
		// The change data feed goes off or comes back (R-I3: fallback).
		t := g.table()
		t.cdf = !t.cdf
		t.cdfChangedBatch = b
		s, _ := g.stmt()
		return ivmBatch{stmts: []string{fmt.Sprintf("ALTER TABLE %s SET TBLPROPERTIES (delta.enableChangeDataFeed = %v)", t.name, t.cdf), s}, features: true}
	}
	n := 1 + g.n(4)
	bt := ivmBatch{small: n <= 3}
	for i := 0; i < n; i++ {
		s, few := g.stmt()
		bt.small = bt.small && few
		bt.stmts = append(bt.stmts, s)
	}
	switch x := g.n(100); {
	case x < 25:
		bt.stmts = append(append([]string{"BEGIN"}, bt.stmts...), "COMMIT")
	case x < 30:
		// Rolled back: touches nothing.
		bt.stmts = append(append([]string{"BEGIN"}, bt.stmts...), "ROLLBACK")
	}
	return bt
}

// scalarOver is an uncorrelated scalar aggregate over a table:
// (SELECT agg(b.col) FROM t AS b [WHERE …]).
func (g *ivmGen) scalarOver() (string, bool) {
	b := ivmRef{"b", g.tableSource()}
	ref, ok := g.colOfKind(ivmScope{b}, ivmInt)
	if !ok {
		return "", false
	}
	agg := g.pick("avg(%s)", "max(%s)", "min(%s)", "sum(%s) / 4", "count(%s) - 2")
	q := "(SELECT " + fmt.Sprintf(agg, ref) + " FROM " + b.src.from + " AS b"
	if g.p(0.4) {
		q += " WHERE " + g.pred(ivmScope{b})
	}
	return q + ")", true
}

func (g *ivmGen) genScalarFilter() (ivmQuery, bool) {
	a := ivmRef{"a", g.pickSource()}
	sc := ivmScope{a}
	ref, ok := g.colOfKind(sc, ivmInt)
	sub, ok2 := g.scalarOver()
	if !ok || !ok2 {
		return ivmQuery{}, false
	}
	list, cols := g.selectList(sc, 4)
	q := "SELECT " + list + " FROM " + a.src.from + " AS a WHERE " + ref + " " + g.pick(">", ">=", "=", "<") + " " + sub
	if g.p(0.3) {
		q += " AND " + g.pred(sc)
	}
	// A comparison on the primary key becomes a key range of the scan,
	// whose bound the refresh cannot differentiate yet (a scalar subquery
	// in a scan's range blocks it, SUBQUERY_EXPRESSION): only a Filter
	// against the scalar is incremental.
	keyRange := a.src.table != nil && a.src.table.pk && ref == "a.id"
	return ivmQuery{sql: q, cols: cols, incr: !keyRange}, true
}

func (g *ivmGen) genCorrelatedScalar() (ivmQuery, bool) {
	a := ivmRef{"a", g.pickSource()}
	b := ivmRef{"b", g.tableSource()}
	sc := ivmScope{a}
	ref, ok1 := g.colOfKind(sc, ivmInt)
	x, ok2 := g.colOf(a, ivmInt, "k")
	y, ok3 := g.colOf(b, ivmInt, "k")
	v, ok4 := g.colOfKind(ivmScope{b}, ivmInt)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return ivmQuery{}, false
	}
	sub := "(SELECT " + fmt.Sprintf(g.pick("avg(%s)", "sum(%s) / 2", "max(%s)", "min(%s)"), v) + " FROM " + b.src.from + " AS b WHERE " + y + " = " + x
	if g.p(0.4) {
		sub += " AND " + g.pred(ivmScope{b})
	}
	cond := ref + " " + g.pick("<", ">=") + " " + sub + ")"
	if g.p(0.3) {
		cond += " AND " + g.pred(sc)
	}
	if g.p(0.4) {
		// Q17: an aggregate over the filtered rows.
		q := "SELECT count(*) AS c0, sum(" + ref + ") AS c1 FROM " + a.src.from + " AS a WHERE " + cond
		return ivmQuery{sql: q, cols: []ivmCol{{name: "c0", kind: ivmInt}, {name: "c1", kind: ivmInt}}}, true
	}
	list, cols := g.selectList(sc, 4)
	return ivmQuery{sql: "SELECT " + list + " FROM " + a.src.from + " AS a WHERE " + cond, cols: cols}, true
}

func (g *ivmGen) genHavingScalar() (ivmQuery, bool) {
	a := ivmRef{"a", g.pickSource()}
	sc := ivmScope{a}
	ref, ok := g.colOfKind(sc, ivmInt)
	sub, ok2 := g.scalarOver()
	if !ok || !ok2 {
		return ivmQuery{}, false
	}
	key, kind := g.groupKey(a)
	q := fmt.Sprintf("SELECT %s AS g, sum(%s) AS s, count(*) AS n FROM %s AS a GROUP BY %s HAVING sum(%s) %s %s",
		key, ref, a.src.from, key, ref, g.pick(">", ">=", "<"), sub)
	return ivmQuery{sql: q, cols: []ivmCol{{"g", kind}, {"s", ivmInt}, {"n", ivmInt}}, incr: true}, true
}

// grouped draws a source, an integer column of it to aggregate and a
// group key.
func (g *ivmGen) grouped() (a ivmRef, ref, key string, kind ivmKind, ok bool) {
	a = ivmRef{"a", g.pickSource()}
	if ref, ok = g.colOfKind(ivmScope{a}, ivmInt); !ok {
		return a, "", "", kind, false
	}
	key, kind = g.groupKey(a)
	return a, ref, key, kind, true
}

func (g *ivmGen) genExtremeOfGroups() (ivmQuery, bool) {
	a, ref, key, kind, ok := g.grouped()
	if !ok {
		return ivmQuery{}, false
	}
	sc := ivmScope{a}
	where := ""
	if g.p(0.5) {
		where = " WHERE " + g.pred(sc)
	}
	r := fmt.Sprintf("SELECT %s AS g, sum(%s) AS s, count(*) AS n FROM %s AS a%s GROUP BY %s", key, ref, a.src.from, where, key)
	cond := fmt.Sprintf(g.pick("r.s = (SELECT %s(s) FROM r)", "r.s >= (SELECT %s(s) FROM r) - 2", "r.n = (SELECT %s(n) FROM r)"), g.pick("max", "min"))
	q := fmt.Sprintf("WITH r AS (%s) SELECT r.g AS c0, r.s AS c1, r.n AS c2 FROM r WHERE %s", r, cond)
	return ivmQuery{sql: q, cols: []ivmCol{{"c0", kind}, {"c1", ivmInt}, {"c2", ivmInt}}, incr: true}, true
}

func (g *ivmGen) genAggOfGroups() (ivmQuery, bool) {
	a, ref, key, _, ok := g.grouped()
	if !ok {
		return ivmQuery{}, false
	}
	from := a.src.from + " AS a"
	count := "count(*)"
	if b := (ivmRef{"b", g.tableSource()}); g.p(0.5) {
		// Q13: customers LEFT JOIN orders, counting each one's orders.
		if on, ok := g.joinCond(a, b); ok {
			from += " LEFT JOIN " + b.src.from + " AS b ON " + on
			if g.p(0.5) {
				from += " AND " + g.pred(ivmScope{b})
			}
			c, _ := g.anyCol(ivmScope{b})
			count = "count(" + c + ")"
		}
	}
	where := ""
	if g.p(0.4) {
		where = " WHERE " + g.pred(ivmScope{a})
	}
	inner := fmt.Sprintf("SELECT %s AS g, %s AS n, sum(%s) AS s FROM %s%s GROUP BY %s", key, count, ref, from, where, key)
	outer := g.pick("t.n", "t.s", "t.n % 3")
	q := fmt.Sprintf("SELECT %s AS c0, count(*) AS c1, sum(t.s) AS c2 FROM (%s) AS t GROUP BY %s", outer, inner, outer)
	return ivmQuery{sql: q, cols: []ivmCol{{"c0", ivmInt}, {"c1", ivmInt}, {"c2", ivmInt}}, incr: true}, true
}

// orderLimit is ORDER BY over the first n output columns (all of them
// usually, so ties are rare; fewer sometimes) and LIMIT k.
func (g *ivmGen) orderLimit(n int) string {
	if n > 1 && g.p(0.3) {
		n = 1 + g.n(n-1)
	}
	var keys []string
	for i := 1; i <= n; i++ {
		keys = append(keys, fmt.Sprintf("%d%s", i, g.pick("", " DESC", " NULLS FIRST", " DESC NULLS LAST")))
	}
	return fmt.Sprintf(" ORDER BY %s LIMIT %d", strings.Join(keys, ", "), 1+g.n(6))
}

func (g *ivmGen) genTopK() (ivmQuery, bool) {
	a := ivmRef{"a", g.pickSource()}
	sc := ivmScope{a}
	list, cols := g.selectList(sc, 4)
	q := "SELECT " + list + " FROM " + a.src.from + " AS a"
	if g.p(0.5) {
		q += " WHERE " + g.pred(sc)
	}
	return ivmQuery{sql: q + g.orderLimit(len(cols)), cols: cols}, true
}

func (g *ivmGen) genTopKGroup() (ivmQuery, bool) {
	a, ref, key, kind, ok := g.grouped()
	if !ok {
		return ivmQuery{}, false
	}
	q := fmt.Sprintf("SELECT sum(%s) AS s, %s AS g, count(*) AS n FROM %s AS a GROUP BY %s", ref, key, a.src.from, key)
	return ivmQuery{sql: q + g.orderLimit(2), cols: []ivmCol{{"s", ivmInt}, {"g", kind}, {"n", ivmInt}}}, true
}
