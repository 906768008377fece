package plan

import (
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/types"
)

// exprCtx is where an expression is bound: its scope and whether
// aggregates may appear (and where they are collected).
type exprCtx struct {
	sc     *scope
	aggs   *aggCollector
	clause string // for "aggregate functions are not allowed in …"
	// wins collects window calls where they are allowed (nil elsewhere).
	wins *winCollector
	// aliases are the output columns a QUALIFY condition may name
	// (a nil entry: an ambiguous name).
	aliases map[string]Expr
	// srfs collects set-returning calls where they are allowed (a select
	// list; nil elsewhere).
	srfs *srfCollector
}

type aggCollector struct {
	calls []AggCall
	inAgg bool
}

// nodeLocation returns a node's location for error positions (-1 if none).
func nodeLocation(n *pg_query.Node) int32 {
	if n == nil {
		return -1
	}
	switch x := n.Node.(type) {
	case *pg_query.Node_ColumnRef:
		return x.ColumnRef.Location
	case *pg_query.Node_AConst:
		return x.AConst.Location
	case *pg_query.Node_AExpr:
		return x.AExpr.Location
	case *pg_query.Node_FuncCall:
		return x.FuncCall.Location
	case *pg_query.Node_TypeCast:
		return x.TypeCast.Location
	case *pg_query.Node_ParamRef:
		return x.ParamRef.Location
	case *pg_query.Node_BoolExpr:
		return x.BoolExpr.Location
	case *pg_query.Node_NullTest:
		return x.NullTest.Location
	case *pg_query.Node_CaseExpr:
		return x.CaseExpr.Location
	case *pg_query.Node_CoalesceExpr:
		return x.CoalesceExpr.Location
	case *pg_query.Node_ResTarget:
		return x.ResTarget.Location
	case *pg_query.Node_RangeVar:
		return x.RangeVar.Location
	case *pg_query.Node_SqlvalueFunction:
		return x.SqlvalueFunction.Location
	case *pg_query.Node_SubLink:
		return x.SubLink.Location
	case *pg_query.Node_MinMaxExpr:
		return x.MinMaxExpr.Location
	case *pg_query.Node_BooleanTest:
		return x.BooleanTest.Location
	case *pg_query.Node_AArrayExpr:
		return x.AArrayExpr.Location
	case *pg_query.Node_SetToDefault:
		return x.SetToDefault.Location
	case *pg_query.Node_AIndirection:
		return nodeLocation(x.AIndirection.Arg)
	}
	return -1
}

func strVal(n *pg_query.Node) string {
	if s := n.GetString_(); s != nil {
		return s.Sval
	}
	return ""
}

func (b *Binder) bindExpr(n *pg_query.Node, ec *exprCtx) (Expr, error) {
	loc := nodeLocation(n)
	switch x := n.Node.(type) {
	case *pg_query.Node_ColumnRef:
		if e, ok := b.inlinedArg(n); ok {
			return e, nil
		}
		var parts []string
		for _, f := range x.ColumnRef.Fields {
			if _, ok := f.Node.(*pg_query.Node_AStar); ok {
				return nil, b.errAt(loc, pgerror.FeatureNotSupported, "a * column reference is only allowed in a SELECT list")
			}
			parts = append(parts, strVal(f))
		}
		sc := ec.sc
		if sc == nil {
			sc = b.newScope()
		}
		if e, ok := ec.aliases[parts[0]]; ok && len(parts) == 1 && e != nil {
			// An input column of this query wins over an output alias.
			if i, err := sc.find("", parts[0], b, parts, loc); err == nil && i < 0 {
				return e, nil
			}
		}
		return b.resolveColumn(sc, x.ColumnRef, parts, loc)
	case *pg_query.Node_AConst:
		return b.bindConst(x.AConst)
	case *pg_query.Node_ParamRef:
		if e, ok := b.inlinedArg(n); ok {
			return e, nil
		}
		num := int(x.ParamRef.Number)
		if num < 1 || num > 65535 {
			return nil, b.errAt(loc, pgerror.UndefinedParameter, "there is no parameter $%d", num)
		}
		return &Param{N: num, T: b.param(num)}, nil
	case *pg_query.Node_TypeCast:
		t, err := b.typeName(x.TypeCast.TypeName)
		if err != nil {
			return nil, err
		}
		if ae := x.TypeCast.Arg.GetAArrayExpr(); ae != nil && t.Kind == types.KindArray {
			// ARRAY[…]::t[] takes its element type from the cast.
			return b.bindArrayExpr(ae, ec, &t)
		}
		arg, err := b.bindExpr(x.TypeCast.Arg, ec)
		if err != nil {
			return nil, err
		}
		if x.TypeCast.Arg.GetAConst() != nil {
			// A literal's cast is its input: PostgreSQL points its
			// errors at the literal ('x'::int), not at the ::.
			loc = nodeLocation(x.TypeCast.Arg)
		}
		return b.explicitCast(arg, t, loc)
	case *pg_query.Node_AExpr:
		return b.bindAExpr(x.AExpr, ec)
	case *pg_query.Node_BoolExpr:
		var args []Expr
		for _, a := range x.BoolExpr.Args {
			e, err := b.bindExpr(a, ec)
			if err != nil {
				return nil, err
			}
			e, err = b.boolArg(e, nodeLocation(a), boolOpName(x.BoolExpr.Boolop))
			if err != nil {
				return nil, err
			}
			args = append(args, e)
		}
		switch x.BoolExpr.Boolop {
		case pg_query.BoolExprType_AND_EXPR:
			return &And{Args: args}, nil
		case pg_query.BoolExprType_OR_EXPR:
			return &Or{Args: args}, nil
		default:
			return &Not{E: args[0]}, nil
		}
	case *pg_query.Node_NullTest:
		if row := x.NullTest.Arg.GetRowExpr(); row != nil {
			return b.rowNullTest(row, x.NullTest.Nulltesttype == pg_query.NullTestType_IS_NOT_NULL, ec)
		}
		e, err := b.bindExpr(x.NullTest.Arg, ec)
		if err != nil {
			return nil, err
		}
		if e.Type().Kind == types.KindUnknown {
			e, _ = b.coerce(e, types.Text, false, -1)
		}
		return &IsNull{E: e, Not: x.NullTest.Nulltesttype == pg_query.NullTestType_IS_NOT_NULL}, nil
	case *pg_query.Node_BooleanTest:
		e, err := b.bindExpr(x.BooleanTest.Arg, ec)
		if err != nil {
			return nil, err
		}
		if e, err = b.boolArg(e, loc, "IS TRUE"); err != nil {
			return nil, err
		}
		bt := &IsBool{E: e}
		switch x.BooleanTest.Booltesttype {
		case pg_query.BoolTestType_IS_TRUE:
			bt.Value = 1
		case pg_query.BoolTestType_IS_NOT_TRUE:
			bt.Value, bt.Not = 1, true
		case pg_query.BoolTestType_IS_FALSE:
			bt.Value = 0
		case pg_query.BoolTestType_IS_NOT_FALSE:
			bt.Value, bt.Not = 0, true
		case pg_query.BoolTestType_IS_UNKNOWN:
			bt.Value = -1
		default:
			bt.Value, bt.Not = -1, true
		}
		return bt, nil
	case *pg_query.Node_CaseExpr:
		return b.bindCase(x.CaseExpr, ec)
	case *pg_query.Node_CoalesceExpr:
		args, t, err := b.bindCommon(x.CoalesceExpr.Args, ec, "COALESCE")
		if err != nil {
			return nil, err
		}
		return &Coalesce{Args: args, T: t}, nil
	case *pg_query.Node_MinMaxExpr:
		name := "GREATEST"
		if x.MinMaxExpr.Op == pg_query.MinMaxOp_IS_LEAST {
			name = "LEAST"
		}
		args, t, err := b.bindCommon(x.MinMaxExpr.Args, ec, name)
		if err != nil {
			return nil, err
		}
		return &Greatest{Args: args, Least: name == "LEAST", T: t}, nil
	case *pg_query.Node_FuncCall:
		return b.bindFunc(x.FuncCall, ec)
	case *pg_query.Node_SqlvalueFunction:
		return b.bindSQLValueFunction(x.SqlvalueFunction)
	case *pg_query.Node_SubLink:
		return b.bindSubLink(x.SubLink, ec)
	case *pg_query.Node_AArrayExpr:
		return b.bindArrayExpr(x.AArrayExpr, ec, nil)
	case *pg_query.Node_AIndirection:
		return b.bindIndirection(x.AIndirection, ec)
	case *pg_query.Node_SetToDefault:
		return nil, b.errAt(loc, pgerror.FeatureNotSupported, "DEFAULT is not allowed in this context")
	case *pg_query.Node_CollateClause:
		return b.bindExpr(x.CollateClause.Arg, ec)
	}
	return nil, b.errAt(loc, pgerror.FeatureNotSupported, "%s is not supported yet in this position", parse.NodeWords(n.Node))
}

