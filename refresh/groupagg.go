package refresh

import (
	"context"
	"encoding/binary"
	"strings"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// GROUP_AGGREGATE (R-I1): a view whose query ends in an aggregate of
// COUNT, SUM, AVG, MIN and MAX keeps, per group, the aggregates' states
// (funcs.Retractable) in the refresh meta space, in the same commit as the
// view's rows. A refresh folds the input's changes into the touched groups'
// states — Add for rows gained, Retract for rows lost — and recomputes from
// the input only the groups whose MIN/MAX lost its extreme. The nodes above
// the aggregate (HAVING, the select list) then turn each touched group's old
// and new aggregate row into the view's change.

// groupAggShape is a query ending in such an aggregate.
type groupAggShape struct {
	above []plan.Node // from the root down to the aggregate's parent
	agg   *plan.Aggregate
}

func findGroupAgg(q plan.Node) (*groupAggShape, string) {
	g := topAggregateChain(q)
	if g == nil {
		return nil, ""
	}
	for _, n := range g.above {
		for _, e := range plan.NodeExprs(n) {
			if exprBlocker(e, false) != nil {
				return nil, "an expression above the aggregate cannot be maintained"
			}
		}
	}
	if why := groupStateBlocker(g.agg); why != "" {
		return nil, why
	}
	return g, ""
}

// groupStateBlocker says why an aggregate's groups cannot be kept as
// stored states (GROUP_AGGREGATE at the top, inner_state.go below it), ""
// when they can: its keys must be read back as they print, its aggregates
// retractable.
func groupStateBlocker(a *plan.Aggregate) string {
	for _, e := range a.GroupBy {
		if exprBlocker(e, false) != nil {
			return "a grouping expression cannot be maintained"
		}
		// A group's key is the value its first row brought; keys whose
		// equal values print apart (1.5 / 1.50, -0 / 0, '1 day' /
		// '24 hours') are left to GENERIC_AGGREGATE, which recomputes a
		// touched group whole.
		switch t := e.Type(); t.Kind {
		case types.KindFloat4, types.KindFloat8, types.KindInterval:
			return "a group key is of type " + t.String() + ", whose equal values can print apart"
		case types.KindNumeric:
			// (extract(year FROM date), TPC-H Q7/Q8/Q9's key, is a
			// whole number: fixed_scale.go)
			if _, ok := fixedScale(e, a.Input); !ok {
				return "a group key is a decimal of no fixed scale, whose equal values can print apart (fix: CAST(… AS DECIMAL(p,s)))"
			}
		}
	}
	for _, c := range a.Aggs {
		if why := notRetractable(c, a.Input); why != "" {
			return why
		}
	}
	return ""
}

// topAggregateChain finds an aggregate at the top of a query, under
// projections, filters (HAVING) and sorts.
func topAggregateChain(q plan.Node) *groupAggShape {
	var above []plan.Node
	n := q
	for {
		switch x := n.(type) {
		case *plan.Project:
			above, n = append(above, x), x.Input
		case *plan.Filter:
			above, n = append(above, x), x.Input
		case *plan.Sort:
			above, n = append(above, x), x.Input
		case *plan.Aggregate:
			return &groupAggShape{above: above, agg: x}
		default:
			return nil
		}
	}
}

// notRetractable says why GROUP_AGGREGATE cannot maintain an aggregate's
// state, "" when it can. A SUM, AVG or variance of decimals needs one fixed
// scale (fixed_scale.go) so that a state that has taken values back prints
// as a fresh one.
func notRetractable(c plan.AggCall, in plan.Node) string {
	name := strings.ToLower(c.Name)
	if c.Distinct {
		return name + "(DISTINCT …) keeps no state that can take a row back"
	}
	switch name {
	case "count", "min", "max":
	case "sum", "avg", "variance", "var_samp", "var_pop", "stddev", "stddev_samp", "stddev_pop", "std":
		// (the variance family keeps exact sums of x and x² over
		// integers and decimals: funcs.varNumeric)
		if len(c.Args) != 1 {
			return name + "() of several arguments keeps no state that can take a row back"
		}
		arg := c.Args[0]
		switch t := arg.Type(); t.Kind {
		case types.KindInt2, types.KindInt4, types.KindInt8:
		case types.KindNumeric:
			if _, ok := decimalScales(arg, in); ok && name == "sum" {
				// a few scales: counted per scale (scaleCounted)
			} else if _, ok := fixedScale(arg, in); !ok {
				return name + "() adds decimals of no fixed scale, such as a quotient or a NUMERIC without (p,s), so a group that takes rows back could print another scale than a fresh one (fix: " + name + "(CAST(… AS DECIMAL(p,s))); DECIMAL(p,s) columns and casts, and their +, - and *, have one scale)"
			}
		default:
			return name + "() of " + t.String() + " keeps no state that can take a row back"
		}
	default:
		return name + "() keeps no state that can take a row back"
	}
	newState, ok := c.Def.NewState.(func() funcs.AggState)
	if !ok {
		return name + "() keeps no state that can take a row back"
	}
	if _, ok := newState().(funcs.Retractable); !ok {
		return name + "() keeps no state that can take a row back"
	}
	return ""
}

// over rebuilds the nodes above the aggregate on another input (Sort is
// dropped: a view stores no order).
func (g *groupAggShape) over(input plan.Node) plan.Node {
	n := input
	for i := len(g.above) - 1; i >= 0; i-- {
		switch x := g.above[i].(type) {
		case *plan.Project, *plan.Filter:
			n = rebuild(x, n)
		}
	}
	return n
}

// aggGroup is one group's state while a refresh works on it.
type aggGroup struct {
	keys    []types.Datum
	n       int64 // input rows in the group
	states  []funcs.Retractable
	existed bool
	oldRow  []types.Datum
	redo    bool // a MIN/MAX lost its extreme: recompute from the input
}

// groupAggRun maintains one view's groups in one refresh.
type groupAggRun struct {
	g      *groupAggShape
	in     *Input
	fctx   *funcs.Ctx
	news   []func() funcs.AggState
	widths []int // state values per aggregate
	prefix []byte
	// the projection of input rows: group keys, then each aggregate's
	// arguments, then each aggregate's FILTER (if any)
	argAt    []int
	filterAt []int
	proj     []plan.Expr
	groups   map[string]*aggGroup
	order    []string
	// byInt finds the group of a single non-NULL integer key without
	// encoding it (a full fold looks a group up per input row).
	byInt map[int64]*aggGroup
	hk    []byte
	vals  []types.Datum // appendState's
	ids   []uint32
	// readOnly: incremental folds without writing the states (EXPLAIN).
	readOnly bool
}

func groupStatePrefix(view uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte("r/ga/"), view)
}

