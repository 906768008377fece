package session

import (
	"fmt"
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// queryPlanCols is EXPLAIN's one output column.
var queryPlanCols = []plan.Column{{Name: "QUERY PLAN", T: types.Text}}

// prepareExplain binds EXPLAIN [ANALYZE] [(options)] query: the plan as
// PostgreSQL lays it out; with ANALYZE the query runs and each node shows
// its actual rows, runs and time.
func (s *Session) prepareExplain(p *prepared, st *parse.Statement, ex *pg_query.ExplainStmt) error {
	analyze, costs := false, true
	for _, o := range ex.Options {
		d := o.GetDefElem()
		on := true
		if d.Arg != nil {
			switch a := d.Arg.Node.(type) {
			case *pg_query.Node_Boolean:
				on = a.Boolean.Boolval
			case *pg_query.Node_String_:
				v := strings.ToLower(a.String_.Sval)
				on = v != "false" && v != "off" && v != "0"
				if d.Defname == "format" && v != "text" {
					return pgerror.New(pgerror.FeatureNotSupported, "EXPLAIN (FORMAT %s) is not supported; only TEXT is", strings.ToUpper(v))
				}
			}
		}
		switch d.Defname {
		case "analyze":
			analyze = on
		case "costs":
			costs = on
		case "verbose", "buffers", "timing", "summary", "settings", "wal", "format":
			// accepted; the text layout has no buffers to show
		default:
			return pgerror.New(pgerror.SyntaxError, "unrecognized EXPLAIN option \"%s\"", d.Defname)
		}
	}
	b := s.binder(st, nil)
	b.Optimize = true
	b.AllowRowLocks = true
	var root plan.Node
	var title string
	switch q := ex.Query.Node.(type) {
	case *pg_query.Node_SelectStmt:
		bq, err := b.BindSelect(q.SelectStmt)
		if err != nil {
			return err
		}
		root = bq.Root
	case *pg_query.Node_InsertStmt:
		ins, err := b.BindInsert(q.InsertStmt)
		if err != nil {
			return err
		}
		root, title = ins.Source, "Insert on "+ins.Table.Name
	case *pg_query.Node_UpdateStmt:
		up, err := b.BindUpdate(q.UpdateStmt)
		if err != nil {
			return err
		}
		root, title = up.Input, "Update on "+up.Table.Name
	case *pg_query.Node_DeleteStmt:
		del, err := b.BindDelete(q.DeleteStmt)
		if err != nil {
			return err
		}
		root, title = del.Input, "Delete on "+del.Table.Name
	default:
		return pgerror.New(pgerror.FeatureNotSupported, "EXPLAIN of this statement is not supported")
	}
	if title != "" && analyze {
		return pgerror.New(pgerror.FeatureNotSupported, "EXPLAIN ANALYZE of INSERT, UPDATE or DELETE is not supported; EXPLAIN shows their plan")
	}
	p.cols, p.rowsTag = queryPlanCols, "EXPLAIN"
	var est *plan.Estimator
	if costs {
		// Estimated now, with this transaction's table sizes (the
		// estimator keeps what it computed for the rendering).
		est = plan.NewEstimator(s.cat, b.Stats)
		est.Rows(root)
	}
	render := func(stats func(plan.Node) *plan.NodeStats) []exec.Row {
		lines := plan.Explain(root, stats)
		if est != nil {
			lines = plan.ExplainCosts(root, stats, est)
		}
		if title != "" {
			for i := range lines {
				lines[i] = "      " + lines[i]
			}
			lines[0] = strings.Replace(lines[0], "      ", "  ->  ", 1)
			lines = append([]string{title}, lines...)
		}
		rows := make([]exec.Row, len(lines))
		for i, l := range lines {
			rows[i] = exec.Row{types.NewText(l)}
		}
		return rows
	}
	if !analyze {
		p.node = &plan.Rows{Cols: queryPlanCols, Gen: genDeferred, Arg: deferredRows(func(*exec.Ctx) ([]exec.Row, error) {
			return render(nil), nil
		})}
		return nil
	}
	p.node = &plan.Rows{Cols: queryPlanCols, Gen: genDeferred, Arg: deferredRows(func(c *exec.Ctx) ([]exec.Row, error) {
		start := time.Now()
		stats := exec.Analyze(c)
		op, err := exec.Build(c, root)
		if err != nil {
			return nil, err
		}
		if err := exec.Drain(op, func([]exec.Row) error { return c.Context.Err() }); err != nil {
			return nil, err
		}
		rows := render(stats)
		rows = append(rows, exec.Row{types.NewText(fmt.Sprintf("Execution Time: %.3f ms", float64(time.Since(start).Microseconds())/1000))})
		return rows, nil
	})}
	return nil
}
