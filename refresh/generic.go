package refresh

import (
	"context"

	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// GENERIC_AGGREGATE at the top of a view's query: the groups the change
// touches are recomputed from the current input, and their old rows are
// taken from the view itself — not recomputed from the input as of the
// checkpoint, which would read the whole source a second time. It applies
// when every GROUP BY key is a column of the view (of the same type), so a
// view row says which group it is.
type topAggregate struct {
	shape    *groupAggShape
	in       *Input
	viewCols []int // view column of each GROUP BY key
}

// findTopAggregate finds an aggregate at the top of the query (under
// projections, HAVING and ORDER BY) whose group keys are view columns.
func findTopAggregate(in *Input) *topAggregate {
	shape := topAggregateChain(in.Query)
	if shape == nil {
		return nil
	}
	above, agg := shape.above, shape.agg
	// Where each aggregate output column ends up, bottom to top.
	pos := make([]int, len(agg.Cols))
	for i := range pos {
		pos[i] = i
	}
	for i := len(above) - 1; i >= 0; i-- {
		p, ok := above[i].(*plan.Project)
		if !ok {
			continue
		}
		for j := range pos {
			at := -1
			for k, e := range p.Exprs {
				if c, ok := e.(*plan.ColRef); ok && c.Idx == pos[j] {
					at = k
					break
				}
			}
			pos[j] = at
		}
	}
	t := &topAggregate{shape: shape, in: in}
	for g := range agg.GroupBy {
		o := pos[g]
		if o < 0 || o >= len(in.View.Columns) || in.View.Columns[o].Type.Kind != agg.Cols[g].T.Kind {
			return nil
		}
		t.viewCols = append(t.viewCols, o)
	}
	return t
}

// change returns the view's change: the touched groups recomputed (rows
// gained) and the view's rows of those groups (rows lost).
func (t *topAggregate) change(df *differ) (plus, minus plan.Node, err error) {
	agg := t.shape.agg
	if b := exprBlockers(agg); b != nil {
		return nil, nil, &blockedError{*b}
	}
	d, err := df.diff(agg.Input)
	if err != nil || !d.changed {
		return nil, nil, err
	}
	df.recomputes = true
	var input plan.Node = agg.Input
	var keys map[string]struct{}
	if len(agg.GroupBy) > 0 {
		var vals [][]types.Datum
		if keys, vals, err = df.touchedKeys(agg.GroupBy, d.plus, d.minus); err != nil {
			return nil, nil, err
		}
		input = df.narrowKeyIn(&plan.KeyIn{Input: agg.Input, Keys: agg.GroupBy, Set: keys}, vals)
	}
	plus = t.shape.over(rebuild(agg, input))
	// The view's rows of the touched groups.
	v := t.in.View
	ids := make([]uint32, len(v.Columns))
	cols := make([]plan.Column, len(v.Columns))
	for i, c := range v.Columns {
		ids[i], cols[i] = c.ID, plan.Column{Name: c.Name, T: c.Type}
	}
	dec := types.NewRowDecoder(ids)
	var old [][]types.Datum
	var buf []byte
	it := t.in.Txn.Scan(storage.TableID(v.ID), nil, nil)
	defer it.Close()
	for it.Next() {
		row := make([]types.Datum, len(ids))
		if err := dec.Decode(it.Row().Value, row); err != nil {
			return nil, nil, err
		}
		if keys != nil {
			buf = buf[:0]
			for _, o := range t.viewCols {
				buf = types.HashKey(buf, row[o])
			}
			if _, ok := keys[string(buf)]; !ok {
				continue
			}
		}
		old = append(old, row)
	}
	if err := it.Err(); err != nil {
		return nil, nil, err
	}
	if len(old) > 0 {
		minus = &plan.Given{Cols: cols, Rows: old}
	}
	return plus, minus, nil
}

// exprBlockers finds what in an aggregate's own expressions stops
// differentiation.
func exprBlockers(a *plan.Aggregate) *Blocker {
	for _, e := range a.GroupBy {
		if b := exprBlocker(e, false); b != nil {
			return b
		}
	}
	for _, c := range a.Aggs {
		if b := aggBlocker(c); b != nil {
			return b
		}
	}
	return nil
}

// genericAggregate is GENERIC_AGGREGATE in the planner's table: an
// aggregate at the top whose group keys are view columns recomputes its
// touched groups against the view's rows (topAggregate); any other
// aggregate, DISTINCT or set operation is recomputed for its touched
// groups inside the differentiation of the whole query (delta.go).
type genericAggregate struct{}

func (genericAggregate) Name() TechniqueName { return GenericAggregate }

func (genericAggregate) Applies(an *Analysis) (bool, string) {
	return allowed(an, GenericAggregate, "")
}

func (genericAggregate) Run(ctx context.Context, r *techRun) (*change, error) {
	if top := findTopAggregate(r.in); top != nil {
		plus, minus, err := top.change(r.df)
		return &change{plus: plus, minus: minus}, err
	}
	return r.queryChange()
}

func (genericAggregate) Estimate(s *sizer, r *techRun, c *change) float64 {
	return changeCost(s, c, r.changed)
}
