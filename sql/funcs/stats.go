package funcs

import (
	"math"
	"sort"

	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// Statistical aggregates (R-Q3) as PostgreSQL 15 computes them:
// variance/var_samp/var_pop and stddev/stddev_samp/stddev_pop are exact
// over integers and numerics (sums of x and x², numeric results with
// PostgreSQL's division scale) and use the Youngs-Cramer algorithm over
// real and double precision (double results); covar_pop/covar_samp, corr
// and the regr_* family take double precision pairs (Y, X). bit_and,
// bit_or and bit_xor fold integers. The ordered-set aggregates
// percentile_cont, percentile_disc and mode take their values sorted by
// their WITHIN GROUP (ORDER BY …) key (the binder appends the key to the
// direct arguments and orders the group by it).

// varKind says which of the six variance aggregates a state computes.
type varKind struct {
	sample, stddev bool
}

func init() {
	for _, v := range []struct {
		name string
		k    varKind
	}{
		{"variance", varKind{sample: true}}, {"var_samp", varKind{sample: true}}, {"var_pop", varKind{}},
		{"stddev", varKind{sample: true, stddev: true}}, {"stddev_samp", varKind{sample: true, stddev: true}},
		{"stddev_pop", varKind{stddev: true}},
		// Databricks: std is stddev.
		{"std", varKind{sample: true, stddev: true}},
	} {
		k := v.k
		register(&Func{Name: v.name, Deterministic: true, Agg: &AggDef{Resolve: func(args []types.T) (types.T, func() AggState, bool) {
			if len(args) != 1 {
				return types.T{}, nil, false
			}
			switch args[0].Kind {
			case types.KindInt2, types.KindInt4, types.KindInt8, types.KindNumeric:
				return types.Numeric, func() AggState { return &varNumeric{k: k} }, true
			case types.KindFloat4, types.KindFloat8:
				return types.Float8, func() AggState { return &varFloat{k: k} }, true
			}
			return types.T{}, nil, false
		}}})
	}
	pairs := func(final func(s *regrState) (float64, bool)) *AggDef {
		return &AggDef{Resolve: func(args []types.T) (types.T, func() AggState, bool) {
			if len(args) != 2 || !numberArg(args[0]) || !numberArg(args[1]) {
				return types.T{}, nil, false
			}
			return types.Float8, func() AggState { return &regrState{final: final} }, true
		}}
	}
	regr := func(name string, final func(s *regrState) (float64, bool)) {
		register(&Func{Name: name, Deterministic: true, Agg: pairs(final)})
	}
	regr("covar_pop", func(s *regrState) (float64, bool) { return s.sxy / s.n, s.n > 0 })
	regr("covar_samp", func(s *regrState) (float64, bool) { return s.sxy / (s.n - 1), s.n > 1 })
	regr("corr", func(s *regrState) (float64, bool) {
		if s.n < 1 || s.sxx == 0 || s.syy == 0 {
			return 0, false
		}
		return s.sxy / math.Sqrt(s.sxx*s.syy), true
	})
	regr("regr_avgx", func(s *regrState) (float64, bool) { return s.sx / s.n, s.n > 0 })
	regr("regr_avgy", func(s *regrState) (float64, bool) { return s.sy / s.n, s.n > 0 })
	regr("regr_sxx", func(s *regrState) (float64, bool) { return s.sxx, s.n > 0 })
	regr("regr_syy", func(s *regrState) (float64, bool) { return s.syy, s.n > 0 })
	regr("regr_sxy", func(s *regrState) (float64, bool) { return s.sxy, s.n > 0 })
	regr("regr_slope", func(s *regrState) (float64, bool) {
		if s.n < 1 || s.sxx == 0 {
			return 0, false
		}
		return s.sxy / s.sxx, true
	})
	regr("regr_intercept", func(s *regrState) (float64, bool) {
		if s.n < 1 || s.sxx == 0 {
			return 0, false
		}
		return (s.sy - s.sx*s.sxy/s.sxx) / s.n, true
	})
	regr("regr_r2", func(s *regrState) (float64, bool) {
		if s.n < 1 || s.sxx == 0 {
			return 0, false
		}
		if s.syy == 0 {
			return 1, true
		}
		return (s.sxy * s.sxy) / (s.sxx * s.syy), true
	})
	register(&Func{Name: "regr_count", Deterministic: true, Agg: &AggDef{Resolve: func(args []types.T) (types.T, func() AggState, bool) {
		if len(args) != 2 || !numberArg(args[0]) || !numberArg(args[1]) {
			return types.T{}, nil, false
		}
		return types.Int8, func() AggState { return &pairCount{} }, true
	}}})
	for _, op := range []string{"bit_and", "bit_or", "bit_xor"} {
		op := op
		register(&Func{Name: op, Deterministic: true, Agg: &AggDef{Resolve: func(args []types.T) (types.T, func() AggState, bool) {
			if len(args) != 1 || !args[0].IsInteger() {
				return types.T{}, nil, false
			}
			return args[0], func() AggState { return &bitState{op: op, k: args[0].Kind} }, true
		}}})
	}
	register(&Func{Name: "percentile_cont", Deterministic: true, Agg: &AggDef{WithinGroup: true, Resolve: func(args []types.T) (types.T, func() AggState, bool) {
		if len(args) != 2 {
			return types.T{}, nil, false
		}
		multi := args[0].Kind == types.KindArray
		if !multi && !numberArg(args[0]) || multi && !numberArg(args[0].ElemType()) {
			return types.T{}, nil, false
		}
		var rt types.T
		switch {
		case numberArg(args[1]):
			rt = types.Float8
		case args[1].Kind == types.KindInterval:
			rt = types.Interval
		default:
			return types.T{}, nil, false
		}
		if multi {
			rt = types.ArrayOf(rt)
		}
		return rt, func() AggState {
			return &percentileState{cont: true, multi: multi, interval: rt.Kind == types.KindInterval || rt.Elem == types.KindInterval}
		}, true
	}}})
	register(&Func{Name: "percentile_disc", Deterministic: true, Agg: &AggDef{WithinGroup: true, Resolve: func(args []types.T) (types.T, func() AggState, bool) {
		if len(args) != 2 {
			return types.T{}, nil, false
		}
		multi := args[0].Kind == types.KindArray
		if !multi && !numberArg(args[0]) || multi && !numberArg(args[0].ElemType()) || args[1].IsArray() {
			return types.T{}, nil, false
		}
		rt := args[1]
		if multi {
			rt = types.ArrayOf(rt)
		}
		return rt, func() AggState { return &percentileState{multi: multi} }, true
	}}})
	register(&Func{Name: "mode", Deterministic: true, Agg: &AggDef{WithinGroup: true, Resolve: func(args []types.T) (types.T, func() AggState, bool) {
		if len(args) != 1 {
			return types.T{}, nil, false
		}
		return args[0], func() AggState { return &modeState{} }, true
	}}})
	// Databricks: median(x) and percentile(x, p), exact percentiles as
	// plain aggregates (double precision, linear interpolation).
	register(&Func{Name: "median", Deterministic: true, Agg: &AggDef{Resolve: func(args []types.T) (types.T, func() AggState, bool) {
		if len(args) != 1 || !numberArg(args[0]) {
			return types.T{}, nil, false
		}
		return types.Float8, func() AggState { return &sparkPercentile{p: 0.5, fixed: true} }, true
	}}})
	register(&Func{Name: "percentile", Deterministic: true, Agg: &AggDef{Resolve: func(args []types.T) (types.T, func() AggState, bool) {
		if len(args) != 2 || !numberArg(args[0]) || !numberArg(args[1]) {
			return types.T{}, nil, false
		}
		return types.Float8, func() AggState { return &sparkPercentile{} }, true
	}}})
}

// numberArg: an argument a double precision parameter accepts.
func numberArg(t types.T) bool {
	switch t.Kind {
	case types.KindInt2, types.KindInt4, types.KindInt8, types.KindNumeric, types.KindFloat4, types.KindFloat8, types.KindUnknown, types.KindNull:
		return true
	}
	return false
}

// toFloat reads a number datum as a double.
func toFloat(d types.Datum) float64 {
	switch d.K {
	case types.KindFloat4, types.KindFloat8:
		return d.F
	case types.KindNumeric:
		f, _ := d.D.Float64()
		if d.D.Form == apd.NaN {
			return math.NaN()
		}
		if d.D.Form == apd.Infinite {
			return math.Inf(map[bool]int{true: -1, false: 1}[d.D.Negative])
		}
		return f
	case types.KindUnknown, types.KindText:
		dd, err := types.ParseText(d.S, types.Float8, nil)
		if err == nil {
			return dd.F
		}
		return math.NaN()
	}
	return float64(d.I)
}

// toDecimal reads an integer or numeric datum as a decimal.
func toDecimal(d types.Datum) *apd.Decimal {
	if d.K == types.KindNumeric {
		return d.D
	}
	return apd.New(d.I, 0)
}

// varNumeric is a variance or standard deviation over integers or
// numerics: exact sums, PostgreSQL's numeric_stddev_internal at the end.
type varNumeric struct {
	k        varKind
	n        int64
	sx, sxx  apd.Decimal
	nonFinit int64 // NaN or infinite values added (the result is NaN)
}

func (s *varNumeric) Add(_ *Ctx, a []types.Datum) error { return s.step(a[0], 1) }

func (s *varNumeric) step(d types.Datum, sign int64) error {
	if d.IsNull() {
		return nil
	}
	s.n += sign
	x := toDecimal(d)
	if x.Form != apd.Finite {
		s.nonFinit += sign
		return nil
	}
	var sq apd.Decimal
	c := types.DecimalCtx
	if _, err := c.Mul(&sq, x, x); err != nil {
		return errNumOver
	}
	add := c.Add
	if sign < 0 {
		add = c.Sub
	}
	if _, err := add(&s.sx, &s.sx, x); err != nil {
		return errNumOver
	}
	if _, err := add(&s.sxx, &s.sxx, &sq); err != nil {
		return errNumOver
	}
	return nil
}

func (s *varNumeric) Result(*Ctx) (types.Datum, error) {
	if s.n <= 0 || s.k.sample && s.n == 1 {
		return types.NullDatum, nil
	}
	if s.nonFinit > 0 {
		return types.NewNumeric(&apd.Decimal{Form: apd.NaN}), nil
	}
	c := types.DecimalCtx
	n := apd.New(s.n, 0)
	var sq, nsxx, num apd.Decimal
	if _, err := c.Mul(&sq, &s.sx, &s.sx); err != nil {
		return types.Datum{}, errNumOver
	}
	if _, err := c.Mul(&nsxx, n, &s.sxx); err != nil {
		return types.Datum{}, errNumOver
	}
	c.Sub(&num, &nsxx, &sq)
	if num.Sign() <= 0 {
		// roundoff cannot happen in exact sums, but PostgreSQL answers a
		// zero numerator with a plain 0
		return types.NewNumeric(apd.New(0, 0)), nil
	}
	den := apd.New(s.n*s.n, 0)
	if s.k.sample {
		den = apd.New(s.n*(s.n-1), 0)
	}
	rscale := types.DivScale(&num, den)
	q, err := types.NumericDiv(&num, den)
	if err != nil {
		return types.Datum{}, err
	}
	if s.k.stddev {
		cc := workCtx(msdExp(q)/2+1, rscale)
		r := new(apd.Decimal)
		if _, err := cc.Sqrt(r, q); err != nil {
			return types.Datum{}, errNumOver
		}
		if q, err = roundTo(r, rscale); err != nil {
			return types.Datum{}, err
		}
	}
	return types.NewNumeric(q), nil
}

// Retract takes a value back: the sums are exact, so the state equals
// one built from the remaining values (GROUP_AGGREGATE, R-I1).
func (s *varNumeric) Retract(_ *Ctx, a []types.Datum) (bool, error) {
	return true, s.step(a[0], -1)
}

func (s *varNumeric) State() []types.Datum {
	sx, sxx := new(apd.Decimal), new(apd.Decimal)
	sx.Set(&s.sx)
	sxx.Set(&s.sxx)
	return []types.Datum{types.NewInt8(s.n), types.NewInt8(s.nonFinit), types.NewNumeric(sx), types.NewNumeric(sxx)}
}

func (s *varNumeric) SetState(v []types.Datum) error {
	if len(v) != 4 || v[0].K != types.KindInt8 || v[1].K != types.KindInt8 || v[2].K != types.KindNumeric || v[3].K != types.KindNumeric {
		return badState()
	}
	s.n, s.nonFinit = v[0].I, v[1].I
	s.sx.Set(v[2].D)
	s.sxx.Set(v[3].D)
	return nil
}

// varFloat is PostgreSQL's float8_accum (Youngs-Cramer) and its finals.
type varFloat struct {
	k            varKind
	n, sx, sxx   float64
	overflowSeen bool
}

func (s *varFloat) Add(_ *Ctx, a []types.Datum) error {
	if a[0].IsNull() {
		return nil
	}
	x := a[0].F
	prevN, prevSx := s.n, s.sx
	s.n++
	s.sx += x
	if prevN > 0 {
		tmp := x*s.n - s.sx
		s.sxx += tmp * tmp / (s.n * prevN)
		if math.IsInf(s.sx, 0) || math.IsInf(s.sxx, 0) {
			if !math.IsInf(prevSx, 0) && !math.IsInf(x, 0) {
				return errOverflow
			}
			s.sxx = math.NaN()
		}
	} else if math.IsNaN(x) || math.IsInf(x, 0) {
		s.sxx = math.NaN()
	}
	return nil
}

func (s *varFloat) Result(*Ctx) (types.Datum, error) {
	if s.n == 0 || s.k.sample && s.n <= 1 {
		return types.NullDatum, nil
	}
	num := s.sxx
	if num <= 0 {
		return types.NewFloat8(0), nil
	}
	d := s.n
	if s.k.sample {
		d = s.n - 1
	}
	r := num / d
	if s.k.stddev {
		r = math.Sqrt(r)
	}
	return types.NewFloat8(r), nil
}

// regrState is float8_regr_accum's six values.
type regrState struct {
	final                    func(*regrState) (float64, bool)
	n, sx, sxx, sy, syy, sxy float64
}

func (s *regrState) Add(_ *Ctx, a []types.Datum) error {
	if a[0].IsNull() || a[1].IsNull() {
		return nil
	}
	y, x := toFloat(a[0]), toFloat(a[1])
	prevN, prevSx, prevSy := s.n, s.sx, s.sy
	s.n++
	s.sx += x
	s.sy += y
	if prevN > 0 {
		tx := x*s.n - s.sx
		ty := y*s.n - s.sy
		scale := 1.0 / (s.n * prevN)
		s.sxx += tx * tx * scale
		s.syy += ty * ty * scale
		s.sxy += tx * ty * scale
		if math.IsInf(s.sx, 0) || math.IsInf(s.sxx, 0) || math.IsInf(s.sy, 0) || math.IsInf(s.syy, 0) || math.IsInf(s.sxy, 0) {
			if (math.IsInf(s.sx, 0) || math.IsInf(s.sxx, 0)) && !math.IsInf(prevSx, 0) && !math.IsInf(x, 0) ||
				(math.IsInf(s.sy, 0) || math.IsInf(s.syy, 0)) && !math.IsInf(prevSy, 0) && !math.IsInf(y, 0) ||
				math.IsInf(s.sxy, 0) && !math.IsInf(prevSx, 0) && !math.IsInf(x, 0) && !math.IsInf(prevSy, 0) && !math.IsInf(y, 0) {
				return errOverflow
			}
			if math.IsInf(s.sxx, 0) {
				s.sxx = math.NaN()
			}
			if math.IsInf(s.syy, 0) {
				s.syy = math.NaN()
			}
			if math.IsInf(s.sxy, 0) {
				s.sxy = math.NaN()
			}
		}
	} else {
		badX, badY := math.IsNaN(x) || math.IsInf(x, 0), math.IsNaN(y) || math.IsInf(y, 0)
		if badX {
			s.sxx = math.NaN()
		}
		if badY {
			s.syy = math.NaN()
		}
		if badX || badY {
			s.sxy = math.NaN()
		}
	}
	return nil
}

func (s *regrState) Result(*Ctx) (types.Datum, error) {
	r, ok := s.final(s)
	if !ok {
		return types.NullDatum, nil
	}
	return types.NewFloat8(r), nil
}

type pairCount struct{ n int64 }

func (s *pairCount) Add(_ *Ctx, a []types.Datum) error {
	if !a[0].IsNull() && !a[1].IsNull() {
		s.n++
	}
	return nil
}

func (s *pairCount) Result(*Ctx) (types.Datum, error) { return types.NewInt8(s.n), nil }

type bitState struct {
	op  string
	k   types.Kind
	any bool
	v   int64
}

func (s *bitState) Add(_ *Ctx, a []types.Datum) error {
	if a[0].IsNull() {
		return nil
	}
	x := a[0].I
	if !s.any {
		s.any, s.v = true, x
		return nil
	}
	switch s.op {
	case "bit_and":
		s.v &= x
	case "bit_or":
		s.v |= x
	default:
		s.v ^= x
	}
	return nil
}

func (s *bitState) Result(*Ctx) (types.Datum, error) {
	if !s.any {
		return types.NullDatum, nil
	}
	return types.NewInt(s.k, s.v), nil
}

// percentileState keeps a group's non-NULL values in their WITHIN GROUP
// order and its fraction (or fractions), read from the first row.
type percentileState struct {
	cont, multi, interval bool
	fraction              types.Datum
	seen                  bool
	vals                  []types.Datum
}

func (s *percentileState) Add(c *Ctx, a []types.Datum) error {
	if !s.seen {
		s.seen, s.fraction = true, a[0]
	}
	if !a[1].IsNull() {
		var err error
		s.vals, err = appendKept(c, "ordered-set aggregate", s.vals, a[1])
		return err
	}
	return nil
}

func checkFraction(p float64) error {
	if p < 0 || p > 1 || math.IsNaN(p) {
		return pgerror.New(pgerror.NumericValueOutOfRange, "percentile value %s is not between 0 and 1", types.NewFloat8(p).String())
	}
	return nil
}

func (s *percentileState) one(p float64) (types.Datum, error) {
	if err := checkFraction(p); err != nil {
		return types.Datum{}, err
	}
	n := len(s.vals)
	if n == 0 {
		return types.NullDatum, nil
	}
	if !s.cont {
		row := int64(math.Ceil(p * float64(n)))
		if row < 1 {
			row = 1
		}
		return s.vals[row-1], nil
	}
	pos := p * float64(n-1)
	lo, hi := int(math.Floor(pos)), int(math.Ceil(pos))
	if s.interval {
		a, b := s.vals[lo], s.vals[hi]
		if lo == hi {
			return a, nil
		}
		diff, err := types.IntervalAdd(b, a, -1)
		if err != nil {
			return types.Datum{}, err
		}
		return types.IntervalAdd(a, types.IntervalMul(diff, pos-float64(lo)), 1)
	}
	a := toFloat(s.vals[lo])
	if lo == hi {
		return types.NewFloat8(a), nil
	}
	b := toFloat(s.vals[hi])
	return types.NewFloat8(a + (b-a)*(pos-float64(lo))), nil
}

func (s *percentileState) Result(*Ctx) (types.Datum, error) {
	if !s.seen || s.fraction.IsNull() {
		return types.NullDatum, nil
	}
	if !s.multi {
		return s.one(toFloat(s.fraction))
	}
	var out []types.Datum
	for _, f := range s.fraction.Elems() {
		if f.IsNull() {
			out = append(out, types.NullDatum)
			continue
		}
		if len(s.vals) == 0 {
			if err := checkFraction(toFloat(f)); err != nil {
				return types.Datum{}, err
			}
		}
		d, err := s.one(toFloat(f))
		if err != nil {
			return types.Datum{}, err
		}
		out = append(out, d)
	}
	if len(s.vals) == 0 {
		return types.NullDatum, nil
	}
	return types.NewArrayOf(out...), nil
}

// modeState counts runs of equal values in WITHIN GROUP order; the first
// of the most frequent wins ties.
type modeState struct {
	cur, best   types.Datum
	curN, bestN int64
	started     bool
}

func (s *modeState) Add(_ *Ctx, a []types.Datum) error {
	v := a[0]
	if v.IsNull() {
		return nil
	}
	if s.started && types.Compare(v, s.cur) == 0 {
		s.curN++
	} else {
		s.started, s.cur, s.curN = true, v, 1
	}
	if s.curN > s.bestN {
		s.best, s.bestN = s.cur, s.curN
	}
	return nil
}

func (s *modeState) Result(*Ctx) (types.Datum, error) {
	if s.bestN == 0 {
		return types.NullDatum, nil
	}
	return s.best, nil
}

// sparkPercentile is Databricks' percentile(x, p) and median(x): the
// values sorted, linearly interpolated.
type sparkPercentile struct {
	p     float64
	fixed bool
	seen  bool
	vals  []float64
}

func (s *sparkPercentile) Add(c *Ctx, a []types.Datum) error {
	if !s.fixed && !s.seen && len(a) > 1 && !a[1].IsNull() {
		s.seen, s.p = true, toFloat(a[1])
	}
	if !a[0].IsNull() {
		if len(s.vals) == cap(s.vals) {
			var err error
			if s.vals, err = doubled(c, "aggregate percentile", s.vals, 8); err != nil {
				return err
			}
		}
		s.vals = append(s.vals, toFloat(a[0]))
	}
	return nil
}

func (s *sparkPercentile) Result(*Ctx) (types.Datum, error) {
	if len(s.vals) == 0 {
		return types.NullDatum, nil
	}
	if err := checkFraction(s.p); err != nil {
		return types.Datum{}, err
	}
	sort.Float64s(s.vals)
	pos := s.p * float64(len(s.vals)-1)
	lo, hi := int(math.Floor(pos)), int(math.Ceil(pos))
	a, b := s.vals[lo], s.vals[hi]
	return types.NewFloat8(a + (b-a)*(pos-float64(lo))), nil
}
