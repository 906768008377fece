package exec

import "github.com/mvserver/mvserver/sql/types"

// datumBlocks holds fixed-width rows of datums appended in order, in
// blocks of datumBlockRows rows: growing never copies what it holds. One
// slice grown by append to a million rows copied about twice its final
// size and zeroed it again (a third of W3's CREATE MATERIALIZED VIEW,
// the columnar window keeping four columns of 1M rows, was growslice's
// memmove).
type datumBlocks struct {
	width  int
	blocks [][]types.Datum
	n      int // rows
}

// datumBlockRows is the rows of one block.
const datumBlockRows = 4096

// appendCols appends a row made of r's columns cols (len(cols) is the
// width).
func (d *datumBlocks) appendCols(r Row, cols []int) {
	if d.width == 0 {
		d.n++
		return
	}
	if d.n%datumBlockRows == 0 {
		d.blocks = append(d.blocks, make([]types.Datum, 0, datumBlockRows*d.width))
	}
	b := &d.blocks[len(d.blocks)-1]
	for _, c := range cols {
		*b = append(*b, r[c])
	}
	d.n++
}

// row returns row i (its datums are shared, not copied).
func (d *datumBlocks) row(i int) []types.Datum {
	if d.width == 0 {
		return nil
	}
	o := (i % datumBlockRows) * d.width
	return d.blocks[i/datumBlockRows][o : o+d.width : o+d.width]
}
