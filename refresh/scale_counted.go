package refresh

import (
	"slices"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// scaleCounted is the state of a SUM over decimals of a few known scales
// (decimalScales: the CASE … THEN price * (1 - disc) ELSE 0 END of TPC-H Q8
// and Q14). A sum prints with the largest scale among the values it holds,
// so a sum that took back its only values of scale 4 must print as a fresh
// sum of the scale-0 rest would: the state counts its values per scale and
// the result is set to the largest scale still counted. The value is exact
// at that scale (every value held has at most as many digits), so setting
// it loses nothing.
type scaleCounted struct {
	inner  funcs.Retractable
	scales []int32 // ascending
	counts []int64 // values held per scale
}

// countedScales is the set of scales a SUM's state counts, when its
// argument may have more than one (ok=false: the state is the plain one).
func countedScales(c plan.AggCall, in plan.Node) ([]int32, bool) {
	if !strings.EqualFold(c.Name, "sum") || c.Distinct || len(c.Args) != 1 || c.Args[0].Type().Kind != types.KindNumeric {
		return nil, false
	}
	s, ok := decimalScales(c.Args[0], in)
	return s, ok && len(s) > 1
}

// scaleCounter wraps a SUM's state constructor.
func scaleCounter(nf func() funcs.AggState, scales []int32) func() funcs.AggState {
	return func() funcs.AggState {
		return &scaleCounted{inner: nf().(funcs.Retractable), scales: scales, counts: make([]int64, len(scales))}
	}
}

// count moves the count of d's scale by by.
func (s *scaleCounted) count(d types.Datum, by int64) error {
	if d.IsNull() || d.D.Form != apd.Finite {
		return nil
	}
	i, ok := slices.BinarySearch(s.scales, types.Scale(d.D))
	if !ok {
		return bugf("a sum of decimals of scales %v took a value of scale %d", s.scales, types.Scale(d.D))
	}
	s.counts[i] += by
	return nil
}

func (s *scaleCounted) Add(ctx *funcs.Ctx, args []types.Datum) error {
	if err := s.count(args[0], 1); err != nil {
		return err
	}
	return s.inner.Add(ctx, args)
}

func (s *scaleCounted) Retract(ctx *funcs.Ctx, args []types.Datum) (bool, error) {
	if err := s.count(args[0], -1); err != nil {
		return false, err
	}
	return s.inner.Retract(ctx, args)
}

func (s *scaleCounted) Result(ctx *funcs.Ctx) (types.Datum, error) {
	d, err := s.inner.Result(ctx)
	if err != nil || d.IsNull() || d.D.Form != apd.Finite {
		return d, err
	}
	scale := int32(-1)
	for i := len(s.counts) - 1; i >= 0; i-- {
		if s.counts[i] > 0 {
			scale = s.scales[i]
			break
		}
	}
	if scale < 0 || types.Scale(d.D) == scale {
		return d, nil
	}
	out := new(apd.Decimal)
	cond, err := types.DecimalCtx.Quantize(out, d.D, -scale)
	if err != nil || cond.Inexact() {
		return types.Datum{}, bugf("the sum %s does not hold at scale %d", d.D, scale)
	}
	return types.NewNumeric(out), nil
}

func (s *scaleCounted) State() []types.Datum {
	v := s.inner.State()
	for _, c := range s.counts {
		v = append(v, types.NewInt8(c))
	}
	return v
}

func (s *scaleCounted) SetState(v []types.Datum) error {
	n := len(v) - len(s.counts)
	if n < 0 {
		return pgerror.New(pgerror.DataCorrupted, "stored aggregate state is corrupt")
	}
	for i, c := range v[n:] {
		if c.K != types.KindInt8 {
			return pgerror.New(pgerror.DataCorrupted, "stored aggregate state is corrupt")
		}
		s.counts[i] = c.I
	}
	return s.inner.SetState(v[:n])
}

// bugf is a broken invariant: a panic in invariants builds, an internal
// error (XX000) otherwise.
func bugf(format string, args ...any) error {
	err := pgerror.New(pgerror.InternalError, "refresh: "+format, args...)
	if invariants {
		panic(err)
	}
	return err
}
