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
	// the right rows' keys instead of the rows: a match needs nothing
	// more. It does not spill: it holds one entry per distinct key.
	keys     map[string]struct{}
	matched  []bool
	lkeys    []evalFn
	residual evalFn
	lw, rw   int
	// llive, rlive are the sides' columns that can be other than NULL
	// (live_columns.go; nil: all): combine copies only them.
	llive, rlive []int
	rkeys        []evalFn
	// grace is set once the build side spilled (join_spill.go).
	grace    *graceJoin
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
	// reuse: the consumer keeps nothing of a batch past its next Next
	// (scan_reuse.go), so each Next cuts its rows from the last arena
	// again (lastArena) instead of a fresh one: a join making 150k rows
	// of 20 columns allocated, faulted in and collected 200 MB.
	reuse     bool
	lastArena []types.Datum
}

func (j *joinOp) reuseBatches() { j.reuse = true }

func newJoin(c *Ctx, j *plan.Join) (Operator, error) {
	left, err := Build(c, j.Left)
	if err != nil {
		return nil, err
	}
	op := &joinOp{c: c, node: j, left: left, lw: len(j.Left.Columns()), rw: len(j.Right.Columns()), mem: c.account("hash join")}
	op.llive, op.rlive = liveColumns(j.Left), liveColumns(j.Right)
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
	op.rkeys = rkeys
	if len(rkeys) > 0 && (j.Kind == plan.JoinSemi || j.Kind == plan.JoinAnti) && j.Residual == nil {
		op.keys = map[string]struct{}{}
	} else if len(rkeys) > 0 {
		op.table = map[string][]int{}
	} else {
		op.mem.what = "nested loop join"
	}
	err = Drain(right, func(b []Row) error {
		if op.grace != nil {
			return op.grace.addRight(op, b)
		}
		if op.keys != nil {
			return op.addKeys(b)
		}
		if err := op.build(b); err != nil {
			if op.table == nil || !c.canSpill() || !isOutOfMemory(err) {
				return err
			}
			// The build side does not fit: a grace hash join.
			if err := op.startGrace(); err != nil {
				return err
			}
			return op.grace.addRight(op, b)
		}
		return c.Context.Err()
	})
	if err != nil {
		left.Close()
		op.grace.close()
		op.mem.release()
		return nil, err
	}
	op.matched = make([]bool, len(op.rightRows))
	return op, nil
}

// build adds rows to the build side, charging them first (53200 past the
// budget, nothing added).
func (j *joinOp) build(b []Row) error {
	// Each kept row costs itself, its slot, its matched flag and, in a
	// hash table, its key and index.
	size := rowsBytes(b) + int64(len(b))*(24+1)
	if j.table != nil {
		size += int64(len(b)) * (mapEntryOverhead + 16)
	}
	// A join that can spill leaves room for its output's arena (see
	// combine), else a table filling the budget fails at its first batch.
	var room int64
	if j.table != nil && j.c.canSpill() {
		room = min(int64(BatchSize*(j.lw+j.rw))*datumBytes, j.c.Mem.Limit/2)
	}
	if err := j.mem.grow(size + room); err != nil {
		return err
	}
	j.mem.shrink(room)
	for _, r := range b {
		idx := len(j.rightRows)
		j.rightRows = append(j.rightRows, r)
		if j.table != nil {
			key, ok, err := joinKey(j.buf[:0], j.rkeys, r)
			j.buf = key
			if err != nil {
				return err
			}
			if ok {
				j.table[string(key)] = append(j.table[string(key)], idx)
			}
		}
	}
	return nil
}

// joinKey appends the hash key of row's join keys to buf; ok is false
// when one is NULL (the row matches nothing).
func joinKey(buf []byte, keys []evalFn, row Row) ([]byte, bool, error) {
	for _, f := range keys {
		d, err := f(row)
		if err != nil {
			return buf, false, err
		}
		if d.IsNull() {
			return buf, false, nil
		}
		buf = types.HashKey(buf, d)
	}
	return buf, true, nil
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
		if j.reuse {
			j.lastArena = j.arena
		}
	}
	row := j.arena[:w:w]
	j.arena = j.arena[w:]
	copyLive(row, l, j.llive)
	copyLive(row[j.lw:], r, j.rlive)
	return row, nil
}

func (j *joinOp) probeNext() ([]Row, error) {
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
					key, ok, err := joinKey(j.buf[:0], j.lkeys, l)
					j.buf = key
					if err != nil {
						return nil, err
					}
					if ok {
						j.cands = j.table[string(key)]
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

// addKeys keeps the keys of the right rows b (keys-only semi and anti
// joins); a key with a NULL matches nothing and is left out.
func (j *joinOp) addKeys(b []Row) error {
	for _, r := range b {
		key, ok, err := joinKey(j.buf[:0], j.rkeys, r)
		j.buf = key
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if _, seen := j.keys[string(key)]; !seen {
			if err := j.mem.grow(int64(len(key)) + mapEntryOverhead); err != nil {
				return err
			}
			j.keys[string(key)] = struct{}{}
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
			key, match, err := joinKey(j.buf[:0], j.lkeys, l)
			j.buf = key
			if err != nil {
				return nil, err
			}
			if match {
				_, match = j.keys[string(key)]
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
	if j.reuse && len(j.pending) == 0 && j.lastArena != nil {
		// The rows handed out are dead; only live columns are ever
		// written (copyLive), so the others are still NULL.
		j.arena = j.lastArena
	}
	for {
		out, err := j.probeNext()
		if err != nil || out != nil || j.grace == nil {
			return out, err
		}
		if out, err := j.grace.unmatchedRight(j); err != nil || out != nil {
			return out, err
		}
		if more, err := j.grace.next(j); err != nil || !more {
			return nil, err
		}
	}
}

func (j *joinOp) Close() {
	j.left.Close()
	j.grace.close()
	j.mem.release()
}