func newGroupAggRun(g *groupAggShape, in *Input) *groupAggRun {
	fctx := in.Exec.Funcs
	if fctx != nil && fctx.Mem == nil && in.Exec.Mem != nil {
		// What a state keeps (array_agg's values) counts against the
		// refresh's budget, as the group states do, until it ends.
		c := *fctx
		c.Mem = in.Exec.Mem
		fctx = &c
	}
	r := &groupAggRun{g: g, in: in, fctx: fctx, prefix: groupStatePrefix(in.View.ID), groups: map[string]*aggGroup{}}
	r.proj = append(r.proj, g.agg.GroupBy...)
	for _, c := range g.agg.Aggs {
		nf := c.Def.NewState.(func() funcs.AggState)
		if sc, ok := countedScales(c, g.agg.Input); ok {
			nf = scaleCounter(nf, sc)
		}
		r.news = append(r.news, nf)
		r.widths = append(r.widths, len(nf().(funcs.Retractable).State()))
		r.argAt = append(r.argAt, len(r.proj))
		r.proj = append(r.proj, c.Args...)
	}
	for _, c := range g.agg.Aggs {
		if c.Filter == nil {
			r.filterAt = append(r.filterAt, -1)
			continue
		}
		r.filterAt = append(r.filterAt, len(r.proj))
		r.proj = append(r.proj, c.Filter)
	}
	return r
}

