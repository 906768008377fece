package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/mvserver/mvserver/sql/types"
)

// NodeStats is what EXPLAIN ANALYZE shows of a node: the rows it produced,
// how many times it ran and the time spent in it and below.
type NodeStats struct {
	Rows, Loops int64
	Time        time.Duration
}

// Explain renders a plan as EXPLAIN prints it, one line per entry, in
// PostgreSQL's layout (a node per line, its details indented below it,
// children after "->"). stats, when set, adds each node's actual rows,
// loops and time (EXPLAIN ANALYZE).
func Explain(n Node, stats func(Node) *NodeStats) []string {
	e := &explainer{stats: stats}
	e.node(n, 0, true)
	return e.lines
}

// ExplainCosts is Explain with each node's estimated costs, rows and row
// width after its title, as PostgreSQL's EXPLAIN shows them unless COSTS
// OFF (explain_cost.go).
func ExplainCosts(n Node, stats func(Node) *NodeStats, est *Estimator) []string {
	e := &explainer{stats: stats, costs: newCoster(est)}
	e.node(n, 0, true)
	return e.lines
}

type explainer struct {
	lines []string
	stats func(Node) *NodeStats
	costs *coster
	// shown are the subqueries whose plans were printed (by ID).
	shown map[int]bool
	// probes are the right sides of semi and anti joins answered from
	// keys alone (key_probe.go): shown as PostgreSQL's Index Only Scan.
	probes map[Node]*Scan
}

func (e *explainer) node(n Node, depth int, top bool) {
	indent := strings.Repeat(" ", depth)
	head := indent
	detailIndent := indent + "  "
	if !top {
		head = indent + "->  "
		detailIndent = indent + "      "
	}
	title, details, children := e.describe(n)
	if e.costs != nil {
		c := e.costs.of(n)
		title += fmt.Sprintf("  (cost=%.2f..%.2f rows=%.0f width=%d)", c.startup, c.total, e.costs.est.Rows(n), e.costs.est.rowWidth(n))
	}
	if e.stats != nil {
		if st := e.stats(n); st != nil {
			loops := max(st.Loops, 1)
			title += fmt.Sprintf(" (actual time=%.3f rows=%d loops=%d)", float64(st.Time.Microseconds())/1000/float64(loops), st.Rows/loops, st.Loops)
		} else {
			title += " (never executed)"
		}
	}
	e.lines = append(e.lines, head+title)
	for _, d := range details {
		e.lines = append(e.lines, detailIndent+d)
	}
	// The plans of the subqueries the line's expressions run, below its
	// details, as PostgreSQL prints them ("SubPlan 1", then the plan).
	for _, sq := range lineSubqueries(n) {
		if e.shown == nil {
			e.shown = map[int]bool{}
		}
		if e.shown[sq.ID] || sq.Plan == nil {
			continue
		}
		e.shown[sq.ID] = true
		e.lines = append(e.lines, detailIndent+fmt.Sprintf("SubPlan %d", sq.ID))
		e.node(sq.Plan, len(detailIndent)+2, false)
	}
	childDepth := depth + 2
	if !top {
		childDepth = depth + 6
	}
	for _, c := range children {
		e.node(c, childDepth, false)
	}
}

// lineSubqueries returns the subqueries in the expressions of the nodes
// describe prints as n's one line (a projection and what it reads, a
// filter over its scan), outermost first.
func lineSubqueries(n Node) []*Subquery {
	var out []*Subquery
	for n != nil {
		for _, x := range ownExprs(n) {
			Walk(x, func(e Expr) bool {
				if sq, ok := e.(*Subquery); ok {
					out = append(out, sq)
					return false
				}
				return true
			})
		}
		switch x := n.(type) {
		case *Project:
			n = x.Input
		case *Filter:
			if _, isScan := x.Input.(*Scan); !isScan {
				return out
			}
			n = x.Input
		default:
			return out
		}
	}
	return out
}

