package funcs

import (
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// WindowDef is set for window-only functions (R-Q2): ranking and offset
// functions, computed over a partition of rows sorted by the window's
// ORDER BY. Calling one without OVER is an error (42809), as in PostgreSQL.
// Aggregates used as window functions keep their AggDef instead.
type WindowDef struct {
	// Params are the parameter types; the first MinArgs are required.
	// Unknown marks the polymorphic parameters: the binder gives them one
	// common type (lag's value and default), which Ret Unknown returns.
	Params  []types.T
	MinArgs int
	Ret     types.T
	// UsesFrame: the function reads the window frame (first_value,
	// last_value, nth_value); the others ignore it, as in PostgreSQL.
	UsesFrame bool
	// Eval computes the function for one row of a partition.
	Eval func(w *WindowRow) (types.Datum, error)
}

// WindowRow is what a window function sees when it computes one row: where
// the row is in its sorted partition, its peers (the rows equal to it in
// the window's ORDER BY; all rows of the partition without ORDER BY) and
// its frame.
type WindowRow struct {
	Row, Rows          int // the row's index, the partition's size
	PeerStart, PeerEnd int // the row's peer group, [PeerStart, PeerEnd)
	Group              int // the number of peer groups before the row's
	// Frame lists the rows of the frame as ranges of the partition, in
	// order, none empty; no range when the frame is empty. A frame is one
	// range unless its EXCLUDE clause cuts rows out of it.
	Frame []RowRange
	// Arg returns argument i evaluated at a row of the partition.
	Arg func(i, row int) types.Datum
	// NArgs is the number of arguments the call has.
	NArgs int
}

// RowRange is the rows [Start, End) of a partition.
type RowRange struct{ Start, End int }

// Determinism of window functions: the ranking functions that give peers
// the same answer (rank, dense_rank, percent_rank, cume_dist) depend only
// on the values in the partition. The others (row_number, ntile, lag, lead,
// first_value, last_value, nth_value) tell peers apart by the order the
// rows happen to arrive in, so they are deterministic only when the
// window's ORDER BY orders the partition completely: they are marked not
// deterministic.
func init() {
	rank := func(name string, ret types.T, det bool, eval func(w *WindowRow) (types.Datum, error)) {
		register(&Func{Name: name, Deterministic: det, Window: &WindowDef{Ret: ret, Eval: eval}})
	}
	rank("row_number", types.Int8, false, func(w *WindowRow) (types.Datum, error) {
		return types.NewInt8(int64(w.Row + 1)), nil
	})
	rank("rank", types.Int8, true, func(w *WindowRow) (types.Datum, error) {
		return types.NewInt8(int64(w.PeerStart + 1)), nil
	})
	rank("dense_rank", types.Int8, true, func(w *WindowRow) (types.Datum, error) {
		return types.NewInt8(int64(w.Group + 1)), nil
	})
	rank("percent_rank", types.Float8, true, func(w *WindowRow) (types.Datum, error) {
		if w.Rows <= 1 {
			return types.NewFloat8(0), nil
		}
		return types.NewFloat8(float64(w.PeerStart) / float64(w.Rows-1)), nil
	})
	rank("cume_dist", types.Float8, true, func(w *WindowRow) (types.Datum, error) {
		return types.NewFloat8(float64(w.PeerEnd) / float64(w.Rows)), nil
	})
	register(&Func{Name: "ntile", Deterministic: false, Window: &WindowDef{Params: []types.T{types.Int4}, MinArgs: 1, Ret: types.Int4, Eval: ntile}})
	offset := func(name string, dir int) {
		register(&Func{Name: name, Deterministic: false, Window: &WindowDef{
			Params: []types.T{types.Unknown, types.Int4, types.Unknown}, MinArgs: 1, Ret: types.Unknown,
			Eval: func(w *WindowRow) (types.Datum, error) { return lagLead(w, dir) },
		}})
	}
	offset("lag", -1)
	offset("lead", 1)
	register(&Func{Name: "first_value", Deterministic: false, Window: &WindowDef{
		Params: []types.T{types.Unknown}, MinArgs: 1, Ret: types.Unknown, UsesFrame: true,
		Eval: func(w *WindowRow) (types.Datum, error) {
			if len(w.Frame) == 0 {
				return types.NullDatum, nil
			}
			return w.Arg(0, w.Frame[0].Start), nil
		},
	}})
	register(&Func{Name: "last_value", Deterministic: false, Window: &WindowDef{
		Params: []types.T{types.Unknown}, MinArgs: 1, Ret: types.Unknown, UsesFrame: true,
		Eval: func(w *WindowRow) (types.Datum, error) {
			if len(w.Frame) == 0 {
				return types.NullDatum, nil
			}
			return w.Arg(0, w.Frame[len(w.Frame)-1].End-1), nil
		},
	}})
	register(&Func{Name: "nth_value", Deterministic: false, Window: &WindowDef{
		Params: []types.T{types.Unknown, types.Int4}, MinArgs: 2, Ret: types.Unknown, UsesFrame: true,
		Eval: nthValue,
	}})
}

// ntile divides the partition into n buckets as equal as can be, the
// first ones a row larger. n is read at the partition's first row, as
// PostgreSQL does.
func ntile(w *WindowRow) (types.Datum, error) {
	nd := w.Arg(0, 0)
	if nd.IsNull() {
		return types.NullDatum, nil
	}
	n := nd.I
	if n <= 0 {
		return types.Datum{}, pgerror.New(pgerror.InvalidArgumentForNtile, "argument of ntile must be greater than zero")
	}
	rows, i := int64(w.Rows), int64(w.Row)
	per, extra := rows/n, rows%n
	if i < extra*(per+1) {
		return types.NewInt4(i/(per+1) + 1), nil
	}
	return types.NewInt4((i-extra*(per+1))/per + extra + 1), nil
}

// lagLead reads the value offset rows before (dir -1) or after (dir 1) the
// current one in the partition (offset 1 by default, negative allowed),
// or the default (NULL unless given) past the partition's ends.
func lagLead(w *WindowRow, dir int) (types.Datum, error) {
	off := int64(1)
	if w.NArgs > 1 {
		d := w.Arg(1, w.Row)
		if d.IsNull() {
			return types.NullDatum, nil
		}
		off = d.I
	}
	target := int64(w.Row) + int64(dir)*off
	if target >= 0 && target < int64(w.Rows) {
		return w.Arg(0, int(target)), nil
	}
	if w.NArgs > 2 {
		return w.Arg(2, w.Row), nil
	}
	return types.NullDatum, nil
}

// nthValue is the value at the nth row (1-based) of the frame.
func nthValue(w *WindowRow) (types.Datum, error) {
	nd := w.Arg(1, w.Row)
	if nd.IsNull() {
		return types.NullDatum, nil
	}
	if nd.I <= 0 {
		return types.Datum{}, pgerror.New(pgerror.InvalidArgumentForNthValue, "argument of nth_value must be greater than zero")
	}
	k := nd.I - 1 // rows to skip
	for _, r := range w.Frame {
		if n := int64(r.End - r.Start); k >= n {
			k -= n
			continue
		}
		return w.Arg(0, r.Start+int(k)), nil
	}
	return types.NullDatum, nil
}