func (r *groupAggRun) fresh(keys []types.Datum) *aggGroup {
	grp := &aggGroup{keys: keys, states: make([]funcs.Retractable, len(r.news))}
	for i, nf := range r.news {
		grp.states[i] = nf().(funcs.Retractable)
	}
	return grp
}

func (r *groupAggRun) scalar() bool { return len(r.g.agg.GroupBy) == 0 }

func (r *groupAggRun) stateKey(hk string) []byte {
	return append(append([]byte(nil), r.prefix...), hk...)
}

// encode stores keys, n and every state as one row value.
func (r *groupAggRun) encode(grp *aggGroup) []byte { return r.appendState(nil, grp) }

func (r *groupAggRun) appendState(dst []byte, grp *aggGroup) []byte {
	vals := append(r.vals[:0], grp.keys...)
	vals = append(vals, types.NewInt8(grp.n))
	for _, s := range grp.states {
		vals = append(vals, s.State()...)
	}
	r.vals = vals
	for len(r.ids) < len(vals) {
		r.ids = append(r.ids, uint32(len(r.ids)+1))
	}
	return types.AppendRowValue(dst, r.ids[:len(vals)], vals)
}

func (r *groupAggRun) decode(v []byte) (*aggGroup, error) {
	nk := len(r.g.agg.GroupBy)
	total := nk + 1
	for _, w := range r.widths {
		total += w
	}
	ids := make([]uint32, total)
	for i := range ids {
		ids[i] = uint32(i + 1)
	}
	vals := make([]types.Datum, total)
	if err := types.NewRowDecoder(ids).Decode(v, vals); err != nil {
		return nil, err
	}
	grp := r.fresh(append([]types.Datum(nil), vals[:nk]...))
	if vals[nk].K != types.KindInt8 {
		return nil, pgerror.New(pgerror.DataCorrupted, "stored aggregate state of materialized view \"%s\" is corrupt", r.in.View.Name)
	}
	grp.n = vals[nk].I
	at := nk + 1
	for i, s := range grp.states {
		if err := s.SetState(vals[at : at+r.widths[i]]); err != nil {
			return nil, err
		}
		at += r.widths[i]
	}
	grp.existed = true
	return grp, nil
}

// result is the aggregate's output row for a group.
func (r *groupAggRun) result(grp *aggGroup) ([]types.Datum, error) {
	row := append([]types.Datum(nil), grp.keys...)
	for _, s := range grp.states {
		d, err := s.Result(r.fctx)
		if err != nil {
			return nil, err
		}
		row = append(row, d)
	}
	return row, nil
}

// group finds (loading from storage) the group of projected row p.
func (r *groupAggRun) group(p exec.Row, load bool) (*aggGroup, error) {
	nk := len(r.g.agg.GroupBy)
	intKey := nk == 1 && r.byInt != nil && intKind(p[0].K)
	if intKey {
		if grp := r.byInt[p[0].I]; grp != nil {
			return grp, nil
		}
	}
	hk := r.groupKey(r.hk[:0], p)
	r.hk = hk
	if grp := r.groups[string(hk)]; grp != nil {
		if intKey {
			r.byInt[p[0].I] = grp
		}
		return grp, nil
	}
	var grp *aggGroup
	if load {
		v, ok, err := r.in.Txn.GetMeta(r.stateKey(string(hk)))
		if err != nil {
			return nil, err
		}
		if ok {
			if grp, err = r.decode(v); err != nil {
				return nil, err
			}
			if grp.oldRow, err = r.result(grp); err != nil {
				return nil, err
			}
		}
	}
	if grp == nil {
		grp = r.fresh(append([]types.Datum(nil), p[:nk]...))
	}
	// The group, its map entries, its order slot and its states.
	if err := r.in.Exec.Mem.Charge("group-aggregate refresh", 2*int64(len(hk))+exec.RowBytes(grp.keys)+160+int64(len(r.news))*64); err != nil {
		return nil, err
	}
	k := string(hk)
	r.groups[k] = grp
	r.order = append(r.order, k)
	if intKey {
		r.byInt[p[0].I] = grp
	}
	return grp, nil
}

