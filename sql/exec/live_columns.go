package exec

import "github.com/mvserver/mvserver/sql/plan"

// Live columns. A scan decodes only the columns the plan reads
// (plan.Scan.Needed) and leaves the others NULL, but its rows are as wide
// as its table, and a join's row is both sides' rows side by side: TPC-H-
// derived Q13 copied the 21 columns of customer and orders (64 bytes each)
// into each of its 153k joined rows to use 3 of them, a quarter of its
// time. A join copies only its sides' live columns into the joined row
// (whose other columns start NULL, as Datum's zero value is).

// liveColumns returns the columns of n's rows that can be other than
// NULL, in order; nil when that is not known (every column may be set).
func liveColumns(n plan.Node) []int {
	switch x := n.(type) {
	case *plan.Scan:
		var out []int
		for i, need := range x.Needed {
			if need {
				out = append(out, i)
			}
		}
		if out == nil {
			out = []int{} // no column read: all NULL
		}
		return out
	case *plan.Filter:
		return liveColumns(x.Input)
	case *plan.Join:
		if x.Kind.LeftOnly() || x.Kind == plan.JoinAntiNullAware {
			return liveColumns(x.Left)
		}
		l, r := liveColumns(x.Left), liveColumns(x.Right)
		if l == nil || r == nil {
			return nil
		}
		nl := len(x.Left.Columns())
		out := append([]int{}, l...)
		for _, i := range r {
			out = append(out, nl+i)
		}
		return out
	}
	return nil
}

// copyLive copies the live columns of src (nil: all) into dst.
func copyLive(dst, src Row, live []int) {
	if live == nil {
		copy(dst, src)
		return
	}
	for _, i := range live {
		dst[i] = src[i]
	}
}
