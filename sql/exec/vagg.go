package exec

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/sql/exec/vec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// Vectorized aggregation: an Aggregate over filters and projections of a
// whole-table scan runs over columnar batches. The scan decodes its
// needed columns straight into vectors (types.RowDecoder.DecodeRaw, no
// Datum per value), filters narrow a selection vector, projections and
// aggregate arguments are vector kernels (vexpr.go), and count, sum, avg,
// min and max keep int64 states per group. The results are the row
// path's exactly, in the same (first-seen) group order.
//
// It applies when every expression has a kernel and every aggregate is
// one of these without DISTINCT, FILTER or ORDER BY; otherwise the row
// path runs. When the data does not fit the vectors after all (a decimal
// stored at another scale, a sum past an int64) or the groups pass the
// memory budget while spilling is possible, the vectorized pass is
// dropped and the aggregation runs again row at a time from a fresh
// scan at the same snapshot (which spills as hash aggregation does).

// errVecFallback asks for the row path.
var errVecFallback = errors.New("vectorized aggregation falls back to the row path")

// vecAggCalls are the aggregates with vector states.
var vecAggCalls = map[string]bool{"count": true, "sum": true, "avg": true, "min": true, "max": true}

// vlayer is one operator between the scan and the aggregate.
type vlayer struct {
	cond  vexpr   // a filter's condition
	exprs []vexpr // a projection's columns
	outs  []*vec.Vec
	join  *vjoinLayer // a hash join's probe (vjoin.go)
	sel   []int32     // a filter's selection
}

// vaggOp is the vectorized aggregation (or, after a fallback, the row
// path's aggregateOp).
type vaggOp struct {
	c      *Ctx
	node   *plan.Aggregate
	scan   *plan.Scan
	dec    *types.RowDecoder
	colIdx []int   // batch column → table column
	ctypes []vtype // batch column types
	// scanCols and scanTypes are the scan's columns as expressions (nil:
	// not decoded).
	scanCols  []vexpr
	scanTypes []vtype
	chain     []plan.Node // the filters, projections and joins, top down
	joins     map[*plan.Join]*vjoinBuild
	joinMem   memAccount
	keys      []vexpr
	keyT      []types.T
	keyCh     []bool  // a CHAR(n) key: compared without trailing spaces
	args      []vexpr // nil: count(*)
	argT      []vtype
	argK      []types.Kind
	mixed     []bool // per aggregate: its argument is a mixed-scale CASE (mixedCase)

	mem  memAccount
	out  *sliceOp
	row  Operator // the row path after a fallback
	done bool
}

// newVecAggregate returns the vectorized aggregation of a, or nil when
// a has a part without a kernel.
func newVecAggregate(c *Ctx, a *plan.Aggregate) *vaggOp {
	if c.RowAtATime || (c.stmt != nil && c.stmt.analyze != nil) {
		return nil
	}
	var chain []plan.Node
	var joins map[*plan.Join]*vjoinBuild
	n := a.Input
	for {
		switch x := n.(type) {
		case *plan.Filter:
			chain = append(chain, x)
			n = x.Input
			continue
		case *plan.Project:
			chain = append(chain, x)
			n = x.Input
			continue
		case *plan.Join:
			jb := newVJoinBuild(x)
			if jb == nil {
				return nil
			}
			if joins == nil {
				joins = map[*plan.Join]*vjoinBuild{}
			}
			joins[x] = jb
			chain = append(chain, x)
			n = x.Left
			continue
		}
		break
	}
	s, ok := n.(*plan.Scan)
	if !ok || s.Index != nil || s.Point != nil || s.In != nil || s.Start != nil || s.End != nil {
		return nil
	}
	nt := len(s.Table.Columns)
	if s.Needed[nt] || s.Needed[nt+1] || c.keeping(storage.TableID(s.Table.ID)) {
		return nil
	}
	op := &vaggOp{c: c, node: a, scan: s, chain: chain, joins: joins, joinMem: c.account("hash join")}
	// The scan's columns: the needed ones with a vector type.
	cols := make([]vexpr, len(s.Columns()))
	types_ := make([]vtype, len(s.Columns()))
	var ids []uint32
	var at []int
	for i, col := range s.Table.Columns {
		if !s.Needed[i] {
			continue
		}
		vt, ok := vecTypeOf(col.Type)
		if !ok {
			continue
		}
		j := len(op.colIdx)
		op.colIdx = append(op.colIdx, i)
		op.ctypes = append(op.ctypes, vt)
		ids, at = append(ids, col.ID), append(at, j)
		cols[i] = func(b *vec.Batch, _ []int32) (*vec.Vec, error) { return b.Cols[j], nil }
		types_[i] = vt
	}
	op.dec = types.NewRowDecoderAt(ids, at)
	op.scanCols, op.scanTypes = cols, types_
	ex, ok := op.compileExprs(true)
	if !ok {
		return nil
	}
	op.keys, op.args = ex.keys, ex.args
	op.mem = c.account("hash aggregation")
	return op
}

