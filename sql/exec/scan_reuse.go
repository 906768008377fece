package exec

import "github.com/mvserver/mvserver/sql/types"

// Batch reuse. A batch handed out by Next is the caller's (doc.go,
// invariant 2), so a scan allocates and clears a batch of full-width rows
// per thousand rows read: for a scan feeding a window or a top-N sort,
// most of their CPU (the allocation, its clearing and the garbage
// collection; issue 21). A consumer that copies out whatever it keeps of
// a batch before it asks for the next one says so (batchReuser), and the
// scan then hands out the same memory again: the plain scan its last
// batch, the readahead (readahead.go) the batches the consumer is done
// with, passed back to the reading goroutine.

// batchReuser is an operator whose batches may be reused once its caller
// asks for the next batch; reuseBatches is called before the first Next.
type batchReuser interface {
	reuseBatches()
}

// reuseInput tells in, when it can, that its caller keeps nothing of a
// batch past the next call of Next; it reports whether in reuses them.
func reuseInput(in Operator) bool {
	r, ok := in.(batchReuser)
	if ok {
		r.reuseBatches()
	}
	return ok
}

func (s *scanOp) reuseBatches() { s.reuse = true }

// buffers returns an empty batch of capacity size (at least) and the
// datums of its rows.
func (s *scanOp) buffers(size int) ([]Row, []types.Datum) {
	if !s.reuse {
		return make([]Row, 0, size), make([]types.Datum, size*s.width)
	}
	if cap(s.last.rows) < size {
		// Reused batches grow as the plain ones do (Next doubles size up
		// to BatchSize): a scan rebuilt per outer row of a nested loop
		// (a correlated aggregate over an index scan, TPC-H Q20's ~800)
		// reads a few rows each time, and a full-size batch allocated
		// and cleared per scan was most of its CPU.
		s.last = scanBatch{rows: make([]Row, 0, size), backing: make([]types.Datum, size*s.width)}
	}
	return s.last.rows[:0], s.last.backing
}
