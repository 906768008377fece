package refresh

import (
	"bytes"
	"fmt"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// The stored state of a MIN/MAX scalar subquery (TPC-H Q15's
// total_revenue = (SELECT max(total_revenue) FROM revenue0)). Knowing only
// that the scalar's sources changed, scalarfilter.go would run the filter
// again over its whole input, old and new, and the scalar itself with it:
// more than a full recompute. The checkpoint keeps, for each such
// subquery, its value and how many of its input's rows hold that value, so
// the new value follows from the input's change alone:
//
//	rows lost at the value lower the count; rows gained above it make a
//	new value (their count); rows gained at it raise the count.
//
// Only when the count reaches 0 and no gained row reaches the old value
// (the extreme's last row left) is the scalar evaluated again. While the
// value stays, the filter's condition is a constant of the refresh and the
// filter is linear (only its input's change passes through it).

// ScalarState is a MIN/MAX scalar subquery's value at a checkpoint and the
// count of its input's rows at that value (invariant 6 of doc.go).
type ScalarState struct {
	// ID is the subquery's Subquery.ID in the bound query (the checkpoint's
	// Definition pins the query, so the binding numbers it alike).
	ID int `json:"id"`
	// Value is the value's row encoding (one column); empty: NULL (no row
	// of the input has a non-NULL value).
	Value []byte `json:"value,omitempty"`
	// Count is the number of input rows whose value equals Value.
	Count int64 `json:"count"`
}

// extremeScalar is a scalar subquery computing MIN or MAX of one
// expression over its input with no GROUP BY: (SELECT max(x) FROM …).
type extremeScalar struct {
	sub   *plan.Subquery
	input plan.Node
	arg   plan.Expr
	max   bool
}

// extremeOf recognises an uncorrelated scalar subquery of that shape.
func extremeOf(s *plan.Subquery) (*extremeScalar, bool) {
	if !uncorrelatedScalar(s) {
		return nil, false
	}
	n := s.Plan
	if p, ok := n.(*plan.Project); ok {
		if len(p.Exprs) != 1 {
			return nil, false
		}
		c, ok := p.Exprs[0].(*plan.ColRef)
		if !ok || c.Idx != 0 {
			return nil, false
		}
		n = p.Input
	}
	a, ok := n.(*plan.Aggregate)
	if !ok || len(a.GroupBy) != 0 || len(a.Aggs) != 1 {
		return nil, false
	}
	c := a.Aggs[0]
	if (c.Name != "max" && c.Name != "min") || len(c.Args) != 1 || c.Filter != nil || len(c.Order) != 0 || c.Direct != 0 {
		return nil, false
	}
	if hasSubquery(c.Args[0]) || c.Args[0].Type().Kind != s.T.Kind {
		return nil, false
	}
	return &extremeScalar{sub: s, input: a.Input, arg: c.Args[0], max: c.Name == "max"}, true
}

// extreme is the value being kept and its count, decoded.
type extreme struct {
	val   types.Datum // NULL: no non-NULL value yet
	count int64
	max   bool
}

// beats reports whether v is past the kept value (above for max, below
// for min).
func (e *extreme) beats(v types.Datum) bool {
	if e.val.IsNull() {
		return true
	}
	c := types.Compare(v, e.val)
	if e.max {
		return c > 0
	}
	return c < 0
}

// add counts one input row's value in. Of equal values it keeps the one
// MIN/MAX returns (types.Preferred: 1.50 over 1.5), whatever the order.
func (e *extreme) add(v types.Datum) {
	switch {
	case v.IsNull():
	case e.beats(v):
		e.val, e.count = v, 1
	case types.Compare(v, e.val) == 0:
		e.count++
		if types.Preferred(e.val, v) {
			e.val = v
		}
	}
}

// oneForm reports whether values of kind k that compare equal are the
// same value (not so for numerics, 1.5 and 1.50, or floats, 0 and -0).
func oneForm(k types.Kind) bool {
	switch k {
	case types.KindBool, types.KindInt2, types.KindInt4, types.KindInt8, types.KindDate, types.KindTimestamp, types.KindTimestampTZ:
		return true
	}
	return false
}

// fold applies an input's change to the state: the rows lost, then the
// rows gained. known is false when the value cannot be told from the state
// (its last row left and no gained row reaches it, or a row at it left and
// equal values may differ in form, so which one MIN/MAX returns is not
// known); bad when a lost row is past the value, which a true state never
// has.
func (e *extreme) fold(lost, gained []types.Datum) (known, bad bool) {
	formLost := false
	for _, v := range lost {
		if v.IsNull() {
			continue
		}
		if e.beats(v) {
			return false, true
		}
		if types.Compare(v, e.val) == 0 {
			e.count--
			formLost = formLost || !oneForm(v.K)
		}
	}
	if e.count < 0 {
		return false, true
	}
	old := e.val
	best := extreme{max: e.max}
	for _, v := range gained {
		best.add(v)
	}
	switch {
	case best.val.IsNull():
	case e.beats(best.val):
		// Every row at the new value is a gained one.
		e.val, e.count = best.val, best.count
		return true, false
	case types.Compare(best.val, e.val) == 0:
		e.count += best.count
		if types.Preferred(e.val, best.val) {
			e.val = best.val
		}
	}
	if formLost || e.count == 0 && !old.IsNull() {
		return false, false
	}
	return true, false
}

// state encodes e for the checkpoint.
func (e *extreme) state(id int) ScalarState {
	st := ScalarState{ID: id, Count: e.count}
	if !e.val.IsNull() {
		st.Value = types.AppendRowValue(nil, []uint32{1}, []types.Datum{e.val})
	}
	return st
}

// decodeExtreme reads a checkpoint's state.
func decodeExtreme(st ScalarState, max bool) (*extreme, error) {
	e := &extreme{max: max, count: st.Count, val: types.NullDatum}
	if len(st.Value) == 0 {
		if st.Count != 0 {
			return nil, pgerror.New(pgerror.DataCorrupted, "stored scalar state is corrupt")
		}
		return e, nil
	}
	row := make([]types.Datum, 1)
	if err := types.NewRowDecoder([]uint32{1}).Decode(st.Value, row); err != nil {
		return nil, err
	}
	e.val = row[0]
	return e, nil
}

// constant is the value as an expression of the subquery's type.
func (e *extreme) constant(s *plan.Subquery) plan.Expr {
	return &plan.Const{D: e.val, T: s.T}
}

// values runs the values of x's argument over n (a plan of x's input's
// columns), calling fn with each batch.
func (df *differ) values(x *extremeScalar, n plan.Node, fn func([]types.Datum)) error {
	p := &plan.Project{Input: n, Exprs: []plan.Expr{x.arg}, Cols: []plan.Column{{Name: "v", T: x.arg.Type()}}}
	o, err := optimizeWith(df.est, p)
	if err != nil {
		return err
	}
	if err := df.budget.charge(o); err != nil {
		return err
	}
	op, err := exec.Build(df.ctx, o)
	if err != nil {
		return err
	}
	vs := make([]types.Datum, 0, 64)
	return exec.Drain(op, func(b []exec.Row) error {
		vs = vs[:0]
		for _, r := range b {
			vs = append(vs, r[0])
		}
		fn(vs)
		return nil
	})
}

// evaluate computes x's state over its whole input now.
func (df *differ) evaluate(x *extremeScalar) (*extreme, error) {
	e := &extreme{max: x.max, val: types.NullDatum}
	err := df.values(x, x.input, func(vs []types.Datum) {
		for _, v := range vs {
			e.add(v)
		}
	})
	return e, err
}

// collect runs n's values of x's argument into a slice.
func (df *differ) collect(x *extremeScalar, n plan.Node) ([]types.Datum, error) {
	if n == nil {
		return nil, nil
	}
	var out []types.Datum
	err := df.values(x, n, func(vs []types.Datum) { out = append(out, vs...) })
	return out, err
}

// extremeStates is what a refresh knows of one MIN/MAX scalar: its value at
// the checkpoint (nil when the checkpoint has no state) and now.
func (df *differ) extremeStates(x *extremeScalar) (was, now *extreme, err error) {
	id := x.sub.ID
	if st, ok := df.scalarsBefore[id]; ok {
		if was, err = decodeExtreme(st, x.max); err != nil {
			return nil, nil, err
		}
	}
	defer func() {
		if err == nil {
			df.keepScalar(now.state(id))
		}
	}()
	if was == nil {
		now, err = df.evaluate(x)
		return nil, now, err
	}
	d, err := df.diff(x.input)
	if err != nil {
		return nil, nil, err
	}
	cur := *was
	if !d.changed {
		return was, &cur, nil
	}
	lost, err := df.collect(x, d.minus)
	if err != nil {
		return nil, nil, err
	}
	gained, err := df.collect(x, d.plus)
	if err != nil {
		return nil, nil, err
	}
	known, bad := cur.fold(lost, gained)
	if bad {
		return nil, nil, &errDrift{msg: "a MIN/MAX scalar subquery's stored value does not match its input"}
	}
	if !known {
		// The extreme's last row left: the scalar again, over its input.
		now, err = df.evaluate(x)
		return was, now, err
	}
	return was, &cur, nil
}

// keepScalar records a state the refresh computed for the new checkpoint.
func (df *differ) keepScalar(st ScalarState) {
	for i := range df.scalarsAfter {
		if df.scalarsAfter[i].ID == st.ID {
			df.scalarsAfter[i] = st
			return
		}
	}
	df.scalarsAfter = append(df.scalarsAfter, st)
}

// extremeScalars lists the MIN/MAX scalar subqueries of the filters of n.
func extremeScalars(n plan.Node) []*extremeScalar {
	var out []*extremeScalar
	var walk func(n plan.Node)
	walk = func(n plan.Node) {
		if f, ok := n.(*plan.Filter); ok {
			for _, s := range scalarSubqueries(f.Cond) {
				if x, ok := extremeOf(s); ok {
					out = append(out, x)
				}
			}
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(n)
	return out
}

// fullScalars computes the states of the query's MIN/MAX scalar
// subqueries over the snapshot a full recompute read, for the incremental
// refreshes after it (none when the view cannot have one).
func fullScalars(in *Input, an *Analysis) ([]ScalarState, error) {
	xs := extremeScalars(in.Query)
	if len(xs) == 0 || !an.Incremental() || len(in.OwnWrites) > 0 {
		return nil, nil
	}
	df := &differ{ctx: in.Exec, est: in.estimator()}
	for _, x := range xs {
		e, err := df.evaluate(x)
		if err != nil {
			return nil, err
		}
		df.keepScalar(e.state(x.sub.ID))
	}
	return df.scalarsAfter, nil
}

// checkScalars compares the MIN/MAX scalar states an incremental refresh
// computed with their evaluation over its snapshot (invariants build).
func checkScalars(in *Input, an *Analysis, got []ScalarState) error {
	want, err := fullScalars(in, an)
	if err != nil {
		return err
	}
	byID := map[int]ScalarState{}
	for _, st := range want {
		byID[st.ID] = st
	}
	for _, st := range got {
		w, ok := byID[st.ID]
		if !ok {
			continue // a view fullScalars keeps none for
		}
		if !bytes.Equal(w.Value, st.Value) || w.Count != st.Count {
			return fmt.Errorf("scalar subquery %d: stored state %x×%d, its input gives %x×%d", st.ID, st.Value, st.Count, w.Value, w.Count)
		}
	}
	return nil
}
