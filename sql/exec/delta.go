package exec

import (
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// Operators for incremental refresh (plan.Given, plan.KeyIn).

// givenOp emits precomputed rows. Each batch is a fresh slice of the rows;
// the rows themselves are shared, so no operator may write into its input
// rows (none does: see doc.go).
type givenOp struct {
	rows [][]Row
	i    int
}

func newGiven(g *plan.Given) *givenOp {
	op := &givenOp{}
	for start := 0; start < len(g.Rows); start += BatchSize {
		end := min(start+BatchSize, len(g.Rows))
		b := make([]Row, end-start)
		for i := range b {
			b[i] = g.Rows[start+i]
		}
		op.rows = append(op.rows, b)
	}
	return op
}

func (g *givenOp) Next() ([]Row, error) {
	if g.i >= len(g.rows) {
		return nil, nil
	}
	g.i++
	return g.rows[g.i-1], nil
}

func (g *givenOp) Close() {}

// keyInOp keeps the rows whose key is in a set.
type keyInOp struct {
	c    *Ctx
	in   Operator
	keys []evalFn
	set  map[string]struct{}
	buf  []byte
}

func newKeyIn(c *Ctx, k *plan.KeyIn) (Operator, error) {
	in, err := Build(c, k.Input)
	if err != nil {
		return nil, err
	}
	fns, err := compileAll(k.Keys, c)
	if err != nil {
		in.Close()
		return nil, err
	}
	return &keyInOp{c: c, in: in, keys: fns, set: k.Set}, nil
}

func (k *keyInOp) Next() ([]Row, error) {
	for {
		b, err := k.in.Next()
		if err != nil || b == nil {
			return nil, err
		}
		out := b[:0:0]
		for _, r := range b {
			k.buf = k.buf[:0]
			for _, f := range k.keys {
				d, err := f(r)
				if err != nil {
					return nil, err
				}
				k.buf = types.HashKey(k.buf, d)
			}
			if _, ok := k.set[string(k.buf)]; ok {
				out = append(out, r)
			}
		}
		if len(out) > 0 {
			return out, nil
		}
	}
}

func (k *keyInOp) Close() { k.in.Close() }