func boolOpName(op pg_query.BoolExprType) string {
	switch op {
	case pg_query.BoolExprType_AND_EXPR:
		return "AND"
	case pg_query.BoolExprType_OR_EXPR:
		return "OR"
	}
	return "NOT"
}

// boolArg requires a boolean (an untyped literal is read as one).
func (b *Binder) boolArg(e Expr, loc int32, ctx string) (Expr, error) {
	t := e.Type()
	if t.Kind == types.KindBool {
		return e, nil
	}
	if t.Kind == types.KindUnknown || t.Kind == types.KindNull {
		return b.coerce(e, types.Bool, false, loc)
	}
	return nil, b.errAt(loc, pgerror.DatatypeMismatch, "argument of %s must be type boolean, not type %s", ctx, t.String())
}

func (b *Binder) bindConst(c *pg_query.A_Const) (Expr, error) {
	if c.Isnull {
		return b.newConst(types.NullDatum, types.Null), nil
	}
	switch v := c.Val.(type) {
	case *pg_query.A_Const_Ival:
		return b.newConst(types.NewInt4(int64(v.Ival.Ival)), types.Int4), nil
	case *pg_query.A_Const_Fval:
		s := v.Fval.Fval
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				if i == int64(int32(i)) {
					// -2147483648 reaches here (the grammar folds the
					// sign into a literal too large for integer): it is
					// an integer, as in PostgreSQL.
					return b.newConst(types.NewInt4(i), types.Int4), nil
				}
				return b.newConst(types.NewInt8(i), types.Int8), nil
			}
		}
		d, _, err := apd.NewFromString(s)
		if err != nil {
			return nil, b.errAt(c.Location, pgerror.InvalidTextRepresentation, "invalid numeric literal \"%s\"", s)
		}
		return b.newConst(types.NewNumeric(d), types.Numeric), nil
	case *pg_query.A_Const_Sval:
		return b.newConst(types.NewString(types.KindUnknown, v.Sval.Sval), types.Unknown), nil
	case *pg_query.A_Const_Boolval:
		return b.newConst(types.NewBool(v.Boolval.Boolval), types.Bool), nil
	case *pg_query.A_Const_Bsval:
		return nil, b.errAt(c.Location, pgerror.FeatureNotSupported, "bit strings are not supported")
	}
	return b.newConst(types.NullDatum, types.Null), nil
}

// typeName resolves a TypeName node.
func (b *Binder) typeName(tn *pg_query.TypeName) (types.T, error) {
	var parts []string
	for _, n := range tn.Names {
		parts = append(parts, strVal(n))
	}
	name := parts[len(parts)-1]
	if t, ok, err := b.userType(tn, parts); ok || err != nil {
		return t, err
	}
	if len(parts) > 1 && parts[0] != "pg_catalog" && parts[0] != "public" {
		return types.T{}, b.errAt(tn.Location, pgerror.UndefinedObject, "type \"%s\" does not exist", strings.Join(parts, "."))
	}
	var mods []int32
	for _, m := range tn.Typmods {
		if c := m.GetAConst(); c != nil {
			if iv, ok := c.Val.(*pg_query.A_Const_Ival); ok {
				mods = append(mods, iv.Ival.Ival)
				continue
			}
		}
		return types.T{}, b.errAt(tn.Location, pgerror.SyntaxError, "type modifiers must be simple constants or identifiers")
	}
	switch name {
	case "timestamptz":
		if len(mods) > 0 {
			mods = nil
		}
	case "char":
		// The grammar names char, character and char(n) pg_catalog.bpchar;
		// "char" (quoted) reaches here as char: PostgreSQL's one-byte
		// internal type (pg_class.relkind), which pg_dump's queries cast to.
		if len(mods) == 0 && len(tn.ArrayBounds) == 0 {
			return types.InternalChar, nil
		}
	}
	t, ok := types.ParseTypeName(name, mods)
	if !ok {
		if len(tn.ArrayBounds) > 0 {
			name += "[]"
		}
		return types.T{}, b.errAt(tn.Location, pgerror.UndefinedObject, "type \"%s\" does not exist", name)
	}
	if len(tn.ArrayBounds) > 0 {
		// int[], int[3], int[][] and integer ARRAY are all the one array
		// type: PostgreSQL does not enforce declared dimensions.
		if t.Kind == types.KindArray || types.ArrayOID(t.Kind) == 0 {
			return types.T{}, b.errAt(tn.Location, pgerror.UndefinedObject, "type \"%s[]\" does not exist", name)
		}
		t = types.ArrayOf(t)
	}
	if t.Kind == types.KindNumeric && t.Precision > 0 {
		if t.Precision > 1000 {
			return types.T{}, b.errAt(tn.Location, pgerror.InvalidParameterValue, "NUMERIC precision %d must be between 1 and 1000", t.Precision)
		}
		if t.Scale > t.Precision || t.Scale < 0 {
			return types.T{}, b.errAt(tn.Location, pgerror.InvalidParameterValue, "NUMERIC scale %d must be between 0 and precision %d", t.Scale, t.Precision)
		}
	}
	return t, nil
}

// TypeName resolves a type written in SQL (for DDL).
func (b *Binder) TypeName(tn *pg_query.TypeName) (types.T, error) { return b.typeName(tn) }

func (b *Binder) explicitCast(e Expr, t types.T, loc int32) (Expr, error) {
	et := e.Type()
	if c, ok := e.(*Const); ok {
		if et.Kind == types.KindUnknown || et.Kind == types.KindNull {
			if c.D.IsNull() {
				return b.newConst(types.NullDatum, t), nil
			}
			// Parse as the bare type, then apply the modifiers as an explicit
			// cast does ('abcdef'::varchar(3) truncates).
			d, err := types.ParseText(c.D.S, types.T{Kind: t.Kind, Elem: t.Elem, Enum: t.Enum}, b.Env)
			if err != nil {
				return nil, withPos(err, b, loc)
			}
			d, err = types.Cast(d, t, b.Env, true)
			if err != nil {
				return nil, withPos(err, b, loc)
			}
			return b.newConst(d, t), nil
		}
	}
	if p, ok := e.(*Param); ok && et.Kind == types.KindUnknown {
		b.Params[p.N-1] = t
		return &Param{N: p.N, T: t}, nil
	}
	if !types.CanCast(et, t) {
		return nil, b.errAt(loc, pgerror.CannotCoerce, "cannot cast type %s to %s", et.String(), t.String())
	}
	if et == t {
		return e, nil
	}
	return &Cast{E: e, T: t, Explicit: true}, nil
}