// groupKey appends the hash key of projected row p's group to dst.
func (r *groupAggRun) groupKey(dst []byte, p exec.Row) []byte {
	for _, d := range p[:len(r.g.agg.GroupBy)] {
		dst = types.HashKey(dst, d)
	}
	return dst
}

// intKind: kinds whose HashKey is their I alone (so equal I, equal key).
func intKind(k types.Kind) bool {
	switch k {
	case types.KindInt2, types.KindInt4, types.KindInt8:
		return true
	}
	return false
}

// project runs the projection of the input rows (group keys, arguments,
// filters) over n and calls fn per row. The row passed to fn is reused:
// fn copies what it keeps.
func (r *groupAggRun) project(ctx context.Context, n plan.Node, fn func(exec.Row) error) error {
	if n == nil {
		return nil
	}
	fns := make([]func(exec.Row) (types.Datum, error), len(r.proj))
	for i, e := range r.proj {
		f, err := exec.Compile(e, r.in.Exec)
		if err != nil {
			return err
		}
		fns[i] = f
	}
	op, err := buildOptimized(r.in.Exec, r.in.estimator(), n)
	if err != nil {
		return err
	}
	p := make(exec.Row, len(r.proj))
	return exec.Drain(op, func(rows []exec.Row) error {
		for _, in := range rows {
			for i, f := range fns {
				d, err := f(in)
				if err != nil {
					return err
				}
				p[i] = d
			}
			if err := fn(p); err != nil {
				return err
			}
		}
		return ctx.Err()
	})
}

// fold adds every projected row of n (a full computation).
func (r *groupAggRun) fold(ctx context.Context, n plan.Node, load bool) (int64, error) {
	var count int64
	err := r.project(ctx, n, func(p exec.Row) error {
		count++
		return r.apply(p, 1, load)
	})
	return count, err
}

// foldChange folds a change into the groups: the rows gained and lost are
// first consolidated (a row both gained and lost — which the change plans
// produce across their terms — cancels), so every row retracted is one the
// group holds, as MIN/MAX need; then losses are retracted and gains added.
func (r *groupAggRun) foldChange(ctx context.Context, plus, minus plan.Node) (int64, error) {
	ids := make([]uint32, len(r.proj))
	for i := range ids {
		ids[i] = uint32(i + 1)
	}
	var count int64
	rows := func(n plan.Node) rowSource {
		if n == nil {
			return nil
		}
		return func(emit func(exec.Row) error) error {
			return r.project(ctx, n, func(p exec.Row) error {
				count++
				return emit(p)
			})
		}
	}
	net, err := consolidate([]zTerm{{rows(minus), -1}, {rows(plus), 1}},
		func(dst []byte, p exec.Row, _ int64) ([]byte, bool, error) {
			return types.AppendRowValue(dst, ids, p), true, nil
		}, true)
	if err != nil {
		return 0, err
	}
	if !r.scalar() {
		// Every touched group's stored state, read in one ordered pass.
		keys := make([][]byte, 0, net.Len())
		var hk []byte
		for _, e := range net.Entries() {
			hk = r.groupKey(hk[:0], e.Row)
			if r.groups[string(hk)] == nil {
				keys = append(keys, r.stateKey(string(hk)))
			}
		}
		if err := r.in.Txn.PrefetchMeta(keys); err != nil {
			return 0, err
		}
	}
	for _, pass := range []int64{-1, 1} {
		for _, e := range net.Entries() {
			for i := int64(0); i < e.Weight*pass; i++ {
				if err := r.apply(e.Row, int(pass), true); err != nil {
					return 0, err
				}
			}
		}
	}
	return count, nil
}

// apply adds (sign > 0) or retracts (sign < 0) one projected row.
func (r *groupAggRun) apply(p exec.Row, sign int, load bool) error {
	grp, err := r.group(p, load)
	if err != nil {
		return err
	}
	if sign > 0 {
		grp.n++
	} else {
		grp.n--
	}
	for i, s := range grp.states {
		if f := r.filterAt[i]; f >= 0 && (p[f].IsNull() || !p[f].Bool()) {
			continue
		}
		args := p[r.argAt[i] : r.argAt[i]+len(r.g.agg.Aggs[i].Args)]
		if sign > 0 {
			if err := s.Add(r.fctx, args); err != nil {
				return err
			}
			continue
		}
		ok, err := s.Retract(r.fctx, args)
		if err != nil {
			return err
		}
		if !ok {
			grp.redo = true
		}
	}
	return nil
}

