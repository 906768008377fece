package exec

import (
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// joinOp is a hash join on the equality keys (the right side is built),
// or a nested-loop join when there are none. Outer joins emit unmatched
// rows padded with NULLs; semi and anti joins emit a left row (alone) when
// it has a match / has none, stopping at the first match.
type joinOp struct {
	c         *Ctx
	node      *plan.Join
	left      Operator
	rightRows []Row
	table     map[string][]int // key → right row indexes
	// keys, for a semi or anti join on keys alone (no residual), holds
	// the right rows' keys instead of the rows: a match needs nothing more.
	keys     map[string]struct{}
	matched  []bool
	lkeys    []evalFn
	residual evalFn
	lw, rw   int
	built    bool
	leftDone bool
	pending  []Row

	// probe state
	lbatch    []Row
	li        int
	cands     []int
	ci        int
	candReady bool
	anyMatch  bool
	buf       []byte
	mem       memAccount
	arena     []types.Datum // combine's rows are cut from it
	// arenaHeld is mem's charge for the arena being cut: a batch of
	// joined rows, as wide as both sides (a cross product of many tables
	// makes wide rows at every level).
	arenaHeld int64
	arenaRows int // rows of the last arena
}

func newJoin(c *Ctx, j *plan.Join) (Operator, error) {
	left, err := Build(c, j.Left)
	if err != nil {
		return nil, err
	}
	op := &joinOp{c: c, node: j, left: left, lw: len(j.Left.Columns()), rw: len(j.Right.Columns()), mem: c.account("hash join")}
	if op.lkeys, err = compileAll(j.LeftKeys, c); err != nil {
		left.Close()
		return nil, err
	}
	if j.Residual != nil {
		if op.residual, err = compile(j.Residual, c); err != nil {
			left.Close()
			return nil, err
		}
	}
	// Build the right side.
	right, err := Build(c, j.Right)
	if err != nil {
		left.Close()
		return nil, err
	}
	rkeys, err := compileAll(j.RightKeys, c)
	if err != nil {
		left.Close()
		right.Close()
		return nil, err
	}
	if len(rkeys) > 0 && j.Kind.LeftOnly() && j.Residual == nil {
		op.keys = map[string]struct{}{}
	} else if len(rkeys) > 0 {
		op.table = map[string][]int{}
	} else {
		op.mem.what = "nested loop join"
	}
	var buf []byte
	err = Drain(right, func(b []Row) error {
		// Each kept row costs itself, its slot, its matched flag and, in a
		// hash table, its key and index.
		size := rowsBytes(b) + int64(len(b))*(24+1)
		if op.table != nil {
			size += int64(len(b)) * (mapEntryOverhead + 16)
		}
		if err := op.mem.grow(size); err != nil {
			return err
		}
		if op.keys != nil {
			return op.addKeys(b, rkeys, &buf)
		}
		for _, r := range b {
			idx := len(op.rightRows)
			op.rightRows = append(op.rightRows, r)
			if op.table != nil {
				buf = buf[:0]
				null := false
				for _, f := range rkeys {
					d, err := f(r)
					if err != nil {
						return err
					}
					if d.IsNull() {
						null = true
						break
					}
					buf = types.HashKey(buf, d)
				}
				if !null {
					op.table[string(buf)] = append(op.table[string(buf)], idx)
				}
			}
		}
		return c.Context.Err()
	})
	if err != nil {
		left.Close()
		op.mem.release()
		return nil, err
	}
	op.matched = make([]bool, len(op.rightRows))
	return op, nil
}

// combine returns the joined row l ‖ r. Rows are cut from a batch-sized
// block (as a scan's are) rather than allocated one by one: a million-row
// join made a million allocations here.
func (j *joinOp) combine(l, r Row) (Row, error) {
	w := j.lw + j.rw
	if len(j.arena) < w {
		// The previous arena's rows are their consumers' (who count what
		// they keep); this one is charged before it is allocated. Arenas
		// start small and double up to a batch, so a join that makes few
		// rows (of a wide cross product, say) does not hold a batch of
		// them at every level.
		j.arenaRows = min(BatchSize, max(16, 2*j.arenaRows))
		j.mem.shrink(j.arenaHeld)
		j.arenaHeld = int64(j.arenaRows*w) * datumBytes
		if err := j.mem.grow(j.arenaHeld); err != nil {
			j.arenaHeld = 0
			return nil, err
		}
		j.arena = make([]types.Datum, j.arenaRows*w)
	}
	row := j.arena[:w:w]
	j.arena = j.arena[w:]
	copy(row, l)
	copy(row[j.lw:], r)
	return row, nil
}

// addKeys keeps the keys of the right rows b (keys-only semi and anti
// joins); a key with a NULL matches nothing and is left out.
func (j *joinOp) addKeys(b []Row, rkeys []evalFn, buf *[]byte) error {
	for _, r := range b {
		*buf = (*buf)[:0]
		null := false
		for _, f := range rkeys {
			d, err := f(r)
			if err != nil {
				return err
			}
			if d.IsNull() {
				null = true
				break
			}
			*buf = types.HashKey(*buf, d)
		}
		if null {
			continue
		}
		if _, ok := j.keys[string(*buf)]; !ok {
			if err := j.mem.grow(int64(len(*buf)) + mapEntryOverhead); err != nil {
				return err
			}
			j.keys[string(*buf)] = struct{}{}
		}
	}
	return j.c.Context.Err()
}

// nextKeys is Next of a keys-only semi or anti join.
func (j *joinOp) nextKeys() ([]Row, error) {
	for {
		if err := j.c.Context.Err(); err != nil {
			return nil, err
		}
		b, err := j.left.Next()
		if err != nil || b == nil {
			return nil, err
		}
		var out []Row
		for _, l := range b {
			j.buf = j.buf[:0]
			match := true
			for _, f := range j.lkeys {
				d, err := f(l)
				if err != nil {
					return nil, err
				}
				if d.IsNull() {
					match = false
					break
				}
				j.buf = types.HashKey(j.buf, d)
			}
			if match {
				_, match = j.keys[string(j.buf)]
			}
			if match == (j.node.Kind == plan.JoinSemi) {
				out = append(out, l)
			}
		}
		if len(out) > 0 {
			return out, nil
		}
	}
}

func (j *joinOp) Next() ([]Row, error) {
	if j.keys != nil {
		return j.nextKeys()
	}
	kind := j.node.Kind
	var out []Row
	for !j.leftDone {
		// Resume the current left row's candidates, emitting at most a
		// batch at a time so memory stays bounded and cancellation is seen.
		if j.li < len(j.lbatch) {
			l := j.lbatch[j.li]
			if !j.candReady {
				j.candReady, j.ci, j.anyMatch = true, 0, false
				j.cands = nil
				if j.table != nil {
					j.buf = j.buf[:0]
					null := false
					for _, f := range j.lkeys {
						d, err := f(l)
						if err != nil {
							return nil, err
						}
						if d.IsNull() {
							null = true
							break
						}
						j.buf = types.HashKey(j.buf, d)
					}
					if !null {
						j.cands = j.table[string(j.buf)]
					}
				}
			}
			n := len(j.rightRows)
			if j.table != nil {
				n = len(j.cands)
			}
			semi := kind == plan.JoinSemi || kind == plan.JoinAnti
			for j.ci < n && len(out) < BatchSize {
				ri := j.ci
				if j.table != nil {
					ri = j.cands[j.ci]
				}
				j.ci++
				var row Row
				if !semi || j.residual != nil {
					var err error
					if row, err = j.combine(l, j.rightRows[ri]); err != nil {
						return nil, err
					}
				}
				if j.residual != nil {
					d, err := j.residual(row)
					if err != nil {
						return nil, err
					}
					if d.IsNull() || !d.Bool() {
						continue
					}
				}
				j.anyMatch = true
				if semi {
					// One match decides a semi/anti join's left row.
					j.ci = n
					break
				}
				j.matched[ri] = true
				out = append(out, row)
			}
			if j.ci < n {
				return out, j.c.Context.Err()
			}
			switch {
			case !j.anyMatch && (kind == plan.JoinLeft || kind == plan.JoinFull):
				row, err := j.combine(l, make(Row, j.rw))
				if err != nil {
					return nil, err
				}
				out = append(out, row)
			case j.anyMatch && kind == plan.JoinSemi, !j.anyMatch && kind == plan.JoinAnti:
				out = append(out, l)
			}
			j.li++
			j.candReady = false
			if len(out) >= BatchSize {
				return out, j.c.Context.Err()
			}
			continue
		}
		if err := j.c.Context.Err(); err != nil {
			return nil, err
		}
		b, err := j.left.Next()
		if err != nil {
			return nil, err
		}
		if b == nil {
			j.leftDone = true
			break
		}
		j.lbatch, j.li = b, 0
	}
	if len(out) > 0 {
		return out, nil
	}
	if !j.built && (kind == plan.JoinRight || kind == plan.JoinFull) {
		j.built = true
		for ri, m := range j.matched {
			if !m {
				row, err := j.combine(make(Row, j.lw), j.rightRows[ri])
				if err != nil {
					return nil, err
				}
				j.pending = append(j.pending, row)
			}
		}
	}
	if len(j.pending) > 0 {
		n := len(j.pending)
		if n > BatchSize {
			n = BatchSize
		}
		out := j.pending[:n:n]
		j.pending = j.pending[n:]
		return out, nil
	}
	return nil, nil
}

func (j *joinOp) Close() {
	j.left.Close()
	j.mem.release()
}
