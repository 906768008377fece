package funcs

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

var anyType = types.Unknown

func init() {
	register(&Func{Name: "lower", Deterministic: true, Overloads: []*Overload{{Params: []types.T{types.Text}, Ret: ret(types.Text), NullStrict: true,
		Fn: textFn("lower", 1, strings.ToLower)}}})
	register(&Func{Name: "upper", Deterministic: true, Overloads: []*Overload{{Params: []types.T{types.Text}, Ret: ret(types.Text), NullStrict: true,
		Fn: textFn("upper", 1, strings.ToUpper)}}})
	length := []*Overload{
		{Params: []types.T{types.Text}, Ret: ret(types.Int4), NullStrict: true,
			Fn: func(_ *Ctx, a []types.Datum) (types.Datum, error) {
				return types.NewInt4(int64(utf8.RuneCountInString(a[0].S))), nil
			}},
		{Params: []types.T{types.Bytea}, Ret: ret(types.Int4), NullStrict: true,
			Fn: func(_ *Ctx, a []types.Datum) (types.Datum, error) { return types.NewInt4(int64(len(a[0].S))), nil }},
	}
	register(&Func{Name: "length", Deterministic: true, Overloads: length})
	register(&Func{Name: "char_length", Deterministic: true, Overloads: length[:1]})
	register(&Func{Name: "character_length", Deterministic: true, Overloads: length[:1]})
	register(&Func{Name: "abs", Deterministic: true, Overloads: []*Overload{
		{Params: []types.T{types.Int2}, Ret: ret(types.Int2), NullStrict: true, Fn: absInt(types.KindInt2)},
		{Params: []types.T{types.Int4}, Ret: ret(types.Int4), NullStrict: true, Fn: absInt(types.KindInt4)},
		{Params: []types.T{types.Int8}, Ret: ret(types.Int8), NullStrict: true, Fn: absInt(types.KindInt8)},
		{Params: []types.T{types.Numeric}, Ret: ret(types.Numeric), NullStrict: true, Fn: func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			r := new(apd.Decimal)
			r.Abs(a[0].D)
			return types.NewNumeric(r), nil
		}},
		{Params: []types.T{types.Float4}, Ret: ret(types.Float4), NullStrict: true, Fn: func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			return types.NewFloat(types.KindFloat4, math.Abs(a[0].F)), nil
		}},
		{Params: []types.T{types.Float8}, Ret: ret(types.Float8), NullStrict: true, Fn: func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			f := a[0].F
			if f < 0 {
				f = -f
			}
			return types.NewFloat8(f), nil
		}},
	}})
	register(&Func{Name: "round", Deterministic: true, Overloads: []*Overload{
		{Params: []types.T{types.Numeric}, Ret: ret(types.Numeric), NullStrict: true, Fn: func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			return roundNumeric(a[0].D, 0)
		}},
		{Params: []types.T{types.Numeric, types.Int4}, Ret: ret(types.Numeric), NullStrict: true, Fn: func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			return roundNumeric(a[0].D, int32(a[1].I))
		}},
		{Params: []types.T{types.Float8}, Ret: ret(types.Float8), NullStrict: true, Fn: func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			// round half to even, as rint()
			return types.NewFloat8(rint(a[0].F)), nil
		}},
	}})
	register(&Func{Name: "now", Deterministic: false, Overloads: []*Overload{{Ret: ret(types.TimestampTZ),
		Fn: func(c *Ctx, _ []types.Datum) (types.Datum, error) {
			return types.NewTimestamp(types.KindTimestampTZ, c.StatementTime.UnixMicro()), nil
		}}}})
	register(&Func{Name: "concat", Deterministic: true, Overloads: []*Overload{{Params: []types.T{anyType}, Variadic: true, Ret: ret(types.Text),
		Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
			size := textBytes(a)
			held, err := c.Reserve("function concat", size)
			if err != nil {
				return types.Datum{}, err
			}
			defer c.Release(held)
			b := make([]byte, 0, size)
			for _, d := range a {
				if !d.IsNull() {
					b = types.AppendText(b, d, c.Env)
				}
			}
			return types.NewText(string(b)), nil
		}}}})
	register(&Func{Name: "replace", Deterministic: true, Overloads: []*Overload{{Params: []types.T{types.Text, types.Text, types.Text}, Ret: ret(types.Text), NullStrict: true,
		Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
			if a[1].S == "" {
				return a[0], nil
			}
			size := int64(len(a[0].S))
			if grow := len(a[2].S) - len(a[1].S); grow > 0 && size*int64(len(a[2].S)) >= LargeValue {
				size += int64(strings.Count(a[0].S, a[1].S)) * int64(grow)
			}
			held, err := c.Reserve("function replace", size)
			if err != nil {
				return types.Datum{}, err
			}
			defer c.Release(held)
			return types.NewText(strings.ReplaceAll(a[0].S, a[1].S, a[2].S)), nil
		}}}})
	substr := []*Overload{
		{Params: []types.T{types.Text, types.Int4}, Ret: ret(types.Text), NullStrict: true, Fn: func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			return substring(a[0].S, a[1].I, -1, false)
		}},
		{Params: []types.T{types.Text, types.Int4, types.Int4}, Ret: ret(types.Text), NullStrict: true, Fn: func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			return substring(a[0].S, a[1].I, a[2].I, true)
		}},
	}
	register(&Func{Name: "substring", Deterministic: true, Overloads: append(substr[:2:2],
		&Overload{Params: []types.T{types.Text, types.Text}, Ret: ret(types.Text), NullStrict: true, Fn: substringRegex})})
	register(&Func{Name: "substr", Deterministic: true, Overloads: substr})
	trim := func(name string, fn func(s, cut string) string) {
		register(&Func{Name: name, Deterministic: true, Overloads: []*Overload{
			{Params: []types.T{types.Text}, Ret: ret(types.Text), NullStrict: true, Fn: func(_ *Ctx, a []types.Datum) (types.Datum, error) {
				return types.NewText(fn(a[0].S, " ")), nil
			}},
			{Params: []types.T{types.Text, types.Text}, Ret: ret(types.Text), NullStrict: true, Fn: func(_ *Ctx, a []types.Datum) (types.Datum, error) {
				return types.NewText(fn(a[0].S, a[1].S)), nil
			}},
		}})
	}
	trim("btrim", strings.Trim)
	trim("trim", strings.Trim)
	trim("ltrim", strings.TrimLeft)
	trim("rtrim", strings.TrimRight)
	register(&Func{Name: "version", Deterministic: true, Overloads: []*Overload{{Ret: ret(types.Text),
		Fn: func(*Ctx, []types.Datum) (types.Datum, error) { return types.NewText(VersionString), nil }}}})
	// current_user (also user and current_role) and session_user (the
	// binder maps the SQL keywords here): the role privileges are checked
	// for (SET ROLE's) and the session's user (SET SESSION AUTHORIZATION's).
	register(&Func{Name: "current_user", Deterministic: true, Overloads: []*Overload{{Ret: ret(types.Name),
		Fn: func(c *Ctx, _ []types.Datum) (types.Datum, error) {
			return types.NewString(types.KindName, c.User), nil
		}}}})
	register(&Func{Name: "session_user", Deterministic: true, Overloads: []*Overload{{Ret: ret(types.Name),
		Fn: func(c *Ctx, _ []types.Datum) (types.Datum, error) {
			if c.SessionUser == "" {
				return types.NewString(types.KindName, c.User), nil
			}
			return types.NewString(types.KindName, c.SessionUser), nil
		}}}})
	register(&Func{Name: "current_database", Deterministic: true, Overloads: []*Overload{{Ret: ret(types.Name),
		Fn: func(c *Ctx, _ []types.Datum) (types.Datum, error) {
			return types.NewString(types.KindName, c.Database), nil
		}}}})
	register(&Func{Name: "pg_notify", Deterministic: false, Overloads: []*Overload{{Params: []types.T{types.Text, types.Text}, Ret: ret(types.Text),
		Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
			if c.Notify == nil {
				return types.Datum{}, pgerror.New(pgerror.FeatureNotSupported, "pg_notify cannot be used here")
			}
			var ch, payload string
			if !a[0].IsNull() {
				ch = a[0].S
			}
			if !a[1].IsNull() {
				payload = a[1].S
			}
			// pg_notify returns void, which the text protocol shows as an
			// empty string.
			return types.NewText(""), c.Notify(ch, payload)
		}}}})
	register(&Func{Name: "pg_cancel_backend", Deterministic: false, Overloads: []*Overload{{Params: []types.T{types.Int4}, Ret: ret(types.Bool), NullStrict: true,
		Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
			if c.CancelBackend == nil {
				return types.Datum{}, pgerror.New(pgerror.FeatureNotSupported, "pg_cancel_backend is not available here")
			}
			found, err := c.CancelBackend(a[0].I)
			if err != nil {
				return types.Datum{}, err
			}
			// PostgreSQL warns and returns false for a pid that is no
			// server process.
			return types.NewBool(found), nil
		}}}})
	terminate := func(c *Ctx, a []types.Datum) (types.Datum, error) {
		if c.TerminateBackend == nil {
			return types.Datum{}, pgerror.New(pgerror.FeatureNotSupported, "pg_terminate_backend is not available here")
		}
		timeout := int64(0)
		if len(a) > 1 {
			timeout = a[1].I
		}
		if timeout < 0 {
			return types.Datum{}, pgerror.New(pgerror.NumericValueOutOfRange, "\"timeout\" must not be negative")
		}
		ok, err := c.TerminateBackend(a[0].I, timeout)
		if err != nil {
			return types.Datum{}, err
		}
		return types.NewBool(ok), nil
	}
	register(&Func{Name: "pg_terminate_backend", Deterministic: false, Overloads: []*Overload{
		{Params: []types.T{types.Int4}, Ret: ret(types.Bool), NullStrict: true, Fn: terminate},
		{Params: []types.T{types.Int4, types.Int8}, Ret: ret(types.Bool), NullStrict: true, Fn: terminate}}})
	register(&Func{Name: "pg_backend_pid", Deterministic: false, Overloads: []*Overload{{Ret: ret(types.Int4),
		Fn: func(c *Ctx, _ []types.Datum) (types.Datum, error) { return types.NewInt4(c.BackendPID), nil }}}})
}