// vexprs are the compiled expressions of one scan of the table (each
// parallel part compiles its own: an expression owns its result
// vectors).
type vexprs struct {
	layers []vlayer
	keys   []vexpr
	args   []vexpr // nil: count(*)
	// scales: per argument, each row's own scale (mixedCase) or nil.
	scales []*vec.Vec
}

// compileExprs compiles the layers, keys and arguments over the scan's
// columns; ok is false when one has no kernel. record sets the keys' and
// arguments' types.
func (op *vaggOp) compileExprs(record bool) (*vexprs, bool) {
	ex := &vexprs{}
	cols, types_ := op.scanCols, op.scanTypes
	// The layers, bottom up.
	for k := len(op.chain) - 1; k >= 0; k-- {
		vc := &vcompiler{cols: cols, types: types_, c: op.c}
		switch x := op.chain[k].(type) {
		case *plan.Filter:
			f, t, ok := vc.compile(x.Cond)
			if !ok || t.t != vec.Bool {
				return nil, false
			}
			ex.layers = append(ex.layers, vlayer{cond: f})
		case *plan.Project:
			l := vlayer{}
			ncols := make([]vexpr, len(x.Exprs))
			ntypes := make([]vtype, len(x.Exprs))
			for i, e := range x.Exprs {
				f, t, ok := vc.compile(e)
				if !ok {
					return nil, false
				}
				l.exprs = append(l.exprs, f)
				idx := len(ex.layers)
				ncols[i] = func(*vec.Batch, []int32) (*vec.Vec, error) { return ex.layers[idx].outs[i], nil }
				ntypes[i] = t
			}
			l.outs = make([]*vec.Vec, len(x.Exprs))
			ex.layers = append(ex.layers, l)
			cols, types_ = ncols, ntypes
		case *plan.Join:
			jl, ncols, ntypes, ok := compileJoin(op.c, op.joins[x], cols, types_)
			if !ok {
				return nil, false
			}
			ex.layers = append(ex.layers, vlayer{join: jl})
			cols, types_ = ncols, ntypes
		}
	}
	vc := &vcompiler{cols: cols, types: types_, c: op.c}
	for _, g := range op.node.GroupBy {
		f, t, ok := vc.compile(g)
		k := g.Type().Kind
		if !ok || (t.t != vec.Int && t.t != vec.Bytes) || k == types.KindBool {
			return nil, false
		}
		ex.keys = append(ex.keys, f)
		if record {
			op.keyT = append(op.keyT, g.Type())
			op.keyCh = append(op.keyCh, t.char)
		}
	}
	for _, call := range op.node.Aggs {
		if !vecAggCalls[call.Name] || call.Distinct || call.Filter != nil || call.Order != nil || call.Direct != 0 || len(call.Args) > 1 {
			return nil, false
		}
		if len(call.Args) == 0 {
			if call.Name != "count" {
				return nil, false
			}
			ex.args, ex.scales = append(ex.args, nil), append(ex.scales, nil)
			if record {
				op.argT, op.argK, op.mixed = append(op.argT, vtype{}), append(op.argK, 0), append(op.mixed, false)
			}
			continue
		}
		f, t, ok := vc.compile(call.Args[0])
		var scales *vec.Vec
		if cx, isCase := call.Args[0].(*plan.Case); !ok && isCase && call.Name == "sum" {
			f, t, scales, ok = vc.mixedCase(cx)
		}
		if !ok {
			return nil, false
		}
		k := call.Args[0].Type().Kind
		if call.Name != "count" {
			numeric := t.t == vec.Decimal || (t.t == vec.Int && (k == types.KindInt2 || k == types.KindInt4 || k == types.KindInt8))
			minmaxOK := call.Name != "sum" && call.Name != "avg" && t.t == vec.Int && k != types.KindBool
			if !numeric && !minmaxOK {
				return nil, false
			}
		}
		ex.args, ex.scales = append(ex.args, f), append(ex.scales, scales)
		if record {
			op.argT, op.argK, op.mixed = append(op.argT, t), append(op.argK, k), append(op.mixed, scales != nil)
		}
	}
	return ex, true
}