func withPos(err error, b *Binder, loc int32) error {
	if pe, ok := err.(*pgerror.Error); ok && pe.Position == 0 && loc >= 0 {
		pe.Position = b.Stmt.Position(loc)
	}
	return err
}

func opName(names []*pg_query.Node) string {
	if len(names) == 0 {
		return ""
	}
	return strVal(names[len(names)-1])
}

func (b *Binder) bindAExpr(a *pg_query.A_Expr, ec *exprCtx) (Expr, error) {
	loc := a.Location
	op := opName(a.Name)
	switch a.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		if a.Lexpr == nil && op == "@" {
			// Prefix @ is absolute value: abs(x), with its overflow check.
			abs := &pg_query.FuncCall{Funcname: []*pg_query.Node{pg_query.MakeStrNode("abs")}, Args: []*pg_query.Node{a.Rexpr}, Location: loc}
			return b.bindExpr(&pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: abs}}, ec)
		}
		if a.Lexpr == nil {
			r, err := b.bindExpr(a.Rexpr, ec)
			if err != nil {
				return nil, err
			}
			switch op {
			case "-":
				if c, ok := r.(*Const); ok && !c.D.IsNull() {
					return negateConst(c, b, loc)
				}
				if !r.Type().IsNumeric() && r.Type().Kind != types.KindInterval {
					return nil, b.errAt(loc, pgerror.UndefinedFunction, "operator does not exist: - %s", r.Type().String())
				}
				return &Neg{E: r}, nil
			case "+":
				return r, nil
			}
			return nil, b.errAt(loc, pgerror.UndefinedFunction, "operator does not exist: %s %s", op, r.Type().String())
		}
		if lr, rr := a.Lexpr.GetRowExpr(), a.Rexpr.GetRowExpr(); lr != nil && rr != nil {
			return b.rowComparison(op, lr.Args, rr.Args, ec, loc)
		}
		l, err := b.bindExpr(a.Lexpr, ec)
		if err != nil {
			return nil, err
		}
		r, err := b.bindExpr(a.Rexpr, ec)
		if err != nil {
			return nil, err
		}
		return b.binaryOp(op, l, r, loc)
	case pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		l, r, err := b.bindPair(a, ec)
		if err != nil {
			return nil, err
		}
		l, r, err = b.unify(l, r, "IS DISTINCT FROM", loc)
		if err != nil {
			return nil, err
		}
		return &IsDistinct{L: l, R: r, Not: a.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT}, nil
	case pg_query.A_Expr_Kind_AEXPR_NULLIF:
		l, r, err := b.bindPair(a, ec)
		if err != nil {
			return nil, err
		}
		l, r, err = b.unify(l, r, "=", loc)
		if err != nil {
			return nil, err
		}
		return &NullIf{L: l, R: r}, nil
	case pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
		return b.bindArrayQuantified(a, ec)
	case pg_query.A_Expr_Kind_AEXPR_IN:
		if lr, list := a.Lexpr.GetRowExpr(), a.Rexpr.GetList(); lr != nil && list != nil {
			// (a, b) [NOT] IN ((1, 2), …): OR of row equalities (AND of <>).
			cmp := "="
			if op == "<>" {
				cmp = "<>"
			}
			var parts []Expr
			for _, it := range list.Items {
				rr := it.GetRowExpr()
				if rr == nil {
					return nil, b.errAt(loc, pgerror.SyntaxError, "unequal number of entries in row expressions")
				}
				e, err := b.rowComparison(cmp, lr.Args, rr.Args, ec, loc)
				if err != nil {
					return nil, err
				}
				parts = append(parts, e)
			}
			if len(parts) == 1 {
				return parts[0], nil
			}
			if cmp == "=" {
				return &Or{Args: parts}, nil
			}
			return &And{Args: parts}, nil
		}
		l, err := b.bindExpr(a.Lexpr, ec)
		if err != nil {
			return nil, err
		}
		list := a.Rexpr.GetList()
		if list == nil {
			return nil, b.errAt(loc, pgerror.FeatureNotSupported, "IN (subquery) is not supported yet")
		}
		items := []Expr{l}
		for _, it := range list.Items {
			e, err := b.bindExpr(it, ec)
			if err != nil {
				return nil, err
			}
			items = append(items, e)
		}
		t := items[0].Type()
		for _, e := range items[1:] {
			c, ok := commonType(t, e.Type())
			if !ok {
				return nil, b.errAt(loc, pgerror.DatatypeMismatch, "IN types %s and %s cannot be matched", t.String(), e.Type().String())
			}
			t = c
		}
		for i := range items {
			if items[i], err = b.coerce(items[i], t, false, loc); err != nil {
				return nil, err
			}
		}
		return &In{E: items[0], List: items[1:], Not: op == "<>"}, nil
	case pg_query.A_Expr_Kind_AEXPR_LIKE, pg_query.A_Expr_Kind_AEXPR_ILIKE, pg_query.A_Expr_Kind_AEXPR_SIMILAR:
		// SIMILAR TO arrives as ~ or !~ over similar_to_escape(pattern).
		l, r, err := b.bindPair(a, ec)
		if err != nil {
			return nil, err
		}
		return b.binaryOp(op, l, r, loc)
	case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		l, err := b.bindExpr(a.Lexpr, ec)
		if err != nil {
			return nil, err
		}
		bounds := a.Rexpr.GetList()
		lo, err := b.bindExpr(bounds.Items[0], ec)
		if err != nil {
			return nil, err
		}
		hi, err := b.bindExpr(bounds.Items[1], ec)
		if err != nil {
			return nil, err
		}
		ge, err := b.binaryOp(">=", l, lo, loc)
		if err != nil {
			return nil, err
		}
		le, err := b.binaryOp("<=", l, hi, loc)
		if err != nil {
			return nil, err
		}
		var e Expr = &And{Args: []Expr{ge, le}}
		if a.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN {
			e = &Not{E: e}
		}
		return e, nil
	}
	return nil, b.errAt(loc, pgerror.FeatureNotSupported, "operator %s is not supported yet", op)
}

func (b *Binder) bindPair(a *pg_query.A_Expr, ec *exprCtx) (Expr, Expr, error) {
	l, err := b.bindExpr(a.Lexpr, ec)
	if err != nil {
		return nil, nil, err
	}
	r, err := b.bindExpr(a.Rexpr, ec)
	if err != nil {
		return nil, nil, err
	}
	return l, r, nil
}

func negateConst(c *Const, b *Binder, loc int32) (Expr, error) {
	d := c.D
	switch d.K {
	case types.KindInt2, types.KindInt4, types.KindInt8:
		// -(-2147483648)::int is out of range, as int4um says.
		v, err := types.IntSub(d.K, 0, d.I)
		if err != nil {
			return nil, err
		}
		return &Const{D: types.NewInt(d.K, v), T: c.T}, nil
	case types.KindFloat4, types.KindFloat8:
		return &Const{D: types.NewFloat(d.K, -d.F), T: c.T}, nil
	case types.KindNumeric:
		r := new(apd.Decimal)
		r.Neg(d.D)
		return &Const{D: types.NewNumeric(r), T: c.T.Unmodified()}, nil
	case types.KindInterval:
		return &Const{D: types.NewInterval(-d.M, -d.Dd, -d.I), T: c.T}, nil
	}
	return nil, b.errAt(loc, pgerror.UndefinedFunction, "operator does not exist: - %s", c.T.String())
}

