package plan

import (
	"github.com/mvserver/mvserver/sql/types"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// rowNullTest binds ROW(a, b, …) IS [NOT] NULL as PostgreSQL defines it
// for a row: IS NULL holds when every field is null, IS NOT NULL when
// every field is not null (so a row of a null and a non-null is neither).
func (b *Binder) rowNullTest(row *pg_query.RowExpr, not bool, ec *exprCtx) (Expr, error) {
	args := make([]Expr, 0, len(row.Args))
	for _, a := range row.Args {
		e, err := b.bindExpr(a, ec)
		if err != nil {
			return nil, err
		}
		if e.Type().Kind == types.KindUnknown {
			e, _ = b.coerce(e, types.Text, false, -1)
		}
		args = append(args, &IsNull{E: e, Not: not})
	}
	switch len(args) {
	case 0:
		// ROW() IS NULL and ROW() IS NOT NULL are both true: every one
		// of no fields is null, and every one is not.
		return &Const{D: types.NewBool(true), T: types.Bool}, nil
	case 1:
		return args[0], nil
	}
	return &And{Args: args}, nil
}
