package refresh

import (
	"context"
	"slices"

	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// diffFullLimit is the largest view (in rows) whose full recompute is
// written as a difference (fulldiff.go): the new rows are held in memory,
// merged with the stored ones, and only rows that changed are written, so
// the view's change feed — what views above it read — holds the real
// change. Larger views are rewritten.
var diffFullLimit int64 = 2_000_000

// runFull recomputes the view's rows (FULL_RECOMPUTE). A view that
// GROUP_AGGREGATE maintains gets its group states rebuilt in the same pass.
func runFull(ctx context.Context, in *Input, an *Analysis) (Stats, []int, error) {
	var st Stats
	v := in.View
	w, err := newViewWriter(in)
	if err != nil {
		return st, nil, err
	}
	info := w.info
	// diff collects the new rows of a view that holds some (written as a
	// difference); fresh those of an empty or truncated one (its first
	// computation, or a view too big to diff):
	// sorted by key before they are inserted, as the write set takes keys
	// in ascending order far faster than scattered ones (CREATE of a
	// 1M-row join view: 6.7-7.9 s → 3.0-4.2 s).
	var diff, fresh *newRowSet
	if n, err := in.Txn.RowCount(info.ID); err != nil {
		return st, nil, err
	} else if in.Txn.WritesTable(info.ID) {
		// The transaction already wrote the view (CREATE, or an earlier
		// REFRESH of the same block): RowCount counts committed rows only,
		// so start over from empty.
		if err := in.Txn.Truncate(info); err != nil {
			return st, nil, err
		}
		if err := w.truncated(n); err != nil {
			return st, nil, err
		}
		fresh = &newRowSet{}
	} else if n == 0 {
		fresh = &newRowSet{}
	} else if n <= in.diffLimit() && in.Checkpoint != nil {
		diff = &newRowSet{}
	} else if in.rewriteAt > 0 && n >= in.rewriteAt {
		// Big: the new content is written as a new generation.
		if err := w.startRewrite(); err != nil {
			return st, nil, err
		}
		fresh = &newRowSet{}
	} else if err := in.Txn.Truncate(info); err != nil {
		return st, nil, err
	} else if err := w.truncated(n); err != nil {
		return st, nil, err
	} else {
		fresh = &newRowSet{}
	}
	// Inner aggregates keeping states get them built here, and the
	// recompute reads their rows (inner_state.go).
	withStates, inner, err := buildInnerStates(ctx, in, an)
	if err != nil {
		return st, nil, err
	}
	var q plan.Node = in.Query
	// A top-k view's recompute also gets the rows after the first k: the
	// spares TOP_K starts from (topk_spares.go).
	var topk *topKShape
	var spares [][]types.Datum
	if an != nil && an.topK != nil && an.groupAgg == nil {
		if len(in.expectations) == 0 {
			topk = an.topK
		} else if err := clearTopKSpares(in.Txn, v.ID); err != nil {
			return st, nil, err
		}
	}
	if topk != nil {
		if q, err = withStates(topk.withSpares()); err == nil {
			q, err = in.optimized(q)
		}
		if err != nil {
			return st, nil, err
		}
	} else if an != nil && an.groupAgg != nil {
		shape := *an.groupAgg
		input, err := withStates(shape.agg.Input)
		if err != nil {
			return st, nil, err
		}
		if input != shape.agg.Input {
			shape.agg = rebuild(shape.agg, input).(*plan.Aggregate)
		}
		ga := newGroupAggRun(&shape, in)
		if q, st.RowsRead, err = ga.full(ctx); err != nil {
			return st, nil, err
		}
	} else if err := clearGroupStates(in.Txn, v.ID); err != nil {
		return st, nil, err
	} else if len(inner) > 0 {
		if q, err = withStates(in.Query); err == nil {
			q, err = in.optimized(q)
		}
		if err != nil {
			return st, nil, err
		}
	} else if q, err = in.evalQuery(); err != nil {
		// The recompute runs the plan a SELECT of the query gets
		// (evalplan.go): its join order, index scans and lookups.
		return st, nil, err
	}
	op, err := exec.Build(in.Exec, q)
	if err != nil {
		return st, nil, err
	}
	var buf []byte
	var produced int64
	hold := heldCharge{mem: in.Exec.Mem}
	defer hold.release()
	chunk := in.freshChunkRows()
	flush := func(s *newRowSet) error {
		if w.rw == nil && in.rewriteAt > 0 && st.RowsWritten == 0 && int64(len(s.ents)) >= in.rewriteAt {
			// An empty view getting at least a chunk of rows: written as a
			// new generation from the start.
			if err := w.startRewrite(); err != nil {
				return err
			}
		}
		if w.rw != nil {
			return s.insertRewrite(ctx, w, &st)
		}
		return s.insertFresh(ctx, w, &st)
	}
	var seen int64 // rows of the query's result
	err = exec.Drain(op, func(rows []exec.Row) error {
		var held int64 // bytes the difference's new rows take in this batch
		for _, r := range rows {
			if seen++; topk != nil && seen > topk.k {
				spares = append(spares, slices.Clone(r[:len(v.Columns)]))
				continue
			}
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
			if fresh != nil {
				// At most freshChunk rows are held here, charged while
				// held (freshHeld); the write set they go into is
				// charged too (write_budget.go).
				fresh.add(buf)
				if err := hold.charge(int64(len(buf)) + heldBytes); err != nil {
					return err
				}
				if len(fresh.ents) >= chunk {
					err := flush(fresh)
					hold.release()
					if err != nil {
						return err
					}
					fresh = &newRowSet{}
				}
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
		err = diff.mergeInto(ctx, w, &st)
	}
	if err == nil && fresh != nil {
		err = flush(fresh)
	}
	if err == nil && topk != nil {
		err = writeTopKSpares(in, spares, int64(len(spares)) < topKSpares(topk.k))
	}
	if err == nil && w.rw != nil {
		// Here, not in the commit: a new row repeating a unique key of
		// the view's indexes is the refresh's error (23505).
		err = w.rw.Seal()
	}
	return st, inner, err
}

// heldCharge charges the new rows a full recompute holds before it
// writes them (in steps of writeStep), and gives the charge back once
// they are written.
type heldCharge struct {
	mem              *exec.Memory
	pending, charged int64
}

func (h *heldCharge) charge(n int64) error {
	h.pending += n
	if h.pending < writeStep {
		return nil
	}
	n, h.pending = h.pending, 0
	if err := h.mem.Charge("full refresh's new rows", n); err != nil {
		return err
	}
	h.charged += n
	return nil
}

func (h *heldCharge) release() {
	h.mem.Shrink(h.charged)
	h.charged, h.pending = 0, 0
}

// freshChunk is how many new rows of an empty view are sorted and
// inserted together: past it, the rows held so far are written and the
// next ones collected (each chunk in key order, the chunks not).
var freshChunk = 1 << 20

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
