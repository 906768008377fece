package exec

import (
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// distinctOp removes duplicate rows, emitting each row the first time its
// values are seen. Past the memory budget the rows of values not yet seen
// spill to files (spill.go) deduplicated after the input, one file at a
// time, so rows then come in no set order.
type distinctOp struct {
	c    *Ctx
	in   Operator
	seen map[string]struct{}
	buf  []byte
	// canonical: a numeric column may hold equal values written apart
	// (1.5, 1.50); all rows are read first and each distinct row is the
	// preferred of its equals (types.Preferred), whatever their order.
	canonical bool
	out       *sliceOp
	mem       memAccount

	// src is what the current pass reads (in, then a spilled file) and
	// level the level its spilled rows are partitioned at; parts holds
	// them, tasks the files still to read (the last first).
	src     Operator
	level   int
	started bool
	parts   *spillParts
	tasks   []spillTask
	// spills counts the passes that spilled.
	spills int
}

func newDistinct(c *Ctx, in Operator, cols []plan.Column) *distinctOp {
	d := &distinctOp{c: c, in: in, src: in, seen: map[string]struct{}{}, mem: c.account("DISTINCT")}
	for _, col := range cols {
		if col.T.Kind == types.KindNumeric {
			d.canonical = true
		}
	}
	return d
}

// key sets d.buf to the hash key of r.
func (d *distinctOp) key(r Row) []byte {
	d.buf = d.buf[:0]
	for _, v := range r {
		d.buf = types.HashKey(d.buf, v)
	}
	return d.buf
}

// keep charges n bytes for a row of a new key; false (no error) when the
// row spilled instead.
func (d *distinctOp) keep(r Row, key []byte, n int64) (bool, error) {
	if d.parts != nil {
		return false, d.parts.add(key, r)
	}
	err := d.mem.grow(n)
	if err == nil {
		return true, nil
	}
	if !d.c.canSpill() || !isOutOfMemory(err) {
		return false, err
	}
	if d.parts, err = newSpillParts(d.c, "DISTINCT", "distinct-*.part", d.level, len(r)); err != nil {
		return false, err
	}
	d.spills++
	return false, d.parts.add(key, r)
}

// nextPass ends the current pass and starts reading the next spilled
// file; false when none is left.
func (d *distinctOp) nextPass() (bool, error) {
	if d.src != d.in {
		d.src.Close()
	}
	d.src = &sliceOp{}
	if d.parts != nil {
		err := d.parts.finish()
		if err == nil {
			d.tasks = d.parts.takeTasks(d.tasks)
		}
		d.parts.close()
		d.parts = nil
		if err != nil {
			return false, err
		}
	}
	if len(d.tasks) == 0 {
		return false, nil
	}
	t := d.tasks[len(d.tasks)-1]
	d.tasks = d.tasks[:len(d.tasks)-1]
	// The rows kept so far are their consumers': the file gets the whole
	// account.
	d.mem.release()
	d.seen = map[string]struct{}{}
	d.src, d.level = &spillFileOp{c: d.c, f: t.f}, t.level+1
	return true, nil
}

func (d *distinctOp) nextCanonical() ([]Row, error) {
	for {
		if d.out != nil {
			if b, err := d.out.Next(); b != nil || err != nil {
				return b, err
			}
			d.out = nil
			if more, err := d.nextPass(); err != nil || !more {
				return nil, err
			}
		}
		byKey := map[string]Row{}
		var order []string
		for {
			b, err := d.src.Next()
			if err != nil {
				return nil, err
			}
			if b == nil {
				break
			}
			for _, r := range b {
				key := d.key(r)
				prev, ok := byKey[string(key)]
				if !ok {
					kept, err := d.keep(r, key, rowBytes(r)+2*int64(len(key))+mapEntryOverhead+16)
					if err != nil {
						return nil, err
					}
					if kept {
						byKey[string(key)] = r
						order = append(order, string(key))
					}
					continue
				}
				for i := range r {
					if types.Preferred(prev[i], r[i]) {
						byKey[string(key)] = r
						break
					}
				}
			}
			if err := d.c.Context.Err(); err != nil {
				return nil, err
			}
		}
		rows := make([]Row, len(order))
		for i, k := range order {
			rows[i] = byKey[k]
		}
		d.out = &sliceOp{rows: rows}
	}
}

func (d *distinctOp) Next() ([]Row, error) {
	if d.canonical {
		return d.nextCanonical()
	}
	for {
		b, err := d.src.Next()
		if err != nil {
			return nil, err
		}
		if b == nil {
			if more, err := d.nextPass(); err != nil || !more {
				return nil, err
			}
			continue
		}
		out := b[:0]
		for _, r := range b {
			key := d.key(r)
			if _, ok := d.seen[string(key)]; ok {
				continue
			}
			kept, err := d.keep(r, key, int64(len(key))+mapEntryOverhead)
			if err != nil {
				return nil, err
			}
			if kept {
				d.seen[string(key)] = struct{}{}
				out = append(out, r)
			}
		}
		if len(out) > 0 {
			return out, nil
		}
		if err := d.c.Context.Err(); err != nil {
			return nil, err
		}
	}
}

func (d *distinctOp) Close() {
	d.in.Close()
	if d.src != d.in {
		d.src.Close()
	}
	d.parts.close()
	closeTasks(d.tasks)
	d.tasks = nil
	d.mem.release()
}
