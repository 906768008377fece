package refresh

import (
	"fmt"
	"strings"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// expectation is a compiled data-quality expectation with its counts (R-M2).
type expectation struct {
	spec           catalog.Expectation
	check          func(exec.Row) (types.Datum, error)
	passed, failed int64
}

// BindExpectation binds an expectation's expression over a view's columns
// (used at CREATE to report errors, and by every refresh).
func BindExpectation(cat *catalog.Catalog, cols []plan.Column, e catalog.Expectation, env *types.Env) (plan.Expr, error) {
	st, err := parse.ParseOne("SELECT " + e.Expr)
	if err != nil {
		return nil, pgerror.New(pgerror.SyntaxError, "expectation \"%s\": %s", e.Name, pgerror.Convert(err).Message)
	}
	sel := st.AST.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 || len(sel.FromClause) > 0 {
		return nil, pgerror.New(pgerror.SyntaxError, "expectation \"%s\" must be one boolean expression", e.Name)
	}
	b := &plan.Binder{Cat: cat, Stmt: st, Env: env}
	x, err := b.BindPredicateOver(cols, sel.TargetList[0].GetResTarget().Val, "expectations")
	if err != nil {
		pe := pgerror.Convert(err)
		return nil, &pgerror.Error{Code: pe.Code, Message: fmt.Sprintf("expectation \"%s\": %s", e.Name, pe.Message), Hint: pe.Hint}
	}
	return x, nil
}

func compileExpectations(in *Input) ([]*expectation, error) {
	if in.View.Dataset == nil || len(in.View.Dataset.Expectations) == 0 {
		return nil, nil
	}
	cols := make([]plan.Column, len(in.View.Columns))
	for i, c := range in.View.Columns {
		cols[i] = plan.Column{Name: c.Name, T: c.Type}
	}
	var out []*expectation
	for _, e := range in.View.Dataset.Expectations {
		x, err := BindExpectation(in.Catalog, cols, e, in.Exec.Env)
		if err != nil {
			return nil, err
		}
		f, err := exec.Compile(x, in.Exec)
		if err != nil {
			return nil, err
		}
		out = append(out, &expectation{spec: e, check: f})
	}
	return out, nil
}

// apply checks one output row: keep reports whether it is written; a FAIL
// UPDATE expectation that fails stops the refresh with the row shown.
func applyExpectations(es []*expectation, v *catalog.Table, row exec.Row) (keep bool, err error) {
	keep = true
	for _, e := range es {
		d, err := e.check(row)
		if err != nil {
			return false, err
		}
		// NULL is not a violation, as for CHECK constraints.
		if d.IsNull() || d.Bool() {
			e.passed++
			continue
		}
		e.failed++
		switch e.spec.Action {
		case "DROP ROW":
			keep = false
		case "FAIL UPDATE":
			return false, pgerror.New(pgerror.CheckViolation, "expectation \"%s\" failed for %s \"%s\" on row %s; the refresh is stopped and the %s is unchanged", e.spec.Name, datasetNoun(v), v.Name, describeRow(v, row), shortNoun(v)).
				WithDetail("Expectation %s: %s ON VIOLATION FAIL UPDATE.", e.spec.Name, e.spec.Expr)
		}
	}
	return keep, nil
}

func describeRow(v *catalog.Table, row exec.Row) string {
	parts := make([]string, len(v.Columns))
	for i, c := range v.Columns {
		val := "NULL"
		if !row[i].IsNull() {
			val = string(types.AppendText(nil, row[i], nil))
		}
		parts[i] = c.Name + "=" + val
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// qualityDetails is flow_progress's data_quality (R-O1, R-M2).
func qualityDetails(es []*expectation, v *catalog.Table, dropped int64) map[string]any {
	var list []map[string]any
	for _, e := range es {
		list = append(list, map[string]any{"name": e.spec.Name, "dataset": v.Name, "passed_records": e.passed, "failed_records": e.failed, "action": actionName(e.spec.Action)})
	}
	return map[string]any{"dropped_records": dropped, "expectations": list}
}

func actionName(a string) string {
	if a == "" {
		return "KEEP"
	}
	return a
}

// checkExpectations reports whether a row passes the DROP ROW
// expectations, without counting: for rows leaving the view, which were
// counted when they entered it (a row that was dropped was never stored).
func checkExpectations(es []*expectation, row exec.Row) (keep bool, err error) {
	for _, e := range es {
		if e.spec.Action != "DROP ROW" {
			continue
		}
		d, err := e.check(row)
		if err != nil {
			return false, err
		}
		if !d.IsNull() && !d.Bool() {
			return false, nil
		}
	}
	return true, nil
}

// shortNoun is "view" or "table", for "the … is unchanged".
func shortNoun(v *catalog.Table) string {
	if v.Kind == catalog.KindStreamingTable {
		return "table"
	}
	return "view"
}
