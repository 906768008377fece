package session

import (
	"fmt"
	"strings"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

var explainCols = []plan.Column{{Name: "item", T: types.Text}, {Name: "value", T: types.Text}}

func kv(k, v string) []types.Datum { return []types.Datum{types.NewText(k), types.NewText(v)} }

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
	e, err := refresh.Explain(s.txn, s.cat, t.ID, s.refreshOptions(r.Full, "MANUAL"))
	if err != nil {
		return nil, err
	}
	rows := [][]types.Datum{
		kv("view", s.cat.QualifiedName(t)),
		kv("technique", e.Technique),
		kv("reason", e.Reason),
		kv("refresh policy", t.Dataset.Policy),
	}
	for _, src := range e.Sources {
		consumed := "never"
		if src.CheckpointVersion >= 0 {
			consumed = fmt.Sprintf("version %d", src.CheckpointVersion)
		}
		pending := "no pending changes"
		if src.CheckpointVersion != src.CurrentVersion {
			pending = fmt.Sprintf("pending versions %d..%d", src.CheckpointVersion+1, src.CurrentVersion)
		}
		rows = append(rows, kv("source "+src.Name, fmt.Sprintf("%s; consumed %s, now version %d; %s; change data feed %s, row tracking %s",
			src.Kind, consumed, src.CurrentVersion, pending, onOff(src.ChangeDataFeed), onOff(src.RowTracking))))
	}
	rows = append(rows, kv("changed source rows", fmt.Sprint(e.ChangedRows)))
	for _, c := range e.Candidates {
		v := c.Reason
		if c.Cost > 0 {
			v = fmt.Sprintf("estimated cost %.0f; %s", c.Cost, v)
		}
		if c.Chosen {
			v = "chosen: " + v
		}
		rows = append(rows, kv("candidate "+c.Technique, v))
	}
	for _, b := range e.Analysis.Blockers {
		v := b.Message
		if b.Fix != "" {
			v += "; fix: " + b.Fix
		}
		rows = append(rows, kv("blocker "+b.Code, v))
	}
	return constRows(explainCols, rows), nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// explainCreate answers EXPLAIN CREATE MATERIALIZED VIEW: the query is bound
// (errors as CREATE would give them), its sources and their table features
// listed; nothing is created (R-I8).
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
	rows := [][]types.Datum{
		kv("view", c.Name.String()),
		kv("columns", strings.Join(names, ", ")),
		kv("techniques available", "NO_OP, FULL_RECOMPUTE"),
		kv("incrementalizable", "no: incremental refresh is not implemented yet; every refresh that finds changed sources recomputes fully"),
	}
	for _, id := range ids {
		t, _ := s.cat.Table(id)
		line := fmt.Sprintf("%s; change data feed %s, row tracking %s", kindName(t.Kind), onOff(t.ChangeDataFeed()), onOff(t.RowTracking()))
		if t.Kind == catalog.KindTable && !t.ChangeDataFeed() {
			line += fmt.Sprintf("; to allow incremental refresh later: ALTER TABLE %s SET TBLPROPERTIES (delta.enableChangeDataFeed = true)", s.cat.QualifiedName(t))
		}
		rows = append(rows, kv("source "+s.cat.QualifiedName(t), line))
	}
	return constRows(explainCols, rows), nil
}
