package exec

import (
	"math"

	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// aggregateOp is hash aggregation: one entry per group key, aggregate
// states updated per input row, groups emitted in first-seen order. Past
// the memory budget the rows of new keys spill to files aggregated after
// the groups in memory (spill.go), so groups then come in no set order.
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
	// started: the input's pass ran; tasks are the spilled files still
	// to aggregate (spill.go), the last first; spills counts the passes
	// that spilled.
	started bool
	tasks   []spillTask
	spills  int
	mem     memAccount
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
	for {
		if a.out != nil {
			b, err := a.out.Next()
			if b != nil || err != nil {
				return b, err
			}
			a.out = nil
		}
		switch {
		case !a.started:
			a.started = true
			// Groups keep evaluated keys and states, never an input row,
			// so the input may reuse its batches (scan_reuse.go).
			if !a.c.RowAtATime {
				reuseInput(a.in)
			}
			if err := a.pass(a.in, 0, false); err != nil {
				return nil, err
			}
		case len(a.tasks) > 0:
			// The last pass's results are the consumer's now: the next
			// spilled file gets the whole account.
			a.mem.release()
			t := a.tasks[len(a.tasks)-1]
			a.tasks = a.tasks[:len(a.tasks)-1]
			if err := a.pass(&spillFileOp{c: a.c, f: t.f}, t.level+1, true); err != nil {
				return nil, err
			}
		default:
			return nil, nil
		}
	}
}

// spillReserve is the share of the budget hash aggregation leaves to the
// states of the groups it keeps once it spills (states such as
// string_agg's keep growing). Past it these groups may overdraw the
// budget by as much again (as PostgreSQL's may pass work_mem), then fail
// with 53200.
const spillReserve = 8

// pass aggregates src into a.out. Spilled rows (from a file) are the
// group keys then the input row. Once the groups take the budget, the
// rows of keys not yet seen go to files partitioned at level, which
// become tasks for later passes.
func (a *aggregateOp) pass(src Operator, level int, spilled bool) error {
	ng := len(a.groupBy)
	groups := map[string]*group{}
	var order []*group
	var single *group
	if ng == 0 {
		single = a.newGroup(nil)
		order = append(order, single)
	}
	var parts *spillParts
	defer func() { parts.close() }()
	var rec Row
	var keyBuf []byte
	argBuf := make([]types.Datum, 8)
	fctx := a.fctx
	// groupBytes is what a new group holds besides its keys: the map entry,
	// the group and one state per aggregate.
	groupBytes := int64(mapEntryOverhead+96) + int64(len(a.news))*64
	// States grow inside a batch and the batch's end decides to spill:
	// when the aggregation can spill, they may overdraw the budget (by a
	// budget at most) rather than fail first.
	a.states.overdraft = 0
	if ng > 0 && a.c.canSpill() {
		a.states.overdraft = a.c.Mem.Limit
	}
	spill := func(width int) error {
		var err error
		parts, err = newSpillParts(a.c, "hash aggregation", "hashagg-*.part", level, width)
		a.spills++
		return err
	}
	err := Drain(src, func(b []Row) error {
		var size int64
		// room is what new groups may take in this batch; past it the
		// rows of new keys spill (a share of the budget is left to the
		// states of the groups kept).
		room := int64(math.MaxInt64)
		if parts == nil && single == nil && a.c.canSpill() {
			room = a.c.Mem.Available() - a.c.Mem.Limit/spillReserve
		}
		for _, r := range b {
			g := single
			if g == nil {
				keyBuf = keyBuf[:0]
				var keys []types.Datum
				if spilled {
					keys, r = r[:ng:ng], r[ng:]
					for _, d := range keys {
						keyBuf = types.HashKey(keyBuf, d)
					}
				} else {
					keys = make([]types.Datum, ng)
					for i, f := range a.groupBy {
						d, err := f(r)
						if err != nil {
							return err
						}
						keys[i] = d
						keyBuf = types.HashKey(keyBuf, d)
					}
				}
				g = groups[string(keyBuf)]
				if g == nil && parts != nil {
					// Spilling: a new key's rows go to its file.
					rec = append(append(rec[:0], keys...), r...)
					if err := parts.add(keyBuf, rec); err != nil {
						return err
					}
					continue
				}
				if g == nil {
					n := groupBytes + rowBytes(keys) + int64(len(keyBuf))
					if size+n > room && len(groups) > 0 {
						// Past the budget: this key and the new ones
						// after it spill.
						if err := spill(ng + len(r)); err != nil {
							return err
						}
						rec = append(append(rec[:0], keys...), r...)
						if err := parts.add(keyBuf, rec); err != nil {
							return err
						}
						continue
					}
					g = a.newGroup(keys)
					groups[string(keyBuf)] = g
					order = append(order, g)
					size += n
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
		if err := a.mem.growOver(a.mem.what, size, a.states.overdraft); err != nil {
			return err
		}
		return a.c.Context.Err()
	})
	if err != nil {
		return err
	}
	// The results take the place of the states (as much again at most,
	// past the budget as far as the states could go).
	var over int64
	if parts != nil {
		over = 2 * a.c.Mem.Limit
	}
	w := ng + len(a.news)
	rows := make([]Row, 0, len(order))
	var held int64 // what the results hold, kept until they are read
	for _, g := range order {
		row := make(Row, w)
		copy(row, g.keys)
		for i, s := range g.states {
			if a.orders[i] != nil {
				if err := a.addSorted(g.sorted[i], i, s); err != nil {
					return err
				}
			}
			d, err := s.Result(fctx)
			if err != nil {
				return err
			}
			row[ng+i] = d
		}
		rows = append(rows, row)
		g.states = nil // done: the results hold what is still needed
		if held += valueBytes(row[ng:]); held >= stateStep {
			if err := a.mem.growOver(a.mem.what, held, over); err != nil {
				return err
			}
			held = 0
		}
	}
	// The states are gone (garbage): their charge goes, the results'
	// stays until they are read.
	a.states.reset()
	if err := a.mem.growOver(a.mem.what, held, over); err != nil {
		return err
	}
	if parts != nil {
		if err := parts.finish(); err != nil {
			return err
		}
		a.tasks = parts.takeTasks(a.tasks)
	}
	a.out = &sliceOp{rows: rows}
	return nil
}

func (a *aggregateOp) Close() {
	a.in.Close()
	closeTasks(a.tasks)
	a.tasks = nil
	a.out = nil
	a.mem.release()
}