// describe returns a node's title line, its detail lines and its children.
func (e *explainer) describe(n Node) (string, []string, []Node) {
	switch x := n.(type) {
	case *Scan:
		name := x.Table.Name
		conds := keyConds(x)
		if len(conds) == 0 {
			return "Seq Scan on " + name, nil, nil
		}
		ix := x.Table.PrimaryKeyName()
		if x.Index != nil {
			ix = x.Index.Name
		}
		cond := conds[0]
		if len(conds) > 1 {
			cond = "(" + strings.Join(conds, " AND ") + ")"
		}
		return "Index Scan using " + ix + " on " + name, []string{"Index Cond: " + cond}, nil
	case *Filter:
		if s := e.probes[x]; s != nil {
			title, d, ch := e.describe(s)
			return strings.Replace(title, "Index Scan", "Index Only Scan", 1), d, ch
		}
		title, d, ch := e.describe(x.Input)
		if _, isScan := x.Input.(*Scan); isScan {
			// PostgreSQL shows a scan's filter on the scan itself.
			return title, append(d, "Filter: "+exprString(x.Cond, x.Input.Columns())), ch
		}
		return "Filter", []string{"Filter: " + exprString(x.Cond, x.Input.Columns())}, []Node{x.Input}
	case *Project:
		// Projections are not plan nodes in PostgreSQL's output: show what
		// they read.
		return e.describe(x.Input)
	case *Values:
		return fmt.Sprintf("Values Scan (%d rows)", len(x.Rows)), nil, nil
	case *Given:
		return fmt.Sprintf("Values Scan (%d rows)", len(x.Rows)), nil, nil
	case *Rows:
		return "Function Scan on " + x.Gen, nil, nil
	case *Aggregate:
		cols := x.Input.Columns()
		var d []string
		title := "Aggregate"
		if len(x.GroupBy) > 0 {
			title = "HashAggregate"
			keys := make([]string, len(x.GroupBy))
			for i, g := range x.GroupBy {
				keys[i] = exprString(g, cols)
			}
			d = append(d, "Group Key: "+strings.Join(keys, ", "))
		}
		return title, d, []Node{x.Input}
	case *Window:
		return "WindowAgg", nil, []Node{x.Input}
	case *Sort:
		cols := x.Input.Columns()
		keys := make([]string, len(x.Keys))
		for i, k := range x.Keys {
			keys[i] = exprString(k.E, cols)
			if k.Desc {
				keys[i] += " DESC"
				if !k.NullsFirst {
					keys[i] += " NULLS LAST"
				}
			} else if k.NullsFirst {
				keys[i] += " NULLS FIRST"
			}
		}
		return "Sort", []string{"Sort Key: " + strings.Join(keys, ", ")}, []Node{x.Input}
	case *Limit:
		return "Limit", nil, []Node{x.Input}
	case *LockRows:
		return "LockRows", nil, []Node{x.Input}
	case *DistinctOn:
		// PostgreSQL's Unique, which names no keys outside VERBOSE.
		return "Unique", nil, []Node{x.Input}
	case *Distinct:
		return "HashAggregate", []string{"Group Key: " + strings.Join(colNames(x.Input.Columns()), ", ")}, []Node{x.Input}
	case *Join:
		kind := map[JoinKind]string{JoinInner: "", JoinLeft: " Left Join", JoinRight: " Right Join", JoinFull: " Full Join",
			JoinCross: "", JoinSemi: " Semi Join", JoinAnti: " Anti Join", JoinAntiNullAware: " Null-Aware Anti Join"}[x.Kind]
		lc, rc := x.Left.Columns(), x.Right.Columns()
		var d []string
		title := "Nested Loop" + kind
		if len(x.LeftKeys) > 0 {
			title = "Hash" + strings.Replace(kind, " Join", "", 1) + " Join"
			if kind == "" {
				title = "Hash Join"
			}
			conds := make([]string, len(x.LeftKeys))
			for i := range x.LeftKeys {
				conds[i] = exprString(x.LeftKeys[i], lc) + " = " + exprString(x.RightKeys[i], rc)
			}
			d = append(d, "Hash Cond: ("+strings.Join(conds, " AND ")+")")
		}
		if x.Residual != nil {
			label := "Join Filter: "
			d = append(d, label+exprString(x.Residual, append(append([]Column(nil), lc...), rc...)))
		}
		return title, d, []Node{x.Left, x.Right}
	case *Apply:
		kind := map[JoinKind]string{JoinLeft: " Left Join", JoinSemi: " Semi Join", JoinAnti: " Anti Join"}[x.Kind]
		var d []string
		if x.Residual != nil {
			d = append(d, "Join Filter: "+exprString(x.Residual, append(append([]Column(nil), x.Left.Columns()...), x.Right.Columns()...)))
		}
		if s, ok := x.KeyProbe(); ok {
			if e.probes == nil {
				e.probes = map[Node]*Scan{}
			}
			e.probes[x.Right] = s
		}
		return "Nested Loop" + kind, d, []Node{x.Left, x.Right}
	case *SetOp:
		name := map[SetOpKind]string{Union: "Append", Intersect: "HashSetOp Intersect", Except: "HashSetOp Except"}[x.Kind]
		if x.Kind == Intersect || x.Kind == Except {
			if x.All {
				name += " All"
			}
		} else if !x.All {
			return "HashAggregate", []string{"Group Key: " + strings.Join(colNames(x.Cols), ", ")}, []Node{&SetOp{Kind: Union, All: true, Left: x.Left, Right: x.Right, Cols: x.Cols}}
		}
		return name, nil, []Node{x.Left, x.Right}
	case *RecursiveUnion:
		return "Recursive Union", nil, []Node{x.NonRec, x.Rec}
	case *WorkTableScan:
		return "WorkTable Scan on " + x.Work.Name, nil, nil
	case *CTEScan:
		if _, ok := x.Input.(*Given); ok && x.CTE.Shared {
			return "CTE Scan on " + x.CTE.Name, nil, nil // a data-modifying WITH query's rows
		}
		return "CTE Scan on " + x.CTE.Name, nil, []Node{x.Input}

	case *TableChanges:
		return "Function Scan on table_changes(" + x.Table.Name + ")", nil, nil
	case *KeyIn:
		return "Filter (touched keys)", nil, []Node{x.Input}
	case *ProjectSet:
		// Set-returning calls over one empty row are a function in FROM;
		// over an input, they run per input row.
		names := make([]string, len(x.Calls))
		for i, c := range x.Calls {
			names[i] = c.Name
		}
		if v, ok := x.Input.(*Values); ok && len(v.Rows) == 1 && len(v.Rows[0]) == 0 {
			return "Function Scan on " + strings.Join(names, ", "), nil, nil
		}
		return "ProjectSet", []string{"Functions: " + strings.Join(names, ", ")}, []Node{x.Input}
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", n), "*plan."), nil, nil
}

// keyConds renders a scan's key bounds as conditions on the key columns
// (of its index or primary key): (k1 = v1), (k2 >= v2), (k1 = ANY (…)).
func keyConds(s *Scan) []string {
	cols := s.KeyColumns()
	name := func(i int) string { return s.Table.Columns[cols[i]].Name }
	cond := func(i int, op string, v Expr) string {
		return "(" + name(i) + " " + op + " " + exprString(v, nil) + ")"
	}
	var out []string
	switch {
	case s.Point != nil:
		for i, v := range s.Point {
			out = append(out, cond(i, "=", v))
		}
	case s.In != nil:
		out = append(out, "("+name(0)+" = ANY ("+inList(s.In)+"))")
	default:
		var lo, hi []Expr
		if s.Start != nil {
			lo = s.Start.Values
		}
		if s.End != nil {
			hi = s.End.Values
		}
		n := 0 // an equality prefix: the same values in both bounds
		for n < len(lo) && n < len(hi) && lo[n] == hi[n] {
			out = append(out, cond(n, "=", lo[n]))
			n++
		}
		if len(lo) > n {
			op := ">"
			if s.Start.Inclusive {
				op = ">="
			}
			out = append(out, cond(n, op, lo[n]))
		}
		if len(hi) > n {
			op := "<"
			if s.End.Inclusive {
				op = "<="
			}
			out = append(out, cond(n, op, hi[n]))
		}
	}
	return out
}

// inList renders IN values as PostgreSQL shows a constant array,
// '{1,2}'::integer[], or as ARRAY[…] when they are not all constants.
func inList(vals []Expr) string {
	texts := make([]string, len(vals))
	consts := true
	for i, v := range vals {
		c, ok := v.(*Const)
		if !ok || c.D.IsNull() {
			consts = false
			break
		}
		texts[i] = strings.ReplaceAll(string(types.AppendText(nil, c.D, nil)), "'", "''")
	}
	if consts {
		return "'{" + strings.Join(texts, ",") + "}'::" + vals[0].Type().String() + "[]"
	}
	for i, v := range vals {
		texts[i] = exprString(v, nil)
	}
	return "ARRAY[" + strings.Join(texts, ", ") + "]"
}

func colNames(cols []Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// exprString renders an expression over input columns cols.
func exprString(x Expr, cols []Column) string {
	r := func(e Expr) string { return exprString(e, cols) }
	list := func(es []Expr, sep string) string {
		out := make([]string, len(es))
		for i, e := range es {
			out[i] = r(e)
		}
		return strings.Join(out, sep)
	}
	switch e := x.(type) {
	case *ColRef:
		if e.Idx < len(cols) {
			return cols[e.Idx].Name
		}
		return e.Name
	case *Const:
		if e.D.IsNull() {
			return "NULL"
		}
		s := string(types.AppendText(nil, e.D, nil))
		if e.T.IsNumeric() || e.T.Kind == types.KindBool {
			return s
		}
		return "'" + strings.ReplaceAll(s, "'", "''") + "'::" + e.T.String()
	case *Param:
		return fmt.Sprintf("$%d", e.N)
	case *OuterRef:
		return "$" + e.Name
	case *Cast:
		return "(" + r(e.E) + ")::" + e.T.String()
	case *Binary:
		return "(" + r(e.L) + " " + e.Op.String() + " " + r(e.R) + ")"
	case *Neg:
		return "(- " + r(e.E) + ")"
	case *Not:
		return "(NOT " + r(e.E) + ")"
	case *And:
		return "(" + list(e.Args, " AND ") + ")"
	case *Or:
		return "(" + list(e.Args, " OR ") + ")"
	case *IsNull:
		if e.Not {
			return "(" + r(e.E) + " IS NOT NULL)"
		}
		return "(" + r(e.E) + " IS NULL)"
	case *IsDistinct:
		if e.Not {
			return "(" + r(e.L) + " IS NOT DISTINCT FROM " + r(e.R) + ")"
		}
		return "(" + r(e.L) + " IS DISTINCT FROM " + r(e.R) + ")"
	case *In:
		op := " = ANY "
		if e.Not {
			op = " <> ALL "
		}
		if e.Hashed {
			op += "hashed "
		}
		return "(" + r(e.E) + op + "(" + list(e.List, ", ") + "))"
	case *Func:
		return e.Name + "(" + list(e.Args, ", ") + ")"
	case *Coalesce:
		return "COALESCE(" + list(e.Args, ", ") + ")"
	case *NullIf:
		return "NULLIF(" + r(e.L) + ", " + r(e.R) + ")"
	case *Greatest:
		if e.Least {
			return "LEAST(" + list(e.Args, ", ") + ")"
		}
		return "GREATEST(" + list(e.Args, ", ") + ")"
	case *Case:
		var b strings.Builder
		b.WriteString("CASE")
		for _, w := range e.Whens {
			b.WriteString(" WHEN " + r(w.Cond) + " THEN " + r(w.Result))
		}
		if e.Else != nil {
			b.WriteString(" ELSE " + r(e.Else))
		}
		b.WriteString(" END")
		return b.String()
	case *Subquery:
		return fmt.Sprintf("(SubPlan %d)", e.ID)
	}
	return fmt.Sprint(x)
}
