package funcs

import (
	"strings"

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
	b    strings.Builder
	any  bool
}

func (s *stringAgg) Add(_ *Ctx, a []types.Datum) error {
	if a[0].IsNull() {
		return nil
	}
	if s.any && !a[1].IsNull() {
		s.b.WriteString(a[1].S)
	}
	s.any = true
	s.b.WriteString(a[0].S)
	return nil
}

func (s *stringAgg) Result(*Ctx) (types.Datum, error) {
	if !s.any {
		return types.NullDatum, nil
	}
	return types.NewString(s.kind, s.b.String()), nil
}
