package refresh

import (
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// Fewer touched groups. An aggregate joined to another input (a
// decorrelated scalar subquery: TPC-H Q17's avg per part, Q20's sum per
// part and supplier) recomputes every group its input's change touches,
// though only the groups the other side of the join has a row for can
// change the join's result. Before the aggregate's change runs, the join
// drops the touched groups whose key no row of the other side (now or at
// the checkpoint) holds, so the recompute reads the rows of the groups
// that matter: a change of 600 lineitems touches 600 parts, of which Q17's
// brand and container keep one.

// regroup is an aggregate's change that has not run yet: the touched
// groups' key tuples, where each key is among the node's output columns,
// and how to build the change for fewer of them.
type regroup struct {
	cols   []int // output column of each group key
	tuples [][]types.Datum
	build  func(tuples [][]types.Datum) (plus, minus plan.Node)
}

// over is g as the output of n, a filter or projection over g's node
// (nil when a key column does not pass through n).
func (g *regroup) over(n plan.Node) *regroup {
	if g == nil {
		return nil
	}
	cols := g.cols
	if p, ok := n.(*plan.Project); ok {
		cols = make([]int, len(g.cols))
		for i, c := range g.cols {
			cols[i] = -1
			for k, e := range p.Exprs {
				if r, ok := e.(*plan.ColRef); ok && r.Idx == c {
					cols[i] = k
					break
				}
			}
			if cols[i] < 0 {
				return nil
			}
		}
	} else if _, ok := n.(*plan.Filter); !ok {
		return nil
	}
	return &regroup{cols: cols, tuples: g.tuples, build: func(t [][]types.Datum) (plus, minus plan.Node) {
		p, m := g.build(t)
		mk := func(i plan.Node) plan.Node {
			if i == nil {
				return nil
			}
			return rebuild(n, i)
		}
		return mk(p), mk(m)
	}}
}

// reduceGroups rebuilds r, the change of j's right side, for the touched
// groups whose join key some row of the left side holds now or held at
// the checkpoint (l: the left side's change). For an inner, left, semi or
// anti join a right change row whose key no left row has joins nothing
// in any term (delta.go); other kinds keep r as it is.
func (df *differ) reduceGroups(j *plan.Join, l, r *diffResult) error {
	g := r.regroup
	switch j.Kind {
	case plan.JoinInner, plan.JoinLeft, plan.JoinSemi, plan.JoinAnti:
	default:
		return nil
	}
	if g == nil || len(g.tuples) == 0 {
		return nil
	}
	// The join keys that are group keys, of one kind on both sides.
	var lkeys []plan.Expr
	var at []int // position in the group tuple
	for k, rk := range j.RightKeys {
		c, ok := rk.(*plan.ColRef)
		if !ok || k >= len(j.LeftKeys) || j.LeftKeys[k].Type().Kind != rk.Type().Kind || !exactKind(rk.Type().Kind) {
			continue
		}
		for i, gc := range g.cols {
			if gc == c.Idx {
				lkeys = append(lkeys, j.LeftKeys[k])
				at = append(at, i)
				break
			}
		}
	}
	if len(lkeys) == 0 {
		return nil
	}
	seen := map[string]struct{}{}
	var probe [][]types.Datum
	var buf []byte
	key := func(t []types.Datum) (string, bool) {
		buf = buf[:0]
		for _, i := range at {
			if t[i].IsNull() {
				return "", false
			}
			buf = types.HashKey(buf, t[i])
		}
		return string(buf), true
	}
	for _, t := range g.tuples {
		k, ok := key(t)
		if !ok {
			continue
		}
		if _, dup := seen[k]; !dup {
			seen[k] = struct{}{}
			p := make([]types.Datum, len(at))
			for x, i := range at {
				p[x] = t[i]
			}
			probe = append(probe, p)
		}
	}
	// The left rows with those keys, now (through their keys) and as the
	// checkpoint had them (the change's old rows).
	left := df.pushTuples(j.Left, lkeys, probe)
	if left == j.Left {
		if kj := keyJoin(j.Left, lkeys, probe); kj != nil {
			left = kj
		}
	}
	held, err := df.keyTuples(lkeys, left, l.minus)
	if err != nil {
		return err
	}
	has := map[string]struct{}{}
	for _, t := range held {
		buf = buf[:0]
		for _, d := range t {
			buf = types.HashKey(buf, d)
		}
		has[string(buf)] = struct{}{}
	}
	var keep [][]types.Datum
	for _, t := range g.tuples {
		if k, ok := key(t); ok {
			if _, in := has[k]; in {
				keep = append(keep, t)
			}
		}
	}
	if len(keep) == len(g.tuples) {
		return nil
	}
	r.plus, r.minus = g.build(keep)
	r.regroup = nil
	return nil
}