// exprs compiles the expressions again for one part of the scan.
func (op *vaggOp) exprs() *vexprs {
	ex, _ := op.compileExprs(false)
	return ex
}

// vstates are one aggregate's states, one entry per group.
type vstates struct {
	n    []int64 // non-NULL values (count's result)
	v    []int64 // sum, min or max
	over bool    // a merged sum passed int64
	// ms: a sum of a mixed-scale argument (mixedCase): the largest scale
	// of the values summed, its result's scale; else nil.
	ms []int32
}

// grow adds a group's zero state.
func (st *vstates) grow() {
	st.n, st.v = append(st.n, 0), append(st.v, 0)
	if st.ms != nil {
		st.ms = append(st.ms, 0)
	}
}

func (op *vaggOp) Next() ([]Row, error) {
	if op.row != nil {
		return op.row.Next()
	}
	if !op.done {
		op.done = true
		err := op.pass()
		if errors.Is(err, errVecFallback) || errors.Is(err, vec.ErrOverflow) {
			op.mem.release()
			op.releaseJoins()
			in, err := Build(op.c, op.node.Input)
			if err != nil {
				return nil, err
			}
			if op.row, err = newAggregate(op.c, op.node, in); err != nil {
				return nil, err
			}
			return op.row.Next()
		}
		if err != nil {
			return nil, err
		}
	}
	if op.out == nil {
		return nil, nil
	}
	return op.out.Next()
}

func (op *vaggOp) Close() {
	if op.row != nil {
		op.row.Close()
	}
	op.out = nil
	op.mem.release()
	op.releaseJoins()
}

// releaseJoins drops the joins' build sides.
func (op *vaggOp) releaseJoins() {
	for _, jb := range op.joins {
		jb.cols, jb.ints, jb.strs, jb.next = nil, nil, nil, nil
	}
	op.joinMem.release()
}

// vpart is the aggregation of one key range: its groups in first-seen
// order, their keys and states.
type vpart struct {
	keys   []Row    // per group
	enc    []string // per group: its key's encoding (vkey); "" without keys
	states []vstates
	n      int32
}

// pass reads the whole table and aggregates it: in one range, or, with
// Ctx.Workers, in key ranges (storage.Txn.SplitKeys) read and aggregated
// in parallel, then merged in key order — so the groups come in the
// first-seen order of one scan.
func (op *vaggOp) pass() error {
	c, s := op.c, op.scan
	for _, jb := range op.joins {
		if err := jb.build(c, &op.joinMem); err != nil {
			return err
		}
	}
	tid := storage.TableID(s.Table.ID)
	var bounds [][]byte
	if c.Workers > 0 {
		keys, err := c.Txn.SplitKeys(tid, c.Workers+1)
		if err != nil {
			return err
		}
		if len(keys) > 0 {
			bounds = append(append([][]byte{nil}, keys...), nil)
		}
	}
	if bounds == nil {
		it := c.Txn.Scan(tid, nil, nil)
		defer it.Close()
		p, err := op.partial(c.Context, it, nil)
		if err != nil {
			return err
		}
		return op.finish([]*vpart{p})
	}
	its := make([]*storage.Iterator, len(bounds)-1)
	for i := range its {
		its[i] = c.Txn.Scan(tid, bounds[i], bounds[i+1])
	}
	defer func() {
		for _, it := range its {
			it.Close()
		}
	}()
	for _, it := range its {
		if !it.SnapshotOnly() {
			// Own writes of the table: one scan merges them.
			for _, it := range its {
				it.Close()
			}
			its = []*storage.Iterator{c.Txn.Scan(tid, nil, nil)}
			break
		}
	}
	parts := make([]*vpart, len(its))
	errs := make([]error, len(its))
	var mu sync.Mutex
	ctx, cancel := context.WithCancel(c.Context)
	defer cancel()
	var wg sync.WaitGroup
	for i := 1; i < len(its); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[i], errs[i] = op.partial(ctx, its[i], &mu)
			if errs[i] != nil {
				cancel()
			}
		}()
	}
	vecParallelScans.Add(1)
	parts[0], errs[0] = op.partial(ctx, its[0], &mu)
	if errs[0] != nil {
		cancel()
	}
	wg.Wait()
	// The row path decides when any part asks for it; otherwise the
	// first part's error (a part canceled for another's error says so).
	for _, err := range errs {
		if errors.Is(err, errVecFallback) || errors.Is(err, vec.ErrOverflow) {
			return err
		}
	}
	if err := c.Context.Err(); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return op.finish(parts)
}

