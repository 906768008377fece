package funcs

import "github.com/mvserver/mvserver/sql/types"

// bool_and / every, bool_or and count_if (R-Q3).
func init() {
	boolAgg := func(and bool) func(args []types.T) (types.T, func() AggState, bool) {
		return func(args []types.T) (types.T, func() AggState, bool) {
			if len(args) != 1 || args[0].Kind != types.KindBool {
				return types.T{}, nil, false
			}
			return types.Bool, func() AggState { return &boolState{and: and} }, true
		}
	}
	register(&Func{Name: "bool_and", Deterministic: true, Agg: &AggDef{Resolve: boolAgg(true)}})
	register(&Func{Name: "every", Deterministic: true, Agg: &AggDef{Resolve: boolAgg(true)}})
	register(&Func{Name: "bool_or", Deterministic: true, Agg: &AggDef{Resolve: boolAgg(false)}})
	register(&Func{Name: "count_if", Deterministic: true, Agg: &AggDef{Resolve: func(args []types.T) (types.T, func() AggState, bool) {
		if len(args) != 1 || args[0].Kind != types.KindBool {
			return types.T{}, nil, false
		}
		return types.Int8, func() AggState { return &countIf{} }, true
	}}})
}

// boolState is bool_and (every) or bool_or: NULLs are ignored; no non-NULL
// value gives NULL.
type boolState struct {
	and, any, v bool
}

func (s *boolState) Add(_ *Ctx, a []types.Datum) error {
	if a[0].IsNull() {
		return nil
	}
	b := a[0].Bool()
	switch {
	case !s.any:
		s.any, s.v = true, b
	case s.and:
		s.v = s.v && b
	default:
		s.v = s.v || b
	}
	return nil
}

func (s *boolState) Result(*Ctx) (types.Datum, error) {
	if !s.any {
		return types.NullDatum, nil
	}
	return types.NewBool(s.v), nil
}

// countIf counts the rows whose argument is true (Databricks count_if).
type countIf struct{ n int64 }

func (s *countIf) Add(_ *Ctx, a []types.Datum) error {
	if !a[0].IsNull() && a[0].Bool() {
		s.n++
	}
	return nil
}

func (s *countIf) Result(*Ctx) (types.Datum, error) { return types.NewInt8(s.n), nil }

// any_value (R-Q3): some value of the group — the first non-NULL one read,
// so it depends on the order rows arrive in (not deterministic).
func init() {
	register(&Func{Name: "any_value", Deterministic: false, Agg: &AggDef{Resolve: func(args []types.T) (types.T, func() AggState, bool) {
		if len(args) != 1 {
			return types.T{}, nil, false
		}
		return args[0], func() AggState { return &anyValue{} }, true
	}}})
}

type anyValue struct {
	any bool
	v   types.Datum
}

func (s *anyValue) Add(_ *Ctx, a []types.Datum) error {
	if !s.any && !a[0].IsNull() {
		s.any, s.v = true, a[0]
	}
	return nil
}

func (s *anyValue) Result(*Ctx) (types.Datum, error) {
	if !s.any {
		return types.NullDatum, nil
	}
	return s.v, nil
}
