package plan

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// TABLESAMPLE (R-Q2): `FROM t TABLESAMPLE BERNOULLI (p)` or `SYSTEM (p)`
// reads each row of the table, materialized view or catalog table with
// probability p/100,
// independently, as a filter `random() * 100 < p` right above its scan.
// PostgreSQL's SYSTEM samples whole pages; mvserver has no pages to pick,
// so SYSTEM samples rows as BERNOULLI does: the same expected size, a
// sample that is less clustered. The percentage reads no column of the
// query (it is bound in an empty scope, as in PostgreSQL) and, when it is
// a constant, must lie in [0, 100] (2202H).
// REPEATABLE (a sample that repeats while the table is unchanged) is not
// built: 0A000.

// invalidTablesampleArgument is PostgreSQL's SQLSTATE for a bad
// TABLESAMPLE argument (out of range, NULL, or too many).
const invalidTablesampleArgument = "2202H"

func (b *Binder) bindTableSample(ts *pg_query.RangeTableSample, lat *scope) (Node, *scope, error) {
	method := ""
	for _, m := range ts.Method {
		if s := m.GetString_(); s != nil {
			method = strings.ToLower(s.Sval) // the last part of a qualified name
		}
	}
	if method != "bernoulli" && method != "system" {
		return nil, nil, b.errAt(ts.Location, pgerror.UndefinedObject, "tablesample method %s does not exist", method)
	}
	if len(ts.Args) != 1 {
		return nil, nil, b.errAt(ts.Location, invalidTablesampleArgument, "tablesample method %s requires 1 argument, not %d", method, len(ts.Args))
	}
	if ts.Repeatable != nil {
		return nil, nil, b.errAt(nodeLocation(ts.Repeatable), pgerror.FeatureNotSupported,
			"TABLESAMPLE … REPEATABLE is not supported yet: mvserver draws a new sample on every scan")
	}
	rv := ts.Relation.GetRangeVar()
	if rv == nil {
		return nil, nil, b.errAt(ts.Location, pgerror.FeatureNotSupported, "TABLESAMPLE clause can only be applied to tables and materialized views")
	}
	notTable := b.errAt(rv.Location, pgerror.FeatureNotSupported, "TABLESAMPLE clause can only be applied to tables and materialized views")
	if rv.Schemaname == "" && rv.Catalogname == "" && b.ctes.lookup(rv.Relname) != nil {
		return nil, nil, notTable
	}
	if sr := b.systemRelation(rv); sr != nil {
		if sr.Noun != "table" { // a catalog view (pg_tables, information_schema)
			return nil, nil, notTable
		}
	} else {
		t, err := b.resolveTable(rv)
		if err != nil {
			return nil, nil, err
		}
		if t.Kind != catalog.KindTable && t.Kind != catalog.KindMaterializedView {
			return nil, nil, notTable
		}
	}
	node, sc, err := b.bindFrom(ts.Relation, lat)
	if err != nil {
		return nil, nil, err
	}
	pct, err := b.bindExpr(ts.Args[0], &exprCtx{sc: &scope{}, clause: "TABLESAMPLE"})
	if err != nil {
		return nil, nil, err
	}
	if pct, err = b.coerce(pct, types.Float8, false, nodeLocation(ts.Args[0])); err != nil {
		return nil, nil, err
	}
	if c, ok := foldExpr(pct).(*Const); ok {
		if c.D.IsNull() {
			return nil, nil, b.errAt(nodeLocation(ts.Args[0]), invalidTablesampleArgument, "TABLESAMPLE parameter cannot be null")
		}
		if p := c.D.F; !(p >= 0 && p <= 100) {
			return nil, nil, b.errAt(nodeLocation(ts.Args[0]), invalidTablesampleArgument, "sample percentage must be between 0 and 100")
		}
	}
	// random() * 100 < percentage, bound as the WHERE condition it is.
	op := func(name string, l, r *pg_query.Node) *pg_query.Node {
		return pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode(name)}, l, r, -1)
	}
	draw := pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("random")}, nil, -1)
	cast := &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{Arg: ts.Args[0],
		TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("float8")}, Location: -1}, Location: -1}}}
	cond, err := b.bindExpr(op("<", op("*", draw, pg_query.MakeAConstIntNode(100, -1)), cast), &exprCtx{sc: sc, clause: "TABLESAMPLE"})
	if err != nil {
		return nil, nil, err
	}
	return &Filter{Input: node, Cond: cond}, sc, nil
}
