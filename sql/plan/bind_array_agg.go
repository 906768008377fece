package plan

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/types"
)

// bindAggOrder binds an aggregate's ORDER BY (array_agg(x ORDER BY y)).
// An order-dependent aggregate with DISTINCT and no ORDER BY takes its
// values sorted by its arguments, as PostgreSQL's sort-based DISTINCT
// hands them over; with DISTINCT, ORDER BY may only name arguments.
func (b *Binder) bindAggOrder(fc *pg_query.FuncCall, f *funcs.Func, call *AggCall, inner *exprCtx) error {
	for _, o := range fc.AggOrder {
		sb := o.GetSortBy()
		if len(sb.UseOp) > 0 {
			return b.errAt(sb.Location, pgerror.FeatureNotSupported, "ORDER BY … USING is not supported")
		}
		e, err := b.bindExpr(sb.Node, inner)
		if err != nil {
			return err
		}
		if isUnknown(e.Type()) {
			e, _ = b.coerce(e, types.Text, false, -1)
		}
		k := SortKey{E: e, Desc: sb.SortbyDir == pg_query.SortByDir_SORTBY_DESC}
		k.NullsFirst = k.Desc
		switch sb.SortbyNulls {
		case pg_query.SortByNulls_SORTBY_NULLS_FIRST:
			k.NullsFirst = true
		case pg_query.SortByNulls_SORTBY_NULLS_LAST:
			k.NullsFirst = false
		}
		if call.Distinct {
			found := false
			for _, a := range call.Args {
				found = found || sameExpr(a, e)
			}
			if !found {
				return b.errAt(nodeLocation(sb.Node), pgerror.InvalidColumnReference, "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list")
			}
		}
		call.Order = append(call.Order, k)
	}
	if len(call.Order) == 0 && call.Distinct && f.Agg.Ordered {
		for _, a := range call.Args {
			call.Order = append(call.Order, SortKey{E: a})
		}
	}
	return nil
}

// withinGroupKeys binds the WITHIN GROUP (ORDER BY …) of an ordered-set
// aggregate.
func (b *Binder) withinGroupKeys(fc *pg_query.FuncCall, inner *exprCtx) ([]SortKey, error) {
	var keys []SortKey
	for _, o := range fc.AggOrder {
		sb := o.GetSortBy()
		if len(sb.UseOp) > 0 {
			return nil, b.errAt(sb.Location, pgerror.FeatureNotSupported, "ORDER BY … USING is not supported")
		}
		e, err := b.bindExpr(sb.Node, inner)
		if err != nil {
			return nil, err
		}
		if isUnknown(e.Type()) {
			e, _ = b.coerce(e, types.Text, false, -1)
		}
		k := SortKey{E: e, Desc: sb.SortbyDir == pg_query.SortByDir_SORTBY_DESC}
		k.NullsFirst = k.Desc
		switch sb.SortbyNulls {
		case pg_query.SortByNulls_SORTBY_NULLS_FIRST:
			k.NullsFirst = true
		case pg_query.SortByNulls_SORTBY_NULLS_LAST:
			k.NullsFirst = false
		}
		keys = append(keys, k)
	}
	return keys, nil
}
