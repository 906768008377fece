package exec

import (
	"github.com/mvserver/mvserver/sql/exec/vec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// Vectorized hash join: an inner equi-join on the scan side of a
// vectorized aggregation (vagg.go), its probe side (Left) the chain
// down to the whole-table scan. The build side (Right) runs once, row at
// a time, before the scan's parts start; its rows become one vector per
// column and a hash table from key to the first row of a chain in build
// order, which the parallel parts share read-only. Each part probes a
// batch at a time: the left keys are vector kernels, the matches are
// pairs of a left row and a right row, gathered into a joined batch of at
// most BatchSize rows that the layers above read.
//
// The rows and their order are the row path's (joinOp): left rows in
// input order, each one's matches in build order. It applies to keys
// that are integers (and bool, date, timestamps), compared by value as
// types.HashKey does, or text (CHAR(n) without trailing spaces); other
// keys leave the query to the row path.

// vjoinBuild is a join's build side, shared by the parts.
type vjoinBuild struct {
	node  *plan.Join
	rtype []vtype // per right column (ok false: no vector)
	rok   []bool
	// keyT are the key pairs' vector types; char marks a CHAR(n) key on
	// each side.
	keyT         []vec.Type
	lchar, rchar []bool
	cols         []*vec.Vec // per right column (nil: no vector)
	ints         map[int64]int32
	strs         map[string]int32
	next         []int32 // a row's next row of the same key (-1: none)
	built        bool
}

// newVJoinBuild checks j for the vectorized join; nil when it does not
// apply.
func newVJoinBuild(j *plan.Join) *vjoinBuild {
	if j.Kind != plan.JoinInner || len(j.LeftKeys) == 0 || len(j.LeftKeys) != len(j.RightKeys) {
		return nil
	}
	jb := &vjoinBuild{node: j}
	for _, col := range j.Right.Columns() {
		t, ok := vecTypeOf(col.T)
		jb.rtype = append(jb.rtype, t)
		jb.rok = append(jb.rok, ok)
	}
	for i := range j.LeftKeys {
		lt, lok := vecTypeOf(j.LeftKeys[i].Type())
		rt, rok := vecTypeOf(j.RightKeys[i].Type())
		if !lok || !rok || lt.t != rt.t || lt.t == vec.Decimal {
			return nil
		}
		jb.keyT = append(jb.keyT, lt.t)
		jb.lchar = append(jb.lchar, lt.char)
		jb.rchar = append(jb.rchar, rt.char)
	}
	return jb
}

// singleInt reports whether the join has one integer key (a map of
// int64).
func (jb *vjoinBuild) singleInt() bool {
	return len(jb.keyT) == 1 && jb.keyT[0] != vec.Bytes
}

// build runs the build side and fills the vectors and the table. A value
// the vectors cannot hold returns errVecFallback; past the budget, the
// same when the row path can spill, else 53200.
func (jb *vjoinBuild) build(c *Ctx, mem *memAccount) error {
	if jb.built {
		return nil
	}
	jb.built = true
	rkeys, err := compileAll(jb.node.RightKeys, c)
	if err != nil {
		return err
	}
	charge := func(b []Row) error {
		size := rowsBytes(b) + int64(len(b))*(int64(len(jb.rtype))*8+mapEntryOverhead+24)
		if err := mem.grow(size); err != nil {
			if c.canSpill() {
				return errVecFallback
			}
			return err
		}
		return nil
	}
	var rows []Row
	if vs := newVecFilterScan(c, jb.node.Right); vs != nil {
		// a filtered whole-table scan: by kernels, in parallel (vscan_rows.go)
		if rows, err = vs.rows(charge); err != nil {
			return err
		}
	} else {
		right, err := Build(c, jb.node.Right)
		if err != nil {
			return err
		}
		err = Drain(right, func(b []Row) error {
			if err := charge(b); err != nil {
				return err
			}
			rows = append(rows, b...)
			return c.Context.Err()
		})
		right.Close()
		if err != nil {
			return err
		}
	}
	n := len(rows)
	jb.cols = make([]*vec.Vec, len(jb.rtype))
	for r, t := range jb.rtype {
		if !jb.rok[r] {
			continue
		}
		v := &vec.Vec{T: t.t, Scale: t.scale}
		v.Reset(n)
		if v.T == vec.Bytes {
			v.Off = append(v.Off[:0], 0)
		}
		for i, row := range rows {
			d := row[r]
			if v.T == vec.Bytes {
				if !d.IsNull() {
					v.Data = append(v.Data, d.S...)
				} else {
					v.SetNull(int32(i))
				}
				v.Off = append(v.Off, int32(len(v.Data)))
				continue
			}
			switch {
			case d.IsNull():
				v.SetNull(int32(i))
			case v.T == vec.Decimal:
				x, ok := decimalAtScale(d, t.scale)
				if !ok {
					return errVecFallback
				}
				v.I[i] = x
			default:
				v.I[i] = d.I
			}
		}
		jb.cols[r] = v
	}
	// The table: built backwards, so a key's chain runs in build order.
	jb.next = make([]int32, n)
	if jb.singleInt() {
		jb.ints = make(map[int64]int32, n)
	} else {
		jb.strs = make(map[string]int32, n)
	}
	kd := make([]types.Datum, len(rkeys))
	var buf []byte
	for i := n - 1; i >= 0; i-- {
		jb.next[i] = -1
		null := false
		for k, f := range rkeys {
			d, err := f(rows[i])
			if err != nil {
				return err
			}
			kd[k] = d
			null = null || d.IsNull()
		}
		if null {
			continue // matches nothing
		}
		if jb.ints != nil {
			if h, ok := jb.ints[kd[0].I]; ok {
				jb.next[i] = h
			}
			jb.ints[kd[0].I] = int32(i)
			continue
		}
		buf = buf[:0]
		for k, d := range kd {
			if jb.keyT[k] == vec.Bytes {
				s := []byte(d.S)
				if jb.rchar[k] {
					s = trimSpaces(s)
				}
				buf = appendBytesKey(buf, s)
			} else {
				buf = appendIntKey(buf, d.I)
			}
		}
		if h, ok := jb.strs[string(buf)]; ok {
			jb.next[i] = h
		}
		jb.strs[string(buf)] = int32(i)
	}
	return nil
}

// decimalAtScale is d as an int64 at scale s, when it is stored at that
// scale (as a column of the type holds it).
func decimalAtScale(d types.Datum, s int32) (int64, bool) {
	if d.D == nil || d.D.Form != 0 || d.D.Exponent != -s || !d.D.Coeff.IsInt64() {
		return 0, false
	}
	x := d.D.Coeff.Int64()
	if d.D.Negative {
		x = -x
	}
	return x, true
}

func trimSpaces(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	return b
}

func appendIntKey(buf []byte, x int64) []byte {
	u := uint64(x)
	return append(buf, 1, byte(u>>56), byte(u>>48), byte(u>>40), byte(u>>32), byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
}

func appendBytesKey(buf, s []byte) []byte {
	n := len(s)
	buf = append(buf, 2, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	return append(buf, s...)
}

// vjoinLayer is one part's probe of a join.
type vjoinLayer struct {
	b        *vjoinBuild
	lkeys    []vexpr
	lcols    []vexpr // the left input's columns (nil: no vector)
	residual vexpr
	lw       int
	out      *vec.Batch // the joined rows: left columns, then right
	lv       []*vec.Vec // the left columns of the input batch
	kv       []*vec.Vec
	li, ri   []int32
	sel, buf []int32
	keyBuf   []byte
}

// compileJoin compiles a join layer over the left input's columns; it
// returns the layer and the joined columns.
func compileJoin(c *Ctx, jb *vjoinBuild, cols []vexpr, types_ []vtype) (*vjoinLayer, []vexpr, []vtype, bool) {
	vc := &vcompiler{cols: cols, types: types_, c: c}
	l := &vjoinLayer{b: jb, lcols: cols, lw: len(cols)}
	for _, k := range jb.node.LeftKeys {
		f, _, ok := vc.compile(k)
		if !ok {
			return nil, nil, nil, false
		}
		l.lkeys = append(l.lkeys, f)
	}
	rw := len(jb.rtype)
	l.out = &vec.Batch{Cols: make([]*vec.Vec, l.lw+rw)}
	l.lv = make([]*vec.Vec, l.lw)
	l.kv = make([]*vec.Vec, len(l.lkeys))
	ncols := make([]vexpr, l.lw+rw)
	ntypes := make([]vtype, l.lw+rw)
	for i := range l.lw + rw {
		var t vtype
		switch {
		case i < l.lw && cols[i] != nil:
			t = types_[i]
		case i >= l.lw && jb.rok[i-l.lw]:
			t = jb.rtype[i-l.lw]
		default:
			continue
		}
		v := &vec.Vec{T: t.t, Scale: t.scale}
		l.out.Cols[i] = v
		ncols[i] = func(*vec.Batch, []int32) (*vec.Vec, error) { return v, nil }
		ntypes[i] = t
	}
	if jb.node.Residual != nil {
		vc := &vcompiler{cols: ncols, types: ntypes, c: c}
		f, t, ok := vc.compile(jb.node.Residual)
		if !ok || t.t != vec.Bool {
			return nil, nil, nil, false
		}
		l.residual = f
	}
	return l, ncols, ntypes, true
}

// probe joins the rows sel of b with the build side and hands each
// joined batch (and its selected rows) to emit.
func (l *vjoinLayer) probe(b *vec.Batch, sel []int32, emit func(*vec.Batch, []int32) error) error {
	for i, f := range l.lcols {
		if f == nil {
			continue
		}
		v, err := f(b, sel)
		if err != nil {
			return err
		}
		l.lv[i] = v
	}
	for i, f := range l.lkeys {
		v, err := f(b, sel)
		if err != nil {
			return err
		}
		l.kv[i] = v
	}
	jb := l.b
	l.li, l.ri = l.li[:0], l.ri[:0]
	for _, i := range sel {
		h := int32(-1)
		if jb.ints != nil {
			v := l.kv[0]
			j := vec.At(v, i)
			if v.Nulls.Get(j) {
				continue
			}
			var ok bool
			if h, ok = jb.ints[v.I[j]]; !ok {
				continue
			}
		} else {
			buf, null := l.keyBuf[:0], false
			for k, v := range l.kv {
				j := vec.At(v, i)
				if v.Nulls.Get(j) {
					null = true
					break
				}
				if v.T == vec.Bytes {
					s := v.Value(j)
					if jb.lchar[k] {
						s = trimSpaces(s)
					}
					buf = appendBytesKey(buf, s)
				} else {
					buf = appendIntKey(buf, v.I[j])
				}
			}
			l.keyBuf = buf
			if null {
				continue
			}
			var ok bool
			if h, ok = jb.strs[string(buf)]; !ok {
				continue
			}
		}
		for r := h; r >= 0; r = jb.next[r] {
			l.li, l.ri = append(l.li, i), append(l.ri, r)
			if len(l.li) == BatchSize {
				if err := l.flush(emit); err != nil {
					return err
				}
			}
		}
	}
	if len(l.li) > 0 {
		return l.flush(emit)
	}
	return nil
}

// flush gathers the pending pairs into the joined batch and emits it.
func (l *vjoinLayer) flush(emit func(*vec.Batch, []int32) error) error {
	n := len(l.li)
	for i, v := range l.out.Cols {
		if v == nil {
			continue
		}
		if i < l.lw {
			gather(v, l.lv[i], l.li)
		} else {
			gather(v, l.b.cols[i-l.lw], l.ri)
		}
	}
	l.out.N = n
	l.li, l.ri = l.li[:0], l.ri[:0]
	l.sel = vec.All(l.sel, n)
	sel := l.sel
	if l.residual != nil {
		r, err := l.residual(l.out, sel)
		if err != nil {
			return err
		}
		l.buf = vec.True(r, sel, l.buf)
		sel = l.buf
		if len(sel) == 0 {
			return nil
		}
	}
	return emit(l.out, sel)
}

// gather sets dst to src's rows idx (src may be a constant: one row).
func gather(dst, src *vec.Vec, idx []int32) {
	dst.T, dst.Scale = src.T, src.Scale
	dst.Reset(len(idx))
	if dst.T == vec.Bytes {
		dst.Off = append(dst.Off[:0], 0)
		for k, i := range idx {
			j := vec.At(src, i)
			if src.Nulls.Get(j) {
				dst.SetNull(int32(k))
			} else {
				dst.Data = append(dst.Data, src.Value(j)...)
			}
			dst.Off = append(dst.Off, int32(len(dst.Data)))
		}
		return
	}
	if len(src.Nulls) == 0 && len(src.I) > 1 {
		for k, i := range idx {
			dst.I[k] = src.I[i]
		}
		return
	}
	for k, i := range idx {
		j := vec.At(src, i)
		if src.Nulls.Get(j) {
			dst.SetNull(int32(k))
			continue
		}
		dst.I[k] = src.I[j]
	}
}
