package exec

import (
	"github.com/mvserver/mvserver/sql/exec/vec"
	"github.com/mvserver/mvserver/sql/types"
)

// A scan batch: the vectors a vectorized scan decodes stored rows into,
// one per column it reads (the aggregation's scan, vagg.go, and the join
// build's filtered scan, vscan_rows.go). Each round resets it, puts up to
// BatchSize rows, and ends it at the rows put.

// newScanBatch is an empty batch of columns of types ctypes.
func newScanBatch(ctypes []vtype) *vec.Batch {
	b := &vec.Batch{Cols: make([]*vec.Vec, len(ctypes))}
	for j, t := range ctypes {
		b.Cols[j] = &vec.Vec{T: t.t, Scale: t.scale}
	}
	return b
}

// resetScanBatch empties b for the next round.
func resetScanBatch(b *vec.Batch) {
	for _, v := range b.Cols {
		v.Reset(BatchSize)
		if v.T == vec.Bytes {
			v.Off = v.Off[:1]
		}
	}
}

// endScanBatch sets b to the n rows put.
func endScanBatch(b *vec.Batch, n int) {
	b.N = n
	for _, v := range b.Cols {
		if v.T != vec.Bytes {
			v.I = v.I[:n]
		}
	}
}

// putRawRow puts a decoded stored row (raw, one value per column of b) at
// row n of b's vectors; errVecFallback when a decimal is not at its
// vector's scale.
func putRawRow(b *vec.Batch, n int, raw []types.RawValue) error {
	for j, v := range b.Cols {
		x := &raw[j]
		if v.T == vec.Bytes {
			v.Data = append(v.Data, x.B...)
			v.Off = append(v.Off, int32(len(v.Data)))
			if x.K == types.KindNull {
				v.SetNull(int32(n))
			}
			continue
		}
		switch {
		case x.K == types.KindNull:
			v.I[n] = 0
			v.SetNull(int32(n))
		case v.T == vec.Decimal:
			if !x.Small || x.Exp != -v.Scale {
				return errVecFallback
			}
			v.I[n] = x.I
		default:
			v.I[n] = x.I
		}
	}
	return nil
}
