package exec

import (
	"testing"

	"github.com/mvserver/mvserver/sql/types"
)

// TestDatumBlocks: rows appended across several blocks read back whole
// and in place, at each width (zero included).
func TestDatumBlocks(t *testing.T) {
	for _, width := range []int{0, 1, 3} {
		cols := []int{2, 0, 1}[:width]
		d := datumBlocks{width: width}
		n := 2*datumBlockRows + 17
		for i := range n {
			d.appendCols(Row{types.NewInt8(int64(3 * i)), types.NewInt8(int64(3*i + 1)), types.NewInt8(int64(3*i + 2))}, cols)
		}
		if d.n != n {
			t.Fatalf("width %d: %d rows, want %d", width, d.n, n)
		}
		for i := range n {
			r := d.row(i)
			if len(r) != width {
				t.Fatalf("width %d: row %d has %d datums", width, i, len(r))
			}
			for j, c := range cols {
				if r[j].I != int64(3*i+c) {
					t.Fatalf("width %d: row %d column %d is %d, want %d", width, i, j, r[j].I, 3*i+c)
				}
			}
		}
	}
}
