package funcs

import (
	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// Set-returning functions (Overload.SRF): called in FROM or in a select
// list, each call yields rows of the columns Overload.Cols lists (or one
// column of type Ret). A NullStrict overload yields no rows when an
// argument is NULL.

// RowIter returns the next row of a set-returning call; ok=false at the
// end. The row is the caller's to keep.
type RowIter func() (row []types.Datum, ok bool, err error)

// Col is one output column of a set-returning function.
type Col struct {
	Name string
	T    types.T
}

// sliceIter yields one-column rows from vals.
func sliceIter(vals []types.Datum) RowIter {
	i := 0
	return func() ([]types.Datum, bool, error) {
		if i >= len(vals) {
			return nil, false, nil
		}
		i++
		return []types.Datum{vals[i-1]}, true, nil
	}
}

func init() {
	unnest := func(_ *Ctx, a []types.Datum) (RowIter, error) { return sliceIter(a[0].Elems()), nil }
	register(&Func{Name: "unnest", Deterministic: true, Overloads: []*Overload{{Params: []types.T{anyArray}, Poly: polyA, Ret: elemOf(0), NullStrict: true, SRF: unnest}}})
	// Databricks explode: unnest under Spark's column name.
	register(&Func{Name: "explode", Deterministic: true, Overloads: []*Overload{{Params: []types.T{anyArray}, Poly: polyA, Ret: elemOf(0), NullStrict: true, SRF: unnest,
		Cols: func(args []types.T) []Col { return []Col{{Name: "col", T: args[0].ElemType()}} }}}})
	// information_schema._pg_expandarray(arr): (x, n) per element, n
	// counting from 1 whatever the array's lower bound (pgjdbc reads
	// pg_index.indkey through it).
	register(&Func{Name: "_pg_expandarray", Deterministic: true, Overloads: []*Overload{{Params: []types.T{anyArray}, Poly: polyA, Ret: elemOf(0), NullStrict: true,
		Cols: func(args []types.T) []Col {
			return []Col{{Name: "x", T: args[0].ElemType()}, {Name: "n", T: types.Int4}}
		},
		SRF: func(_ *Ctx, a []types.Datum) (RowIter, error) {
			elems, i := a[0].Elems(), 0
			return func() ([]types.Datum, bool, error) {
				if i >= len(elems) {
					return nil, false, nil
				}
				i++
				return []types.Datum{elems[i-1], types.NewInt4(int64(i))}, true, nil
			}, nil
		}}}})
	register(&Func{Name: "generate_series", Deterministic: true, Overloads: []*Overload{
		seriesInt(types.Int4, false), seriesInt(types.Int4, true),
		seriesInt(types.Int8, false), seriesInt(types.Int8, true),
		seriesNumeric(false), seriesNumeric(true),
		seriesTime(types.TimestampTZ), seriesTime(types.Timestamp),
	}})
}

func errZeroStep() error {
	return pgerror.New(pgerror.InvalidParameterValue, "step size cannot equal zero")
}

// seriesInt is generate_series over integers; it stops rather than
// overflow, as PostgreSQL does.
func seriesInt(t types.T, step bool) *Overload {
	params := []types.T{t, t}
	if step {
		params = append(params, t)
	}
	return &Overload{Params: params, Ret: ret(t), NullStrict: true, SRF: func(_ *Ctx, a []types.Datum) (RowIter, error) {
		cur, stop, inc := a[0].I, a[1].I, int64(1)
		if step {
			inc = a[2].I
		}
		if inc == 0 {
			return nil, errZeroStep()
		}
		done := false
		return func() ([]types.Datum, bool, error) {
			if done || inc > 0 && cur > stop || inc < 0 && cur < stop {
				return nil, false, nil
			}
			v := cur
			next, err := types.IntAdd(t.Kind, cur, inc)
			if err != nil {
				done = true
			}
			cur = next
			return []types.Datum{types.NewInt(t.Kind, v)}, true, nil
		}, nil
	}}
}

// seriesNumeric is generate_series over numeric; NaN and infinite bounds
// are errors.
func seriesNumeric(step bool) *Overload {
	params := []types.T{types.Numeric, types.Numeric}
	if step {
		params = append(params, types.Numeric)
	}
	return &Overload{Params: params, Ret: ret(types.Numeric), NullStrict: true, SRF: func(_ *Ctx, a []types.Datum) (RowIter, error) {
		inc := apd.New(1, 0)
		if step {
			inc = a[2].D
		}
		for i, what := range []string{"start", "stop", "step size"}[:len(a)] {
			d := a[i].D
			if i == 2 {
				d = inc
			}
			switch d.Form {
			case apd.NaN, apd.NaNSignaling:
				return nil, pgerror.New(pgerror.InvalidParameterValue, "%s value cannot be NaN", what)
			case apd.Infinite:
				return nil, pgerror.New(pgerror.InvalidParameterValue, "%s value cannot be infinity", what)
			}
		}
		if inc.IsZero() {
			return nil, errZeroStep()
		}
		cur, stop := a[0].D, a[1].D
		return func() ([]types.Datum, bool, error) {
			c := cur.Cmp(stop)
			if !inc.Negative && c > 0 || inc.Negative && c < 0 {
				return nil, false, nil
			}
			v := cur
			next, err := types.NumericAdd(cur, inc)
			if err != nil {
				return nil, false, err
			}
			cur = next
			return []types.Datum{types.NewNumeric(v)}, true, nil
		}, nil
	}}
}

// seriesTime is generate_series(start, stop, interval) over timestamps:
// each value is the previous one plus the step, in calendar terms.
func seriesTime(t types.T) *Overload {
	return &Overload{Params: []types.T{t, t, types.Interval}, Ret: ret(t), NullStrict: true, SRF: func(c *Ctx, a []types.Datum) (RowIter, error) {
		inc := a[2]
		sign := types.Compare(inc, types.NewInterval(0, 0, 0))
		if sign == 0 {
			return nil, errZeroStep()
		}
		cur, stop := a[0].I, a[1].I
		done := false
		return func() ([]types.Datum, bool, error) {
			if done || sign > 0 && cur > stop || sign < 0 && cur < stop {
				return nil, false, nil
			}
			v := cur
			next, err := types.AddInterval(t.Kind, cur, inc, 1, c.Env)
			if err != nil {
				done = true
			}
			cur = next
			return []types.Datum{types.NewTimestamp(t.Kind, v)}, true, nil
		}, nil
	}}
}
