package exec

import (
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// stmtState is what one run of a statement shares across the contexts of
// its subquery evaluations.
type stmtState struct {
	// subq holds the results of uncorrelated subqueries (run once).
	subq map[*plan.Subquery]*subResult
	// ctes holds the rows of shared WITH queries (computed once).
	ctes map[*plan.CTE][]Row
	// windowNeeds holds, per window, the output columns its parent reads
	// (window_columnar.go).
	windowNeeds map[*plan.Window][]bool
	// work holds, per WITH RECURSIVE evaluation, the rows of its previous
	// round, read by its WorkTableScan.
	work map[*plan.WorkTable][]Row
	// analyze, when set, counts each node's rows, runs and time (EXPLAIN
	// ANALYZE).
	analyze *analyzer
	// kept holds the rows an UPDATE or DELETE read (kept_rows.go).
	kept *keptRows
	// rules holds the tables' compiled constraints (constraints.go) and
	// fk the foreign-key work the statement owes (foreign_key.go).
	rules map[uint32]*tableRules
	fk    *fkWork
	// changed holds the rows a statement with data-modifying WITH queries
	// has updated or deleted (changed_rows.go); nil: not tracked.
	changed changedRows
}

// memoLimit bounds how many results of a correlated subquery are kept per
// distinct parameter values (past it, the subquery simply runs again).
const memoLimit = 4096

// subResult is an uncorrelated subquery's result.
type subResult struct {
	d    types.Datum // EXISTS and scalar
	rows []Row       // ANY and ALL
	// set holds the hash keys of rows without NULLs; hasNull says whether
	// some row has one (ANY with = only).
	set     map[string]struct{}
	hasNull bool
}

func compileOuterRef(x *plan.OuterRef, c *Ctx) (evalFn, error) {
	if x.Idx >= len(c.Outer) {
		return nil, pgerror.New(pgerror.InternalError, "outer reference %d outside of a subquery evaluation", x.Idx)
	}
	// Read when evaluated: an index nested-loop join's inner side,
	// compiled once, reads each outer row's values (rebind.go).
	idx := x.Idx
	return func(Row) (types.Datum, error) { return c.Outer[idx], nil }, nil
}

func errTooManyRows() error {
	return pgerror.New(pgerror.CardinalityViolation, "more than one row returned by a subquery used as an expression")
}

// compileSubquery compiles EXISTS, scalar, ANY and ALL subqueries (R-Q2).
func compileSubquery(x *plan.Subquery, c *Ctx) (evalFn, error) {
	params, err := compileAll(x.Params, c)
	if err != nil {
		return nil, err
	}
	left, err := compileAll(x.Left, c)
	if err != nil {
		return nil, err
	}
	evalLeft := func(row Row) ([]types.Datum, error) {
		if len(left) == 0 {
			return nil, nil
		}
		lv := make([]types.Datum, len(left))
		for i, f := range left {
			d, err := f(row)
			if err != nil {
				return nil, err
			}
			lv[i] = d
		}
		return lv, nil
	}
	if len(params) == 0 {
		// Uncorrelated: run once per statement (PostgreSQL's InitPlan),
		// on first use.
		return func(row Row) (types.Datum, error) {
			r, err := uncorrelated(c, x)
			if err != nil {
				return types.NullDatum, err
			}
			if x.Kind == plan.SubExists || x.Kind == plan.SubScalar || x.Kind == plan.SubArray {
				return r.d, nil
			}
			lv, err := evalLeft(row)
			if err != nil {
				return types.NullDatum, err
			}
			return r.quantified(x, lv), nil
		}, nil
	}
	var memo map[string]types.Datum
	if !x.Volatile {
		memo = map[string]types.Datum{}
	}
	var key []byte
	return func(row Row) (types.Datum, error) {
		vals := make([]types.Datum, len(params))
		for i, f := range params {
			d, err := f(row)
			if err != nil {
				return types.NullDatum, err
			}
			vals[i] = d
		}
		lv, err := evalLeft(row)
		if err != nil {
			return types.NullDatum, err
		}
		if memo != nil {
			key = key[:0]
			for _, d := range vals {
				key = types.HashKey(key, d)
			}
			for _, d := range lv {
				key = types.HashKey(key, d)
			}
			if d, ok := memo[string(key)]; ok {
				return d, nil
			}
		}
		sub := c.child(vals)
		op, err := Build(sub, x.Plan)
		if err != nil {
			return types.NullDatum, err
		}
		d, err := runSubquery(sub, x, op, lv)
		if err != nil {
			return types.NullDatum, err
		}
		if memo != nil && len(memo) < memoLimit {
			// A kept result (an ARRAY subquery's array) stays for the
			// statement, as the memo does.
			if n := datumExtra(d); n > 0 {
				if err := c.Mem.Charge("ARRAY subquery", n+int64(len(key))+mapEntryOverhead); err != nil {
					return types.NullDatum, err
				}
			}
			memo[string(key)] = d
		}
		return d, nil
	}, nil
}

// uncorrelated returns the statement's result of x, computing it once.
func uncorrelated(c *Ctx, x *plan.Subquery) (*subResult, error) {
	st := c.state()
	if r, ok := st.subq[x]; ok {
		return r, nil
	}
	op, err := Build(c.child(nil), x.Plan)
	if err != nil {
		return nil, err
	}
	r := &subResult{}
	switch x.Kind {
	case plan.SubExists, plan.SubScalar, plan.SubArray:
		if r.d, err = runSubquery(c, x, op, nil); err != nil {
			return nil, err
		}
		// The result stays for the statement.
		if err := c.Mem.Charge("ARRAY subquery", datumExtra(r.d)); err != nil {
			return nil, err
		}
	default:
		// The rows stay for the statement: the charge is not given back.
		acct := c.account("subquery")
		err = Drain(op, func(b []Row) error {
			if err := acct.grow(rowsBytes(b)); err != nil {
				return err
			}
			r.rows = append(r.rows, b...)
			return c.Context.Err()
		})
		if err != nil {
			return nil, err
		}
		if x.Kind == plan.SubAny && x.Op == plan.OpEq {
			r.set = make(map[string]struct{}, len(r.rows))
			var k []byte
			for _, row := range r.rows {
				k = k[:0]
				null := false
				for _, d := range row {
					null = null || d.IsNull()
					k = types.HashKey(k, d)
				}
				if null {
					r.hasNull = true
					continue
				}
				r.set[string(k)] = struct{}{}
			}
		}
	}
	if st.subq == nil {
		st.subq = map[*plan.Subquery]*subResult{}
	}
	st.subq[x] = r
	return r, nil
}

// quantified evaluates ANY/ALL against materialized rows.
func (r *subResult) quantified(x *plan.Subquery, lv []types.Datum) types.Datum {
	if r.set != nil && len(r.rows) > 0 {
		null := false
		var k []byte
		for _, d := range lv {
			null = null || d.IsNull()
			k = types.HashKey(k, d)
		}
		if !null {
			if _, ok := r.set[string(k)]; ok {
				return types.NewBool(true)
			}
			if !r.hasNull {
				return types.NewBool(false)
			}
		}
		// NULLs involved: the exact three-valued answer needs every row.
	}
	q := quant{all: x.Kind == plan.SubAll}
	for _, row := range r.rows {
		if q.add(compareRow(x.Op, lv, row)) {
			break
		}
	}
	return q.result()
}

// runSubquery runs op to the point its result is known and closes it.
func runSubquery(c *Ctx, x *plan.Subquery, op Operator, lv []types.Datum) (types.Datum, error) {
	defer op.Close()
	switch x.Kind {
	case plan.SubExists:
		for {
			b, err := op.Next()
			if err != nil {
				return types.NullDatum, err
			}
			if b == nil {
				return types.NewBool(false), nil
			}
			if len(b) > 0 {
				return types.NewBool(true), nil
			}
		}
	case plan.SubArray:
		// The array is charged as it grows, and given back once built:
		// who keeps it counts it (funcs.Reserve's rule).
		acct := c.account("ARRAY subquery")
		defer acct.release()
		elems := []types.Datum{}
		for {
			b, err := op.Next()
			if err != nil {
				return types.NullDatum, err
			}
			if b == nil {
				return types.NewArray(types.KindArray, elems), nil
			}
			if len(elems)+len(b) > cap(elems) {
				// Grown by doubling, charged before it is allocated: both
				// arrays while it is copied, the growth after.
				n := max(2*cap(elems), len(elems)+len(b))
				if err := acct.grow(int64(n) * datumBytes); err != nil {
					return types.NullDatum, err
				}
				acct.shrink(int64(cap(elems)) * datumBytes)
				elems = types.WithCap(elems, n)
			}
			var size int64
			for _, row := range b {
				elems = append(elems, row[0])
				if row[0].S != "" || row[0].A != nil || row[0].D != nil {
					size += datumExtra(row[0])
				}
			}
			if err := acct.grow(size); err != nil {
				return types.NullDatum, err
			}
		}
	case plan.SubScalar:
		var out types.Datum
		n := 0
		for {
			b, err := op.Next()
			if err != nil {
				return types.NullDatum, err
			}
			if b == nil {
				return out, nil
			}
			n += len(b)
			if n > 1 {
				return types.NullDatum, errTooManyRows()
			}
			if len(b) == 1 {
				out = b[0][0]
			}
		}
	}
	q := quant{all: x.Kind == plan.SubAll}
	for {
		b, err := op.Next()
		if err != nil {
			return types.NullDatum, err
		}
		if b == nil {
			return q.result(), nil
		}
		for _, row := range b {
			if q.add(compareRow(x.Op, lv, row)) {
				return q.result(), nil
			}
		}
	}
}

// Three-valued truth values.
const (
	tvFalse int8 = iota
	tvTrue
	tvNull
)

// compareRow compares the left operands with a subquery row: one column
// with op; several (row comparison) with = (all equal) or <> (any differs).
func compareRow(op plan.Op, lv []types.Datum, row Row) int8 {
	test := cmpTest(op)
	if len(lv) == 1 {
		if lv[0].IsNull() || row[0].IsNull() {
			return tvNull
		}
		if test(types.Compare(lv[0], row[0])) {
			return tvTrue
		}
		return tvFalse
	}
	// = : false if a pair differs, else NULL if a pair is unknown.
	// <>: true if a pair differs, else NULL if a pair is unknown.
	sawNull := false
	for i, l := range lv {
		if l.IsNull() || row[i].IsNull() {
			sawNull = true
			continue
		}
		if types.Compare(l, row[i]) != 0 {
			if op == plan.OpEq {
				return tvFalse
			}
			return tvTrue
		}
	}
	if sawNull {
		return tvNull
	}
	if op == plan.OpEq {
		return tvTrue
	}
	return tvFalse
}

// quant folds comparison results into ANY (OR) or ALL (AND).
type quant struct {
	all     bool
	sawNull bool
	decided bool
}

// add folds one result; it reports whether the answer is now known.
func (q *quant) add(v int8) bool {
	switch {
	case v == tvNull:
		q.sawNull = true
	case q.all && v == tvFalse, !q.all && v == tvTrue:
		q.decided = true
	}
	return q.decided
}

func (q *quant) result() types.Datum {
	switch {
	case q.decided:
		return types.NewBool(!q.all)
	case q.sawNull:
		return types.NullDatum
	}
	return types.NewBool(q.all)
}
