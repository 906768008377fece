package exec

import (
	"github.com/mvserver/mvserver/sql/exec/vec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// Vector kernels for CHAR(n) equality, IN lists of constants and
// searched CASE: what TPC-H Q12's aggregate arguments (CASE WHEN
// o_orderpriority = '1-URGENT' OR … THEN 1 ELSE 0 END) and filters
// (l_shipmode IN ('MAIL', 'SHIP')) need to leave the row path. Each
// gives the row path's values and NULLs (compile in expr.go,
// in_hash.go): CHAR compares without trailing spaces when its left side
// is CHAR; an IN list's NULL makes a value not found NULL; a CASE
// evaluates a branch's result only on the rows that take the branch.

func (vc *vcompiler) charCompare(ne bool, l, r vexpr) (vexpr, vtype, bool) {
	out := &vec.Vec{}
	var nn []int32
	return func(b *vec.Batch, sel []int32) (*vec.Vec, error) {
		a, err := l(b, sel)
		if err != nil {
			return nil, err
		}
		// As binary: the right side only where the left is not NULL.
		rs := sel
		if len(a.Nulls) > 0 {
			nn = vec.NotNull(a, sel, nn[:0])
			rs = nn
		}
		if len(rs) == 0 {
			return vec.AllNull(vec.Bool, sel, b.N, out), nil
		}
		c, err := r(b, rs)
		if err != nil {
			return nil, err
		}
		vec.CompareChar(ne, a, c, sel, b.N, out)
		return out, nil
	}, vtype{t: vec.Bool}, true
}

// in compiles E [NOT] IN (constants) over integers (and dates,
// timestamps) or text and CHAR.
func (vc *vcompiler) in(x *plan.In) (vexpr, vtype, bool) {
	e, et, ok := vc.compile(x.E)
	if !ok || (et.t != vec.Int && et.t != vec.Bytes) {
		return nil, vtype{}, false
	}
	ek := x.E.Type().Kind
	set := &vec.InSet{Not: x.Not, Char: et.char}
	if et.t == vec.Int {
		set.Ints = map[int64]struct{}{}
	}
	for _, item := range x.List {
		c, ok := item.(*plan.Const)
		if !ok {
			return nil, vtype{}, false
		}
		d := constDatum(c)
		if d.IsNull() {
			set.HasNull = true
			continue
		}
		switch {
		case et.t == vec.Int && (d.K == ek || intKind(d.K) && intKind(ek)):
			set.Ints[d.I] = struct{}{}
		case et.t == vec.Bytes && textKind(d.K):
			v := []byte(d.S)
			if et.char {
				v = vec.TrimSpace(v)
			}
			set.Bytes = append(set.Bytes, v)
		default:
			return nil, vtype{}, false
		}
	}
	out := &vec.Vec{}
	return func(b *vec.Batch, sel []int32) (*vec.Vec, error) {
		a, err := e(b, sel)
		if err != nil {
			return nil, err
		}
		vec.In(a, set, sel, b.N, out)
		return out, nil
	}, vtype{t: vec.Bool}, true
}

func intKind(k types.Kind) bool {
	return k == types.KindInt2 || k == types.KindInt4 || k == types.KindInt8
}

func textKind(k types.Kind) bool {
	return k == types.KindText || k == types.KindVarchar || k == types.KindChar
}

// caseWhen compiles a searched CASE whose results share one vector type
// (not bytes) and, for decimals, one scale: the row path's values keep
// their own scales, so branches of two scales stay row at a time.
func (vc *vcompiler) caseWhen(x *plan.Case) (vexpr, vtype, bool) {
	ce := &caseEval{}
	var rt vtype
	first := true
	result := func(e plan.Expr) (vexpr, bool) {
		f, t, ok := vc.compile(e)
		if !ok || t.t == vec.Bytes || (!first && t != rt) {
			return nil, false
		}
		rt, first = t, false
		return f, true
	}
	for _, w := range x.Whens {
		c, ct, ok := vc.compile(w.Cond)
		if !ok || ct.t != vec.Bool {
			return nil, vtype{}, false
		}
		r, ok := result(w.Result)
		if !ok {
			return nil, vtype{}, false
		}
		ce.arms = append(ce.arms, caseArm{cond: c, res: r})
	}
	if x.Else != nil {
		r, ok := result(x.Else)
		if !ok {
			return nil, vtype{}, false
		}
		ce.els = &caseArm{res: r}
	}
	if rt.t != vec.Int && rt.t != vec.Decimal && rt.t != vec.Bool {
		return nil, vtype{}, false
	}
	// The result's SQL type must be the branches' (an integer CASE of
	// int4 branches is int4; a CASE that mixes kinds casts them).
	if want, ok := vecTypeOf(x.T); !ok || want.t != rt.t || (rt.t == vec.Decimal && x.T.Precision > 0 && want.scale != rt.scale) {
		return nil, vtype{}, false
	}
	out := &vec.Vec{}
	put := func(r *vec.Vec, _ *caseArm, rows []int32) error {
		vec.Pick(r, rows, out)
		return nil
	}
	null := func(rows []int32) {
		for _, i := range rows {
			out.SetNull(i)
		}
	}
	return func(b *vec.Batch, sel []int32) (*vec.Vec, error) {
		out.T, out.Scale = rt.t, rt.scale
		out.Reset(b.N)
		if err := ce.run(b, sel, put, null); err != nil {
			return nil, err
		}
		return out, nil
	}, rt, true
}

// caseArm is one WHEN … THEN of a vectorized CASE (cond nil: its ELSE),
// with its result's decimal scale (mixedCase).
type caseArm struct {
	cond, res vexpr
	scale     int32
}

// caseEval runs a vectorized searched CASE over a batch: each arm's
// condition over the rows no earlier arm took, and its result over the
// rows it takes, given to put; the rows no arm takes go to the ELSE, or to
// null without one.
type caseEval struct {
	arms             []caseArm
	els              *caseArm
	rest, take, left []int32
}

func (c *caseEval) run(b *vec.Batch, sel []int32, put func(r *vec.Vec, a *caseArm, rows []int32) error, null func(rows []int32)) error {
	c.rest = append(c.rest[:0], sel...)
	for i := range c.arms {
		if len(c.rest) == 0 {
			return nil
		}
		a := &c.arms[i]
		cv, err := a.cond(b, c.rest)
		if err != nil {
			return err
		}
		c.take = vec.True(cv, c.rest, c.take)
		c.left = vec.NotTrue(cv, c.rest, c.left)
		if len(c.take) > 0 {
			r, err := a.res(b, c.take)
			if err != nil {
				return err
			}
			if err := put(r, a, c.take); err != nil {
				return err
			}
		}
		c.rest = append(c.rest[:0], c.left...)
	}
	if len(c.rest) == 0 {
		return nil
	}
	if c.els == nil {
		null(c.rest)
		return nil
	}
	r, err := c.els.res(b, c.rest)
	if err != nil {
		return err
	}
	return put(r, c.els, c.rest)
}

// mixedCase compiles a CASE of unconstrained NUMERIC type whose branches
// are decimals of different scales (TPC-H Q14: THEN l_extendedprice *
// (1 - l_discount), scale 4, ELSE 0, scale 0) for a sum: the vector holds
// every value at the largest scale, and scales holds each row's own (its
// branch's), since a sum's result takes the largest scale of the values
// it adds, as in PostgreSQL. Only sum reads scales (vagg.go); every other
// use of such a CASE stays row at a time.
func (vc *vcompiler) mixedCase(x *plan.Case) (vexpr, vtype, *vec.Vec, bool) {
	if x.T.Kind != types.KindNumeric || x.T.Precision != 0 {
		return nil, vtype{}, nil, false
	}
	ce := &caseEval{}
	top := int32(0)
	result := func(e plan.Expr) (caseArm, bool) {
		f, t, ok := vc.compile(e)
		if !ok || t.t != vec.Decimal {
			return caseArm{}, false
		}
		top = max(top, t.scale)
		return caseArm{res: f, scale: t.scale}, true
	}
	for _, w := range x.Whens {
		c, ct, ok := vc.compile(w.Cond)
		if !ok || ct.t != vec.Bool {
			return nil, vtype{}, nil, false
		}
		a, ok := result(w.Result)
		if !ok {
			return nil, vtype{}, nil, false
		}
		a.cond = c
		ce.arms = append(ce.arms, a)
	}
	if x.Else != nil {
		a, ok := result(x.Else)
		if !ok {
			return nil, vtype{}, nil, false
		}
		ce.els = &a
	}
	if top > 18 {
		return nil, vtype{}, nil, false
	}
	out, scales, tmp := &vec.Vec{}, &vec.Vec{T: vec.Int}, &vec.Vec{}
	var n int
	put := func(r *vec.Vec, a *caseArm, rows []int32) error {
		if r.Scale != top {
			if err := vec.Rescale(r, top, rows, n, tmp); err != nil {
				return err
			}
			r = tmp
		}
		vec.Pick(r, rows, out)
		for _, i := range rows {
			scales.I[i] = int64(a.scale)
		}
		return nil
	}
	null := func(rows []int32) {
		for _, i := range rows {
			out.SetNull(i)
		}
	}
	return func(b *vec.Batch, sel []int32) (*vec.Vec, error) {
		out.T, out.Scale = vec.Decimal, top
		out.Reset(b.N)
		scales.Reset(b.N)
		n = b.N
		if err := ce.run(b, sel, put, null); err != nil {
			return nil, err
		}
		return out, nil
	}, vtype{t: vec.Decimal, scale: top}, scales, true
}
