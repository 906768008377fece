package funcs

import (
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// The sequence functions (nextval, currval, setval, lastval). Their values
// live outside transactions; they are not deterministic.
func init() {
	seqs := func(c *Ctx) (Sequences, error) {
		if c.Sequences == nil {
			return nil, pgerror.New(pgerror.FeatureNotSupported, "sequence functions cannot be used here")
		}
		return c.Sequences, nil
	}
	oidArg := []types.T{types.Regclass}
	register(&Func{Name: "nextval", Overloads: []*Overload{{Params: oidArg, Ret: ret(types.Int8), NullStrict: true,
		Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
			s, err := seqs(c)
			if err != nil {
				return types.Datum{}, err
			}
			v, err := s.NextVal(uint32(a[0].I))
			return types.NewInt8(v), err
		}}}})
	register(&Func{Name: "currval", Overloads: []*Overload{{Params: oidArg, Ret: ret(types.Int8), NullStrict: true,
		Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
			s, err := seqs(c)
			if err != nil {
				return types.Datum{}, err
			}
			v, err := s.CurrVal(uint32(a[0].I))
			return types.NewInt8(v), err
		}}}})
	register(&Func{Name: "lastval", Overloads: []*Overload{{Ret: ret(types.Int8),
		Fn: func(c *Ctx, _ []types.Datum) (types.Datum, error) {
			s, err := seqs(c)
			if err != nil {
				return types.Datum{}, err
			}
			v, err := s.LastVal()
			return types.NewInt8(v), err
		}}}})
	setval := func(c *Ctx, a []types.Datum) (types.Datum, error) {
		s, err := seqs(c)
		if err != nil {
			return types.Datum{}, err
		}
		called := true
		if len(a) > 2 {
			called = a[2].I != 0
		}
		v, err := s.SetVal(uint32(a[0].I), a[1].I, called)
		return types.NewInt8(v), err
	}
	register(&Func{Name: "setval", Overloads: []*Overload{
		{Params: []types.T{types.Regclass, types.Int8}, Ret: ret(types.Int8), NullStrict: true, Fn: setval},
		{Params: []types.T{types.Regclass, types.Int8, types.Bool}, Ret: ret(types.Int8), NullStrict: true, Fn: setval},
	}})
}
