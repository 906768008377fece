package plan

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// BindPredicateOver binds a boolean expression over a row with the given
// columns (referenced by name): a materialized view's expectations are
// checked on its output rows this way (R-M2). Aggregates and subqueries are
// not allowed; only deterministic functions are.
func (b *Binder) BindPredicateOver(cols []Column, n *pg_query.Node, what string) (Expr, error) {
	sc := b.newScope()
	for _, c := range cols {
		sc.cols = append(sc.cols, scopeCol{name: c.Name, t: c.T, scanIdx: -1})
	}
	before := b.volatile
	e, err := b.bindExpr(n, &exprCtx{sc: sc, clause: what})
	if err != nil {
		return nil, err
	}
	if b.volatile > before {
		return nil, b.errAt(nodeLocation(n), pgerror.InvalidObjectDefinition, "%s may use only deterministic functions", what)
	}
	if e.Type().Kind != types.KindBool {
		return b.boolArg(e, nodeLocation(n), what)
	}
	return e, nil
}