// narrowConst lets an integer constant take the type of the other operand
// when it fits, so `int4col = 5::int8` still uses the column as is (and
// its key).
func narrowConst(l, r Expr) (Expr, Expr) {
	if c, ok := r.(*Const); ok && !c.D.IsNull() && l.Type().IsInteger() && c.T.IsInteger() && l.Type().Kind != c.T.Kind {
		if _, isConst := l.(*Const); !isConst && types.IntFits(l.Type().Kind, c.D.I) {
			r = &Const{D: types.NewInt(l.Type().Kind, c.D.I), T: l.Type()}
		}
	}
	if c, ok := l.(*Const); ok && !c.D.IsNull() && r.Type().IsInteger() && c.T.IsInteger() && r.Type().Kind != c.T.Kind {
		if _, isConst := r.(*Const); !isConst && types.IntFits(r.Type().Kind, c.D.I) {
			l = &Const{D: types.NewInt(r.Type().Kind, c.D.I), T: r.Type()}
		}
	}
	return l, r
}

// unify coerces two operands to their common type.
func (b *Binder) unify(l, r Expr, op string, loc int32) (Expr, Expr, error) {
	l, r = narrowConst(l, r)
	t, ok := commonType(l.Type(), r.Type())
	if !ok {
		return nil, nil, b.errAt(loc, pgerror.UndefinedFunction, "operator does not exist: %s %s %s", l.Type().String(), op, r.Type().String()).
			WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
	}
	var err error
	if l, err = b.coerce(l, t, false, loc); err != nil {
		return nil, nil, err
	}
	if r, err = b.coerce(r, t, false, loc); err != nil {
		return nil, nil, err
	}
	return l, r, nil
}

var compareOps = map[string]Op{"=": OpEq, "<>": OpNe, "!=": OpNe, "<": OpLt, "<=": OpLe, ">": OpGt, ">=": OpGe}

func isUnknown(t types.T) bool { return t.Kind == types.KindUnknown || t.Kind == types.KindNull }

// binaryOp types and builds a binary operator expression.
func (b *Binder) binaryOp(op string, l, r Expr, loc int32) (Expr, error) {
	if e, ok, err := b.arrayOperator(op, l, r, loc); ok {
		return e, err
	}
	if cop, ok := compareOps[op]; ok {
		l, r, err := b.unify(l, r, op, loc)
		if err != nil {
			return nil, err
		}
		if l.Type().Kind == types.KindBytea && cop != OpEq && cop != OpNe {
			// bytea is ordered too; fine
		}
		return &Binary{Op: cop, L: l, R: r, T: types.Bool}, nil
	}
	lt, rt := l.Type(), r.Type()
	undefined := func() error {
		return b.errAt(loc, pgerror.UndefinedFunction, "operator does not exist: %s %s %s", lt.String(), op, rt.String()).
			WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
	}
	switch op {
	case "->", "->>", "#>", "#>>":
		// json and jsonb members: the operator's function.
		index := rt.Kind == types.KindInt2 || rt.Kind == types.KindInt4 || rt.Kind == types.KindInt8
		name := funcs.JSONOperatorFunc(op, lt.Kind, index)
		if name == "" {
			return nil, undefined()
		}
		f, _ := funcs.Lookup(name)
		ov, args, err := b.resolveCall(f, name, []Expr{l, r}, loc)
		if err != nil {
			return nil, undefined()
		}
		return &Func{Name: name, Fn: f, Overload: ov, Args: args, T: ov.Ret([]types.T{args[0].Type(), args[1].Type()})}, nil
	case "@>", "<@", "?", "?|", "?&":
		// jsonb containment and existence; an untyped side of @> and <@
		// is read as jsonb.
		if lt.Kind != types.KindJSONB && !(rt.Kind == types.KindJSONB && isUnknown(lt) && (op == "@>" || op == "<@")) {
			return nil, undefined() // no other type here has these operators
		}
		name := funcs.JSONBOperatorFunc(op)
		f, _ := funcs.Lookup(name)
		ov, args, err := b.resolveCall(f, name, []Expr{l, r}, loc)
		if err != nil {
			return nil, undefined()
		}
		return &Func{Name: name, Fn: f, Overload: ov, Args: args, T: types.Bool}, nil
	case "~~", "!~~", "~~*", "!~~*", "~", "!~", "~*", "!~*":
		var err error
		if l, err = b.coerce(l, types.Text, false, loc); err != nil {
			return nil, undefined()
		}
		if r, err = b.coerce(r, types.Text, false, loc); err != nil {
			return nil, undefined()
		}
		m := map[string]Op{"~~": OpLike, "!~~": OpNotLike, "~~*": OpILike, "!~~*": OpNotILike,
			"~": OpRegex, "!~": OpNotRegex, "~*": OpIRegex, "!~*": OpNotIRegex}
		return &Binary{Op: m[op], L: l, R: r, T: types.Bool}, nil
	case "||":
		if !lt.IsString() && !rt.IsString() {
			return nil, undefined()
		}
		var err error
		if l, err = b.toText(l, loc); err != nil {
			return nil, err
		}
		if r, err = b.toText(r, loc); err != nil {
			return nil, err
		}
		return &Binary{Op: OpConcat, L: l, R: r, T: types.Text}, nil
	}
	if bop, ok := map[string]Op{"&": OpBitAnd, "|": OpBitOr, "#": OpBitXor, "<<": OpShl, ">>": OpShr}[op]; ok {
		// Integer bit operators; a shift count is an integer and the
		// result has the left operand's type.
		intLike := func(t types.T) bool {
			return isUnknown(t) || t.Kind == types.KindInt2 || t.Kind == types.KindInt4 || t.Kind == types.KindInt8
		}
		if !intLike(lt) || !intLike(rt) || isUnknown(lt) && isUnknown(rt) {
			return nil, undefined()
		}
		if bop == OpShl || bop == OpShr {
			var err error
			if isUnknown(lt) {
				if l, err = b.coerce(l, types.Int4, false, loc); err != nil {
					return nil, err
				}
			}
			if r, err = b.coerce(r, types.Int4, false, loc); err != nil {
				return nil, err
			}
			return &Binary{Op: bop, L: l, R: r, T: l.Type()}, nil
		}
		l, r, err := b.unify(l, r, op, loc)
		if err != nil {
			return nil, err
		}
		return &Binary{Op: bop, L: l, R: r, T: l.Type()}, nil
	}
	aop, ok := map[string]Op{"+": OpAdd, "-": OpSub, "*": OpMul, "/": OpDiv, "%": OpMod}[op]
	if !ok {
		return nil, b.errAt(loc, pgerror.FeatureNotSupported, "operator %s is not supported yet", op)
	}
	if isUnknown(lt) && isUnknown(rt) {
		return nil, b.errAt(loc, pgerror.AmbiguousFunction, "operator is not unique: unknown %s unknown", op).
			WithHint("Could not choose a best candidate operator. You might need to add explicit type casts.")
	}
	// Date and time arithmetic.
	if lt.IsTime() || rt.IsTime() || lt.Kind == types.KindInterval || rt.Kind == types.KindInterval {
		return b.timeArith(aop, l, r, loc, undefined)
	}
	if isUnknown(lt) && rt.IsNumeric() || isUnknown(rt) && lt.IsNumeric() || lt.IsNumeric() && rt.IsNumeric() {
		if aop == OpMod && (lt.Kind == types.KindFloat4 || lt.Kind == types.KindFloat8 || rt.Kind == types.KindFloat4 || rt.Kind == types.KindFloat8) {
			return nil, undefined()
		}
		l, r, err := b.unify(l, r, op, loc)
		if err != nil {
			return nil, err
		}
		return &Binary{Op: aop, L: l, R: r, T: l.Type().Unmodified()}, nil
	}
	return nil, undefined()
}

