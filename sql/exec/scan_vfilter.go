package exec

import (
	"sync/atomic"

	"github.com/mvserver/mvserver/sql/exec/vec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// A scan's condition tested a batch at a time. Up to BatchSize stored
// rows are gathered, their condition columns decoded straight into
// vectors (RowDecoder.DecodeRaw, no Datum per value) and the condition's
// kernel run once over them; the rows that pass are then decoded whole,
// one by one, from the encoded values the batch kept. TPC-H Q12's
// lineitem scan, the outer side of its index join to orders, tested its
// condition row at a time: three quarters of the query (issue 21).
//
// The batch keeps each row's encoded value, row id and commit version,
// so a batch the vectors cannot hold (a decimal stored at another scale)
// or whose kernel fails (an overflow, a division by zero) is tested
// again row at a time with the row path's condition: the rows kept and
// the error raised, at the row it is raised at, are the row path's.

// batchesTested and batchesRetested count the batches a scan's kernel
// tested and those tested again row at a time.
var batchesTested, batchesRetested atomic.Int64

// batchFilter is a condition compiled to a kernel over the condition's
// columns of a table, with the batch it tests.
type batchFilter struct {
	cond   vexpr
	dec    *types.RowDecoder // the condition's columns, into the batch
	ctypes []vtype
	b      *vec.Batch
	raw    []types.RawValue
	sel    []int32
	pass   []int32
	// The batch's stored rows: row i's key is keys[koffs[i]:koffs[i+1]],
	// its value vals[offs[i]:offs[i+1]], with rids[i] and vers[i].
	keys  []byte
	koffs []int32
	vals  []byte
	offs  []int32
	rids  []int64
	vers  []int64
	// slow: a value of the batch did not fit its vector.
	slow bool
}

// newBatchFilter compiles cond over the table columns of s it reads (the
// columns at their table index; the row id and version have no vector),
// nil when a column or the condition has no kernel.
func newBatchFilter(c *Ctx, s *plan.Scan, cond plan.Expr) *batchFilter {
	used := map[int]bool{}
	plan.Walk(cond, func(e plan.Expr) bool {
		if r, ok := e.(*plan.ColRef); ok {
			used[r.Idx] = true
		}
		return true
	})
	width := len(s.Columns())
	cols := make([]vexpr, width)
	ts := make([]vtype, width)
	bf := &batchFilter{}
	var ids []uint32
	var at []int
	for i, col := range s.Table.Columns {
		if !s.Needed[i] || !used[i] {
			continue
		}
		vt, ok := vecTypeOf(col.Type)
		if !ok {
			return nil
		}
		j := len(bf.ctypes)
		ids, at = append(ids, col.ID), append(at, j)
		bf.ctypes = append(bf.ctypes, vt)
		cols[i] = func(b *vec.Batch, _ []int32) (*vec.Vec, error) { return b.Cols[j], nil }
		ts[i] = vt
	}
	vc := &vcompiler{cols: cols, types: ts, c: c}
	f, t, ok := vc.compile(cond)
	if !ok || t.t != vec.Bool {
		return nil
	}
	bf.cond = f
	bf.dec = types.NewRowDecoderAt(ids, at)
	bf.b = newScanBatch(bf.ctypes)
	bf.raw = make([]types.RawValue, len(bf.ctypes))
	return bf
}

// reset empties the batch.
func (bf *batchFilter) reset() {
	resetScanBatch(bf.b)
	bf.vals, bf.offs = bf.vals[:0], append(bf.offs[:0], 0)
	bf.keys, bf.koffs = bf.keys[:0], append(bf.koffs[:0], 0)
	bf.rids, bf.vers = bf.rids[:0], bf.vers[:0]
	bf.pass = bf.pass[:0]
	bf.slow = false
}

// len is the number of rows in the batch.
func (bf *batchFilter) len() int { return len(bf.rids) }

// add puts the stored row r into the batch.
func (bf *batchFilter) add(r storage.Row) error {
	n := len(bf.rids)
	bf.vals = append(bf.vals, r.Value...)
	bf.offs = append(bf.offs, int32(len(bf.vals)))
	bf.keys = append(bf.keys, r.Key...)
	bf.koffs = append(bf.koffs, int32(len(bf.keys)))
	bf.rids, bf.vers = append(bf.rids, r.RowID), append(bf.vers, r.CommitVersion)
	if bf.slow {
		return nil
	}
	if err := bf.dec.DecodeRaw(r.Value, bf.raw); err != nil {
		return err
	}
	if err := putRawRow(bf.b, n, bf.raw); err != nil {
		if err != errVecFallback {
			return err
		}
		bf.slow = true
	}
	return nil
}

// row returns the batch's stored row i (its key and value alias the
// batch).
func (bf *batchFilter) row(i int32) storage.Row {
	return storage.Row{Key: bf.keys[bf.koffs[i]:bf.koffs[i+1]], Value: bf.vals[bf.offs[i]:bf.offs[i+1]], RowID: bf.rids[i], CommitVersion: bf.vers[i]}
}

// test sets bf.pass to the rows of the batch that pass, in order. slow
// tests one row, for a batch the kernel cannot test (nil: such a batch
// returns errVecFallback).
func (bf *batchFilter) test(slow func(storage.Row) (bool, error)) error {
	n := bf.len()
	bf.pass = bf.pass[:0]
	if !bf.slow {
		endScanBatch(bf.b, n)
		bf.sel = vec.All(bf.sel, n)
		r, err := bf.cond(bf.b, bf.sel)
		if err == nil {
			batchesTested.Add(1)
			bf.pass = vec.True(r, bf.sel, bf.pass)
			return nil
		}
		if slow == nil {
			return err
		}
	}
	if slow == nil {
		return errVecFallback
	}
	batchesRetested.Add(1)
	for i := range int32(n) {
		ok, err := slow(bf.row(i))
		if err != nil {
			return err
		}
		if ok {
			bf.pass = append(bf.pass, i)
		}
	}
	return nil
}
