package session

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/dataset"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
)

// prepareCheck binds CHECK MATERIALIZED VIEW name (R-M5): its rows are
// computed when the statement runs, not when it is prepared, since a
// difference is logged.
func (s *Session) prepareCheck(p *prepared, c *parse.CheckDataset) (*prepared, error) {
	t, err := s.resolve(c.Name)
	if err != nil {
		return nil, err
	}
	if err := s.require(t, catalog.PrivSelect); err != nil {
		return nil, err
	}
	if t.Kind != catalog.KindMaterializedView {
		return nil, pgerror.New(pgerror.WrongObjectType, "\"%s\" is not a materialized view", t.Name).WithPosition(c.Name.Pos)
	}
	if s.explicit {
		return nil, pgerror.New(pgerror.ActiveSQLTransaction, "CHECK MATERIALIZED VIEW cannot run inside a transaction block")
	}
	id, name := t.ID, t.Name
	p.node = &plan.Rows{Cols: dataset.CheckCols, Gen: genDeferred, Arg: deferredRows(func(c *exec.Ctx) ([]exec.Row, error) {
		return s.checkView(c, id, name)
	})}
	p.cols, p.rowsTag = dataset.CheckCols, "SELECT"
	return p, nil
}

// checkView runs CHECK MATERIALIZED VIEW (dataset.Check) with the
// session's refresh options.
func (s *Session) checkView(c *exec.Ctx, id uint32, name string) ([]exec.Row, error) {
	rows, err := dataset.Check(c.Context, s.eng.DB, s.eng.Catalog, id, name, s.refreshOptions(false, "CHECK"), s.eng.now())
	if err != nil {
		return nil, mapStorageErr(err)
	}
	return rows, nil
}