func (b *Binder) toText(e Expr, loc int32) (Expr, error) {
	t := e.Type()
	if t.Kind == types.KindText {
		return e, nil
	}
	if isUnknown(t) || t.IsString() {
		return b.coerce(e, types.Text, false, loc)
	}
	return &Cast{E: e, T: types.Text}, nil
}

func (b *Binder) timeArith(op Op, l, r Expr, loc int32, undefined func() error) (Expr, error) {
	lt, rt := l.Type(), r.Type()
	var err error
	// resolve an untyped side
	if isUnknown(rt) {
		switch {
		case lt.Kind == types.KindInterval:
			r, err = b.coerce(r, types.Interval, false, loc)
		case lt.Kind == types.KindDate && op == OpSub:
			r, err = b.coerce(r, types.Int4, false, loc)
			if err != nil {
				r, err = b.coerce(r, types.Interval, false, loc)
			}
		case lt.IsTime():
			r, err = b.coerce(r, types.Interval, false, loc)
		}
		if err != nil {
			return nil, err
		}
		rt = r.Type()
	}
	if isUnknown(lt) {
		switch {
		case rt.Kind == types.KindInterval && op == OpAdd:
			l, err = b.coerce(l, types.Timestamp, false, loc)
		case rt.IsTime():
			l, err = b.coerce(l, rt, false, loc)
		default:
			l, err = b.coerce(l, types.Interval, false, loc)
		}
		if err != nil {
			return nil, err
		}
		lt = l.Type()
	}
	switch {
	case lt.Kind == types.KindDate && rt.IsInteger() && (op == OpAdd || op == OpSub):
		r, _ = b.coerce(r, types.Int4, false, loc)
		return &Binary{Op: op, L: l, R: r, T: types.Date}, nil
	case lt.IsInteger() && rt.Kind == types.KindDate && op == OpAdd:
		l, _ = b.coerce(l, types.Int4, false, loc)
		return &Binary{Op: op, L: r, R: l, T: types.Date}, nil
	case lt.Kind == types.KindDate && rt.Kind == types.KindDate && op == OpSub:
		return &Binary{Op: op, L: l, R: r, T: types.Int4}, nil
	case lt.IsTime() && rt.Kind == types.KindInterval && (op == OpAdd || op == OpSub):
		t := lt
		if t.Kind == types.KindDate {
			t = types.Timestamp
			l = &Cast{E: l, T: t}
		}
		return &Binary{Op: op, L: l, R: r, T: t}, nil
	case lt.Kind == types.KindInterval && rt.IsTime() && op == OpAdd:
		t := rt
		if t.Kind == types.KindDate {
			t = types.Timestamp
			r = &Cast{E: r, T: t}
		}
		return &Binary{Op: op, L: r, R: l, T: t}, nil
	case lt.IsTime() && rt.IsTime() && op == OpSub:
		t, _ := commonType(lt, rt)
		if t.Kind == types.KindDate {
			return &Binary{Op: op, L: l, R: r, T: types.Int4}, nil
		}
		l, _ = b.coerce(l, t, false, loc)
		r, _ = b.coerce(r, t, false, loc)
		return &Binary{Op: op, L: l, R: r, T: types.Interval}, nil
	case lt.Kind == types.KindInterval && rt.Kind == types.KindInterval && (op == OpAdd || op == OpSub):
		return &Binary{Op: op, L: l, R: r, T: types.Interval}, nil
	case lt.Kind == types.KindInterval && rt.IsNumeric() && (op == OpMul || op == OpDiv):
		r, _ = b.coerce(r, types.Float8, false, loc)
		return &Binary{Op: op, L: l, R: r, T: types.Interval}, nil
	case lt.IsNumeric() && rt.Kind == types.KindInterval && op == OpMul:
		l, _ = b.coerce(l, types.Float8, false, loc)
		return &Binary{Op: op, L: r, R: l, T: types.Interval}, nil
	}
	return nil, undefined()
}

// bindCommon binds arguments that must share one type (COALESCE, GREATEST).
func (b *Binder) bindCommon(nodes []*pg_query.Node, ec *exprCtx, what string) ([]Expr, types.T, error) {
	var args []Expr
	t := types.Null
	for _, n := range nodes {
		e, err := b.bindExpr(n, ec)
		if err != nil {
			return nil, t, err
		}
		args = append(args, e)
		if isUnknown(e.Type()) {
			// untyped literals and NULLs take the others' type
			continue
		}
		c, ok := commonType(t, e.Type())
		if !ok {
			return nil, t, b.errAt(nodeLocation(n), pgerror.DatatypeMismatch, "%s types %s and %s cannot be matched", what, t.String(), e.Type().String())
		}
		t = c
	}
	if isUnknown(t) {
		t = types.Text
	}
	for i := range args {
		var err error
		if args[i], err = b.coerce(args[i], t, false, nodeLocation(nodes[i])); err != nil {
			return nil, t, err
		}
	}
	return args, t, nil
}

func (b *Binder) bindCase(c *pg_query.CaseExpr, ec *exprCtx) (Expr, error) {
	var operand Expr
	if c.Arg != nil {
		var err error
		if operand, err = b.bindExpr(c.Arg, ec); err != nil {
			return nil, err
		}
	}
	out := &Case{}
	var results []Expr
	var resultNodes []*pg_query.Node
	for _, w := range c.Args {
		cw := w.GetCaseWhen()
		cond, err := b.bindExpr(cw.Expr, ec)
		if err != nil {
			return nil, err
		}
		if operand != nil {
			if cond, err = b.binaryOp("=", operand, cond, cw.Location); err != nil {
				return nil, err
			}
		} else if cond, err = b.boolArg(cond, nodeLocation(cw.Expr), "CASE/WHEN"); err != nil {
			return nil, err
		}
		res, err := b.bindExpr(cw.Result, ec)
		if err != nil {
			return nil, err
		}
		out.Whens = append(out.Whens, When{Cond: cond})
		results = append(results, res)
		resultNodes = append(resultNodes, cw.Result)
	}
	if c.Defresult != nil {
		e, err := b.bindExpr(c.Defresult, ec)
		if err != nil {
			return nil, err
		}
		results = append(results, e)
		resultNodes = append(resultNodes, c.Defresult)
	}
	// PostgreSQL resolves the ELSE result first, then the THEN results.
	order := make([]int, 0, len(results))
	if c.Defresult != nil {
		order = append(order, len(results)-1)
	}
	for i := 0; i < len(out.Whens); i++ {
		order = append(order, i)
	}
	t := types.Null
	for _, i := range order {
		r := results[i]
		if isUnknown(r.Type()) {
			continue // untyped literals and NULLs take the others' type
		}
		ct, ok := commonType(t, r.Type())
		if !ok {
			return nil, b.errAt(nodeLocation(resultNodes[i]), pgerror.DatatypeMismatch, "CASE types %s and %s cannot be matched", t.String(), r.Type().String())
		}
		t = ct
	}
	if isUnknown(t) {
		t = types.Text
	}
	for i := range results {
		var err error
		if results[i], err = b.coerce(results[i], t, false, nodeLocation(resultNodes[i])); err != nil {
			return nil, err
		}
	}
	for i := range out.Whens {
		out.Whens[i].Result = results[i]
	}
	if c.Defresult != nil {
		out.Else = results[len(results)-1]
	}
	out.T = t
	return out, nil
}

