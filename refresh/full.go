package refresh

import (
	"context"

	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/storage"
)

// diffFullLimit is the largest view (in rows) whose full recompute is
// written as a difference: the old rows are held in memory and only rows
// that changed are written, so the view's change feed — what views above
// it read — holds the real change. Larger views are rewritten.
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
	var old *oldRows
	if n, err := in.Txn.RowCount(info.ID); err != nil {
		return st, err
	} else if n <= diffFullLimit && in.Checkpoint != nil {
		if old, err = loadOldRows(in.Txn, info.ID); err != nil {
			return st, err
		}
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
			if old != nil {
				if old.keep(buf) {
					continue
				}
				old.add(buf)
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
	if err == nil && old != nil {
		err = old.write(w, &st)
	}
	return st, err
}

// oldRows are a view's rows before a full recompute, by content, and the
// new rows not among them.
type oldRows struct {
	rows  map[string][]storage.Row
	added map[string]int64
	order []string
}

func loadOldRows(txn *storage.Txn, tbl storage.TableID) (*oldRows, error) {
	o := &oldRows{rows: map[string][]storage.Row{}, added: map[string]int64{}}
	it := txn.Scan(tbl, nil, nil)
	defer it.Close()
	for it.Next() {
		r := it.Row()
		k := string(r.Value)
		o.rows[k] = append(o.rows[k], storage.Row{Key: append([]byte(nil), r.Key...), Value: []byte(k), RowID: r.RowID, CommitVersion: r.CommitVersion})
	}
	return o, it.Err()
}

// keep consumes one old copy of value, if any is left.
func (o *oldRows) keep(value []byte) bool {
	rs := o.rows[string(value)]
	if len(rs) == 0 {
		return false
	}
	o.rows[string(value)] = rs[:len(rs)-1]
	return true
}

func (o *oldRows) add(value []byte) {
	k := string(value)
	if o.added[k] == 0 {
		o.order = append(o.order, k)
	}
	o.added[k]++
}

// write deletes the old rows nobody kept, then inserts the new ones.
func (o *oldRows) write(w *viewWriter, st *Stats) error {
	for _, rs := range o.rows {
		for _, r := range rs {
			if err := w.txn.DeleteRow(w.info, r); err != nil {
				return err
			}
			st.RowsDeleted++
		}
	}
	for _, k := range o.order {
		n := o.added[k]
		if err := w.insertCopies([]byte(k), n); err != nil {
			return err
		}
		st.RowsWritten += n
	}
	return nil
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
