package refresh

import (
	"context"

	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/storage"
)

// runFull clears the view and writes the query's rows (FULL_RECOMPUTE). A
// view that GROUP_AGGREGATE maintains gets its group states rebuilt in the
// same pass.
func runFull(ctx context.Context, in *Input, an *Analysis) (Stats, error) {
	var st Stats
	v := in.View
	if err := in.Txn.Truncate(storage.TableInfo{ID: storage.TableID(v.ID), ChangeDataFeed: v.ChangeDataFeed()}); err != nil {
		return st, err
	}
	w, err := newViewWriter(in)
	if err != nil {
		return st, err
	}
	var q plan.Node = in.Query
	if an != nil && an.groupAgg != nil {
		ga := newGroupAggRun(an.groupAgg, in)
		if q, st.RowsRead, err = ga.full(ctx); err != nil {
			return st, err
		}
	} else if err := clearGroupStates(in.Txn, v.ID); err != nil {
		return st, err
	}
	op, err := exec.Build(in.Exec, q)
	if err != nil {
		return st, err
	}
	var buf []byte
	var produced int64
	err = exec.Drain(op, func(rows []exec.Row) error {
		for _, r := range rows {
			var keep bool
			var err error
			if buf, keep, err = w.encode(buf[:0], r, false); err != nil {
				return err
			}
			if !keep {
				st.RowsDropped++
				continue
			}
			if err := w.insertFresh(buf); err != nil {
				return err
			}
			st.RowsWritten++
		}
		produced += int64(len(rows))
		return ctx.Err()
	})
	if an == nil || an.groupAgg == nil {
		st.RowsRead = produced
	}
	return st, err
}

// runIncremental applies a planned incremental change to the view.
func runIncremental(ctx context.Context, in *Input, p *refreshPlan) (Stats, error) {
	st := Stats{RowsRead: p.changed}
	w, err := newViewWriter(in)
	if err != nil {
		return st, err
	}
	st.RowsWritten, st.RowsDeleted, err = w.applyDelta(ctx, in.Exec, p.plus, p.minus)
	return st, err
}