// DefaultWorkers is max_parallel_workers_per_gather's default
// (PostgreSQL's), for work without a session: a full refresh.
const DefaultWorkers = 2

// Workers is the Ctx.Workers for a max_parallel_workers_per_gather of n:
// no more than the cores besides the leader's.
func Workers(n int) int {
	return max(0, min(n, runtime.GOMAXPROCS(0)-1))
}

// vecParallelScans counts the vectorized aggregations that read in
// parallel.
var vecParallelScans atomic.Int64

// VecParallelScans returns how many vectorized aggregations have read
// their table in parallel key ranges since the process started.
func VecParallelScans() int64 { return vecParallelScans.Load() }

// finish merges the parts, in key order, into op.out.
func (op *vaggOp) finish(parts []*vpart) error {
	ng := len(op.keys)
	p := parts[0]
	if len(parts) > 1 {
		idx := map[string]int32{}
		for g := int32(0); g < p.n; g++ {
			idx[p.enc[g]] = g
		}
		for _, q := range parts[1:] {
			for g := int32(0); g < q.n; g++ {
				t, ok := idx[q.enc[g]]
				if !ok {
					t = p.n
					p.n++
					idx[q.enc[g]] = t
					p.keys = append(p.keys, q.keys[g])
					p.enc = append(p.enc, q.enc[g])
					for a := range p.states {
						p.states[a].grow()
					}
				}
				for a := range p.states {
					op.merge(a, &p.states[a], t, &q.states[a], g)
				}
			}
		}
	}
	rows := make([]Row, 0, p.n)
	for g := int32(0); g < p.n; g++ {
		row := make(Row, ng+len(op.args))
		if ng > 0 {
			copy(row, p.keys[g])
		}
		for a := range op.args {
			if p.states[a].over {
				return errVecFallback
			}
			d, err := op.result(a, &p.states[a], g)
			if err != nil {
				return err
			}
			row[ng+a] = d
		}
		rows = append(rows, row)
	}
	op.out = &sliceOp{rows: rows}
	return nil
}

// merge adds group g of q into group t of p (aggregate a). A sum past
// int64 leaves an overflow mark that result turns into the row path.
func (op *vaggOp) merge(a int, p *vstates, t int32, q *vstates, g int32) {
	if q.n[g] == 0 {
		return
	}
	first := p.n[t] == 0
	p.n[t] += q.n[g]
	x := q.v[g]
	switch op.node.Aggs[a].Name {
	case "sum", "avg":
		r := p.v[t] + x
		if (r > p.v[t]) != (x > 0) && x != 0 {
			p.over = true
		}
		p.v[t] = r
		if p.ms != nil {
			p.ms[t] = max(p.ms[t], q.ms[g])
		}
	case "min":
		if first || x < p.v[t] {
			p.v[t] = x
		}
	case "max":
		if first || x > p.v[t] {
			p.v[t] = x
		}
	}
}

