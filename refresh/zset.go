package refresh

import (
	"context"
	"slices"

	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// ZSet is a change of a bag of rows (STYLE.md's Z-set vocabulary): each row
// with an integer weight, +1 per copy gained, −1 per copy lost; an update is
// −old +new. Rows are identified by a key, their encoding; adding a row
// already present sums the weights, so a row both gained and lost cancels.
// Entries keep the order their keys were first seen in.
type ZSet struct {
	index   map[string]int
	entries []ZEntry
}

// ZEntry is one row of a Z-set with its summed weight.
type ZEntry struct {
	Key    string
	Row    exec.Row // nil unless the rows were kept
	Weight int64
}

// NewZSet returns an empty Z-set.
func NewZSet() *ZSet { return &ZSet{index: map[string]int{}} }

// Add adds w to the weight of the row with key. row, when not nil, is
// copied the first time the key is seen.
func (z *ZSet) Add(key []byte, row exec.Row, w int64) {
	if i, ok := z.index[string(key)]; ok {
		z.entries[i].Weight += w
		return
	}
	e := ZEntry{Key: string(key), Weight: w}
	if row != nil {
		e.Row = append(exec.Row(nil), row...)
	}
	z.index[e.Key] = len(z.entries)
	z.entries = append(z.entries, e)
}

// Weight is the summed weight of key (0 when absent).
func (z *ZSet) Weight(key string) int64 {
	if i, ok := z.index[key]; ok {
		return z.entries[i].Weight
	}
	return 0
}

// Entries are the rows in first-seen order, weight 0 included (a row
// gained and lost again): callers skip them.
func (z *ZSet) Entries() []ZEntry { return z.entries }

// Len is the number of distinct keys.
func (z *ZSet) Len() int { return len(z.entries) }

// rowSource produces rows, calling emit for each (emit may keep no
// reference to the row).
type rowSource func(emit func(exec.Row) error) error

// rowKeyer encodes a row of weight w as its Z-set key (appending to dst);
// keep false drops the row.
type rowKeyer func(dst []byte, r exec.Row, w int64) (key []byte, keep bool, err error)

// zTerm is one term of a change: rows of one weight.
type zTerm struct {
	src    rowSource
	weight int64
}

// consolidate is the one consolidation of a change: the rows of every term,
// each with its term's weight, summed per key into one Z-set. keepRows keeps
// each key's first row (for callers that need the values, not only the
// encoding).
func consolidate(terms []zTerm, key rowKeyer, keepRows bool) (*ZSet, error) {
	z := NewZSet()
	var buf []byte
	for _, t := range terms {
		if t.src == nil {
			continue
		}
		w := t.weight
		err := t.src(func(r exec.Row) error {
			var keep bool
			var err error
			if buf, keep, err = key(buf[:0], r, w); err != nil || !keep {
				return err
			}
			if keepRows {
				z.Add(buf, r, w)
			} else {
				z.Add(buf, nil, w)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return z, nil
}

// planRows is a rowSource over a plan's rows (nil: no rows), checking ctx
// between batches.
func planRows(ctx context.Context, xc *exec.Ctx, n plan.Node) rowSource {
	if n == nil {
		return nil
	}
	return func(emit func(exec.Row) error) error {
		op, err := exec.Build(xc, n)
		if err != nil {
			return err
		}
		return exec.Drain(op, func(rows []exec.Row) error {
			for _, r := range rows {
				if err := emit(r); err != nil {
					return err
				}
			}
			return ctx.Err()
		})
	}
}

// cancelRows takes the rows both gained and lost out of a scan's change:
// an UPDATE of columns the view does not read leaves the masked images of
// the row equal (TPC-H's balance and retail-price updates under Q7–Q9), and
// the pair is no change to anything above the scan. It sums the change as
// a Z-set keyed by the rows' stored encoding, which keeps a decimal's
// scale; the rows left come in the order they were first seen, each
// copy a row of its own.
func cancelRows(plus, minus [][]types.Datum) (p, m [][]types.Datum) {
	if len(plus) == 0 || len(minus) == 0 {
		return plus, minus
	}
	var ids []uint32
	var buf []byte
	z := NewZSet()
	add := func(rows [][]types.Datum, w int64) {
		for _, r := range rows {
			for len(ids) < len(r) {
				ids = append(ids, uint32(len(ids)+1))
			}
			buf = types.AppendRowValue(buf[:0], ids[:len(r)], r)
			z.Add(buf, r, w)
		}
	}
	add(minus, -1)
	add(plus, 1)
	for _, e := range z.Entries() {
		// The Z-set holds a copy of each distinct row; further copies
		// are cloned.
		switch {
		case e.Weight > 0:
			p = append(p, e.Row)
			for w := e.Weight; w > 1; w-- {
				p = append(p, slices.Clone(e.Row))
			}
		case e.Weight < 0:
			m = append(m, e.Row)
			for w := e.Weight; w < -1; w++ {
				m = append(m, slices.Clone(e.Row))
			}
		}
	}
	return p, m
}
