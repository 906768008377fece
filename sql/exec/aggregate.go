package exec

import (
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// aggregateOp is hash aggregation: one entry per group key, aggregate
// states updated per input row, groups emitted in first-seen order.
type aggregateOp struct {
	c       *Ctx
	in      Operator
	node    *plan.Aggregate
	groupBy []evalFn
	args    [][]evalFn
	filters []evalFn
	// orders holds the ORDER BY keys of the calls that have one (nil
	// for the others): their values are kept and sorted (ordered_agg.go).
	orders [][]evalFn
	news   []func() funcs.AggState
	out    *sliceOp
	done   bool
	mem    memAccount
	// states is the share of mem the aggregate states charge (what
	// array_agg and string_agg keep grows with their input).
	states stateBudget
	fctx   *funcs.Ctx // the functions' context, charging states
}

type group struct {
	keys     []types.Datum
	states   []funcs.AggState
	distinct []map[string]struct{}
	// sorted holds the values of the calls with an ORDER BY until the
	// group's result is computed.
	sorted [][]sortedArgs
}

func newAggregate(c *Ctx, a *plan.Aggregate, in Operator) (Operator, error) {
	op := &aggregateOp{c: c, in: in, node: a, mem: c.account("hash aggregation")}
	op.states.acct = &op.mem
	op.fctx = c.funcsFor(&op.states)
	var err error
	if op.groupBy, err = compileAll(a.GroupBy, c); err != nil {
		in.Close()
		return nil, err
	}
	for _, call := range a.Aggs {
		fns, err := compileAll(call.Args, c)
		if err != nil {
			in.Close()
			return nil, err
		}
		op.args = append(op.args, fns)
		var ff evalFn
		if call.Filter != nil {
			if ff, err = compile(call.Filter, c); err != nil {
				in.Close()
				return nil, err
			}
		}
		op.filters = append(op.filters, ff)
		var keys []evalFn
		for _, k := range call.Order {
			f, err := compile(k.E, c)
			if err != nil {
				in.Close()
				return nil, err
			}
			keys = append(keys, f)
		}
		op.orders = append(op.orders, keys)
		op.news = append(op.news, call.Def.NewState.(func() funcs.AggState))
	}
	return op, nil
}

func (a *aggregateOp) newGroup(keys []types.Datum) *group {
	g := &group{keys: keys, states: make([]funcs.AggState, len(a.news))}
	for i, n := range a.news {
		g.states[i] = n()
		if a.orders[i] != nil {
			if g.sorted == nil {
				g.sorted = make([][]sortedArgs, len(a.news))
			}
			continue
		}
		if a.node.Aggs[i].Distinct {
			if g.distinct == nil {
				g.distinct = make([]map[string]struct{}, len(a.news))
			}
			g.distinct[i] = map[string]struct{}{}
		}
	}
	return g
}

func (a *aggregateOp) Next() ([]Row, error) {
	if a.done {
		return a.out.Next()
	}
	a.done = true
	groups := map[string]*group{}
	var order []*group
	var single *group
	if len(a.groupBy) == 0 {
		single = a.newGroup(nil)
		order = append(order, single)
	}
	var keyBuf []byte
	argBuf := make([]types.Datum, 8)
	fctx := a.fctx
	// groupBytes is what a new group holds besides its keys: the map entry,
	// the group and one state per aggregate.
	groupBytes := int64(mapEntryOverhead+96) + int64(len(a.news))*64
	err := Drain(a.in, func(b []Row) error {
		var size int64
		for _, r := range b {
			g := single
			if g == nil {
				keyBuf = keyBuf[:0]
				keys := make([]types.Datum, len(a.groupBy))
				for i, f := range a.groupBy {
					d, err := f(r)
					if err != nil {
						return err
					}
					keys[i] = d
					keyBuf = types.HashKey(keyBuf, d)
				}
				g = groups[string(keyBuf)]
				if g == nil {
					g = a.newGroup(keys)
					groups[string(keyBuf)] = g
					order = append(order, g)
					size += groupBytes + rowBytes(keys) + int64(len(keyBuf))
				} else {
					for i, d := range keys {
						if types.Preferred(g.keys[i], d) {
							g.keys[i] = d
						}
					}
				}
			}
			for i, fns := range a.args {
				if f := a.filters[i]; f != nil {
					d, err := f(r)
					if err != nil {
						return err
					}
					if d.IsNull() || !d.Bool() {
						continue
					}
				}
				args := argBuf[:len(fns)]
				for j, f := range fns {
					d, err := f(r)
					if err != nil {
						return err
					}
					args[j] = d
				}
				if a.orders[i] != nil {
					s, err := a.keep(r, i, args)
					if err != nil {
						return err
					}
					g.sorted[i] = append(g.sorted[i], s)
					size += rowBytes(args) + 48
					continue
				}
				if g.distinct != nil && g.distinct[i] != nil {
					var k []byte
					skip := false
					for _, d := range args {
						if d.IsNull() {
							skip = true
						}
						k = types.HashKey(k, d)
					}
					if skip {
						continue
					}
					if _, seen := g.distinct[i][string(k)]; seen {
						continue
					}
					g.distinct[i][string(k)] = struct{}{}
					size += int64(len(k)) + mapEntryOverhead
				}
				if err := g.states[i].Add(fctx, args); err != nil {
					return err
				}
			}
		}
		if err := a.mem.grow(size); err != nil {
			return err
		}
		return a.c.Context.Err()
	})
	if err != nil {
		return nil, err
	}
	w := len(a.groupBy) + len(a.news)
	rows := make([]Row, 0, len(order))
	var held int64 // what the results hold, kept until they are read
	for _, g := range order {
		row := make(Row, w)
		copy(row, g.keys)
		for i, s := range g.states {
			if a.orders[i] != nil {
				if err := a.addSorted(g.sorted[i], i, s); err != nil {
					return nil, err
				}
			}
			d, err := s.Result(fctx)
			if err != nil {
				return nil, err
			}
			row[len(a.groupBy)+i] = d
		}
		rows = append(rows, row)
		g.states = nil // done: the results hold what is still needed
		if held += valueBytes(row[len(a.groupBy):]); held >= stateStep {
			if err := a.mem.grow(held); err != nil {
				return nil, err
			}
			held = 0
		}
	}
	// The states are gone (garbage): their charge goes, the results'
	// stays until the operator closes.
	a.states.reset()
	if err := a.mem.grow(held); err != nil {
		return nil, err
	}
	a.out = &sliceOp{rows: rows}
	return a.out.Next()
}

func (a *aggregateOp) Close() {
	a.in.Close()
	a.mem.release()
}
