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
	c      *Ctx
	scan   *plan.Scan
	cond   plan.Expr
	full   *types.RowDecoder // the needed columns, at their places
	width  int
	colIdx []int // batch column → table column
	ctypes []vtype
	dec    *types.RowDecoder // the condition's columns, into the batch
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
	vs := &vecFilterScan{c: c, scan: s, cond: f.Cond, width: len(s.Columns())}
	var ids, cids []uint32
	var at, cat []int
	used := map[int]bool{}
	plan.Walk(f.Cond, func(e plan.Expr) bool {
		if r, ok := e.(*plan.ColRef); ok {
			used[r.Idx] = true
		}
		return true
	})
	for i, col := range s.Table.Columns {
		if !s.Needed[i] {
			continue
		}
		ids, at = append(ids, col.ID), append(at, i)
		if !used[i] {
			continue
		}
		vt, ok := vecTypeOf(col.Type)
		if !ok {
			return nil
		}
		cids, cat = append(cids, col.ID), append(cat, len(vs.colIdx))
		vs.colIdx = append(vs.colIdx, i)
		vs.ctypes = append(vs.ctypes, vt)
	}
	vs.full = types.NewRowDecoderAt(ids, at)
	vs.dec = types.NewRowDecoderAt(cids, cat)
	if _, ok := vs.compile(); !ok {
		return nil
	}
	return vs
}

// compile compiles the condition over the batch's columns (each part its
// own: an expression owns its result vectors).
func (vs *vecFilterScan) compile() (vexpr, bool) {
	cols := make([]vexpr, vs.width)
	ts := make([]vtype, vs.width)
	for j, i := range vs.colIdx {
		cols[i] = func(b *vec.Batch, _ []int32) (*vec.Vec, error) { return b.Cols[j], nil }
		ts[i] = vs.ctypes[j]
	}
	vc := &vcompiler{cols: cols, types: ts, c: vs.c}
	f, t, ok := vc.compile(vs.cond)
	return f, ok && t.t == vec.Bool
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
	cond, _ := vs.compile()
	b := newScanBatch(vs.ctypes)
	raw := make([]types.RawValue, len(vs.colIdx))
	var sel, pass []int32
	var vals []byte  // the batch's encoded rows
	var offs []int32 // row i is vals[offs[i]:offs[i+1]]
	var out []Row
	for more := true; more; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		resetScanBatch(b)
		vals, offs = vals[:0], append(offs[:0], 0)
		n := 0
		for n < BatchSize {
			if !it.Next() {
				if err := it.Err(); err != nil {
					return nil, err
				}
				more = false
				break
			}
			r := it.Row()
			if err := vs.dec.DecodeRaw(r.Value, raw); err != nil {
				return nil, err
			}
			if err := putRawRow(b, n, raw); err != nil {
				return nil, err
			}
			vals = append(vals, r.Value...)
			offs = append(offs, int32(len(vals)))
			n++
		}
		if n == 0 {
			break
		}
		endScanBatch(b, n)
		sel = vec.All(sel, n)
		r, err := cond(b, sel)
		if err != nil {
			return nil, err
		}
		pass = vec.True(r, sel, pass)
		if len(pass) == 0 {
			continue
		}
		rows := make([]Row, len(pass))
		backing := make([]types.Datum, len(pass)*vs.width)
		for k, i := range pass {
			row := Row(backing[k*vs.width : (k+1)*vs.width : (k+1)*vs.width])
			if err := vs.full.Decode(vals[offs[i]:offs[i+1]], row); err != nil {
				return nil, err
			}
			rows[k] = row
		}
		mu.Lock()
		err = grow(rows)
		mu.Unlock()
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}
