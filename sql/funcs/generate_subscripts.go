package funcs

import "github.com/mvserver/mvserver/sql/types"

// generate_subscripts(array, dim [, reverse]) is PostgreSQL's
// set-returning function of an array's subscripts along dimension dim:
// lower bound to upper (from 0 for int2vector and oidvector, which
// SQLAlchemy reads pg_index.indkey through), descending when reverse. The
// arrays here have one dimension: another dim, or an empty array, gives
// no rows.
func init() {
	srf := func(_ *Ctx, a []types.Datum) (RowIter, error) {
		n := len(a[0].Elems())
		if a[1].I != 1 || n == 0 {
			return func() ([]types.Datum, bool, error) { return nil, false, nil }, nil
		}
		lower := int64(types.ArrayLower(a[0].K))
		reverse := len(a) > 2 && a[2].Bool()
		i := 0
		return func() ([]types.Datum, bool, error) {
			if i >= n {
				return nil, false, nil
			}
			sub := lower + int64(i)
			if reverse {
				sub = lower + int64(n-1-i)
			}
			i++
			return []types.Datum{types.NewInt4(sub)}, true, nil
		}, nil
	}
	register(&Func{Name: "generate_subscripts", Deterministic: true, Overloads: []*Overload{
		{Params: []types.T{anyArray, types.Int4}, Poly: []Poly{PolyArray, PolyNone}, Ret: ret(types.Int4), NullStrict: true, SRF: srf},
		{Params: []types.T{anyArray, types.Int4, types.Bool}, Poly: []Poly{PolyArray, PolyNone, PolyNone}, Ret: ret(types.Int4), NullStrict: true, SRF: srf},
	}})
}
