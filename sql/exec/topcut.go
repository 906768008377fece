package exec

import (
	"sync/atomic"

	"github.com/mvserver/mvserver/sql/exec/vec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// A top-N's cutoff inside its scan. Under ORDER BY … LIMIT n the sort
// keeps the first n rows so far (sort.go) and drops every later row whose
// keys do not sort before the last of them (the cutoff); past its first
// compactions it drops almost every row, each after the scan decoded it
// whole (a decimal costs an allocation) and the sort evaluated its keys.
// When the first sort key is a plain column of the scan (through
// projections that pick columns, and a filter that runs in the scan)
// holding integers, dates, timestamps or NUMERIC(p ≤ 18), the scan reads
// that column alone from each stored row, as an int64 without a Datum,
// and skips the row when it sorts strictly after the cutoff's first key:
// the sort would drop it (its later keys cannot bring it back). NULLs
// take their place in the order: a NULL cutoff under NULLS FIRST skips
// every non-NULL row, a NULL row under NULLS LAST sorts after any value.
// A value the int64 cannot hold, in a row or in the cutoff, goes to the
// sort as before, which decides it exactly; the test
// runs after the scan's filter, so the filter raises its errors on the
// same rows. The sort sets the cutoff at each compaction; the scan's
// readahead goroutine reads it (atomics: a stale cutoff is a looser one).

// The cutoff's states (topCut.mode); each only moves to a later one.
const (
	cutNone = iota
	cutValue
	cutNull
)

// topCut is the cutoff test of one scan.
type topCut struct {
	dec              *types.RowDecoder // the key's column alone, into raw[0]
	raw              []types.RawValue
	desc, nullsFirst bool
	decimal          bool
	scale            int32 // decimal: the column's scale

	// mode is cutNone, cutValue (cut holds the cutoff's first key) or
	// cutNull (the cutoff's first key is a NULL that sorts first).
	mode atomic.Int32
	cut  atomic.Int64
	// skipped counts the rows the scan skipped (tests).
	skipped int64
}

// newTopCut attaches a cutoff test to the scan under the sort s (built
// as in), or returns nil when s's first key is not a column it can read.
func newTopCut(c *Ctx, s *plan.Sort, in Operator) *topCut {
	if c.RowAtATime || len(s.Keys) == 0 {
		return nil
	}
	e, n, op := s.Keys[0].E, s.Input, in
	filtered := false
	for {
		ref, ok := e.(*plan.ColRef)
		if !ok {
			return nil
		}
		switch x := n.(type) {
		case *plan.Project:
			p, ok := op.(*projectOp)
			if !ok || filtered || ref.Idx >= len(x.Exprs) {
				return nil
			}
			e, n, op = x.Exprs[ref.Idx], x.Input, p.in
			continue
		case *plan.Filter:
			// Only a filter that runs in the scan (scan_filter.go).
			if filtered {
				return nil
			}
			n, filtered = x.Input, true
			continue
		case *plan.Scan:
			sc, ok := op.(*scanOp)
			if !ok || sc.s != x || sc.point || filtered != (sc.pred != nil) || sc.cut != nil ||
				ref.Idx >= sc.nTable || !x.Needed[ref.Idx] || c.keeping(storage.TableID(x.Table.ID)) {
				return nil
			}
			col := x.Table.Columns[ref.Idx]
			t := &topCut{desc: s.Keys[0].Desc, nullsFirst: s.Keys[0].NullsFirst, raw: make([]types.RawValue, 1)}
			vt, ok := vecTypeOf(col.Type)
			switch {
			case ok && vt.t == vec.Int:
			case ok && vt.t == vec.Decimal:
				t.decimal, t.scale = true, vt.scale
			default:
				return nil
			}
			t.dec = types.NewRowDecoderAt([]uint32{col.ID}, []int{0})
			sc.cut = t
			return t
		}
		return nil
	}
}

// set makes d (the cutoff's first key) the cutoff. A NULL that sorts
// last, or a value the int64 cannot hold, leaves the cutoff as it was (a
// looser one, or none).
func (t *topCut) set(d types.Datum) {
	if d.IsNull() {
		if t.nullsFirst {
			t.mode.Store(cutNull)
		}
		return
	}
	v := d.I
	if t.decimal {
		var ok bool
		if v, ok = decimalAtScale(d, t.scale); !ok {
			return
		}
	}
	t.cut.Store(v)
	t.mode.Store(cutValue)
}

// past reports whether the stored row r sorts strictly after the cutoff
// by its first key: the sort would drop it.
func (t *topCut) past(r storage.Row) bool {
	mode := t.mode.Load()
	if mode == cutNone {
		return false
	}
	x := &t.raw[0]
	if err := t.dec.DecodeRaw(r.Value, t.raw); err != nil {
		return false // the scan decodes it whole, and reports its error
	}
	if x.K == types.KindNull {
		return mode == cutValue && !t.nullsFirst
	}
	if mode == cutNull {
		return true
	}
	if t.decimal && (!x.Small || x.Exp != -t.scale) {
		return false
	}
	c := t.cut.Load()
	if t.desc {
		return x.I < c
	}
	return x.I > c
}
