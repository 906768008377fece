package exec

import (
	"cmp"
	"slices"

	"github.com/mvserver/mvserver/sql/types"
)

// A window's rows are sorted by their partition and order keys. When every
// key of every row is a non-NULL integer-like value (integers, dates,
// timestamps: types.Compare orders them by their int64), the sort runs on
// the keys packed into fixed-size structs of int64s, a descending key
// stored bit-flipped (^x reverses the order of int64s without overflow):
// no Datum comparison and no indirection through the row index per
// comparison, which was half of a window over a million rows (issue 21).
// Ties go to the rows' whole values and then the input order, as in the
// general sort, so the order is the same.

// intSortKeys is the most keys the packed sort takes.
const intSortKeys = 4

type intSortRow struct {
	k [intSortKeys]int64
	i int
}

// intKeyKind reports whether Compare orders datums of kind k by their I.
func intKeyKind(k types.Kind) bool {
	switch k {
	case types.KindBool, types.KindInt2, types.KindInt4, types.KindInt8, types.KindOid, types.KindRegclass, types.KindRegtype, types.KindRegproc, types.KindRegnamespace, types.KindRegrole, types.KindDate, types.KindTimestamp, types.KindTimestampTZ:
		return true
	}
	return false
}

// sortIntKeys sorts perm (the row indexes 0..n-1) by keys (m per row:
// ascending unless desc says otherwise) when they all suit the packed
// sort; false (perm untouched) when not.
func sortIntKeys(perm []int, keys []types.Datum, m int, desc []bool, rows []Row) bool {
	if m == 0 || m > intSortKeys {
		return false
	}
	for _, d := range keys {
		if !intKeyKind(d.K) {
			return false
		}
	}
	packed := make([]intSortRow, len(perm))
	for i := range packed {
		p := &packed[i]
		p.i = i
		for j := range m {
			x := keys[i*m+j].I
			if desc[j] {
				x = ^x
			}
			p.k[j] = x
		}
	}
	slices.SortFunc(packed, func(a, b intSortRow) int {
		for j := range m {
			if c := cmp.Compare(a.k[j], b.k[j]); c != 0 {
				return c
			}
		}
		if c := compareRowValues(rows[a.i], rows[b.i]); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	for i := range packed {
		perm[i] = packed[i].i
	}
	return true
}
