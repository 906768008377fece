package funcs

import (
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// Aggregates building arrays. Their result follows the order rows arrive
// in (AggDef.Ordered): array_agg(x ORDER BY …) fixes it; with DISTINCT the
// values come sorted, as PostgreSQL's sort-based DISTINCT gives them.
func init() {
	resolve := func(skipNulls, emptyArray bool) func(args []types.T) (types.T, func() AggState, bool) {
		return func(args []types.T) (types.T, func() AggState, bool) {
			if len(args) != 1 || args[0].IsArray() {
				// array_agg over arrays builds a multidimensional array.
				return types.T{}, nil, false
			}
			return types.ArrayOf(args[0]), func() AggState { return &arrayAgg{skipNulls: skipNulls, emptyArray: emptyArray} }, true
		}
	}
	register(&Func{Name: "array_agg", Deterministic: true, Agg: &AggDef{Resolve: resolve(false, false), Ordered: true}})
	// Databricks: collect_list skips NULLs and gives [] for no rows;
	// collect_set is collect_list(DISTINCT …) (the binder adds DISTINCT).
	register(&Func{Name: "collect_list", Deterministic: true, Agg: &AggDef{Resolve: resolve(true, true), Ordered: true}})
	register(&Func{Name: "collect_set", Deterministic: true, Agg: &AggDef{Resolve: resolve(true, true), Ordered: true, Distinct: true}})
}

// ErrArrayAggOfArray is the error for array_agg over array values, which
// PostgreSQL answers with a multidimensional array.
var ErrArrayAggOfArray = pgerror.New(pgerror.FeatureNotSupported, "array_agg of arrays (a multidimensional array) is not supported")

type arrayAgg struct {
	skipNulls, emptyArray bool
	elems                 []types.Datum
	any                   bool
}

func (s *arrayAgg) Add(c *Ctx, a []types.Datum) error {
	s.any = true
	if a[0].IsNull() && s.skipNulls {
		return nil
	}
	var err error
	s.elems, err = appendKept(c, "aggregate array_agg", s.elems, a[0])
	return err
}

func (s *arrayAgg) Result(c *Ctx) (types.Datum, error) {
	if !s.any && !s.emptyArray {
		return types.NullDatum, nil
	}
	// The state keeps adding after a window frame's result is read: hand
	// out a copy.
	held, err := c.Reserve("aggregate array_agg", int64(len(s.elems))*types.DatumBytes)
	if err != nil {
		return types.Datum{}, err
	}
	defer c.Release(held)
	return types.NewArray(types.KindArray, append(make([]types.Datum, 0, len(s.elems)), s.elems...)), nil
}
