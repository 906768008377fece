package exec

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"

	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// Parallel filtered scans. A whole-table scan whose condition is tested
// a batch at a time (scan_vfilter.go) and calls no function turns, where
// a plain scan would turn to readahead (readahead.go), to readers on
// goroutines of their own: the rest of the table is split into key
// ranges (storage.Txn.SplitKeys, Ctx.Workers+1 of them), one reader per
// range reads, tests and decodes its rows, and the scan hands out the
// ranges' rows one range after the other, so in key order. Each reader
// is at most parallelDepth batches of passing rows ahead, so a selective
// filter (TPC-H Q12 keeps one lineitem in 200) lets every reader run
// through its range while the operators above work, and a filter that
// keeps most rows costs no more memory than readahead does.
//
// A condition without function calls touches nothing of the statement
// but its own compiled state, so each reader compiles its own (the
// kernel and, for a batch the vectors cannot hold, the row path's
// closure) at the switch, on the statement's goroutine. The rows, their
// order and the first error in key order are those of the scan read on
// one goroutine.

// parallelDepth is how many batches each reader may be ahead.
const parallelDepth = 4

// parallelScans counts the filtered scans that read in parallel ranges.
var parallelScans atomic.Int64

// ParallelFilteredScans returns how many filtered scans have read their
// table in parallel key ranges since the process started.
func ParallelFilteredScans() int64 { return parallelScans.Load() }

// pureCond reports whether e is made of column references, constants,
// parameters, operators, casts, CASE and IN lists only: no function, no
// subquery, no outer reference.
func pureCond(e plan.Expr) bool {
	pure := true
	plan.Walk(e, func(x plan.Expr) bool {
		switch x.(type) {
		case *plan.ColRef, *plan.Const, *plan.Param, *plan.Cast, *plan.Binary, *plan.Neg, *plan.Not, *plan.And, *plan.Or,
			*plan.IsNull, *plan.IsBool, *plan.IsDistinct, *plan.In, *plan.Case, *plan.Coalesce, *plan.NullIf, *plan.Greatest:
		default:
			pure = false
		}
		return pure
	})
	return pure
}

// parallelScan is the readers of a scan's remaining ranges.
type parallelScan struct {
	head  *scanBatch // the rows tested before the switch; nil: none
	parts []*scanPart
	cur   int
	quit  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

// scanPart is one reader: its range's iterator, its own condition and
// the batches of passing rows it has read.
type scanPart struct {
	it   *storage.Iterator
	bf   *batchFilter
	pred evalFn
	out  chan scanBatch
}

// startParallel turns s, a whole-table filtered scan, into readers of
// the rest of its table after the last key it read (the passing rows it
// tested but has not handed out come first); false (s unchanged) when
// it cannot.
func (s *scanOp) startParallel() bool {
	c, ps := s.c, s.s
	if s.vf == nil || s.vf.len() == 0 || s.cut != nil || s.index != 0 || ps.Start != nil || ps.End != nil || ps.In != nil || !pureCond(s.condExpr) {
		return false
	}
	tid := storage.TableID(ps.Table.ID)
	last := s.vf.row(int32(s.vf.len() - 1)).Key
	bounds := [][]byte{append(bytes.Clone(last), 0)}
	if c.Workers > 0 {
		keys, err := c.Txn.SplitKeys(tid, c.Workers+1)
		if err != nil {
			return false
		}
		for _, k := range keys {
			if bytes.Compare(k, bounds[len(bounds)-1]) > 0 {
				bounds = append(bounds, k)
			}
		}
	}
	bounds = append(bounds, nil)
	p := &parallelScan{quit: make(chan struct{})}
	for i := 0; i+1 < len(bounds); i++ {
		it := c.Txn.Scan(tid, bounds[i], bounds[i+1])
		pred, err := compile(s.condExpr, c)
		bf := newBatchFilter(c, ps, s.condExpr)
		if !it.SnapshotOnly() || err != nil || bf == nil {
			it.Close()
			for _, q := range p.parts {
				q.it.Close()
			}
			return false
		}
		p.parts = append(p.parts, &scanPart{it: it, bf: bf, pred: pred, out: make(chan scanBatch, parallelDepth)})
	}
	if s.vnext < len(s.vf.pass) {
		pend := s.vf.pass[s.vnext:]
		p.head = &scanBatch{rows: make([]Row, 0, len(pend)), backing: make([]types.Datum, len(pend)*s.width)}
		for _, i := range pend {
			if p.head.rows, p.head.err = s.emit(p.head.rows, p.head.backing, s.vf.row(i), false); p.head.err != nil {
				break
			}
		}
		s.vnext = len(s.vf.pass)
	}
	s.it.Close()
	s.it = nil
	for _, q := range p.parts {
		q.it.OnRelease(p.stop)
	}
	parallelScans.Add(1)
	for _, q := range p.parts {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer close(q.out)
			s.runPart(q, p.quit)
		}()
	}
	s.par = p
	return true
}

