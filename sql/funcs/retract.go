package funcs

import (
	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// Retractable is an aggregate state that can also take a value back out
// and be kept between refreshes: what GROUP_AGGREGATE maintains per group
// of a materialized view (R-I1). A state rebuilt by Add and Retract gives
// the same Result as one built by Add over the remaining values alone, so
// an incremental refresh equals a full recompute.
type Retractable interface {
	AggState
	// Retract removes one value added earlier. ok=false when this state
	// cannot (a MIN/MAX losing its current extreme): the caller recomputes
	// the group from its rows.
	Retract(ctx *Ctx, args []types.Datum) (ok bool, err error)
	// State returns the state as values (a fixed number per aggregate);
	// SetState restores it.
	State() []types.Datum
	SetState(vals []types.Datum) error
}

func badState() error {
	return pgerror.New(pgerror.DataCorrupted, "stored aggregate state is corrupt")
}

func (s *countStar) Retract(*Ctx, []types.Datum) (bool, error) { s.n--; return true, nil }
func (s *countStar) State() []types.Datum                      { return []types.Datum{types.NewInt8(s.n)} }
func (s *countStar) SetState(v []types.Datum) error {
	if len(v) != 1 || v[0].K != types.KindInt8 {
		return badState()
	}
	s.n = v[0].I
	return nil
}

func (s *countState) Retract(_ *Ctx, a []types.Datum) (bool, error) {
	if !a[0].IsNull() {
		s.n--
	}
	return true, nil
}
func (s *countState) State() []types.Datum { return []types.Datum{types.NewInt8(s.n)} }
func (s *countState) SetState(v []types.Datum) error {
	if len(v) != 1 || v[0].K != types.KindInt8 {
		return badState()
	}
	s.n = v[0].I
	return nil
}

// Retract subtracts an integer; the sum returns to int64 when it fits
// again, so Result matches a sum of the remaining values.
func (s *sumInt) Retract(_ *Ctx, a []types.Datum) (bool, error) {
	if a[0].IsNull() {
		return true, nil
	}
	s.n--
	v := a[0].I
	if !s.over {
		r := s.i - v
		if (r < s.i) == (v > 0) || v == 0 {
			s.i = r
			s.any = s.n > 0
			return true, nil
		}
		s.over = true
		s.big = types.NumericFromInt(s.i)
	}
	var err error
	if s.big, err = types.NumericSub(s.big, types.NumericFromInt(v)); err != nil {
		return false, err
	}
	if i, err := s.big.Int64(); err == nil {
		s.i, s.over, s.big = i, false, nil
	}
	s.any = s.n > 0
	return true, nil
}

func (s *sumInt) State() []types.Datum {
	v := types.NewInt8(s.i)
	if s.over {
		v = types.NewNumeric(s.big)
	}
	return []types.Datum{types.NewInt8(s.n), v}
}

func (s *sumInt) SetState(v []types.Datum) error {
	if len(v) != 2 || v[0].K != types.KindInt8 {
		return badState()
	}
	s.n, s.any = v[0].I, v[0].I > 0
	switch v[1].K {
	case types.KindInt8:
		s.i, s.over, s.big = v[1].I, false, nil
	case types.KindNumeric:
		s.over, s.big = true, v[1].D
	default:
		return badState()
	}
	return nil
}

// Retract subtracts a decimal. Values of one fixed scale (what the planner
// allows: a DECIMAL(p,s) argument) keep the sum's scale, so it prints as a
// fresh sum would.
func (s *sumNumeric) Retract(_ *Ctx, a []types.Datum) (bool, error) {
	if a[0].IsNull() {
		return true, nil
	}
	s.n--
	s.any = s.n > 0
	if s.addSmall(a[0].D, true) {
		return true, nil
	}
	s.settle()
	if _, err := types.DecimalCtx.Sub(&s.d, &s.d, a[0].D); err != nil {
		return false, pgerror.New(pgerror.NumericValueOutOfRange, "value overflows numeric format")
	}
	// No reset at n = 0: a refresh may retract before it adds, passing
	// through n ≤ 0 on its way back up.
	s.any = s.n > 0
	return true, nil
}

func (s *sumNumeric) State() []types.Datum {
	s.settle()
	d := new(apd.Decimal)
	d.Set(&s.d)
	return []types.Datum{types.NewInt8(s.n), types.NewNumeric(d)}
}

func (s *sumNumeric) SetState(v []types.Datum) error {
	if len(v) != 2 || v[0].K != types.KindInt8 || v[1].K != types.KindNumeric {
		return badState()
	}
	s.n, s.any = v[0].I, v[0].I > 0
	s.d.Set(v[1].D)
	s.small, s.hasSmall = 0, false
	return nil
}

func (s *avgNumeric) Retract(c *Ctx, a []types.Datum) (bool, error) {
	if a[0].IsNull() {
		return true, nil
	}
	s.n--
	if s.fromInt {
		return s.isum.Retract(c, a)
	}
	return s.sum.Retract(c, a)
}

func (s *avgNumeric) State() []types.Datum {
	if s.fromInt {
		return s.isum.State()
	}
	return s.sum.State()
}

func (s *avgNumeric) SetState(v []types.Datum) error {
	var err error
	if s.fromInt {
		err = s.isum.SetState(v)
		s.n = s.isum.n
	} else {
		err = s.sum.SetState(v)
		s.n = s.sum.n
	}
	return err
}

// Retract of a value other than the current extreme changes nothing; of
// the extreme (or an equal value) it cannot say what is left.
func (s *minMax) Retract(_ *Ctx, a []types.Datum) (bool, error) {
	if a[0].IsNull() {
		return true, nil
	}
	if !s.any || types.Compare(a[0], s.v) == 0 {
		return false, nil
	}
	return true, nil
}

func (s *minMax) State() []types.Datum {
	if !s.any {
		return []types.Datum{types.NullDatum}
	}
	return []types.Datum{s.v}
}

func (s *minMax) SetState(v []types.Datum) error {
	if len(v) != 1 {
		return badState()
	}
	s.any, s.v = !v[0].IsNull(), v[0]
	return nil
}
