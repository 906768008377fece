package refresh

import (
	"context"
	"encoding/binary"
	"math"

	"github.com/mvserver/mvserver/pgerror"
)

// Big full recomputes are written as a new generation of the view
// (storage.Txn.RewriteRows): past Runner.RewriteThreshold rows, the new
// content goes into storage in sorted chunks, each applied as it is
// made, and the refresh's commit switches the view to it. The refresh
// then holds one chunk of the new content, not all of it twice (the write
// set and the commit's batch): a REFRESH … FULL or CREATE of a view of
// any size runs in bounded memory. Its version records no row changes, so
// a view reading this one's change feed recomputes in full
// (ReasonSourceRewritten).

// DefaultRewriteThreshold is Runner.RewriteThreshold's default.
const DefaultRewriteThreshold = 1 << 18

// Copy numbers of a rewrite: the rows of chunk c are numbered from
// c << rewriteSeqShift, in their chunk's hash order, so no chunk needs to
// know what the earlier ones wrote (a copy number only tells copies
// apart: it need not be dense).
const (
	rewriteSeqShift = 20
	rewriteChunks   = 1 << (32 - rewriteSeqShift)
)

func (r *Runner) rewriteThreshold() int64 {
	if r.RewriteThreshold == 0 {
		return DefaultRewriteThreshold
	}
	return r.RewriteThreshold
}

// diffLimit is the largest view (rows) a full recompute writes as a
// difference: Runner.DiffLimit, or diffFullLimit.
func (in *Input) diffLimit() int64 {
	if in.diffAt != 0 {
		return in.diffAt
	}
	return diffFullLimit
}

// freshChunkRows is how many new rows of an empty view a full recompute
// holds before it writes them. Where a big view is written as a new
// generation (rewriteAt > 0), a chunk at a time, bounded: the first chunk
// of rewriteAt rows starts the rewrite. Where it is not (a REFRESH or
// CREATE in a transaction block, --rewrite-threshold negative), every row
// goes into the transaction's write set anyway, so all are held, charged
// to the refresh's budget while held (heldCharge), and inserted as one
// sorted run: the write set takes ascending keys far faster than a second
// chunk's keys scattered among the first's.
func (in *Input) freshChunkRows() int {
	if in.rewriteAt <= 0 {
		return math.MaxInt
	}
	return int(min(in.rewriteAt, int64(freshChunk)))
}

// startRewrite makes the writer write the view's content anew as a
// generation.
func (w *viewWriter) startRewrite() error {
	rw, err := w.txn.RewriteRows(w.info)
	if err != nil {
		return err
	}
	w.rw = rw
	return nil
}

// insertRewrite writes the chunk s into the rewrite, in key order.
func (s *newRowSet) insertRewrite(ctx context.Context, w *viewWriter, st *Stats) error {
	if w.chunks >= rewriteChunks {
		return pgerror.New(pgerror.FeatureNotSupported, "materialized view \"%s\" would hold more than %d rows: a full refresh cannot write that many", w.v.Name, int64(rewriteChunks)*int64(freshChunk))
	}
	base := uint32(w.chunks) << rewriteSeqShift
	w.chunks++
	if err := s.sort(ctx); err != nil {
		return err
	}
	var prev uint64
	var seq uint32
	for k, e := range s.ents {
		if k%cancelEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if k == 0 || e.h != prev {
			prev, seq = e.h, 0
		}
		w.key = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(w.key[:0], e.h), base+seq)
		seq++
		if err := w.rw.Insert(w.key, s.value(e)); err != nil {
			return err
		}
	}
	st.RowsWritten += int64(len(s.ents))
	return w.rw.Flush()
}