// runPart reads q's range until its end, an error, or quit. It reads
// s.s, s.dec, s.width and s.wantRID/wantVer only, which nothing changes
// meanwhile; not s.c (see readahead.go's run).
func (s *scanOp) runPart(q *scanPart, quit chan struct{}) {
	bf := q.bf
	scratch := make(Row, s.width)
	eval := func(r storage.Row) (bool, error) { return s.evalRow(q.pred, scratch, r) }
	b := scanBatch{rows: make([]Row, 0, BatchSize), backing: make([]types.Datum, BatchSize*s.width)}
	send := func() bool {
		select {
		case q.out <- b:
		case <-quit:
			return false
		}
		b = scanBatch{rows: make([]Row, 0, BatchSize), backing: make([]types.Datum, BatchSize*s.width)}
		return true
	}
	for {
		select {
		case <-quit:
			return
		default:
		}
		bf.reset()
		for bf.len() < BatchSize && q.it.Next() {
			r := q.it.Row()
			if s.s.Exclude != nil {
				if _, skip := s.s.Exclude[r.RowID]; skip {
					continue
				}
			}
			if b.err = bf.add(r); b.err != nil {
				send()
				return
			}
		}
		if bf.len() == 0 {
			if b.err = q.it.Err(); b.err != nil || len(b.rows) > 0 {
				send()
			}
			return
		}
		if b.err = bf.test(eval); b.err != nil {
			send()
			return
		}
		for _, i := range bf.pass {
			if len(b.rows) == cap(b.rows) && !send() {
				return
			}
			rows, err := s.emit(b.rows, b.backing, bf.row(i), false)
			if err != nil {
				b.err = err
				send()
				return
			}
			b.rows = rows
		}
	}
}

// next returns the next batch of the ranges in order; nil at the end.
// It waits for a reader until ctx ends: a reader of a selective filter
// may go a long way between two batches.
func (p *parallelScan) next(ctx context.Context) ([]Row, error) {
	if h := p.head; h != nil {
		p.head = nil
		if len(h.rows) > 0 || h.err != nil {
			return h.rows, h.err
		}
	}
	for p.cur < len(p.parts) {
		var b scanBatch
		var ok bool
		select {
		case b, ok = <-p.parts[p.cur].out:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if !ok {
			p.cur++
			continue
		}
		return b.rows, b.err
	}
	return nil, nil
}

// stop ends the readers and waits for them; their iterators stay open
// for close. It runs at the scan's Close, or first when the transaction
// releases an iterator of theirs.
func (p *parallelScan) stop() {
	p.once.Do(func() {
		close(p.quit)
		p.wg.Wait()
	})
}

// close stops the readers and closes their iterators.
func (p *parallelScan) close() {
	p.stop()
	for _, q := range p.parts {
		q.it.Close()
	}
}
