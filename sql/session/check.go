package session

import (
	"fmt"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// checkCols are CHECK MATERIALIZED VIEW's columns: OK, or one row per
// missing or extra row (the row as text) and per index whose entries are
// not what the rows call for (R-T10).
var checkCols = []plan.Column{{Name: "result", T: types.Text}, {Name: "row", T: types.Text}}

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
	p.node = &plan.Rows{Cols: checkCols, Gen: genDeferred, Arg: deferredRows(func(c *exec.Ctx) ([]exec.Row, error) {
		return s.checkView(c, id, name)
	})}
	p.cols, p.rowsTag = checkCols, "SELECT"
	return p, nil
}

// checkView compares the view's rows with its query in a read transaction
// of its own (refresh.Check); a difference is logged as a drift event in a
// separate write transaction, so it is kept whatever the statement's
// transaction does.
func (s *Session) checkView(c *exec.Ctx, id uint32, name string) ([]exec.Row, error) {
	txn := s.eng.DB.Begin()
	defer txn.Rollback()
	cat, err := s.eng.Catalog.Snapshot(txn)
	if err != nil {
		return nil, err
	}
	d, err := refresh.Check(c.Context, txn, cat, id, s.refreshOptions(false, "CHECK"))
	if err != nil {
		return nil, mapStorageErr(err)
	}
	var bad []exec.Row
	if v, ok := cat.Table(id); ok {
		for i := range v.Indexes {
			ix := &v.Indexes[i]
			if err := txn.VerifyIndex(storage.TableID(id), exec.IndexInfo(ix)); err != nil {
				bad = append(bad, exec.Row{types.NewText("INDEX"), types.NewText(ix.Name + ": " + err.Error())})
			}
		}
	}
	txn.Rollback()
	if d.Equal() {
		if len(bad) > 0 {
			return bad, nil
		}
		return []exec.Row{{types.NewText("OK"), types.NullDatum}}, nil
	}
	w := s.eng.DB.Begin()
	defer w.Rollback()
	if err := refresh.LogDrift(w, id, name, d, s.eng.now()); err != nil {
		return nil, mapStorageErr(err)
	}
	if err := w.Commit(); err != nil {
		return nil, mapStorageErr(err)
	}
	var rows []exec.Row
	add := func(kind string, samples []string, count int64) {
		for _, r := range samples {
			rows = append(rows, exec.Row{types.NewText(kind), types.NewText(r)})
		}
		if more := count - int64(len(samples)); more > 0 {
			rows = append(rows, exec.Row{types.NewText(kind), types.NewText(fmt.Sprintf("… and %d more", more))})
		}
	}
	add("MISSING", d.Missing, d.MissingCount)
	add("EXTRA", d.Extra, d.ExtraCount)
	return append(rows, bad...), nil
}