// clearStates deletes every stored group state of the view.
func clearGroupStates(txn *storage.Txn, view uint32) error {
	prefix := groupStatePrefix(view)
	return txn.DeleteMetaRange(prefix, storage.PrefixEnd(prefix))
}

// full computes every group from the input, stores the states and returns
// the view's rows as a plan.
func (r *groupAggRun) full(ctx context.Context) (plan.Node, int64, error) {
	if !r.scalar() {
		// About as many groups as the view had rows: sized once, the
		// maps do not grow by rehashing.
		n, err := r.in.Txn.RowCount(storage.TableID(r.in.View.ID))
		if err != nil {
			return nil, 0, err
		}
		n = min(n, 1<<22)
		r.groups = make(map[string]*aggGroup, n)
		r.byInt = make(map[int64]*aggGroup, n)
		r.order = make([]string, 0, n)
	}
	read, err := r.computeAll(ctx)
	if err != nil {
		return nil, 0, err
	}
	if err := r.storeAll(); err != nil {
		return nil, 0, err
	}
	rows, err := r.results()
	if err != nil {
		return nil, 0, err
	}
	return r.g.over(&plan.Given{Cols: r.g.agg.Cols, Rows: rows}), read, nil
}

// computeAll computes every group from the input (nothing stored).
func (r *groupAggRun) computeAll(ctx context.Context) (int64, error) {
	read, byQuery, err := r.foldByQuery(ctx)
	if err == nil && !byQuery {
		if r.scalar() {
			r.group(nil, false)
		}
		read, err = r.fold(ctx, r.g.agg.Input, false)
	}
	r.byInt = nil
	return read, err
}