func (b *Binder) bindSQLValueFunction(f *pg_query.SQLValueFunction) (Expr, error) {
	now, _ := funcs.Lookup("now")
	call := &Func{Name: "now", Fn: now, Overload: now.Overloads[0], T: types.TimestampTZ}
	switch f.Op {
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
		return call, nil
	case pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		return &Cast{E: call, T: types.Timestamp}, nil
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		return &Cast{E: call, T: types.Date}, nil
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
		db, _ := funcs.Lookup("current_database")
		return &Func{Name: "current_database", Fn: db, Overload: db.Overloads[0], T: types.Name}, nil
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_ROLE,
		pg_query.SQLValueFunctionOp_SVFOP_USER:
		u, _ := funcs.Lookup("current_user")
		return &Func{Name: "current_user", Fn: u, Overload: u.Overloads[0], T: types.Name}, nil
	case pg_query.SQLValueFunctionOp_SVFOP_SESSION_USER:
		u, _ := funcs.Lookup("session_user")
		return &Func{Name: "session_user", Fn: u, Overload: u.Overloads[0], T: types.Name}, nil
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
		cs, _ := funcs.Lookup("current_schema")
		return &Func{Name: "current_schema", Fn: cs, Overload: cs.Overloads[0], T: types.Name}, nil
	}
	return nil, b.errAt(f.Location, pgerror.FeatureNotSupported, "this SQL value function is not supported yet")
}

func (b *Binder) bindFunc(fc *pg_query.FuncCall, ec *exprCtx) (Expr, error) {
	loc := fc.Location
	var parts []string
	for _, n := range fc.Funcname {
		parts = append(parts, strVal(n))
	}
	name := parts[len(parts)-1]
	if len(parts) == 1 && fc.Over == nil && !fc.AggStar && !fc.AggDistinct && fc.AggFilter == nil {
		// Databricks conditionals, bound as the CASE and COALESCE they
		// are (same type resolution, same errors): if/iff(c, a, b),
		// nvl/ifnull(a, b).
		switch strings.ToLower(name) {
		case "if", "iff":
			if len(fc.Args) != 3 {
				return nil, b.errAt(loc, pgerror.UndefinedFunction, "function %s takes 3 arguments (condition, value if true, value if false)", name)
			}
			when := &pg_query.Node{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{Expr: fc.Args[0], Result: fc.Args[1], Location: loc}}}
			return b.bindExpr(&pg_query.Node{Node: &pg_query.Node_CaseExpr{CaseExpr: &pg_query.CaseExpr{Args: []*pg_query.Node{when}, Defresult: fc.Args[2], Location: loc}}}, ec)
		case "nvl", "ifnull":
			if len(fc.Args) != 2 {
				return nil, b.errAt(loc, pgerror.UndefinedFunction, "function %s takes 2 arguments", name)
			}
			return b.bindExpr(&pg_query.Node{Node: &pg_query.Node_CoalesceExpr{CoalesceExpr: &pg_query.CoalesceExpr{Args: fc.Args, Location: loc}}}, ec)
		}
	}
	switch strings.ToLower(name) {
	case "dateadd", "timestampadd", "date_add", "datediff", "timestampdiff", "date_diff":
		// Databricks: the unit is a keyword (dateadd(DAY, 1, t)), read
		// here as its name.
		if len(fc.Args) == 3 {
			if cr := fc.Args[0].GetColumnRef(); cr != nil && len(cr.Fields) == 1 && funcs.IsSparkUnit(strVal(cr.Fields[0])) {
				args := append([]*pg_query.Node{{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{
					Val: &pg_query.A_Const_Sval{Sval: &pg_query.String{Sval: strVal(cr.Fields[0])}}, Location: cr.Location}}}}, fc.Args[1:]...)
				c := proto.Clone(fc).(*pg_query.FuncCall)
				c.Args = args
				fc = c
			}
		}
	}
	if strings.EqualFold(name, "age") && len(fc.Args) == 1 && fc.Over == nil {
		// age(t) is age(current_date, t), as PostgreSQL defines it.
		c := proto.Clone(fc).(*pg_query.FuncCall)
		c.Args = append([]*pg_query.Node{{Node: &pg_query.Node_SqlvalueFunction{SqlvalueFunction: &pg_query.SQLValueFunction{
			Op: pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE, Typmod: -1, Location: fc.Location}}}}, fc.Args...)
		fc = c
	}
	if strings.EqualFold(name, "unix_timestamp") && len(fc.Args) == 0 && fc.Over == nil {
		// Databricks: unix_timestamp() is unix_timestamp(current_timestamp).
		c := proto.Clone(fc).(*pg_query.FuncCall)
		c.Args = []*pg_query.Node{{Node: &pg_query.Node_SqlvalueFunction{SqlvalueFunction: &pg_query.SQLValueFunction{
			Op: pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, Typmod: -1, Location: fc.Location}}}}
		fc = c
	}
	if strings.EqualFold(name, "pg_typeof") && len(fc.Args) == 1 && fc.Over == nil && !fc.AggStar && !fc.AggDistinct {
		// pg_typeof(x) is the regtype of x's type, known here.
		e, err := b.bindExpr(fc.Args[0], ec)
		if err != nil {
			return nil, err
		}
		oid := int64(e.Type().OID())
		if isUnknown(e.Type()) {
			oid = types.OidUnknown // an untyped literal or NULL
		}
		return &Const{D: types.NewInt(types.KindRegtype, oid), T: types.Regtype}, nil
	}
	f, ok := funcs.Lookup(name)
	if len(parts) > 1 && parts[0] != "pg_catalog" || !ok {
		// A SQL function (CREATE FUNCTION): a qualified name outside
		// pg_catalog, or a name no built-in has.
		if e, found, err := b.sqlFunctionCall(fc, parts, ec); found {
			return e, err
		}
	}
	if !ok {
		var ts []string
		for _, a := range fc.Args {
			if e, err := b.bindExpr(a, &exprCtx{sc: ec.sc, clause: ec.clause}); err == nil {
				ts = append(ts, e.Type().String())
			} else {
				return nil, err
			}
		}
		if fc.AggStar {
			ts = []string{"*"}
		}
		return nil, b.errAt(loc, pgerror.UndefinedFunction, "function %s(%s) does not exist", strings.Join(parts, "."), strings.Join(ts, ", ")).
			WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
	}
	if f.ReturnsSet() {
		return b.bindSRFCall(fc, f, name, ec, "")
	}
	if fc.Over != nil {
		return b.bindWindowCall(fc, f, name, ec)
	}
	if f.Window != nil {
		return nil, b.errAt(loc, pgerror.WrongObjectType, "window function %s requires an OVER clause", name)
	}
	if !f.Deterministic {
		b.volatile++
	}
	if f.Agg != nil {
		return b.bindAgg(fc, f, name, ec)
	}
	if fc.AggStar || fc.AggDistinct || fc.AggFilter != nil {
		return nil, b.errAt(loc, pgerror.WrongObjectType, "%s is not an aggregate function", name)
	}
	argNodes, err := b.namedArgs(f, name, fc.Args, ec, loc)
	if err != nil {
		return nil, err
	}
	var args []Expr
	for _, a := range argNodes {
		if a.expr != nil {
			args = append(args, a.expr)
			continue
		}
		e, err := b.bindExpr(a.node, ec)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	ov, args, err := b.resolveCall(f, name, args, loc)
	if err != nil {
		return nil, err
	}
	ats := make([]types.T, len(args))
	for i, a := range args {
		ats[i] = a.Type()
	}
	return &Func{Name: name, Fn: f, Overload: ov, Args: args, T: ov.Ret(ats)}, nil
}

