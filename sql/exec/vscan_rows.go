package exec

import (
	"context"
	"errors"
	"sync"

	"github.com/mvserver/mvserver/sql/exec/vec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// The build side of a vectorized hash join (vjoin.go), when it is a
// filter over a whole-table scan whose condition has kernels, is read
// the way vaggOp reads its scan: in key-range parts on the workers, each
// batch's condition columns decoded straight into vectors
// (RowDecoder.DecodeRaw) and tested by the condition's kernel, and only
// the rows that pass decoded whole. TPC-H Q12 and Q14 build on lineitem
// filtered to 1-5% of its rows; row at a time on one core, that filter
// was three quarters of Q12's time (SF 0.1 profile). The rows, in key
// order, are the row path's (Filter over Scan); a value the vectors
// cannot hold returns errVecFallback, as the aggregation's scan does.

// vecFilterScan is a Filter(Scan) read by vector kernels.
type vecFilterScan struct {
	c     *Ctx
	scan  *plan.Scan
	cond  plan.Expr
	full  *types.RowDecoder // the needed columns, at their places
	width int
}

// newVecFilterScan returns the vectorized read of n, nil when it does
// not apply.
func newVecFilterScan(c *Ctx, n plan.Node) *vecFilterScan {
	f, ok := n.(*plan.Filter)
	if !ok || c.RowAtATime || (c.stmt != nil && c.stmt.analyze != nil) || hasSubquery(f.Cond) {
		return nil
	}
	s, ok := f.Input.(*plan.Scan)
	if !ok || s.Index != nil || s.Point != nil || s.In != nil || s.Start != nil || s.End != nil || s.Exclude != nil {
		return nil
	}
	nt := len(s.Table.Columns)
	if s.Needed[nt] || s.Needed[nt+1] || c.keeping(storage.TableID(s.Table.ID)) {
		return nil
	}
	if newBatchFilter(c, s, f.Cond) == nil {
		return nil
	}
	var ids []uint32
	var at []int
	for i, col := range s.Table.Columns {
		if s.Needed[i] {
			ids, at = append(ids, col.ID), append(at, i)
		}
	}
	return &vecFilterScan{c: c, scan: s, cond: f.Cond, width: len(s.Columns()), full: types.NewRowDecoderAt(ids, at)}
}

// rows reads the passing rows in key order; grow charges a part's batch
// of rows (called under a lock) before the part keeps them.
func (vs *vecFilterScan) rows(grow func([]Row) error) ([]Row, error) {
	c := vs.c
	tid := storage.TableID(vs.scan.Table.ID)
	var bounds [][]byte
	if c.Workers > 0 {
		keys, err := c.Txn.SplitKeys(tid, c.Workers+1)
		if err != nil {
			return nil, err
		}
		if len(keys) > 0 {
			bounds = append(append([][]byte{nil}, keys...), nil)
		}
	}
	var its []*storage.Iterator
	if bounds != nil {
		for i := 0; i+1 < len(bounds); i++ {
			its = append(its, c.Txn.Scan(tid, bounds[i], bounds[i+1]))
		}
		for _, it := range its {
			if !it.SnapshotOnly() {
				for _, it := range its {
					it.Close()
				}
				its = nil
				break
			}
		}
	}
	if its == nil {
		its = []*storage.Iterator{c.Txn.Scan(tid, nil, nil)}
	}
	defer func() {
		for _, it := range its {
			it.Close()
		}
	}()
	parts := make([][]Row, len(its))
	errs := make([]error, len(its))
	var mu sync.Mutex
	ctx, cancel := context.WithCancel(c.Context)
	defer cancel()
	var wg sync.WaitGroup
	for i := 1; i < len(its); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if parts[i], errs[i] = vs.part(ctx, its[i], grow, &mu); errs[i] != nil {
				cancel()
			}
		}()
	}
	if parts[0], errs[0] = vs.part(ctx, its[0], grow, &mu); errs[0] != nil {
		cancel()
	}
	wg.Wait()
	for _, err := range errs {
		if errors.Is(err, errVecFallback) || errors.Is(err, vec.ErrOverflow) {
			return nil, errVecFallback
		}
	}
	if err := c.Context.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		}
	}
	var out []Row
	for _, p := range parts {
		out = append(out, p...)
	}
	return out, nil
}

// part reads one key range.
func (vs *vecFilterScan) part(ctx context.Context, it *storage.Iterator, grow func([]Row) error, mu *sync.Mutex) ([]Row, error) {
	bf := newBatchFilter(vs.c, vs.scan, vs.cond)
	var out []Row
	for more := true; more; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		bf.reset()
		for bf.len() < BatchSize {
			if !it.Next() {
				if err := it.Err(); err != nil {
					return nil, err
				}
				more = false
				break
			}
			if err := bf.add(it.Row()); err != nil {
				return nil, err
			}
		}
		if bf.len() == 0 {
			break
		}
		if err := bf.test(nil); err != nil {
			return nil, err
		}
		if len(bf.pass) == 0 {
			continue
		}
		rows := make([]Row, len(bf.pass))
		backing := make([]types.Datum, len(bf.pass)*vs.width)
		for k, i := range bf.pass {
			row := Row(backing[k*vs.width : (k+1)*vs.width : (k+1)*vs.width])
			if err := vs.full.Decode(bf.row(i).Value, row); err != nil {
				return nil, err
			}
			rows[k] = row
		}
		mu.Lock()
		err := grow(rows)
		mu.Unlock()
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}
