package plan

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/types"
)

// DefaultText binds a column's DEFAULT expression n for a column of type
// t (its errors are the binder's) and returns the text the catalog keeps,
// which pg_get_expr and information_schema.columns show. As in
// PostgreSQL, a constant is kept as the value it stands for, printed the
// way PostgreSQL prints a stored constant: DEFAULT '0' on an integer
// column is 0, DEFAULT 'active' on a text column is 'active'::text, a
// timestamp literal is its canonical output ('2024-01-01 00:00:00+00'::
// timestamp with time zone); the implicit cast to the column's type is
// not shown. DEFAULT NULL keeps no default at all. Any other expression
// is kept as written (deparsed).
func (b *Binder) DefaultText(n *pg_query.Node, t types.T) (string, error) {
	coerced, err := b.BindDefault(n, t)
	if err != nil {
		return "", err
	}
	// The literal's own type: the constant before the cast to the column's
	// type, unless it was an untyped string, which takes the column's.
	var c *Const
	if raw, err := (&Binder{Cat: b.Cat, SearchPath: b.SearchPath, Stmt: b.Stmt, Env: b.Env}).bindExpr(n, &exprCtx{clause: "DEFAULT expressions"}); err == nil {
		if rc, ok := raw.(*Const); ok && rc.T.Kind != types.KindUnknown && rc.T.Kind != types.KindNull {
			c = rc
		}
	}
	if c == nil {
		if cc, ok := coerced.(*Const); ok {
			c = cc
		}
	}
	if c == nil {
		return parse.DeparseExpr(n)
	}
	if c.D.IsNull() {
		return "", nil
	}
	return storedConstText(c.D, c.T, b.Env), nil
}

// storedConstText prints a constant as PostgreSQL's deparser prints a
// stored one: a non-negative integer or decimal number bare (a decimal
// without a fraction labelled ::numeric), a boolean as true or false, and
// any other value as a quoted literal labelled with its type.
func storedConstText(d types.Datum, t types.T, env *types.Env) string {
	out := string(types.AppendText(nil, d, env))
	switch t.Kind {
	case types.KindBool:
		if d.I != 0 {
			return "true"
		}
		return "false"
	case types.KindInt4:
		if !strings.HasPrefix(out, "-") {
			return out
		}
	case types.KindNumeric:
		if out != "" && out[0] >= '0' && out[0] <= '9' && strings.Trim(out, "0123456789+-eE.") == "" {
			if strings.ContainsAny(out, "eE.") {
				return out
			}
			return out + "::" + typeLabel(t)
		}
	}
	return funcs.QuoteLiteral(out) + "::" + typeLabel(t)
}

// typeLabel is the type name a stored constant's cast shows: the type
// with the typmod the constant carries (none for a literal cast to the
// column's type).
func typeLabel(t types.T) string {
	return types.T{Kind: t.Kind, Elem: t.Elem, Enum: t.Enum}.String()
}