// resolveCall picks f's overload for args and coerces the arguments to
// its parameter types (untyped arguments of an any-type parameter become
// text).
func (b *Binder) resolveCall(f *funcs.Func, name string, args []Expr, loc int32) (*funcs.Overload, []Expr, error) {
	ov, err := b.chooseOverload(f, name, args, loc)
	if err != nil {
		return nil, nil, err
	}
	params, _ := overloadParams(ov, args)
	for i := range args {
		pt := params[i]
		if pt.Kind == types.KindUnknown {
			if isUnknown(args[i].Type()) {
				args[i], _ = b.coerce(args[i], types.Text, false, loc)
			}
			continue
		}
		if args[i], err = b.coerce(args[i], pt, false, loc); err != nil {
			return nil, nil, err
		}
	}
	return ov, args, nil
}

func paramType(ov *funcs.Overload, i int) types.T {
	if i < len(ov.Params) {
		return ov.Params[i]
	}
	return ov.Params[len(ov.Params)-1]
}

// chooseOverload picks the overload needing the fewest implicit casts
// and, among those, the one casting to its category's preferred type
// (double precision, text, timestamptz) the most, as PostgreSQL's
// func_select_candidate does: sqrt(2) is sqrt(double precision).
func (b *Binder) chooseOverload(f *funcs.Func, name string, args []Expr, loc int32) (*funcs.Overload, error) {
	best, bestCost := (*funcs.Overload)(nil), 1<<30
	for _, ov := range f.Overloads {
		if len(args) != len(ov.Params) && !(ov.Variadic && len(args) >= len(ov.Params)-1) {
			continue
		}
		params, ok := overloadParams(ov, args)
		cost := 0
		for i, a := range args {
			if !ok {
				break
			}
			pt := params[i]
			at := a.Type()
			switch {
			case pt.Kind == types.KindUnknown || at.Kind == pt.Kind && at.Elem == pt.Elem:
			case isUnknown(at) && preferredType(pt):
				// an untyped literal goes to its category's preferred
				// type first (round(NULL) is round(double precision))
				cost++
			case isUnknown(at):
				cost += 2
			case implicitCast(at, pt) && preferredType(pt):
				cost += 100
			case implicitCast(at, pt):
				cost += 110 + numericRank(pt.Kind)
			default:
				ok = false
			}
		}
		if ok && cost < bestCost {
			best, bestCost = ov, cost
		}
	}
	if best == nil {
		ats := make([]string, len(args))
		for i, a := range args {
			ats[i] = a.Type().String()
		}
		return nil, b.errAt(loc, pgerror.UndefinedFunction, "function %s(%s) does not exist", name, strings.Join(ats, ", ")).
			WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
	}
	return best, nil
}

func (b *Binder) bindAgg(fc *pg_query.FuncCall, f *funcs.Func, name string, ec *exprCtx) (Expr, error) {
	loc := fc.Location
	if ec.aggs == nil {
		where := ec.clause
		if where == "" {
			where = "this context"
		}
		return nil, b.errAt(loc, pgerror.GroupingError, "aggregate functions are not allowed in %s", where)
	}
	if ec.aggs.inAgg {
		return nil, b.errAt(loc, pgerror.GroupingError, "aggregate function calls cannot be nested")
	}
	ec.aggs.inAgg = true
	defer func() { ec.aggs.inAgg = false }()
	inner := &exprCtx{sc: ec.sc, aggs: ec.aggs, wins: ec.wins, clause: ec.clause}
	var args []Expr
	if fc.AggStar {
		if !f.Agg.Star {
			return nil, b.errAt(loc, pgerror.UndefinedFunction, "%s(*) is not supported", name)
		}
	} else {
		for _, a := range fc.Args {
			e, err := b.bindExpr(a, inner)
			if err != nil {
				return nil, err
			}
			if isUnknown(e.Type()) {
				if f.Agg.WithinGroup {
					// a direct argument: the fraction
					e, _ = b.coerce(e, types.Float8, false, loc)
				} else {
					e, _ = b.coerce(e, types.Text, false, loc)
				}
			}
			args = append(args, e)
		}
		if len(args) == 0 && name == "count" {
			return nil, b.errAt(loc, pgerror.UndefinedFunction, "function count() does not exist")
		}
	}
	// An ordered-set aggregate takes its WITHIN GROUP key as its last
	// arguments, and its values in the key's order.
	var orderKeys []SortKey
	if fc.AggWithinGroup {
		keys, err := b.withinGroupKeys(fc, inner)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			args = append(args, k.E)
		}
		orderKeys = keys
	}
	if fc.AggWithinGroup != f.Agg.WithinGroup {
		// PostgreSQL finds no aggregate of that kind for these types.
		ats := make([]types.T, len(args))
		for i, a := range args {
			ats[i] = a.Type()
		}
		return nil, b.noFunction(name, ats, loc)
	}
	ats := make([]types.T, len(args))
	for i, a := range args {
		ats[i] = a.Type()
	}
	rt, newState, ok := f.Agg.Resolve(ats)
	if !ok && f.Agg.Ordered && len(ats) == 1 && ats[0].IsArray() {
		return nil, b.errMultiDim(loc)
	}
	if !ok {
		// Try promoting integer/float arguments (e.g. sum(real) → double).
		ts := make([]string, len(ats))
		for i, t := range ats {
			ts[i] = t.String()
		}
		return nil, b.errAt(loc, pgerror.UndefinedFunction, "function %s(%s) does not exist", name, strings.Join(ts, ", ")).
			WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
	}
	call := AggCall{Name: name, Def: &AggSpec{NewState: newState}, Args: args, Distinct: fc.AggDistinct || f.Agg.Distinct, T: rt}
	if f.Agg.WithinGroup {
		call.Direct = len(fc.Args)
		call.Order = orderKeys
	} else if err := b.bindAggOrder(fc, f, &call, inner); err != nil {
		return nil, err
	}
	if fc.AggFilter != nil {
		fe, err := b.bindExpr(fc.AggFilter, inner)
		if err != nil {
			return nil, err
		}
		if fe, err = b.boolArg(fe, nodeLocation(fc.AggFilter), "FILTER"); err != nil {
			return nil, err
		}
		call.Filter = fe
	}
	if outerOnly(append(append([]Expr(nil), args...), call.Filter)) {
		return b.hoistAgg(call, loc)
	}
	ec.aggs.calls = append(ec.aggs.calls, call)
	return &AggRef{Idx: len(ec.aggs.calls) - 1, T: rt}, nil
}

