package dataset

import (
	"context"
	"fmt"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// CheckCols are CHECK MATERIALIZED VIEW's columns: OK, or one row per
// missing or extra row (the row as text) and per index whose entries are
// not what the rows call for (R-T10).
var CheckCols = []plan.Column{{Name: "result", T: types.Text}, {Name: "row", T: types.Text}}

// Check answers CHECK MATERIALIZED VIEW (R-M5): it compares the view's rows
// with its query in a read transaction of its own (refresh.Check) and
// verifies its indexes; a difference is logged as a drift event at now in
// a separate write transaction, so it is kept whatever the statement's
// transaction does. Storage errors are returned as they are.
func Check(ctx context.Context, db *storage.DB, cats *catalog.Manager, id uint32, name string, opt refresh.Options, now time.Time) ([]exec.Row, error) {
	txn := db.Begin()
	defer txn.Rollback()
	cat, err := cats.Snapshot(txn)
	if err != nil {
		return nil, err
	}
	d, err := refresh.Check(ctx, txn, cat, id, opt)
	if err != nil {
		return nil, err
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
	w := db.Begin()
	defer w.Rollback()
	if err := refresh.LogDrift(w, id, name, d, now); err != nil {
		return nil, err
	}
	if err := w.Commit(); err != nil {
		return nil, err
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
