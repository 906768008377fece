package refresh

import (
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// Restricting a plan to touched keys. Several change terms read a whole
// input only to keep the rows of a few keys: the other side of a semi or
// anti join (A ⋉ R_new, A ▷ R_old: delta.go's antiSemi), the groups an
// aggregate recomputes. keyRestriction pushes "key ∈ these values" down
// the plan — through filters, projections, aggregates whose groups hold
// the key, joins (to the side that has the key, and across the join's
// equality keys to the other side), UNION ALL — to the scans, which
// narrowScan turns into reads of those values through the primary key or
// an index. So the work follows the touched keys' rows, not the inputs.
//
// Each pushed condition only narrows (the rows it keeps are a superset of
// those whose keys are in the set), so any subset of them may be pushed:
// the KeyIn left on top checks every row against the exact key set.

// keyCond is one pushed condition: the value of e (over the node's
// columns) is one of vals (distinct, none NULL, of e's kind).
type keyCond struct {
	e    plan.Expr
	vals []types.Datum
}

// restrictKeys returns the rows of n whose keys are in set; tuples are
// the set's distinct key tuples (nil when not known, or one holds a NULL:
// then nothing is pushed down).
func (df *differ) restrictKeys(n plan.Node, keys []plan.Expr, set map[string]struct{}, tuples [][]types.Datum) plan.Node {
	k := &plan.KeyIn{Input: n, Keys: keys, Set: set}
	if conds := keyConds(keys, tuples); len(conds) > 0 {
		k.Input = df.pushKeys(n, conds)
	}
	return k
}

// keyConds is one condition per key column of tuples, for the keys whose
// values are all of the key's kind.
func keyConds(keys []plan.Expr, tuples [][]types.Datum) []keyCond {
	if len(tuples) == 0 {
		return nil
	}
	var conds []keyCond
	for i, e := range keys {
		kind := e.Type().Kind
		seen := map[string]struct{}{}
		var vals []types.Datum
		var hk []byte
		ok := true
		for _, t := range tuples {
			d := t[i]
			if d.IsNull() || d.K != kind {
				ok = false
				break
			}
			hk = types.HashKey(hk[:0], d)
			if _, dup := seen[string(hk)]; dup {
				continue
			}
			seen[string(hk)] = struct{}{}
			vals = append(vals, d)
		}
		if ok {
			conds = append(conds, keyCond{e: e, vals: vals})
		}
	}
	return conds
}

// exactKind: values of these kinds are equal exactly when their key
// encodings are, so a value set read through a key is the set compared.
func exactKind(k types.Kind) bool {
	switch k {
	case types.KindInt2, types.KindInt4, types.KindInt8, types.KindDate, types.KindText, types.KindVarchar:
		return true
	}
	return false
}

// colConds keeps the conditions on columns (ColRef), mapped by f to the
// expression they become below a node (nil: dropped).
func colConds(conds []keyCond, f func(idx int) plan.Expr) []keyCond {
	var out []keyCond
	for _, c := range conds {
		ref, ok := c.e.(*plan.ColRef)
		if !ok {
			continue
		}
		e := f(ref.Idx)
		if e == nil {
			continue
		}
		if r, ok := e.(*plan.ColRef); !ok || !exactKind(r.T.Kind) || r.T.Kind != ref.T.Kind {
			continue
		}
		out = append(out, keyCond{e: e, vals: c.vals})
	}
	return out
}

// pushKeys returns n narrowed by conds where they reach a scan that can
// read their values through a key; n itself where nothing narrows.
func (df *differ) pushKeys(n plan.Node, conds []keyCond) plan.Node {
	if len(conds) == 0 {
		return n
	}
	switch x := n.(type) {
	case *plan.Scan:
		for _, c := range conds {
			if ref, ok := c.e.(*plan.ColRef); ok {
				if s := df.narrowScan(x, ref, c.vals); s != nil {
					return s
				}
			}
		}
	case *plan.Filter, *plan.Sort, *plan.Distinct:
		in := plan.NodeInputs(x)[0]
		if pushed := df.pushKeys(in, conds); pushed != in {
			return rebuild(x, pushed)
		}
	case *plan.Project:
		below := colConds(conds, func(i int) plan.Expr {
			if i < len(x.Exprs) {
				return x.Exprs[i]
			}
			return nil
		})
		if in := df.pushKeys(x.Input, below); in != x.Input {
			return rebuild(x, in)
		}
	case *plan.Aggregate:
		below := colConds(conds, func(i int) plan.Expr {
			if i < len(x.GroupBy) {
				return x.GroupBy[i]
			}
			return nil
		})
		if in := df.pushKeys(x.Input, below); in != x.Input {
			return rebuild(x, in)
		}
	case *plan.SetOp:
		for i, c := range x.Cols {
			if x.Left.Columns()[i].T.Kind != c.T.Kind || x.Right.Columns()[i].T.Kind != c.T.Kind {
				return n
			}
		}
		l, r := df.pushKeys(x.Left, conds), df.pushKeys(x.Right, conds)
		if l != x.Left || r != x.Right {
			return rebuild(x, l, r)
		}
	case *plan.Join:
		return df.pushKeysJoin(x, conds)
	}
	return n
}

// pushKeysJoin pushes conditions into the side of j whose column they
// test and, through an equality key of j, into the other side: a row of
// the result whose key is in the set comes from rows of that side with
// the key in the set, and joins only rows of the other side with the same
// key value. The padded side of an outer join is left whole.
func (df *differ) pushKeysJoin(j *plan.Join, conds []keyCond) plan.Node {
	nl := len(j.Left.Columns())
	var left, right []keyCond
	// (a null-aware anti join keeps or drops a left row by the whole
	// right side: its left rows may be restricted, its right side not)
	leftOK := j.Kind == plan.JoinInner || j.Kind == plan.JoinCross || j.Kind == plan.JoinLeft || j.Kind == plan.JoinSemi || j.Kind == plan.JoinAnti || j.Kind == plan.JoinAntiNullAware
	rightOK := j.Kind == plan.JoinInner || j.Kind == plan.JoinCross || j.Kind == plan.JoinRight
	across := func(from, to []plan.Expr, idx int) plan.Expr {
		for k, f := range from {
			if r, ok := f.(*plan.ColRef); ok && r.Idx == idx && k < len(to) {
				return to[k]
			}
		}
		return nil
	}
	if leftOK {
		left = append(left, colConds(conds, func(i int) plan.Expr {
			if i < nl {
				return &plan.ColRef{Idx: i, T: j.Left.Columns()[i].T}
			}
			return nil
		})...)
		if j.Kind != plan.JoinCross && j.Kind != plan.JoinAntiNullAware {
			right = append(right, colConds(conds, func(i int) plan.Expr {
				if i < nl {
					return across(j.LeftKeys, j.RightKeys, i)
				}
				return nil
			})...)
		}
	}
	if rightOK && !j.Kind.LeftOnly() {
		right = append(right, colConds(conds, func(i int) plan.Expr {
			if i >= nl {
				return &plan.ColRef{Idx: i - nl, T: j.Right.Columns()[i-nl].T}
			}
			return nil
		})...)
		if j.Kind != plan.JoinCross {
			left = append(left, colConds(conds, func(i int) plan.Expr {
				if i >= nl {
					return across(j.RightKeys, j.LeftKeys, i-nl)
				}
				return nil
			})...)
		}
	}
	l, r := df.pushKeys(j.Left, left), df.pushKeys(j.Right, right)
	if l == j.Left && r == j.Right {
		return j
	}
	return rebuild(j, l, r)
}

// keyTuples is the distinct tuples of keys over the rows of nodes; a row
// with a NULL key is left out (it joins no row).
func (df *differ) keyTuples(keys []plan.Expr, nodes ...plan.Node) ([][]types.Datum, error) {
	var out [][]types.Datum
	if len(keys) == 0 {
		return nil, nil
	}
	seen := map[string]struct{}{}
	var buf []byte
	for _, n := range nodes {
		if n == nil {
			continue
		}
		op, err := df.build(&plan.Project{Input: n, Exprs: keys, Cols: make([]plan.Column, len(keys))})
		if err != nil {
			return nil, err
		}
		err = exec.Drain(op, func(rows []exec.Row) error {
		next:
			for _, r := range rows {
				buf = buf[:0]
				for _, d := range r {
					if d.IsNull() {
						continue next
					}
					buf = types.HashKey(buf, d)
				}
				if _, ok := seen[string(buf)]; ok {
					continue
				}
				seen[string(buf)] = struct{}{}
				out = append(out, append([]types.Datum(nil), r...))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pushTuples narrows n, a side of a join, to the rows whose keys can equal
// one of tuples (the other side's key values, NULL-free): none when there
// are no tuples; n itself when keys is empty or nothing narrows.
func (df *differ) pushTuples(n plan.Node, keys []plan.Expr, tuples [][]types.Datum) plan.Node {
	if len(keys) == 0 {
		return n
	}
	if len(tuples) == 0 {
		return &plan.Given{Cols: n.Columns()}
	}
	return df.pushKeys(n, keyConds(keys, tuples))
}

// pushJoinKeys is pushTuples of n on keys with the values of from over
// the rows of nodes (the other side of the join).
func (df *differ) pushJoinKeys(n plan.Node, keys, from []plan.Expr, nodes ...plan.Node) (plan.Node, error) {
	if len(keys) == 0 {
		return n, nil
	}
	tuples, err := df.keyTuples(from, nodes...)
	if err != nil {
		return nil, err
	}
	return df.pushTuples(n, keys, tuples), nil
}
