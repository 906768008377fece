package funcs

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// System and miscellaneous functions (R-Q3): pg_typeof (the binder
// answers it from the argument's type), num_nulls/num_nonnulls,
// current_setting/set_config over the session's settings, pg_sleep
// (cancellable through the statement's context), and the transaction-id
// functions, which mvserver has no ids for (0A000).
func init() {
	text, i4 := types.Text, types.Int4
	// pg_typeof(x): the binder replaces a call with the regtype of x's
	// type (this overload only serves pg_proc and a value's own kind).
	pure("pg_typeof", &Overload{Params: params(anyType), Ret: ret(types.Regtype), Fn: func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		return types.NewInt(types.KindRegtype, int64(types.T{Kind: a[0].K}.OID())), nil
	}})
	count := func(nulls bool) fnT {
		return func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			n := 0
			for _, d := range a {
				if d.IsNull() == nulls {
					n++
				}
			}
			return types.NewInt4(int64(n)), nil
		}
	}
	pure("num_nulls", &Overload{Params: params(anyType, anyType), Variadic: true, Ret: ret(i4), Fn: count(true)})
	pure("num_nonnulls", &Overload{Params: params(anyType, anyType), Variadic: true, Ret: ret(i4), Fn: count(false)})
	currentSetting := func(c *Ctx, a []types.Datum) (types.Datum, error) {
		if a[0].IsNull() {
			return types.NullDatum, nil
		}
		missingOK := len(a) > 1 && !a[1].IsNull() && a[1].Bool()
		if c.Settings != nil {
			for _, s := range c.Settings() {
				if strings.EqualFold(s.Name, a[0].S) {
					return types.NewText(s.Value), nil
				}
			}
		}
		if missingOK {
			return types.NullDatum, nil
		}
		return types.Datum{}, pgerror.New(pgerror.UndefinedObject, "unrecognized configuration parameter \"%s\"", a[0].S)
	}
	register(&Func{Name: "current_setting", Deterministic: false, Overloads: []*Overload{
		{Params: params(text), Ret: ret(text), NullStrict: true, Fn: currentSetting},
		{Params: params(text, types.Bool), Ret: ret(text), Fn: currentSetting},
	}})
	register(&Func{Name: "set_config", Deterministic: false, Overloads: []*Overload{{Params: params(text, text, types.Bool), Ret: ret(text),
		Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
			if a[0].IsNull() {
				return types.Datum{}, pgerror.New(pgerror.NullValueNotAllowed, "SET requires parameter name")
			}
			if !a[2].IsNull() && a[2].Bool() {
				return types.Datum{}, pgerror.New(pgerror.FeatureNotSupported, "set_config with is_local = true is not supported: use SET")
			}
			if c.SetSetting == nil {
				return types.Datum{}, pgerror.New(pgerror.FeatureNotSupported, "set_config cannot be used here")
			}
			v := ""
			if !a[1].IsNull() {
				v = a[1].S
			}
			s, err := c.SetSetting(a[0].S, v)
			if err != nil {
				return types.Datum{}, err
			}
			return types.NewText(s), nil
		}}}})
	register(&Func{Name: "pg_sleep", Deterministic: false, Overloads: []*Overload{{Params: params(types.Float8), Ret: ret(text), NullStrict: true,
		Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
			secs := a[0].F
			if math.IsNaN(secs) || secs <= 0 {
				return types.NewText(""), nil
			}
			d := time.Duration(math.Min(secs, 1e9) * float64(time.Second))
			ctx := c.Context
			if ctx == nil {
				ctx = context.Background()
			}
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				// pg_sleep returns void, an empty string in text
				return types.NewText(""), nil
			case <-ctx.Done():
				return types.Datum{}, pgerror.Convert(ctx.Err())
			}
		}}}})
	noXid := func(name string) {
		register(&Func{Name: name, Deterministic: false, Overloads: []*Overload{{Ret: ret(types.Int8),
			Fn: func(*Ctx, []types.Datum) (types.Datum, error) {
				return types.Datum{}, pgerror.New(pgerror.FeatureNotSupported, "%s() is not supported: mvserver transactions have no transaction ids", name)
			}}}})
	}
	noXid("txid_current")
	noXid("pg_current_xact_id")
	noXid("txid_current_if_assigned")
	noXid("pg_current_xact_id_if_assigned")
}