// partial aggregates the rows of it (mu, when set, guards the memory
// account shared by the parts).
func (op *vaggOp) partial(ctx context.Context, it *storage.Iterator, mu *sync.Mutex) (*vpart, error) {
	c, s := op.c, op.scan
	ncol := len(op.colIdx)
	b := newScanBatch(op.ctypes)
	ex := op.exprs()
	raw := make([]types.RawValue, ncol)
	var sel []int32
	part := &vpart{states: make([]vstates, len(op.args))}
	states := part.states
	for i := range states {
		if op.mixed[i] {
			states[i].ms = []int32{} // grown with the groups
		}
	}
	// Groups: by one integer key, or by an encoding of the keys.
	ints := map[int64]int32{}
	nullGroup := int32(-1)
	strs := map[string]int32{}
	var keyBuf []byte
	argv := make([]*vec.Vec, len(op.args))
	keyv := make([]*vec.Vec, len(op.keys))
	var gidx []int32
	groupBytes := int64(mapEntryOverhead+96) + int64(len(op.args))*16 + int64(len(op.keys))*types.DatumBytes
	if len(op.keys) == 0 {
		part.n = 1
		part.enc = []string{""}
		for i := range states {
			states[i] = vstates{n: []int64{0}, v: []int64{0}}
			if op.mixed[i] {
				states[i].ms = []int32{0}
			}
		}
	}
	newGroup := func(keys Row, enc []byte) (int32, error) {
		if mu != nil {
			mu.Lock()
		}
		err := op.mem.grow(groupBytes + 2*int64(len(enc)))
		if mu != nil {
			mu.Unlock()
		}
		if err != nil {
			if c.canSpill() {
				return 0, errVecFallback
			}
			return 0, err
		}
		g := part.n
		part.n++
		part.keys = append(part.keys, keys)
		part.enc = append(part.enc, string(enc))
		for i := range states {
			states[i].grow()
		}
		return g, nil
	}
	// consume aggregates the rows sel of b (the top layer's output).
	consume := func(b *vec.Batch, sel []int32) error {
		for i, f := range ex.args {
			if f == nil {
				continue
			}
			v, err := f(b, sel)
			if err != nil {
				return err
			}
			argv[i] = v
		}
		// The group of each selected row.
		if len(op.keys) > 0 {
			for i, f := range ex.keys {
				v, err := f(b, sel)
				if err != nil {
					return err
				}
				keyv[i] = v
			}
			gidx = gidx[:0]
			for _, i := range sel {
				var g int32
				var ok bool
				if len(keyv) == 1 && keyv[0].T == vec.Int {
					v := keyv[0]
					j := vec.At(v, i)
					if v.Nulls.Get(j) {
						g, ok = nullGroup, nullGroup >= 0
					} else {
						g, ok = ints[v.I[j]]
					}
					if !ok {
						keyBuf = vkey(keyBuf[:0], keyv, op.keyCh, i)
						var err error
						if g, err = newGroup(op.keyRow(keyv, i), keyBuf); err != nil {
							return err
						}
						if v.Nulls.Get(j) {
							nullGroup = g
						} else {
							ints[v.I[j]] = g
						}
					}
				} else {
					keyBuf = vkey(keyBuf[:0], keyv, op.keyCh, i)
					if g, ok = strs[string(keyBuf)]; !ok {
						var err error
						if g, err = newGroup(op.keyRow(keyv, i), keyBuf); err != nil {
							return err
						}
						strs[string(keyBuf)] = g
					}
				}
				gidx = append(gidx, g)
			}
		}
		for a := range op.args {
			if err := op.accumulate(a, &states[a], argv[a], ex.scales[a], sel, gidx); err != nil {
				return err
			}
		}
		return nil
	}
	// run passes the rows sel of b through the layers from li up.
	var run func(li int, b *vec.Batch, sel []int32) error
	run = func(li int, b *vec.Batch, sel []int32) error {
		for ; li < len(ex.layers); li++ {
			l := &ex.layers[li]
			if len(sel) == 0 {
				return nil
			}
			if l.join != nil {
				next := li + 1
				return l.join.probe(b, sel, func(jb *vec.Batch, js []int32) error { return run(next, jb, js) })
			}
			if l.cond != nil {
				r, err := l.cond(b, sel)
				if err != nil {
					return err
				}
				l.sel = vec.True(r, sel, l.sel)
				sel = l.sel
				continue
			}
			for i, f := range l.exprs {
				r, err := f(b, sel)
				if err != nil {
					return err
				}
				l.outs[i] = r
			}
		}
		if len(sel) == 0 {
			return nil
		}
		return consume(b, sel)
	}
	for more := true; more; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Decode up to a batch.
		resetScanBatch(b)
		n := 0
		for n < BatchSize {
			if !it.Next() {
				if err := it.Err(); err != nil {
					return nil, err
				}
				more = false
				break
			}
			r := it.Row()
			if s.Exclude != nil {
				if _, skip := s.Exclude[r.RowID]; skip {
					continue
				}
			}
			if err := op.dec.DecodeRaw(r.Value, raw); err != nil {
				return nil, err
			}
			if err := putRawRow(b, n, raw); err != nil {
				return nil, err
			}
			n++
		}
		if n == 0 {
			break
		}
		endScanBatch(b, n)
		sel = vec.All(sel, n)
		if err := run(0, b, sel); err != nil {
			return nil, err
		}
	}
	for a := range states {
		if states[a].over {
			return nil, errVecFallback
		}
	}
	return part, nil
}

