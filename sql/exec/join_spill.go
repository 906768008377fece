package exec

import (
	"github.com/mvserver/mvserver/sql/plan"
)

// graceJoin is a hash join whose build side went past the budget (see
// spill.go): the build rows are partitioned by the hash of their join key,
// then the probe rows likewise, and each pair of files is joined in turn
// by the ordinary hash join (probeNext) over a table of the build file.
// A build file that still does not fit is partitioned again, with its
// probe file, at the next level.
type graceJoin struct {
	right *spillParts // the build rows by key, until the probe side is split
	// rnull holds the build rows with a NULL key (kept only for right and
	// full joins, which emit them unmatched).
	rnull *spillFile
	split bool // the probe side is partitioned: tasks hold the pairs
	tasks []joinTask
	// nullRight, while set, is a file of build rows to emit unmatched.
	nullRight *spillFile
	// cur is the task being joined.
	cur joinTask
	// parts counts the partitionings (the first, then each file pair
	// partitioned again).
	parts int
}

// joinTask is a pair of files to join: the probe rows and the build rows
// of the same keys (either may be nil: no rows).
type joinTask struct {
	left, right *spillFile
	level       int
	// nullKeys: right holds build rows with NULL keys, to emit unmatched.
	nullKeys bool
}

func (t joinTask) close() {
	t.left.close()
	t.right.close()
}

// keepsUnmatchedLeft reports whether a probe row with no match is output.
func keepsUnmatchedLeft(k plan.JoinKind) bool {
	return k == plan.JoinLeft || k == plan.JoinFull || k == plan.JoinAnti
}

// keepsUnmatchedRight reports whether a build row with no match is output.
func keepsUnmatchedRight(k plan.JoinKind) bool {
	return k == plan.JoinRight || k == plan.JoinFull
}

// startGrace moves the build rows kept so far to partition files and
// gives back their memory.
func (j *joinOp) startGrace() error {
	parts, err := newSpillParts(j.c, "hash join", "hashjoin-*.part", 0, j.rw)
	if err != nil {
		return err
	}
	j.grace = &graceJoin{right: parts, parts: 1}
	rows := j.rightRows
	j.rightRows, j.table, j.matched = nil, nil, nil
	if err := j.grace.addRight(j, rows); err != nil {
		return err
	}
	j.mem.release()
	// The probe loop has nothing to do until the first pair is loaded.
	j.leftDone, j.built = true, true
	return nil
}

// addRight partitions build rows.
func (g *graceJoin) addRight(j *joinOp, b []Row) error {
	for _, r := range b {
		key, ok, err := joinKey(j.buf[:0], j.rkeys, r)
		j.buf = key
		if err != nil {
			return err
		}
		switch {
		case ok:
			err = g.right.add(key, r)
		case keepsUnmatchedRight(j.node.Kind):
			if g.rnull == nil {
				if g.rnull, err = newSpillFile(j.c.Mem.TempDir, "hashjoin-*.null", j.rw, j.c.spillBufSize()); err != nil {
					return err
				}
			}
			err = g.rnull.write(r)
		}
		if err != nil {
			return err
		}
	}
	return j.c.Context.Err()
}

// partitionByKey writes the rows of src (closing it) to parts by their keys;
// rows with a NULL key go to *null when keepNull (created on first use),
// else nowhere.
func partitionByKey(c *Ctx, src Operator, keys []evalFn, parts *spillParts, null **spillFile, keepNull bool) error {
	var buf []byte
	return Drain(src, func(b []Row) error {
		for _, r := range b {
			key, ok, err := joinKey(buf[:0], keys, r)
			buf = key
			if err != nil {
				return err
			}
			switch {
			case ok:
				err = parts.add(key, r)
			case keepNull:
				if *null == nil {
					if *null, err = newSpillFile(c.Mem.TempDir, "hashjoin-*.null", len(r), c.spillBufSize()); err != nil {
						return err
					}
				}
				err = (*null).write(r)
			}
			if err != nil {
				return err
			}
		}
		return c.Context.Err()
	})
}

// pairTasks appends the pairs of files of left and right (partitioned at
// the same level with the same seed) that can produce rows.
func (g *graceJoin) pairTasks(kind plan.JoinKind, left, right *spillParts) error {
	if err := left.finish(); err != nil {
		return err
	}
	if err := right.finish(); err != nil {
		return err
	}
	for i := range spillFanout {
		t := joinTask{left: left.take(i), right: right.take(i), level: left.level}
		switch {
		case t.left == nil && t.right == nil:
			continue
		case t.left == nil && !keepsUnmatchedRight(kind), t.right == nil && !keepsUnmatchedLeft(kind):
			t.close()
			continue
		}
		g.tasks = append(g.tasks, t)
	}
	return nil
}

