package funcs

import (
	"unsafe"

	"github.com/mvserver/mvserver/sql/types"
)

// string_agg(value, delimiter): the non-NULL values joined, each after the
// first preceded by its own row's delimiter (as PostgreSQL defines it);
// NULL when there is none. Text and bytea. Its result follows the order
// rows arrive in, as array_agg's does.
func init() {
	register(&Func{Name: "string_agg", Deterministic: true, Agg: &AggDef{Ordered: true,
		Resolve: func(args []types.T) (types.T, func() AggState, bool) {
			if len(args) != 2 {
				return types.T{}, nil, false
			}
			ok := func(t types.T) bool { return t.IsString() || t.Kind == types.KindNull }
			if args[0].Kind == types.KindBytea && (args[1].Kind == types.KindBytea || args[1].Kind == types.KindUnknown || args[1].Kind == types.KindNull) {
				return types.Bytea, func() AggState { return &stringAgg{kind: types.KindBytea} }, true
			}
			if !ok(args[0]) || !ok(args[1]) {
				return types.T{}, nil, false
			}
			return types.Text, func() AggState { return &stringAgg{kind: types.KindText} }, true
		}}})
}

type stringAgg struct {
	kind types.Kind
	// buf holds the text so far; bytes once written are never changed
	// (appends go past them), so a result may share them.
	buf []byte
	any bool
}

func (s *stringAgg) Add(c *Ctx, a []types.Datum) error {
	if a[0].IsNull() {
		return nil
	}
	n := len(a[0].S)
	if s.any && !a[1].IsNull() {
		n += len(a[1].S)
	}
	if len(s.buf)+n > cap(s.buf) {
		// The text doubles as it grows, charged before it is allocated:
		// both buffers while it is copied, the growth after.
		want := max(2*cap(s.buf), len(s.buf)+n, 64)
		if err := c.Grow("aggregate string_agg", int64(want)); err != nil {
			return err
		}
		c.Shrink(int64(cap(s.buf)))
		s.buf = types.WithCap(s.buf, want)
	}
	if s.any && !a[1].IsNull() {
		s.buf = append(s.buf, a[1].S...)
	}
	s.any = true
	s.buf = append(s.buf, a[0].S...)
	return nil
}

func (s *stringAgg) Result(*Ctx) (types.Datum, error) {
	if !s.any {
		return types.NullDatum, nil
	}
	// No copy: the bytes given out are never written again.
	return types.NewString(s.kind, unsafe.String(unsafe.SliceData(s.buf), len(s.buf))), nil
}