// hoistAgg moves an aggregate whose arguments read only the enclosing
// query's columns to that query, as PostgreSQL does (SELECT (SELECT
// sum(x.n)) FROM x aggregates over x): it is computed there and read here
// through an OuterRef.
func (b *Binder) hoistAgg(call AggCall, loc int32) (Expr, error) {
	cur := b.lvl
	var collector *aggCollector
	clause := ""
	all := func() []Expr { return append(append([]Expr(nil), call.Args...), call.Filter) }
	for {
		if cur.parent == nil {
			return nil, b.errAt(loc, pgerror.InternalError, "outer aggregate outside of a subquery")
		}
		lvl := cur
		up := func(e Expr) Expr {
			if e == nil {
				return nil
			}
			return Rewrite(e, func(x Expr) Expr {
				if r, ok := x.(*OuterRef); ok {
					return lvl.params[r.Idx]
				}
				return x
			})
		}
		for i := range call.Args {
			call.Args[i] = up(call.Args[i])
		}
		for i := range call.Order {
			call.Order[i].E = up(call.Order[i].E)
		}
		call.Filter = up(call.Filter)
		collector, clause = cur.aggs, cur.aggClause
		cur = cur.parent
		if !outerOnly(all()) {
			break
		}
		// Still only columns of a query further out: it belongs there.
		if collector == nil {
			return nil, b.errAt(loc, pgerror.GroupingError, "aggregate functions are not allowed in %s", clause)
		}
	}
	if readsOuter(&Func{Args: all()}) {
		return nil, b.errAt(loc, pgerror.FeatureNotSupported, "aggregate functions mixing the columns of several enclosing queries are not supported yet")
	}
	if collector == nil {
		return nil, b.errAt(loc, pgerror.GroupingError, "aggregate functions are not allowed in %s", clause)
	}
	if collector.inAgg {
		return nil, b.errAt(loc, pgerror.GroupingError, "aggregate function calls cannot be nested")
	}
	collector.calls = append(collector.calls, call)
	return b.outerRef(b.lvl, cur, &AggRef{Idx: len(collector.calls) - 1, T: call.T})
}

// outerOnly reports whether es read outer-query columns and none of their
// own query's.
func outerOnly(es []Expr) bool {
	outer, local := false, false
	for _, e := range es {
		Walk(e, func(x Expr) bool {
			switch x.(type) {
			case *OuterRef:
				outer = true
			case *ColRef:
				local = true
			case *Subquery:
				// a nested subquery's own columns are not this query's
			}
			return true
		})
	}
	return outer && !local
}

// preferredType: the preferred type of its category (pg_type.typispreferred).
func preferredType(t types.T) bool {
	switch t.Kind {
	case types.KindFloat8, types.KindText, types.KindTimestampTZ, types.KindInterval, types.KindBool, types.KindOid:
		return true
	}
	return false
}

// callArg is one positional argument of a call: a node to bind, or the
// default of a parameter the call left out.
type callArg struct {
	node *pg_query.Node
	expr Expr
}

// namedArgs puts a call's named arguments (name => value) in their
// positions, filling the parameters left out before the last one given
// with their defaults (funcs.Func.Named).
func (b *Binder) namedArgs(f *funcs.Func, name string, nodes []*pg_query.Node, ec *exprCtx, loc int32) ([]callArg, error) {
	out := make([]callArg, 0, len(nodes))
	var named map[int]*pg_query.Node
	for _, n := range nodes {
		na := n.GetNamedArgExpr()
		if na == nil {
			if named != nil {
				return nil, b.errAt(nodeLocation(n), pgerror.SyntaxError, "positional argument cannot follow named argument")
			}
			out = append(out, callArg{node: n})
			continue
		}
		if named == nil {
			named = map[int]*pg_query.Node{}
		}
		pos := -1
		for i, p := range f.Named {
			if p.Name == na.Name {
				pos = i
			}
		}
		if pos < 0 || pos < len(out) {
			// no such parameter (or one given positionally): no function
			// of this signature
			var ts []string
			for _, x := range nodes {
				label := ""
				if y := x.GetNamedArgExpr(); y != nil {
					label, x = y.Name+" => ", y.Arg
				}
				e, err := b.bindExpr(x, ec)
				if err != nil {
					return nil, err
				}
				ts = append(ts, label+e.Type().String())
			}
			return nil, b.errAt(loc, pgerror.UndefinedFunction, "function %s(%s) does not exist", name, strings.Join(ts, ", ")).
				WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
		}
		if _, dup := named[pos]; dup {
			return nil, b.errAt(na.Location, pgerror.SyntaxError, "argument name \"%s\" used more than once", na.Name)
		}
		named[pos] = na.Arg
	}
	if named == nil {
		return out, nil
	}
	last := 0
	for p := range named {
		last = max(last, p)
	}
	for i := len(out); i <= last; i++ {
		if n, ok := named[i]; ok {
			out = append(out, callArg{node: n})
			continue
		}
		d := f.Named[i].Default
		out = append(out, callArg{expr: &Const{D: d, T: types.T{Kind: d.K}}})
	}
	return out, nil
}

// rowComparison binds (a, b, …) op (c, d, …), PostgreSQL's row-wise
// comparison, as its expansion over the pairs: = is every pair equal, <>
// some pair different, and < <= > >= decide at the first pair that is
// not equal (a < c OR (a = c AND b < d) …), which gives PostgreSQL's NULLs
// too (NULL as soon as a pair compared before the deciding one is NULL).
func (b *Binder) rowComparison(op string, ls, rs []*pg_query.Node, ec *exprCtx, loc int32) (Expr, error) {
	if len(ls) != len(rs) {
		return nil, b.errAt(loc, pgerror.SyntaxError, "unequal number of entries in row expressions")
	}
	if _, ok := compareOps[op]; !ok {
		return nil, b.errAt(loc, pgerror.FeatureNotSupported, "operator %s is not supported for row expressions", op).
			WithHint("Row expressions compare with =, <>, <, <=, > and >=.")
	}
	if len(ls) == 0 {
		return nil, b.errAt(loc, pgerror.FeatureNotSupported, "cannot compare rows of zero length")
	}
	var lefts, rights []Expr
	for i := range ls {
		l, err := b.bindExpr(ls[i], ec)
		if err != nil {
			return nil, err
		}
		r, err := b.bindExpr(rs[i], ec)
		if err != nil {
			return nil, err
		}
		lefts, rights = append(lefts, l), append(rights, r)
	}
	pair := func(op string, i int) (Expr, error) { return b.binaryOp(op, lefts[i], rights[i], loc) }
	switch op {
	case "=", "<>", "!=":
		var parts []Expr
		for i := range lefts {
			e, err := pair(op, i)
			if err != nil {
				return nil, err
			}
			parts = append(parts, e)
		}
		if len(parts) == 1 {
			return parts[0], nil
		}
		if op == "=" {
			return &And{Args: parts}, nil
		}
		return &Or{Args: parts}, nil
	}
	// Lexicographic: the last pair takes op itself, earlier ones the
	// strict form, each guarded by the equality of those before.
	strict := map[string]string{"<": "<", "<=": "<", ">": ">", ">=": ">"}[op]
	var ors []Expr
	var eqs []Expr
	for i := range lefts {
		o := strict
		if i == len(lefts)-1 {
			o = op
		}
		cmp, err := pair(o, i)
		if err != nil {
			return nil, err
		}
		if len(eqs) == 0 {
			ors = append(ors, cmp)
		} else {
			ors = append(ors, &And{Args: append(append([]Expr(nil), eqs...), cmp)})
		}
		eq, err := pair("=", i)
		if err != nil {
			return nil, err
		}
		eqs = append(eqs, eq)
	}
	if len(ors) == 1 {
		return ors[0], nil
	}
	return &Or{Args: ors}, nil
}