// next readies the next pair of files for probeNext; false when none is
// left.
func (g *graceJoin) next(j *joinOp) (bool, error) {
	kind := j.node.Kind
	if !g.split {
		g.split = true
		left, err := newSpillParts(j.c, "hash join", "hashjoin-*.part", 0, j.lw)
		if err != nil {
			return false, err
		}
		var lnull *spillFile
		err = partitionByKey(j.c, j.left, j.lkeys, left, &lnull, keepsUnmatchedLeft(kind))
		if err == nil {
			err = g.pairTasks(kind, left, g.right)
		}
		left.close()
		g.right.close()
		g.right = nil
		j.left = &sliceOp{} // partition closed it
		if err != nil {
			lnull.close()
			return false, err
		}
		// Probe rows with a NULL key meet an empty table; build rows with
		// one are emitted unmatched.
		if lnull != nil {
			if err := lnull.finish(); err != nil {
				lnull.close()
				return false, err
			}
			g.tasks = append(g.tasks, joinTask{left: lnull})
		}
		if g.rnull != nil {
			if err := g.rnull.finish(); err != nil {
				return false, err
			}
			g.tasks = append(g.tasks, joinTask{right: g.rnull, nullKeys: true})
			g.rnull = nil
		}
	}
	for len(g.tasks) > 0 {
		// The last pair's rows are their consumers'.
		j.left.Close()
		g.cur.close()
		j.mem.release()
		j.arena, j.arenaHeld, j.arenaRows = nil, 0, 0
		j.rightRows, j.matched, j.pending = nil, nil, nil
		j.table = map[string][]int{}

		t := g.tasks[len(g.tasks)-1]
		g.tasks = g.tasks[:len(g.tasks)-1]
		g.cur = t
		fits, err := g.load(j, t)
		if err != nil {
			return false, err
		}
		if !fits {
			continue
		}
		var left Operator = &sliceOp{}
		if t.left != nil {
			left = &spillFileOp{c: j.c, f: t.left}
			g.cur.left = nil // the operator closes it
		}
		j.left = left
		j.matched = make([]bool, len(j.rightRows))
		j.lbatch, j.li, j.candReady = nil, 0, false
		j.leftDone, j.built = g.nullRight != nil, g.nullRight != nil || !keepsUnmatchedRight(kind)
		return true, nil
	}
	return false, nil
}

// load builds the table of t's build rows; when they do not fit it
// partitions the pair again at the next level (new tasks) and returns
// false. Build rows with NULL keys are loaded without a table, a batch at
// a time as the probe side of an empty left.
func (g *graceJoin) load(j *joinOp, t joinTask) (bool, error) {
	if t.right == nil {
		return true, nil
	}
	if t.nullKeys {
		// No table: the rows come out unmatched a batch at a time.
		g.nullRight, g.cur.right = t.right, nil
		return true, nil
	}
	for {
		b, err := t.right.readBatch()
		if err != nil {
			return false, err
		}
		if b == nil {
			return true, nil
		}
		err = j.build(b)
		if err == nil {
			if err := j.c.Context.Err(); err != nil {
				return false, err
			}
			continue
		}
		if t.level >= maxSpillLevel || !isOutOfMemory(err) {
			return false, err
		}
		// Partition the pair again with the next level's seed.
		g.parts++
		right, err := newSpillParts(j.c, "hash join", "hashjoin-*.part", t.level+1, j.rw)
		if err != nil {
			return false, err
		}
		left, err := newSpillParts(j.c, "hash join", "hashjoin-*.part", t.level+1, j.lw)
		if err != nil {
			return false, err
		}
		err = func() error {
			var none *spillFile
			rows := append(j.rightRows, b...)
			j.rightRows, j.table = nil, map[string][]int{}
			if err := partitionByKey(j.c, &sliceOp{rows: rows}, j.rkeys, right, &none, false); err != nil {
				return err
			}
			j.mem.release()
			if err := partitionByKey(j.c, &spillFileOp{c: j.c, f: t.right}, j.rkeys, right, &none, false); err != nil {
				return err
			}
			if t.left != nil {
				if err := partitionByKey(j.c, &spillFileOp{c: j.c, f: t.left}, j.lkeys, left, &none, false); err != nil {
					return err
				}
			}
			return g.pairTasks(j.node.Kind, left, right)
		}()
		left.close()
		right.close()
		return false, err
	}
}

// unmatchedRight returns the next batch of the build rows with NULL keys,
// padded with NULLs on the left; nil when there are none (left).
func (g *graceJoin) unmatchedRight(j *joinOp) ([]Row, error) {
	if g.nullRight == nil {
		return nil, nil
	}
	b, err := g.nullRight.readBatch()
	if err != nil || len(b) == 0 {
		g.nullRight.close()
		g.nullRight = nil
		return nil, err
	}
	out := make([]Row, len(b))
	for i, r := range b {
		if out[i], err = j.combine(make(Row, j.lw), r); err != nil {
			return nil, err
		}
	}
	return out, j.c.Context.Err()
}

// close closes every file the join still holds.
func (g *graceJoin) close() {
	if g == nil {
		return
	}
	g.right.close()
	g.rnull.close()
	g.nullRight.close()
	g.cur.close()
	for _, t := range g.tasks {
		t.close()
	}
	g.tasks = nil
}