// VersionString is what version() returns.
var VersionString = "PostgreSQL 15.0 (mvserver) on x86_64-pc-linux-gnu, compiled by Go"

func absInt(k types.Kind) func(*Ctx, []types.Datum) (types.Datum, error) {
	return func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		v := a[0].I
		if v < 0 {
			v = -v
		}
		if !types.IntFits(k, v) || v < 0 {
			return types.Datum{}, pgerror.New(pgerror.NumericValueOutOfRange, "%s out of range", map[types.Kind]string{types.KindInt2: "smallint", types.KindInt4: "integer", types.KindInt8: "bigint"}[k])
		}
		return types.NewInt(k, v), nil
	}
}

func rint(f float64) float64 { return math.RoundToEven(f) }

func roundNumeric(d *apd.Decimal, scale int32) (types.Datum, error) {
	if d.Form != apd.Finite {
		return types.NewNumeric(d), nil
	}
	// PostgreSQL limits the scale to NUMERIC_DSCALE_MAX either way
	scale = max(min(scale, numericDscaleMax), -numericDscaleMax)
	r := new(apd.Decimal)
	c := bigCtx(d, int64(scale))
	c.Rounding = apd.RoundHalfUp
	if _, err := c.Quantize(r, d, -scale); err != nil {
		return types.Datum{}, pgerror.New(pgerror.NumericValueOutOfRange, "value overflows numeric format")
	}
	if scale < 0 {
		// keep no fractional digits: present as an integer value
		var s apd.Decimal
		c.Quantize(&s, r, 0)
		r = &s
	}
	return types.NewNumeric(r), nil
}

func substring(s string, start, count int64, hasCount bool) (types.Datum, error) {
	if hasCount && count < 0 {
		return types.Datum{}, pgerror.New(pgerror.SubstringError, "negative substring length not allowed")
	}
	runes := []rune(s)
	from := start - 1
	to := int64(len(runes))
	if hasCount {
		to = from + count
	}
	if from < 0 {
		from = 0
	}
	if to > int64(len(runes)) {
		to = int64(len(runes))
	}
	if from >= to {
		return types.NewText(""), nil
	}
	return types.NewText(string(runes[from:to])), nil
}
