package refresh

import (
	"context"

	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
)

// diffFullLimit is the largest view (in rows) whose full recompute is
// written as a difference (fulldiff.go): the new rows are held in memory,
// merged with the stored ones, and only rows that changed are written, so
// the view's change feed — what views above it read — holds the real
// change. Larger views are rewritten.
const diffFullLimit = 2_000_000

// runFull recomputes the view's rows (FULL_RECOMPUTE). A view that
// GROUP_AGGREGATE maintains gets its group states rebuilt in the same pass.
func runFull(ctx context.Context, in *Input, an *Analysis) (Stats, error) {
	var st Stats
	v := in.View
	w, err := newViewWriter(in)
	if err != nil {
		return st, err
	}
	info := w.info
	var diff *newRowSet
	if n, err := in.Txn.RowCount(info.ID); err != nil {
		return st, err
	} else if n <= diffFullLimit && in.Checkpoint != nil {
		diff = &newRowSet{}
	} else if err := in.Txn.Truncate(info); err != nil {
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
		var held int64 // bytes the difference's new rows take in this batch
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
			if diff != nil {
				diff.add(buf)
				held += int64(len(buf)) + 24 + 32 // the value, its entry, a pending insert
				continue
			}
			if err := w.insertFresh(buf); err != nil {
				return err
			}
			st.RowsWritten++
		}
		produced += int64(len(rows))
		if err := in.Exec.Mem.Charge("full refresh's new rows", held); err != nil {
			return err
		}
		return ctx.Err()
	})
	if an == nil || an.groupAgg == nil {
		st.RowsRead = produced
	}
	if err == nil && diff != nil {
		err = diff.mergeInto(w, &st)
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