// vkey appends an encoding of row i's keys that two rows share exactly
// when their keys are equal (as bytes: integers and text; CHAR(n)
// without its trailing spaces, as types.HashKey).
func vkey(buf []byte, keys []*vec.Vec, char []bool, i int32) []byte {
	for k, v := range keys {
		j := vec.At(v, i)
		if v.Nulls.Get(j) {
			buf = append(buf, 0)
			continue
		}
		buf = append(buf, 1)
		if v.T == vec.Bytes {
			x := v.Value(j)
			if char[k] {
				x = bytes.TrimRight(x, " ")
			}
			n := len(x)
			buf = append(buf, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
			buf = append(buf, x...)
			continue
		}
		x := uint64(v.I[j])
		buf = append(buf, byte(x>>56), byte(x>>48), byte(x>>40), byte(x>>32), byte(x>>24), byte(x>>16), byte(x>>8), byte(x))
	}
	return buf
}

// keyRow is row i's group key values as Datums of the keys' types.
func (op *vaggOp) keyRow(keys []*vec.Vec, i int32) Row {
	row := make(Row, len(keys))
	for k, v := range keys {
		j := vec.At(v, i)
		if v.Nulls.Get(j) {
			continue
		}
		if v.T == vec.Bytes {
			row[k] = types.Datum{K: op.keyT[k].Kind, S: string(v.Value(j))}
		} else {
			row[k] = types.Datum{K: op.keyT[k].Kind, I: v.I[j]}
		}
	}
	return row
}

// accumulate adds the selected rows of v to aggregate a's states (gidx:
// each row's group; nil: the one group).
func (op *vaggOp) accumulate(a int, st *vstates, v, scales *vec.Vec, sel, gidx []int32) error {
	name := op.node.Aggs[a].Name
	group := func(k int) int32 {
		if gidx == nil {
			return 0
		}
		return gidx[k]
	}
	if v == nil { // count(*)
		if gidx == nil {
			st.n[0] += int64(len(sel))
			return nil
		}
		for _, g := range gidx {
			st.n[g]++
		}
		return nil
	}
	for k, i := range sel {
		j := vec.At(v, i)
		if v.Nulls.Get(j) {
			continue
		}
		g := group(k)
		first := st.n[g] == 0
		st.n[g]++
		if name == "count" {
			continue
		}
		x := v.I[j]
		switch name {
		case "sum", "avg":
			r := st.v[g] + x
			if (r > st.v[g]) != (x > 0) && x != 0 {
				return errVecFallback
			}
			st.v[g] = r
			if scales != nil {
				st.ms[g] = max(st.ms[g], int32(scales.I[i]))
			}
		case "min":
			if first || x < st.v[g] {
				st.v[g] = x
			}
		case "max":
			if first || x > st.v[g] {
				st.v[g] = x
			}
		}
	}
	return nil
}

// result is aggregate a's result for group g, as the row path's state
// would give it (sql/funcs' countState, sumInt, sumNumeric, avgNumeric,
// minMax).
func (op *vaggOp) result(a int, st *vstates, g int32) (types.Datum, error) {
	call := op.node.Aggs[a]
	n, x := st.n[g], st.v[g]
	if call.Name == "count" {
		return types.NewInt8(n), nil
	}
	if n == 0 {
		return types.NullDatum, nil
	}
	t, k := op.argT[a], op.argK[a]
	dec := func(v int64) *apd.Decimal {
		d := new(apd.Decimal)
		d.SetFinite(v, -t.scale)
		return d
	}
	switch call.Name {
	case "min", "max":
		if t.t == vec.Decimal {
			return types.NewNumeric(dec(x)), nil
		}
		return types.Datum{K: k, I: x}, nil
	case "sum":
		if t.t == vec.Decimal && st.ms != nil && st.ms[g] < t.scale {
			// Every value summed had at most st.ms[g] digits after the
			// point: so has the sum, and the division is exact.
			m, _ := vec.Pow10(t.scale - st.ms[g])
			d := new(apd.Decimal)
			d.SetFinite(x/m, -st.ms[g])
			return types.NewNumeric(d), nil
		}
		if t.t == vec.Decimal {
			return types.NewNumeric(dec(x)), nil
		}
		if k == types.KindInt8 {
			return types.NewNumeric(types.NumericFromInt(x)), nil
		}
		return types.NewInt8(x), nil
	}
	// avg
	total := types.NumericFromInt(x)
	if t.t == vec.Decimal {
		total = dec(x)
	}
	r, err := types.NumericDiv(total, types.NumericFromInt(n))
	if err != nil {
		return types.Datum{}, err
	}
	return types.NewNumeric(r), nil
}