// results are the aggregate's rows of every group, in r.order.
func (r *groupAggRun) results() ([][]types.Datum, error) {
	rows := make([][]types.Datum, 0, len(r.order))
	for _, hk := range r.order {
		row, err := r.result(r.groups[hk])
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// storeAll makes the stored states those of r.groups, writing only the
// states that differ: one ordered read of the stored states, and per
// group a comparison of encodings.
func (r *groupAggRun) storeAll() error {
	it := r.in.Txn.ScanMeta(r.prefix)
	stored := make(map[*aggGroup]bool, len(r.groups))
	var stale [][]byte
	var buf []byte
	for it.Next() {
		row := it.Row()
		grp := r.groups[string(row.Key[len(r.prefix):])]
		if grp == nil {
			stale = append(stale, append([]byte(nil), row.Key...))
			continue
		}
		stored[grp] = true
		if buf = r.appendState(buf[:0], grp); string(buf) != string(row.Value) {
			stored[grp] = false // rewritten below
		}
	}
	err := it.Err()
	it.Close()
	if err != nil {
		return err
	}
	for _, k := range stale {
		if err := r.in.Txn.DeleteMeta(k); err != nil {
			return err
		}
	}
	for _, hk := range r.order {
		grp := r.groups[hk]
		if stored[grp] {
			continue
		}
		if err := r.in.Txn.PutMeta(r.stateKey(hk), r.appendState(buf[:0], grp)); err != nil {
			return err
		}
	}
	return nil
}

// incremental folds the input's change into the stored states and returns
// the view's change as plans (rows gained, rows lost).
func (r *groupAggRun) incremental(ctx context.Context, d *diffResult) (plus, minus plan.Node, read int64, err error) {
	if d == nil || !d.changed {
		return nil, nil, 0, nil
	}
	if r.scalar() {
		if _, err := r.group(nil, true); err != nil {
			return nil, nil, 0, err
		}
	}
	if read, err = r.foldChange(ctx, d.plus, d.minus); err != nil {
		return nil, nil, 0, err
	}
	// Groups whose MIN/MAX lost its extreme: rebuilt from the input.
	redo := map[string]struct{}{}
	for _, hk := range r.order {
		if grp := r.groups[hk]; grp.redo {
			redo[hk] = struct{}{}
		}
	}
	if len(redo) > 0 {
		for hk := range redo {
			old := r.groups[hk]
			grp := r.fresh(old.keys)
			grp.existed, grp.oldRow = old.existed, old.oldRow
			r.groups[hk] = grp
		}
		var input plan.Node = r.g.agg.Input
		if !r.scalar() {
			input = &plan.KeyIn{Input: input, Keys: r.g.agg.GroupBy, Set: redo}
		}
		// Only the redone groups take these rows: fold into them alone.
		saved := r.groups
		r.groups = map[string]*aggGroup{}
		for hk := range redo {
			r.groups[hk] = saved[hk]
		}
		savedOrder := r.order
		n3, err := r.fold(ctx, input, false)
		r.groups, r.order = saved, savedOrder
		if err != nil {
			return nil, nil, 0, err
		}
		read += n3
	}
	var newRows, oldRows [][]types.Datum
	for _, hk := range r.order {
		grp := r.groups[hk]
		if grp.existed {
			oldRows = append(oldRows, grp.oldRow)
		}
		if grp.n > 0 || r.scalar() {
			row, err := r.result(grp)
			if err != nil {
				return nil, nil, 0, err
			}
			newRows = append(newRows, row)
			if r.readOnly {
				continue
			}
			if err := r.in.Txn.PutMeta(r.stateKey(hk), r.encode(grp)); err != nil {
				return nil, nil, 0, err
			}
		} else if grp.existed && !r.readOnly {
			if err := r.in.Txn.DeleteMeta(r.stateKey(hk)); err != nil {
				return nil, nil, 0, err
			}
		}
		if grp.n < 0 {
			return nil, nil, 0, &errDrift{msg: "aggregate state of materialized view \"" + r.in.View.Name + "\" lost more rows than it held"}
		}
	}
	if len(newRows) > 0 {
		plus = r.g.over(&plan.Given{Cols: r.g.agg.Cols, Rows: newRows})
	}
	if len(oldRows) > 0 {
		minus = r.g.over(&plan.Given{Cols: r.g.agg.Cols, Rows: oldRows})
	}
	return plus, minus, read, nil
}

// groupAggregate is GROUP_AGGREGATE in the planner's table.
type groupAggregate struct{}

func (groupAggregate) Name() TechniqueName { return GroupAggregate }

func (groupAggregate) Applies(an *Analysis) (bool, string) {
	why := ""
	if an.groupAggWhyNot != "" {
		why = "does not apply: " + an.groupAggWhyNot
	}
	if ok, why := allowed(an, GroupAggregate, why); !ok {
		return false, why
	}
	return an.groupAgg != nil, "does not apply to this query's shape"
}

func (groupAggregate) Run(ctx context.Context, r *techRun) (*change, error) {
	if !r.in.Checkpoint.GroupState {
		return nil, &refusal{why: "the view's aggregate state is not built yet (GROUP_AGGREGATE starts after this full refresh)", full: true}
	}
	// The aggregate's input change: for an input with joins or a nested
	// aggregate, running its change plans is most of the work.
	d, err := r.df.diff(r.an.groupAgg.agg.Input)
	if err != nil {
		return nil, err
	}
	// Folding is the work, and it happens here: weigh it first.
	if r.weigh != nil {
		units, writes := groupAggCost(r.changed, r.viewRows)
		if d.changed {
			units += r.inputWork(d)
		}
		r.weighed = true
		if rf := r.weigh(GroupAggregate, units, writes); rf != nil {
			return nil, rf
		}
	}
	c := &change{}
	if r.dryRun {
		// EXPLAIN: the aggregate's input change, nothing folded.
		if d.changed {
			c.plus, c.minus = d.plus, d.minus
		}
		return c, nil
	}
	c.ga = newGroupAggRun(r.an.groupAgg, r.in)
	c.plus, c.minus, _, err = c.ga.incremental(ctx, d)
	return c, err
}

func (groupAggregate) Estimate(s *sizer, r *techRun, c *change) float64 {
	units, _ := groupAggCost(r.changed, r.viewRows)
	return units
}
