package exec

import (
	"cmp"
	"slices"

	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// The columnar window. A window of ranking calls (row_number, rank,
// dense_rank, percent_rank, cume_dist: no argument, no frame) over
// integer-like keys (intKeyKind) does not hold its input rows: while it
// reads its input it packs each row's keys into int64s (window_intsort.go)
// and keeps only the input columns its parent reads, then sorts the packed
// keys, computes the calls over the sorted keys, and builds full-width
// output rows one batch at a time. The row path copied every input row into
// a full-width row of 64-byte datums and held them all: for a window over a
// million rows, two thirds of the server's CPU went to writing and
// garbage-collecting that memory (issue 21).
//
// Peers in ORDER BY are put in the row path's order (window.go, sortKeys):
// by their whole rows, then the input order. The columns kept for that are
// the row's but those that are plain column keys (equal among peers), so a
// window whose keys are its input's columns keeps only what its parent
// reads, and row_number gives each row the number the row path gives it:
// an incremental refresh and a full one agree whichever path runs.

// windowNeeds records, for a window directly under a Project, an
// Aggregate or Filters over one of them, which of the window's output
// columns that parent reads. A window not recorded keeps every column.
func windowNeeds(c *Ctx, parent plan.Node) {
	if c.RowAtATime {
		return
	}
	var exprs []plan.Expr
	exprs = append(exprs, plan.NodeExprs(parent)...)
	n := plan.NodeInputs(parent)
	for len(n) == 1 {
		f, ok := n[0].(*plan.Filter)
		if !ok {
			break
		}
		exprs = append(exprs, plan.NodeExprs(f)...)
		n = plan.NodeInputs(f)
	}
	if len(n) != 1 {
		return
	}
	w, ok := n[0].(*plan.Window)
	if !ok {
		return
	}
	need := make([]bool, len(w.Cols))
	known := true
	for _, e := range exprs {
		plan.Walk(e, func(x plan.Expr) bool {
			switch x := x.(type) {
			case *plan.ColRef:
				if x.Idx >= 0 && x.Idx < len(need) {
					need[x.Idx] = true
				} else {
					known = false
				}
			case *plan.Subquery:
				// A subquery may read the row through its correlation.
				known = false
			}
			return known
		})
	}
	if !known {
		return
	}
	st := c.state()
	if st.windowNeeds == nil {
		st.windowNeeds = map[*plan.Window][]bool{}
	}
	st.windowNeeds[w] = need
}

// colWindow is the columnar window operator.
type colWindow struct {
	c     *Ctx
	in    Operator
	node  *plan.Window
	spec  *winSpec
	width int
	base  int
	// keep are the input columns copied to the output.
	keep []int
	// keyTypes: per key, whether NULL sorts first.
	nullsFirst, desc []bool
	np               int
	mem              memAccount

	done   bool
	sorted []colWinRow
	kept   datumBlocks // the keep columns of each input row, in input order
	res    [][]types.Datum
	pos    int
}

// colWinRow is one input row's packed keys: per key a rank (0 NULL first,
// 1 a value, 2 NULL last) then the value, and the row's input index.
type colWinRow struct {
	k [intSortKeys]int64
	r [intSortKeys]uint8
	i int
}

// newColWindow returns the columnar window for w when it suits (see
// above), else nil.
func newColWindow(c *Ctx, w *plan.Window, in Operator, op *windowOp) *colWindow {
	if c.RowAtATime || len(op.windows) != 1 {
		return nil
	}
	need, ok := c.state().windowNeeds[w]
	if !ok {
		return nil
	}
	spec := op.windows[0]
	np := len(spec.part)
	if np+len(spec.order) > intSortKeys {
		return nil
	}
	cw := &colWindow{c: c, in: in, node: w, spec: spec, width: len(w.Cols), base: op.base, np: np, mem: op.mem}
	for _, e := range w.Calls[0].PartitionBy {
		if !intKeyKind(e.Type().Kind) {
			return nil
		}
		cw.nullsFirst = append(cw.nullsFirst, false)
		cw.desc = append(cw.desc, false)
	}
	for _, k := range spec.keys {
		if !intKeyKind(k.E.Type().Kind) {
			return nil
		}
		cw.nullsFirst = append(cw.nullsFirst, k.NullsFirst)
		cw.desc = append(cw.desc, k.Desc)
	}
	for _, wc := range spec.calls {
		call := wc.call
		if call.Agg != nil || call.Fn == nil || call.Fn.Window == nil || call.Fn.Window.UsesFrame ||
			len(call.Args) != 0 || call.Filter != nil {
			return nil
		}
	}
	// Kept: what the parent reads, and what the row path's tie-break reads
	// (its row's columns but the plain column keys, equal among peers).
	keep := slices.Clone(need[:op.base])
	rowCols := op.copyCols
	if rowCols == nil {
		for i := 0; i < op.base; i++ {
			rowCols = append(rowCols, i)
		}
	}
	isKey := make([]bool, op.base)
	for _, e := range w.Calls[0].PartitionBy {
		if r, ok := e.(*plan.ColRef); ok && r.Idx < op.base {
			isKey[r.Idx] = true
		}
	}
	for _, k := range spec.keys {
		if r, ok := k.E.(*plan.ColRef); ok && r.Idx < op.base {
			isKey[r.Idx] = true
		}
	}
	for _, i := range rowCols {
		if !isKey[i] {
			keep[i] = true
		}
	}
	for i, k := range keep {
		if k {
			cw.keep = append(cw.keep, i)
		}
	}
	cw.kept.width = len(cw.keep)
	return cw
}

func (w *colWindow) Next() ([]Row, error) {
	if !w.done {
		w.done = true
		if err := w.compute(); err != nil {
			return nil, err
		}
	}
	n := len(w.sorted)
	if w.pos >= n {
		return nil, nil
	}
	end := min(n, w.pos+BatchSize)
	out := make([]Row, end-w.pos)
	block := make([]types.Datum, len(out)*w.width)
	for o := range out {
		s := w.pos + o
		row := block[o*w.width : (o+1)*w.width : (o+1)*w.width]
		kr := w.kept.row(w.sorted[s].i)
		for j, col := range w.keep {
			row[col] = kr[j]
		}
		for j, wc := range w.spec.calls {
			row[w.base+wc.idx] = w.res[j][s]
		}
		out[o] = row
	}
	w.pos = end
	return out, w.c.Context.Err()
}

func (w *colWindow) Close() {
	w.in.Close()
	w.mem.release()
}

// compute reads the input, sorts it and computes the calls.
func (w *colWindow) compute() error {
	reuseInput(w.in)
	fns := append(append([]evalFn{}, w.spec.part...), w.spec.order...)
	m := len(fns)
	nk := len(w.keep)
	perRow := 48 + int64(nk+len(w.spec.calls))*datumBytes
	err := Drain(w.in, func(b []Row) error {
		for _, r := range b {
			p := colWinRow{i: len(w.sorted)}
			for j, f := range fns {
				d, err := f(r)
				if err != nil {
					return err
				}
				switch {
				case d.IsNull():
					p.r[j] = 2
					if w.nullsFirst[j] {
						p.r[j] = 0
					}
				case w.desc[j]:
					p.r[j], p.k[j] = 1, ^d.I
				default:
					p.r[j], p.k[j] = 1, d.I
				}
			}
			w.sorted = append(w.sorted, p)
			w.kept.appendCols(r, w.keep)
		}
		if err := w.mem.grow(int64(len(b)) * perRow); err != nil {
			return err
		}
		return w.c.Context.Err()
	})
	if err != nil {
		return err
	}
	kept := &w.kept
	slices.SortFunc(w.sorted, func(a, b colWinRow) int {
		for j := range m {
			if c := cmp.Compare(a.r[j], b.r[j]); c != 0 {
				return c
			}
			if c := cmp.Compare(a.k[j], b.k[j]); c != 0 {
				return c
			}
		}
		if nk > 0 {
			if c := compareRowValues(kept.row(a.i), kept.row(b.i)); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.i, b.i)
	})
	if err := w.c.Context.Err(); err != nil {
		return err
	}
	n := len(w.sorted)
	w.res = make([][]types.Datum, len(w.spec.calls))
	for j := range w.res {
		w.res[j] = make([]types.Datum, n)
	}
	var wr funcs.WindowRow
	for start := 0; start < n; {
		end := start + 1
		for end < n && sameKeys(&w.sorted[start], &w.sorted[end], 0, w.np) {
			end++
		}
		part := w.sorted[start:end]
		wr.Rows = len(part)
		wr.Group = 0
		for ps := 0; ps < len(part); {
			pe := ps + 1
			for pe < len(part) && sameKeys(&part[ps], &part[pe], w.np, m) {
				pe++
			}
			wr.PeerStart, wr.PeerEnd = ps, pe
			for i := ps; i < pe; i++ {
				wr.Row = i
				for j, wc := range w.spec.calls {
					d, err := wc.call.Fn.Window.Eval(&wr)
					if err != nil {
						return err
					}
					w.res[j][start+i] = d
				}
			}
			wr.Group++
			ps = pe
		}
		if err := w.c.Context.Err(); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// sameKeys reports whether a and b have the same keys [from, to).
func sameKeys(a, b *colWinRow, from, to int) bool {
	for j := from; j < to; j++ {
		if a.r[j] != b.r[j] || a.k[j] != b.k[j] {
			return false
		}
	}
	return true
}
