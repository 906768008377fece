package exec

import (
	"cmp"
	"slices"
	"sort"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// windowOp computes window functions (R-Q2). It reads its whole input,
// then for each window (the calls sharing one PARTITION BY and ORDER BY)
// sorts the rows by partition keys then order keys and computes that
// window's calls one partition at a time. Output rows are new rows (the
// input's values then one value per call), in the order of the last
// window's sort, as PostgreSQL returns them.
type windowOp struct {
	c       *Ctx
	in      Operator
	node    *plan.Window
	base    int // input width: call i writes column base+i
	windows []*winSpec
	out     *sliceOp
	done    bool
	mem     memAccount
	// kept is what the computed values hold, not yet charged to mem
	// (charged in steps of stateStep).
	kept int64
	// copyCols are the input columns that can hold a value (over a scan,
	// the needed ones: the others are always NULL); nil: all.
	copyCols []int
}

// winSpec is one window: its keys and the calls computed over it.
type winSpec struct {
	part  []evalFn
	order []evalFn
	keys  []plan.SortKey
	calls []*winCall
}

// winCall is one call compiled.
type winCall struct {
	idx      int
	call     *plan.WindowCall
	args     []evalFn
	filter   evalFn
	startOff evalFn
	endOff   evalFn
	// offsets, read at the first partition.
	start, end types.Datum
	offsetsSet bool
}

func newWindow(c *Ctx, w *plan.Window, in Operator) (Operator, error) {
	op := &windowOp{c: c, in: in, node: w, base: len(w.Input.Columns()), mem: c.account("window function")}
	if s, ok := w.Input.(*plan.Scan); ok && !c.RowAtATime {
		op.copyCols = []int{}
		for i, need := range s.Needed {
			if need {
				op.copyCols = append(op.copyCols, i)
			}
		}
	}
	byKey := map[string]*winSpec{}
	fail := func(err error) (Operator, error) {
		in.Close()
		return nil, err
	}
	for i := range w.Calls {
		call := &w.Calls[i]
		key := call.SpecString()
		spec := byKey[key]
		if spec == nil {
			spec = &winSpec{keys: call.OrderBy}
			var err error
			if spec.part, err = compileAll(call.PartitionBy, c); err != nil {
				return fail(err)
			}
			for _, k := range call.OrderBy {
				f, err := compile(k.E, c)
				if err != nil {
					return fail(err)
				}
				spec.order = append(spec.order, f)
			}
			byKey[key] = spec
			op.windows = append(op.windows, spec)
		}
		wc := &winCall{idx: i, call: call}
		var err error
		if wc.args, err = compileAll(call.Args, c); err != nil {
			return fail(err)
		}
		if call.Filter != nil {
			if wc.filter, err = compile(call.Filter, c); err != nil {
				return fail(err)
			}
		}
		if call.Frame.Start.Offset != nil {
			if wc.startOff, err = compile(call.Frame.Start.Offset, c); err != nil {
				return fail(err)
			}
		}
		if call.Frame.End.Offset != nil {
			if wc.endOff, err = compile(call.Frame.End.Offset, c); err != nil {
				return fail(err)
			}
		}
		if call.Agg == nil && (call.Fn == nil || call.Fn.Window == nil) {
			return fail(pgerror.New(pgerror.InternalError, "window call %s has no implementation", call.Name))
		}
		spec.calls = append(spec.calls, wc)
	}
	if cw := newColWindow(c, w, in, op); cw != nil {
		return cw, nil
	}
	return op, nil
}

func (w *windowOp) Next() ([]Row, error) {
	if w.done {
		return w.out.Next()
	}
	w.done = true
	width := len(w.node.Cols)
	var rows []Row
	// Every input row is copied (into blocks of a batch's rows), so the
	// input may reuse its batches (scan_reuse.go).
	if !w.c.RowAtATime {
		reuseInput(w.in)
	}
	var block []types.Datum
	err := Drain(w.in, func(b []Row) error {
		var size int64
		if len(block) < len(b)*width {
			block = make([]types.Datum, len(b)*width)
		}
		for _, r := range b {
			row := block[:width:width]
			block = block[width:]
			if w.copyCols != nil {
				for _, j := range w.copyCols {
					row[j] = r[j]
				}
			} else {
				copy(row, r[:w.base])
			}
			rows = append(rows, row)
			// The row, its slot and its place in each window's order.
			size += rowBytes(row) + 8 + int64(len(w.windows))*16
		}
		if err := w.mem.grow(size); err != nil {
			return err
		}
		return w.c.Context.Err()
	})
	if err != nil {
		return nil, err
	}
	var perm []int
	for _, spec := range w.windows {
		if perm, err = w.compute(spec, rows); err != nil {
			return nil, err
		}
	}
	ordered := make([]Row, len(rows))
	for i, p := range perm {
		ordered[i] = rows[p]
	}
	w.out = &sliceOp{rows: ordered}
	return w.out.Next()
}

func (w *windowOp) Close() {
	w.in.Close()
	w.mem.release()
}

// compute sorts rows for one window and computes its calls; it returns
// the sort order.
func (w *windowOp) compute(spec *winSpec, rows []Row) ([]int, error) {
	n := len(rows)
	np, no := len(spec.part), len(spec.order)
	// The sort keys and the order are held while the window is computed.
	held := int64(n) * (int64(np+no)*datumBytes + 8)
	if err := w.mem.grow(held); err != nil {
		return nil, err
	}
	defer w.mem.shrink(held)
	keys := make([]types.Datum, n*(np+no))
	perm := make([]int, n)
	for i, r := range rows {
		perm[i] = i
		k := keys[i*(np+no) : (i+1)*(np+no)]
		for j, f := range spec.part {
			d, err := f(r)
			if err != nil {
				return nil, err
			}
			k[j] = d
		}
		for j, f := range spec.order {
			d, err := f(r)
			if err != nil {
				return nil, err
			}
			k[np+j] = d
		}
		if i%BatchSize == BatchSize-1 {
			if err := w.c.Context.Err(); err != nil {
				return nil, err
			}
		}
	}
	partKeys := func(i int) []types.Datum { return keys[i*(np+no) : i*(np+no)+np] }
	orderKeys := func(i int) []types.Datum { return keys[i*(np+no)+np : (i+1)*(np+no)] }
	partOrder := make([]plan.SortKey, np)
	desc := make([]bool, np+no)
	for j, k := range spec.keys {
		desc[np+j] = k.Desc
	}
	if w.c.RowAtATime || !sortIntKeys(perm, keys, np+no, desc, rows) {
		w.sortKeys(spec, perm, rows, partOrder, partKeys, orderKeys)
	}
	p := &partition{w: w, spec: spec, rows: rows, orderKeys: orderKeys}
	for start := 0; start < n; {
		end := start + 1
		for end < n && compareKeys(partOrder, partKeys(perm[start]), partKeys(perm[end])) == 0 {
			end++
		}
		if err := p.run(perm[start:end]); err != nil {
			return nil, err
		}
		if err := w.c.Context.Err(); err != nil {
			return nil, err
		}
		start = end
	}
	return perm, nil
}

// sortKeys sorts perm by the window's keys (the general sort).
func (w *windowOp) sortKeys(spec *winSpec, perm []int, rows []Row, partOrder []plan.SortKey, partKeys, orderKeys func(int) []types.Datum) {
	slices.SortFunc(perm, func(a, b int) int {
		if c := compareKeys(partOrder, partKeys(a), partKeys(b)); c != 0 {
			return c
		}
		if c := compareKeys(spec.keys, orderKeys(a), orderKeys(b)); c != 0 {
			return c
		}
		// Peers in ORDER BY are put in the order of their whole rows, so
		// row_number, lag and the like depend on the input's rows, not on
		// the order they arrive in: an incremental refresh that recomputes
		// a partition from rows read in another order gets the same result
		// (WINDOW_FUNCTION). Identical rows are interchangeable; the row
		// index only makes the order total.
		if c := compareRowValues(rows[a], rows[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
}

// compareKeys orders two rows' sort keys as ORDER BY does (NULLs last
// ascending, first descending, unless the key says otherwise); equal keys,
// NULLs included, compare 0.
func compareKeys(keys []plan.SortKey, a, b []types.Datum) int {
	for k, key := range keys {
		x, y := a[k], b[k]
		var c int
		switch {
		case x.IsNull() && y.IsNull():
			c = 0
		case x.IsNull():
			c = 1
			if key.NullsFirst {
				c = -1
			}
			if key.Desc {
				c = -c
			}
		case y.IsNull():
			c = -1
			if key.NullsFirst {
				c = 1
			}
			if key.Desc {
				c = -c
			}
		default:
			c = types.Compare(x, y)
		}
		if key.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// partition computes one window's calls over one partition at a time.
type partition struct {
	w         *windowOp
	spec      *winSpec
	rows      []Row
	orderKeys func(i int) []types.Datum
	// per partition: its rows (indexes into rows) in window order, and
	// for each row its peer group and the group's number.
	idx                []int
	peerStart, peerEnd []int
	group              []int
	groupStart         []int // first row of each peer group
}

func (p *partition) run(idx []int) error {
	n := len(idx)
	p.idx = idx
	p.peerStart, p.peerEnd, p.group = grow(p.peerStart, n), grow(p.peerEnd, n), grow(p.group, n)
	p.groupStart = p.groupStart[:0]
	for i := 0; i < n; {
		j := i + 1
		for j < n && compareKeys(p.spec.keys, p.orderKeys(idx[i]), p.orderKeys(idx[j])) == 0 {
			j++
		}
		g := len(p.groupStart)
		p.groupStart = append(p.groupStart, i)
		for k := i; k < j; k++ {
			p.peerStart[k], p.peerEnd[k], p.group[k] = i, j, g
		}
		i = j
	}
	for _, wc := range p.spec.calls {
		if err := p.call(wc); err != nil {
			return err
		}
	}
	return nil
}

func grow(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}

// call computes one call for every row of the partition.
func (p *partition) call(wc *winCall) error {
	n := len(p.idx)
	c := p.w.c
	mem := &p.w.mem
	// Arguments and FILTER, evaluated once per row and held for the call;
	// the values the call gives its rows stay with them.
	held := int64(n) * (int64(len(wc.args))*datumBytes + 1)
	if err := mem.grow(held); err != nil {
		return err
	}
	defer mem.shrink(held)
	put := func(i int, d types.Datum) error {
		p.rows[p.idx[i]][p.w.base+wc.idx] = d
		if d.S != "" || d.A != nil {
			if p.w.kept += types.ExtraBytes(d); p.w.kept >= stateStep {
				if err := mem.grow(p.w.kept); err != nil {
					return err
				}
				p.w.kept = 0
			}
		}
		return nil
	}
	vals := make([][]types.Datum, len(wc.args))
	for a, f := range wc.args {
		vals[a] = make([]types.Datum, n)
		var size int64
		for i, r := range p.idx {
			d, err := f(p.rows[r])
			if err != nil {
				return err
			}
			vals[a][i] = d
			size += int64(len(d.S))
		}
		// A computed argument (a function's result) is held until the
		// call is done.
		if err := mem.grow(size); err != nil {
			return err
		}
		defer mem.shrink(size)
	}
	var keep []bool
	if wc.filter != nil {
		keep = make([]bool, n)
		for i, r := range p.idx {
			d, err := wc.filter(p.rows[r])
			if err != nil {
				return err
			}
			keep[i] = d.K == types.KindBool && d.I != 0
		}
	}
	if err := p.offsets(wc); err != nil {
		return err
	}
	fr, err := p.newFramer(wc)
	if err != nil {
		return err
	}
	if def := wc.call.Fn; wc.call.Agg == nil && def != nil && def.Window != nil {
		wr := &funcs.WindowRow{Rows: n, NArgs: len(vals), Arg: func(a, row int) types.Datum { return vals[a][row] }}
		for i := 0; i < n; i++ {
			wr.Row, wr.PeerStart, wr.PeerEnd, wr.Group = i, p.peerStart[i], p.peerEnd[i], p.group[i]
			if def.Window.UsesFrame {
				if wr.Frame, err = fr.frame(i, wr.Frame[:0]); err != nil {
					return err
				}
			}
			d, err := def.Window.Eval(wr)
			if err != nil {
				return err
			}
			if err := put(i, d); err != nil {
				return err
			}
			if i%BatchSize == BatchSize-1 {
				if err := c.Context.Err(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	// The states charge their own share, given back as each is replaced.
	states := &stateBudget{acct: mem}
	defer states.reset()
	agg := &windowAgg{c: c.funcsFor(states), states: states, newState: wc.call.Agg.NewState.(func() funcs.AggState), vals: vals, keep: keep, args: make([]types.Datum, len(vals))}
	var ranges []funcs.RowRange
	for i := 0; i < n; i++ {
		if ranges, err = fr.frame(i, ranges[:0]); err != nil {
			return err
		}
		d, err := agg.result(ranges, wc.call.Frame.Exclude != plan.ExcludeNoOthers)
		if err != nil {
			return err
		}
		if err := put(i, d); err != nil {
			return err
		}
		if i%BatchSize == BatchSize-1 {
			if err := c.Context.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// offsets reads a call's frame offsets, once (they read no column), and
// checks them as PostgreSQL does.
func (p *partition) offsets(wc *winCall) error {
	if wc.offsetsSet {
		return nil
	}
	wc.offsetsSet = true
	mode := wc.call.Frame.Mode
	for _, x := range []struct {
		f    evalFn
		dst  *types.Datum
		what string
	}{{wc.startOff, &wc.start, "starting"}, {wc.endOff, &wc.end, "ending"}} {
		if x.f == nil {
			continue
		}
		d, err := x.f(nil)
		if err != nil {
			return err
		}
		if d.IsNull() {
			return pgerror.New(pgerror.NullValueNotAllowed, "frame %s offset must not be null", x.what)
		}
		negative := false
		switch d.K {
		case types.KindInterval:
			negative = types.Compare(d, types.NewInterval(0, 0, 0)) < 0
		case types.KindNumeric:
			negative = d.D.Negative && !d.D.IsZero()
		case types.KindFloat4, types.KindFloat8:
			negative = d.F < 0
		default:
			negative = d.I < 0
		}
		if negative {
			if mode == plan.FrameRange {
				return pgerror.New(pgerror.InvalidPrecedingOrFollowingSize, "invalid preceding or following size in window function")
			}
			return pgerror.New(pgerror.InvalidPrecedingOrFollowingSize, "frame %s offset must not be negative", x.what)
		}
		*x.dst = d
	}
	return nil
}

// framer finds each row's frame in a partition.
type framer struct {
	p     *partition
	spec  plan.WindowFrame
	start types.Datum
	end   types.Datum
	// RANGE with an offset: the ORDER BY key per row (dates as
	// timestamps), and where the non-NULL keys are.
	keys   []types.Datum
	lo, hi int
	desc   bool
	env    *types.Env
}

func (p *partition) newFramer(wc *winCall) (*framer, error) {
	f := &framer{p: p, spec: wc.call.Frame, start: wc.start, end: wc.end, env: p.w.c.Env}
	if f.spec.Mode != plan.FrameRange || (wc.startOff == nil && wc.endOff == nil) {
		return f, nil
	}
	n := len(p.idx)
	key := p.spec.keys[0]
	f.desc = key.Desc
	f.keys = make([]types.Datum, n)
	nulls := 0
	for i, r := range p.idx {
		d := p.orderKeys(r)[0]
		if d.K == types.KindDate {
			d = types.NewTimestamp(types.KindTimestamp, d.I*86400e6)
		}
		f.keys[i] = d
		if d.IsNull() {
			nulls++
		}
	}
	f.lo, f.hi = 0, n-nulls
	if key.NullsFirst {
		f.lo, f.hi = nulls, n
	}
	return f, nil
}

// frame appends row i's frame to out.
func (f *framer) frame(i int, out []funcs.RowRange) ([]funcs.RowRange, error) {
	s, e, err := f.bounds(i)
	if err != nil {
		return out, err
	}
	if s >= e {
		return out, nil
	}
	p := f.p
	var cut [2]funcs.RowRange // rows EXCLUDE removes
	switch f.spec.Exclude {
	case plan.ExcludeNoOthers:
		return append(out, funcs.RowRange{Start: s, End: e}), nil
	case plan.ExcludeCurrentRow:
		cut[0] = funcs.RowRange{Start: i, End: i + 1}
	case plan.ExcludeGroup:
		cut[0] = funcs.RowRange{Start: p.peerStart[i], End: p.peerEnd[i]}
	case plan.ExcludeTies:
		cut[0] = funcs.RowRange{Start: p.peerStart[i], End: i}
		cut[1] = funcs.RowRange{Start: i + 1, End: p.peerEnd[i]}
	}
	at := s
	for _, c := range cut {
		if c.Start >= c.End {
			continue
		}
		if c.Start > at {
			out = append(out, funcs.RowRange{Start: at, End: min(c.Start, e)})
		}
		at = max(at, c.End)
		if at >= e {
			break
		}
	}
	if at < e {
		out = append(out, funcs.RowRange{Start: at, End: e})
	}
	return out, nil
}

// bounds returns row i's frame before exclusion: rows [s, e).
func (f *framer) bounds(i int) (int, int, error) {
	p := f.p
	n := len(p.idx)
	var s, e int
	switch f.spec.Mode {
	case plan.FrameRows:
		s = rowsBound(i, f.spec.Start, f.start, n)
		e = rowsBound(i, f.spec.End, f.end, n) + 1
		if f.spec.End.Kind == plan.UnboundedFollowing {
			e = n
		}
	case plan.FrameGroups:
		s = f.groupBound(i, f.spec.Start, f.start, true)
		e = f.groupBound(i, f.spec.End, f.end, false)
	default:
		var err error
		if s, err = f.rangeBound(i, f.spec.Start, f.start, true); err != nil {
			return 0, 0, err
		}
		if e, err = f.rangeBound(i, f.spec.End, f.end, false); err != nil {
			return 0, 0, err
		}
	}
	return max(s, 0), min(e, n), nil
}

// rowsBound is the row a ROWS bound names for row i (clamped into
// [-1, n]; the caller adds 1 for an end).
func rowsBound(i int, b plan.FrameBound, off types.Datum, n int) int {
	switch b.Kind {
	case plan.UnboundedPreceding:
		return -1
	case plan.OffsetPreceding:
		if off.I > int64(i) {
			return -1
		}
		return i - int(off.I)
	case plan.OffsetFollowing:
		if off.I >= int64(n-i) {
			return n
		}
		return i + int(off.I)
	case plan.UnboundedFollowing:
		return n
	}
	return i
}

// groupBound is where a GROUPS bound puts row i's frame start (first row
// of the named peer group) or end (past its last row).
func (f *framer) groupBound(i int, b plan.FrameBound, off types.Datum, start bool) int {
	p := f.p
	n, groups := len(p.idx), len(p.groupStart)
	g := p.group[i]
	switch b.Kind {
	case plan.UnboundedPreceding:
		return 0
	case plan.UnboundedFollowing:
		return n
	case plan.CurrentRow:
		if start {
			return p.peerStart[i]
		}
		return p.peerEnd[i]
	}
	target := int64(g)
	if b.Kind == plan.OffsetPreceding {
		target -= off.I
	} else if off.I >= int64(groups) {
		target = int64(groups)
	} else {
		target += off.I
	}
	if start {
		switch {
		case target < 0:
			return 0
		case target >= int64(groups):
			return n
		}
		return p.groupStart[target]
	}
	switch {
	case target < 0:
		return 0
	case target >= int64(groups)-1:
		return n
	}
	return p.groupStart[target+1]
}

// rangeBound is where a RANGE bound puts row i's frame start or end: peers
// count as one; with an offset, the first row whose key is at or past
// key ∓ offset (in the window's order), among the non-NULL keys. A row
// with a NULL key has its NULL peers as offset bounds.
func (f *framer) rangeBound(i int, b plan.FrameBound, off types.Datum, start bool) (int, error) {
	p := f.p
	switch b.Kind {
	case plan.UnboundedPreceding:
		return 0, nil
	case plan.UnboundedFollowing:
		return len(p.idx), nil
	case plan.CurrentRow:
		if start {
			return p.peerStart[i], nil
		}
		return p.peerEnd[i], nil
	}
	v := f.keys[i]
	if v.IsNull() {
		if start {
			return p.peerStart[i], nil
		}
		return p.peerEnd[i], nil
	}
	sign := 1
	if b.Kind == plan.OffsetPreceding {
		sign = -1
	}
	dir := 1
	if f.desc {
		sign, dir = -sign, -1
	}
	bound, err := moveKey(v, off, sign, f.env)
	if err != nil {
		return 0, err
	}
	k := sort.Search(f.hi-f.lo, func(k int) bool {
		c := types.Compare(f.keys[f.lo+k], bound) * dir
		if start {
			return c >= 0
		}
		return c > 0
	})
	return f.lo + k, nil
}

// moveKey returns v + sign·off for a RANGE offset: integers past int64
// become numeric, dates are timestamps already, intervals move by
// intervals.
func moveKey(v, off types.Datum, sign int, env *types.Env) (types.Datum, error) {
	switch v.K {
	case types.KindInt2, types.KindInt4, types.KindInt8:
		d := off.I * int64(sign)
		r := v.I + d
		if (d > 0 && r < v.I) || (d < 0 && r > v.I) {
			big, err := types.NumericAdd(types.NumericFromInt(v.I), types.NumericFromInt(d))
			if err != nil {
				return types.Datum{}, err
			}
			return types.NewNumeric(big), nil
		}
		return types.NewInt8(r), nil
	case types.KindNumeric:
		var r, err = types.NumericAdd(v.D, off.D)
		if sign < 0 {
			r, err = types.NumericSub(v.D, off.D)
		}
		if err != nil {
			return types.Datum{}, err
		}
		return types.NewNumeric(r), nil
	case types.KindFloat4, types.KindFloat8:
		return types.NewFloat8(v.F + float64(sign)*off.F), nil
	case types.KindInterval:
		return types.IntervalAdd(v, off, sign)
	case types.KindTimestamp, types.KindTimestampTZ:
		r, err := types.AddInterval(v.K, v.I, off, sign, env)
		if err != nil {
			return types.Datum{}, err
		}
		return types.NewTimestamp(v.K, r), nil
	}
	return types.Datum{}, pgerror.New(pgerror.InternalError, "RANGE offset over a key of kind %d", v.K)
}

// windowAgg computes an aggregate over each row's frame. Frames of
// successive rows only move forward, so a frame that grows at its end
// keeps adding to one state, one whose start moved takes the rows that left
// back out when the state can (count, integer and numeric sum and avg; a
// floating-point sum is recomputed, as PostgreSQL does, so rounding does
// not depend on the frames before), and otherwise the frame is aggregated
// afresh. A frame with EXCLUDE is always aggregated afresh.
type windowAgg struct {
	c        *funcs.Ctx
	states   *stateBudget // what c charges
	newState func() funcs.AggState
	vals     [][]types.Datum
	keep     []bool
	args     []types.Datum

	st         funcs.AggState
	valid      bool
	s, e       int
	last       types.Datum
	lastLoaded bool
}

func (a *windowAgg) row(r int) []types.Datum {
	for k := range a.vals {
		a.args[k] = a.vals[k][r]
	}
	return a.args
}

func (a *windowAgg) add(s, e int) error {
	for r := s; r < e; r++ {
		if a.keep != nil && !a.keep[r] {
			continue
		}
		if err := a.st.Add(a.c, a.row(r)); err != nil {
			return err
		}
	}
	return nil
}

func (a *windowAgg) reset(ranges []funcs.RowRange) error {
	a.states.reset()
	a.st, a.valid, a.lastLoaded = a.newState(), false, false
	for _, r := range ranges {
		if err := a.add(r.Start, r.End); err != nil {
			return err
		}
	}
	return nil
}

func (a *windowAgg) result(ranges []funcs.RowRange, excluding bool) (types.Datum, error) {
	if excluding || len(ranges) > 1 {
		if err := a.reset(ranges); err != nil {
			return types.Datum{}, err
		}
		return a.st.Result(a.c)
	}
	s, e := 0, 0
	if len(ranges) == 1 {
		s, e = ranges[0].Start, ranges[0].End
	}
	switch {
	case a.valid && s == a.s && e == a.e:
		if a.lastLoaded {
			return a.last, nil
		}
	case a.valid && s == a.s && e > a.e:
		if err := a.add(a.e, e); err != nil {
			return types.Datum{}, err
		}
	case a.valid && s > a.s && s <= a.e && e >= a.e && a.retract(a.s, s):
		if err := a.add(a.e, e); err != nil {
			return types.Datum{}, err
		}
	default:
		if err := a.reset(ranges); err != nil {
			return types.Datum{}, err
		}
	}
	a.valid, a.s, a.e = true, s, e
	d, err := a.st.Result(a.c)
	if err != nil {
		return d, err
	}
	a.last, a.lastLoaded = d, true
	return d, nil
}

// retract takes rows [s, e) back out of the state; false when it cannot.
func (a *windowAgg) retract(s, e int) bool {
	rs, ok := a.st.(funcs.Retractable)
	if !ok {
		return false
	}
	for r := s; r < e; r++ {
		if a.keep != nil && !a.keep[r] {
			continue
		}
		if ok, err := rs.Retract(a.c, a.row(r)); !ok || err != nil {
			return false
		}
	}
	return true
}

// compareRowValues orders two rows column by column (NULLs last).
func compareRowValues(a, b Row) int {
	for i := range a {
		x, y := a[i], b[i]
		switch {
		case x.IsNull() && y.IsNull():
			continue
		case x.IsNull():
			return 1
		case y.IsNull():
			return -1
		}
		if c := types.Compare(x, y); c != 0 {
			return c
		}
	}
	return 0
}

// CompareSortKeys orders two rows' evaluated sort keys as ORDER BY does
// (the executor's own comparison, for the refresh engine's top-k).
func CompareSortKeys(keys []plan.SortKey, a, b []types.Datum) int { return compareKeys(keys, a, b) }
