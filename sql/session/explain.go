package session

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/dataset"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
)

// explainRefresh answers EXPLAIN REFRESH MATERIALIZED VIEW: what the next
// refresh would do now, without doing it (R-I8).
func (s *Session) explainRefresh(r *parse.RefreshDataset) (plan.Node, error) {
	t, err := s.resolve(r.Name)
	if err != nil {
		return nil, err
	}
	if t.Kind != catalog.KindMaterializedView {
		return nil, pgerror.New(pgerror.WrongObjectType, "\"%s\" is not a materialized view", t.Name).WithPosition(r.Name.Pos)
	}
	// EXPLAIN of a statement needs what the statement needs (PostgreSQL's
	// rule): REFRESH (MAINTAIN).
	if err := s.require(t, catalog.PrivMaintain); err != nil {
		return nil, err
	}
	e, err := refresh.Explain(s.txn, s.cat, t.ID, s.refreshOptions(r.Full, "MANUAL"))
	if err != nil {
		// INCREMENTAL STRICT: a refresh that cannot be incremental now
		// fails (R-I7); EXPLAIN says so rather than failing itself.
		if pe := pgerror.Convert(err); pe.Code == pgerror.FeatureNotSupported && t.Dataset.Policy == string(parse.PolicyIncrementalStrict) {
			return plan.ValuesOf(dataset.ExplainCols, dataset.ExplainRefusedRows(s.cat, t, pe)), nil
		}
		return nil, err
	}
	return plan.ValuesOf(dataset.ExplainCols, dataset.ExplainRefreshRows(s.cat, t, e)), nil
}

// explainCreate answers EXPLAIN CREATE MATERIALIZED VIEW: the query is bound
// (errors as CREATE would give them) and analysed; nothing is created
// (R-I8). It says whether the query can be refreshed incrementally, with
// which techniques, and where each blocker is (line and column in the
// query), why, and the fix.
func (s *Session) explainCreate(c *parse.CreateMaterializedView) (plan.Node, error) {
	ids, err := s.references(c.Query)
	if err != nil {
		return nil, err
	}
	b := s.binder(c.Query, nil)
	q, err := b.BindSelect(c.Query.AST.GetSelectStmt())
	if err != nil {
		return nil, err
	}
	var names []string
	for _, col := range q.Cols {
		names = append(names, col.Name+" "+col.T.SparkName())
	}
	// The expectations and NOT NULL columns matter to the analysis (R-I2).
	v := &catalog.Table{Name: c.Name.String(), Kind: catalog.KindMaterializedView, Dataset: &catalog.Dataset{}}
	for i, col := range q.Cols {
		cc := catalog.Column{Name: col.Name, Type: col.T}
		if i < len(c.Columns) {
			cc.Name, cc.NotNull = c.Columns[i].Name, c.Columns[i].NotNull
		}
		v.Columns = append(v.Columns, cc)
	}
	for _, e := range c.Expectations {
		v.Dataset.Expectations = append(v.Dataset.Expectations, catalog.Expectation{Name: e.Name, Expr: e.Expr, Action: e.Action})
	}
	va := s.analyzeNew(v, c.Query, q.Root, ids)
	return plan.ValuesOf(dataset.ExplainCols, dataset.ExplainCreateRows(s.cat, c, names, ids, va)), nil
}
