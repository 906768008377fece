package exec

import (
	"sort"

	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/types"
)

// Aggregates with an ORDER BY (array_agg(x ORDER BY y), and an
// order-dependent aggregate with DISTINCT, which the binder orders by its
// arguments): a group keeps its calls' values with their sort keys, then
// sorts them (stably: ties keep their input order) and adds them to the
// state, skipping repeats under DISTINCT. Repeats are compared as IS NOT
// DISTINCT FROM, so DISTINCT keeps one NULL (array_agg(DISTINCT x) has a
// NULL element when some x is NULL, as in PostgreSQL).

// sortedArgs is one row's arguments and sort keys for an ordered call.
type sortedArgs struct {
	args, keys []types.Datum
}

// keep evaluates call i's sort keys on row r and copies its arguments.
func (a *aggregateOp) keep(r Row, i int, args []types.Datum) (sortedArgs, error) {
	s := sortedArgs{args: append([]types.Datum(nil), args...), keys: make([]types.Datum, len(a.orders[i]))}
	for j, f := range a.orders[i] {
		d, err := f(r)
		if err != nil {
			return s, err
		}
		s.keys[j] = d
	}
	return s, nil
}

// addSorted sorts the kept values of call i and adds them to st.
func (a *aggregateOp) addSorted(vals []sortedArgs, i int, st funcs.AggState) error {
	keys := a.node.Aggs[i].Order
	sort.SliceStable(vals, func(x, y int) bool { return compareKeys(keys, vals[x].keys, vals[y].keys) < 0 })
	var seen map[string]struct{}
	if a.node.Aggs[i].Distinct {
		seen = map[string]struct{}{}
	}
	var k []byte
	for _, v := range vals {
		if seen != nil {
			k = k[:0]
			for _, d := range v.args {
				k = types.HashKey(k, d)
			}
			if _, dup := seen[string(k)]; dup {
				continue
			}
			seen[string(k)] = struct{}{}
		}
		if err := st.Add(a.fctx, v.args); err != nil {
			return err
		}
	}
	return nil
}
