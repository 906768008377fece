package exec

import (
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// scanOp reads a table's rows at the transaction's snapshot: all of
// them, a primary-key point, or key ranges of the primary key or of a
// secondary index (one range per IN value), in key order.
type scanOp struct {
	c        *Ctx
	s        *plan.Scan
	it       rowIter
	index    storage.IndexID // 0: the ranges are of the primary key
	ranges   []keyRange      // to read, in order
	dec      *types.RowDecoder
	outIdx   []int // output index of each decoded column
	nTable   int
	width    int
	wantRID  bool
	wantVer  bool
	point    bool
	pointKey []byte
	keys     scanKeys // the compiled key values of s (scan_keys.go)
	done     bool
	batch    int // rows in the last batch (batches grow to BatchSize)
	full     int // full batches read so far
	ra       *readahead
	// spare is the iterator of a finished key range, kept to be pointed
	// at the next one (retarget).
	spare rowIter

	// pred is a filter's condition evaluated in the scan (scan_filter.go);
	// nil: none. predDec decodes its columns alone into scratch.
	pred    evalFn
	predDec *types.RowDecoder
	scratch Row
	dropped int64
	passed  int64
	// vf tests pred a batch at a time (scan_vfilter.go); nil: row at a
	// time. vnext is the next of its passing rows to hand out.
	vf    *batchFilter
	vnext int
	// condExpr is pred's expression; par reads the rest of the table in
	// parallel ranges (scan_parallel.go), nil: not.
	condExpr plan.Expr
	par      *parallelScan
	// post is pred once the scan reads ahead (scan_filter.go): the
	// reader decodes whole rows and the condition runs here on them.
	post evalFn
	// reuse: the consumer keeps nothing of a batch past its next Next,
	// so the batch's memory is reused (scan_reuse.go); last is it.
	reuse bool
	last  scanBatch
	// cut is a top-N's cutoff test above this scan (topcut.go); nil: none.
	cut *topCut
}

// rowIter is a storage.Iterator or storage.IndexIterator.
type rowIter interface {
	Next() bool
	Row() storage.Row
	Err() error
	Close() error
}

// keyRange is [start, end) of keys (nil: unbounded).
type keyRange struct{ start, end []byte }

func newScan(c *Ctx, s *plan.Scan) (Operator, error) {
	t := s.Table
	op := &scanOp{c: c, s: s, nTable: len(t.Columns), width: len(s.Columns())}
	var ids []uint32
	for i, col := range t.Columns {
		if s.Needed[i] {
			ids = append(ids, col.ID)
			op.outIdx = append(op.outIdx, i)
		}
	}
	op.dec = types.NewRowDecoderAt(ids, op.outIdx)
	op.wantRID = s.Needed[op.nTable]
	op.wantVer = s.Needed[op.nTable+1]
	if s.Index != nil {
		op.index = storage.IndexID(s.Index.ID)
	}
	var err error
	if op.keys, err = compileScanKeys(c, s); err != nil {
		return nil, err
	}
	if err := op.bindKeys(); err != nil {
		return nil, err
	}
	return op, nil
}

// open starts reading the next range; false when none is left.
func (s *scanOp) open() bool {
	if len(s.ranges) == 0 {
		return false
	}
	r := s.ranges[0]
	s.ranges = s.ranges[1:]
	tid := storage.TableID(s.s.Table.ID)
	if sp := s.spare; sp != nil {
		s.spare = nil
		if s.retarget(sp, r) {
			s.it = sp
			return true
		}
		sp.Close()
	}
	if s.index != 0 {
		s.it = s.c.Txn.ScanIndex(tid, s.index, r.start, r.end)
		return true
	}
	s.it = s.c.Txn.Scan(tid, r.start, r.end)
	return true
}

// retarget points sp, the iterator of a finished range of the scan's
// table or index, at r; false when it cannot be (then a new one reads r).
func (s *scanOp) retarget(sp rowIter, r keyRange) bool {
	tid := storage.TableID(s.s.Table.ID)
	switch it := sp.(type) {
	case *storage.Iterator:
		return s.index == 0 && it.Retarget(tid, r.start, r.end)
	case *storage.IndexIterator:
		return s.index != 0 && it.Retarget(tid, s.index, r.start, r.end)
	}
	return false
}

// retargetable reports whether it, an iterator at the end of its range,
// may be kept to read the next one (retarget).
func retargetable(it rowIter) bool {
	switch it.(type) {
	case *storage.Iterator, *storage.IndexIterator:
		return it.Err() == nil
	}
	return false
}

func (s *scanOp) Next() ([]Row, error) {
	if s.done {
		return nil, nil
	}
	if err := s.c.Context.Err(); err != nil {
		return nil, err
	}
	if s.point {
		s.done = true
		var r storage.Row
		var ok bool
		var err error
		if s.index != 0 {
			r, ok, err = s.c.Txn.GetUnique(storage.TableID(s.s.Table.ID), s.index, s.pointKey)
		} else {
			r, ok, err = s.c.Txn.Get(storage.TableID(s.s.Table.ID), s.pointKey)
		}
		if err != nil || !ok {
			return nil, err
		}
		if _, skip := s.s.Exclude[r.RowID]; skip {
			return nil, nil
		}
		if s.index == 0 {
			s.c.keep(storage.TableID(s.s.Table.ID), r)
		}
		row := make(Row, s.width)
		if err := s.fill(row, r); err != nil {
			return nil, err
		}
		return []Row{row}, nil
	}
	if s.par != nil {
		return s.par.next(s.c.Context)
	}
	if s.ra != nil {
		if s.post != nil {
			return s.nextFiltered()
		}
		return s.ra.next(s)
	}
	// Batches start small and double up to BatchSize: a scan that finds a
	// few rows (a filtered or key-range read) does not allocate and zero a
	// full batch for them.
	size := min(max(2*s.batch, 16), BatchSize)
	s.batch = size
	out, backing := s.buffers(size)
	for len(out) < size {
		if s.it == nil && !s.open() {
			s.done = true
			break
		}
		var more bool
		var err error
		if out, more, err = s.read(out, backing, true); err != nil {
			return nil, err
		}
		if !more {
			if retargetable(s.it) {
				// Kept for the next range, or for the first range of the
				// next probe of a nested loop (rebind.go): a Retarget to a
				// key after this one keeps Pebble's position in its index
				// and data blocks instead of opening and seeking a new
				// iterator.
				s.spare, s.it = s.it, nil
				continue
			}
			err := s.it.Close()
			s.it = nil
			if err != nil {
				return nil, err
			}
		}
	}
	if len(out) == size {
		s.full++
		if s.full >= readaheadAfter && s.ra == nil && s.it != nil && len(s.ranges) == 0 && !s.c.keeping(storage.TableID(s.s.Table.ID)) && readaheadOK(s.it) {
			if s.pred == nil {
				s.ra = startReadahead(s)
			} else if s.startParallel() {
			} else if s.passed > s.dropped && s.filterDrained() {
				s.post, s.pred, s.vf = s.pred, nil, nil
				s.ra = startReadahead(s)
				filteredReadaheads.Add(1)
			}
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// read appends rows of s.it to out (up to its capacity), decoding into
// backing; more is false when s.it is exhausted (or failed: err). keep
// hands the rows to the statement's kept rows (kept_rows.go): the scan's
// own goroutine only, never the readahead's.
func (s *scanOp) read(out []Row, backing []types.Datum, keep bool) (_ []Row, more bool, err error) {
	if s.vf != nil {
		return s.readFiltered(out, backing, keep)
	}
	for len(out) < cap(out) {
		if !s.it.Next() {
			return out, false, s.it.Err()
		}
		if s.s.Exclude != nil {
			if _, skip := s.s.Exclude[s.it.Row().RowID]; skip {
				continue
			}
		}
		r := s.it.Row()
		if s.pred != nil {
			ok, err := s.test(r)
			if err != nil {
				return nil, false, err
			}
			if !ok {
				continue
			}
		}
		if s.cut != nil && s.cut.past(r) {
			s.cut.skipped++
			if s.cut.skipped%scanFilterCheckEvery == 0 {
				if !keep {
					// The readahead's goroutine: hand back what it has,
					// so that it sees a stop between two calls.
					return out, true, nil
				}
				if err := s.c.Context.Err(); err != nil {
					return nil, false, err
				}
			}
			continue
		}
		if out, err = s.emit(out, backing, r, keep); err != nil {
			return nil, false, err
		}
	}
	return out, true, nil
}

// emit appends the stored row r to out, decoded into the next row of
// backing; keep hands it to the statement's kept rows (read's keep).
func (s *scanOp) emit(out []Row, backing []types.Datum, r storage.Row, keep bool) ([]Row, error) {
	n := len(out)
	row := backing[n*s.width : (n+1)*s.width : (n+1)*s.width]
	if err := s.fill(row, r); err != nil {
		return nil, err
	}
	if keep && s.index == 0 {
		s.c.keep(storage.TableID(s.s.Table.ID), r)
	}
	return append(out, row), nil
}

// fill decodes the needed columns of a stored row into row.
func (s *scanOp) fill(row Row, r storage.Row) error {
	if len(s.outIdx) > 0 {
		// Straight into the row: Decode sets every column it does not
		// find to NULL (the row id and version columns are set below).
		if err := s.dec.Decode(r.Value, row); err != nil {
			return err
		}
	}
	if s.wantRID {
		row[s.nTable] = types.NewInt8(r.RowID)
	}
	if s.wantVer && r.CommitVersion >= 0 {
		row[s.nTable+1] = types.NewInt8(r.CommitVersion)
	}
	return nil
}

func (s *scanOp) Close() {
	if s.par != nil {
		s.par.close()
		s.par = nil
	}
	if s.ra != nil {
		s.ra.stop()
		s.ra = nil
	}
	if s.spare != nil {
		s.spare.Close()
		s.spare = nil
	}
	if s.it != nil {
		s.it.Close()
		s.it = nil
	}
}
