package funcs

import (
	"math"

	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

func init() {
	register(&Func{Name: "count", Deterministic: true, Agg: &AggDef{Star: true, Resolve: func(args []types.T) (types.T, func() AggState, bool) {
		if len(args) == 0 {
			return types.Int8, func() AggState { return &countStar{} }, true
		}
		if len(args) != 1 {
			return types.T{}, nil, false
		}
		return types.Int8, func() AggState { return &countState{} }, true
	}}})
	register(&Func{Name: "sum", Deterministic: true, Agg: &AggDef{Resolve: resolveSum}})
	register(&Func{Name: "avg", Deterministic: true, Agg: &AggDef{Resolve: resolveAvg}})
	register(&Func{Name: "min", Deterministic: true, Agg: &AggDef{Resolve: func(args []types.T) (types.T, func() AggState, bool) {
		return resolveMinMax(args, -1)
	}}})
	register(&Func{Name: "max", Deterministic: true, Agg: &AggDef{Resolve: func(args []types.T) (types.T, func() AggState, bool) {
		return resolveMinMax(args, 1)
	}}})
}

type countStar struct{ n int64 }

func (s *countStar) Add(*Ctx, []types.Datum) error { s.n++; return nil }
func (s *countStar) Result(*Ctx) (types.Datum, error) {
	return types.NewInt8(s.n), nil
}

type countState struct{ n int64 }

func (s *countState) Add(_ *Ctx, a []types.Datum) error {
	if !a[0].IsNull() {
		s.n++
	}
	return nil
}
func (s *countState) Result(*Ctx) (types.Datum, error) { return types.NewInt8(s.n), nil }

func resolveSum(args []types.T) (types.T, func() AggState, bool) {
	if len(args) != 1 {
		return types.T{}, nil, false
	}
	switch args[0].Kind {
	case types.KindInt2, types.KindInt4:
		return types.Int8, func() AggState { return &sumInt{out: types.KindInt8} }, true
	case types.KindInt8:
		return types.Numeric, func() AggState { return &sumInt{out: types.KindNumeric} }, true
	case types.KindNumeric:
		return types.Numeric, func() AggState { return &sumNumeric{} }, true
	case types.KindFloat4, types.KindFloat8:
		k := args[0].Kind
		return types.T{Kind: k}, func() AggState { return &sumFloat{k: k} }, true
	case types.KindInterval:
		return types.Interval, func() AggState { return &sumInterval{} }, true
	}
	return types.T{}, nil, false
}

// sumInt sums integers exactly: in int64 until it would overflow, then in a
// decimal.
type sumInt struct {
	out  types.Kind
	n    int64 // values added (Retract needs it)
	any  bool
	i    int64
	big  *apd.Decimal
	over bool
}

func (s *sumInt) Add(_ *Ctx, a []types.Datum) error {
	if a[0].IsNull() {
		return nil
	}
	s.n++
	s.any = s.n > 0 // a state that took values back may pass through n ≤ 0
	v := a[0].I
	if !s.over {
		r := s.i + v
		if (r > s.i) == (v > 0) || v == 0 {
			s.i = r
			return nil
		}
		s.over = true
		s.big = types.NumericFromInt(s.i)
	}
	var err error
	s.big, err = types.NumericAdd(s.big, types.NumericFromInt(v))
	return err
}

func (s *sumInt) Result(*Ctx) (types.Datum, error) {
	if !s.any {
		return types.NullDatum, nil
	}
	if s.out == types.KindInt8 {
		if s.over {
			return types.Datum{}, pgerror.New(pgerror.NumericValueOutOfRange, "bigint out of range")
		}
		return types.NewInt8(s.i), nil
	}
	if s.over {
		return types.NewNumeric(s.big), nil
	}
	return types.NewNumeric(types.NumericFromInt(s.i)), nil
}

type sumNumeric struct {
	n   int64 // values added (Retract needs it)
	any bool
	d   apd.Decimal
	// small sums, as an int64 coefficient, values of exponent exp that
	// are not yet in d (a column's values share one exponent: adding
	// them as integers saves a decimal addition per row). d + small×10^exp
	// is exact, so settling gives the digits and scale the decimal
	// additions one by one would have.
	small    int64
	exp      int32
	hasSmall bool
}

// smallLimit bounds the coefficients added as integers and the running
// integer sum, so that one more addition cannot overflow an int64.
const smallLimit = 1 << 52

func (s *sumNumeric) addSmall(d *apd.Decimal, negate bool) bool {
	// Far from DecimalCtx's precision on both sides, the decimal
	// additions are exact too, so the two ways agree digit for digit.
	if d.Form != apd.Finite || d.Exponent < -1000 || d.Exponent > 1000 || !d.Coeff.IsInt64() || s.d.Coeff.BitLen() > 3000 {
		return false
	}
	c := d.Coeff.Int64()
	if c > smallLimit || c < 0 {
		return false
	}
	if d.Negative != negate {
		c = -c
	}
	if !s.hasSmall {
		s.small, s.exp, s.hasSmall = c, d.Exponent, true
		return true
	}
	if d.Exponent != s.exp || s.small > 1<<62 || s.small < -(1<<62) {
		return false
	}
	s.small += c
	return true
}

// settle moves the integer sum into d.
func (s *sumNumeric) settle() {
	if !s.hasSmall {
		return
	}
	var x apd.Decimal
	x.SetFinite(s.small, s.exp)
	// Exact (|small| < 2^63, |exp| ≤ 1000): cannot fail.
	_, _ = types.DecimalCtx.Add(&s.d, &s.d, &x)
	s.small, s.hasSmall = 0, false
}

func (s *sumNumeric) Add(_ *Ctx, a []types.Datum) error {
	if a[0].IsNull() {
		return nil
	}
	s.n++
	s.any = s.n > 0 // a state that took values back may pass through n ≤ 0
	if s.addSmall(a[0].D, false) {
		return nil
	}
	s.settle()
	_, err := types.DecimalCtx.Add(&s.d, &s.d, a[0].D)
	if err != nil {
		return pgerror.New(pgerror.NumericValueOutOfRange, "value overflows numeric format")
	}
	return nil
}

func (s *sumNumeric) Result(*Ctx) (types.Datum, error) {
	if !s.any {
		return types.NullDatum, nil
	}
	s.settle()
	r := new(apd.Decimal)
	r.Set(&s.d)
	return types.NewNumeric(r), nil
}

type sumFloat struct {
	k   types.Kind
	any bool
	f   float64
}

func (s *sumFloat) Add(_ *Ctx, a []types.Datum) error {
	if a[0].IsNull() {
		return nil
	}
	s.any = true
	s.f += a[0].F
	return nil
}

func (s *sumFloat) Result(*Ctx) (types.Datum, error) {
	if !s.any {
		return types.NullDatum, nil
	}
	return types.NewFloat(s.k, s.f), nil
}

type sumInterval struct {
	any bool
	v   types.Datum
}

func (s *sumInterval) Add(_ *Ctx, a []types.Datum) error {
	if a[0].IsNull() {
		return nil
	}
	if !s.any {
		s.any = true
		s.v = a[0]
		return nil
	}
	var err error
	s.v, err = types.IntervalAdd(s.v, a[0], 1)
	return err
}

func (s *sumInterval) Result(*Ctx) (types.Datum, error) {
	if !s.any {
		return types.NullDatum, nil
	}
	return s.v, nil
}

func resolveAvg(args []types.T) (types.T, func() AggState, bool) {
	if len(args) != 1 {
		return types.T{}, nil, false
	}
	switch args[0].Kind {
	case types.KindInt2, types.KindInt4, types.KindInt8:
		return types.Numeric, func() AggState { return &avgNumeric{fromInt: true} }, true
	case types.KindNumeric:
		return types.Numeric, func() AggState { return &avgNumeric{} }, true
	case types.KindFloat4, types.KindFloat8:
		return types.Float8, func() AggState { return &avgFloat{} }, true
	}
	return types.T{}, nil, false
}

type avgNumeric struct {
	fromInt bool
	n       int64
	sum     sumNumeric
	isum    sumInt
}

func (s *avgNumeric) Add(c *Ctx, a []types.Datum) error {
	if a[0].IsNull() {
		return nil
	}
	s.n++
	if s.fromInt {
		return s.isum.Add(c, a)
	}
	return s.sum.Add(c, a)
}

func (s *avgNumeric) Result(c *Ctx) (types.Datum, error) {
	if s.n == 0 {
		return types.NullDatum, nil
	}
	var total *apd.Decimal
	if s.fromInt {
		s.isum.out = types.KindNumeric
		d, err := s.isum.Result(c)
		if err != nil {
			return d, err
		}
		total = d.D
	} else {
		s.sum.settle()
		total = &s.sum.d
	}
	r, err := types.NumericDiv(total, types.NumericFromInt(s.n))
	if err != nil {
		return types.Datum{}, err
	}
	return types.NewNumeric(r), nil
}

type avgFloat struct {
	n   int64
	sum float64
}

func (s *avgFloat) Add(_ *Ctx, a []types.Datum) error {
	if a[0].IsNull() {
		return nil
	}
	s.n++
	s.sum += a[0].F
	return nil
}

func (s *avgFloat) Result(*Ctx) (types.Datum, error) {
	if s.n == 0 {
		return types.NullDatum, nil
	}
	r := s.sum / float64(s.n)
	if math.IsInf(r, 0) && !math.IsInf(s.sum, 0) {
		return types.Datum{}, pgerror.New(pgerror.NumericValueOutOfRange, "value out of range: overflow")
	}
	return types.NewFloat8(r), nil
}

func resolveMinMax(args []types.T, dir int) (types.T, func() AggState, bool) {
	if len(args) != 1 || args[0].Kind == types.KindBytea {
		return types.T{}, nil, false
	}
	return args[0], func() AggState { return &minMax{dir: dir} }, true
}

type minMax struct {
	dir int
	any bool
	v   types.Datum
}

func (s *minMax) Add(_ *Ctx, a []types.Datum) error {
	if a[0].IsNull() {
		return nil
	}
	if !s.any {
		s.any, s.v = true, a[0]
		return nil
	}
	if c := types.Compare(a[0], s.v) * s.dir; c > 0 || c == 0 && types.Preferred(s.v, a[0]) {
		s.v = a[0]
	}
	return nil
}

func (s *minMax) Result(*Ctx) (types.Datum, error) {
	if !s.any {
		return types.NullDatum, nil
	}
	return s.v, nil
}
