package plan

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/parse"
)

// SQL functions (CREATE FUNCTION … LANGUAGE sql, R-Q7) are inlined where
// they are called, as PostgreSQL inlines simple SQL functions: the call's
// arguments are bound in the caller's query and coerced to the declared
// types, then the body — one expression — is bound with each reference to
// an argument (by name or $n) standing for the bound argument, and the
// result is coerced to the declared return type. The plan holds no call,
// so execution, IVM analysis and determinism are those of the body's own
// operators and functions.

// maxInlineDepth bounds SQL functions calling SQL functions.
const maxInlineDepth = 16

// inlineFrame is the arguments of the SQL function whose body is being
// bound.
type inlineFrame struct {
	fn   *catalog.Function
	args []Expr
}

// BodyExpr parses a SQL function's body text into its one expression: a
// `SELECT expr` without any other clause (or the expression of RETURN).
// What is not that is 0A000: only bodies PostgreSQL could inline are
// supported.
func BodyExpr(body string) (*pg_query.Node, error) {
	notInlinable := func() error {
		return pgerror.New(pgerror.FeatureNotSupported, "SQL function bodies other than one SELECT of an expression are not supported yet").
			WithHint("Write the body as SELECT <expression> or RETURN <expression>, without FROM.")
	}
	st, err := parse.ParseOne(body)
	if err != nil {
		return nil, err
	}
	if st == nil || st.AST == nil {
		return nil, notInlinable()
	}
	sel := st.AST.GetSelectStmt()
	if sel == nil || sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.TargetList) != 1 || len(sel.FromClause) > 0 ||
		sel.WhereClause != nil || len(sel.GroupClause) > 0 || sel.HavingClause != nil || len(sel.SortClause) > 0 ||
		sel.LimitCount != nil || sel.LimitOffset != nil || sel.WithClause != nil || len(sel.DistinctClause) > 0 ||
		len(sel.ValuesLists) > 0 || len(sel.WindowClause) > 0 || sel.IntoClause != nil {
		return nil, notInlinable()
	}
	rt := sel.TargetList[0].GetResTarget()
	if rt == nil || rt.Val == nil || isStar(rt.Val) {
		return nil, notInlinable()
	}
	return rt.Val, nil
}

// CheckFunctionBody binds f's body with its arguments as parameters of
// their declared types and returns the body's type coerced to f's return
// type: what CREATE FUNCTION checks (42703 for a name that is no
// argument, 42P13 for a result that does not fit the return type).
func (b *Binder) CheckFunctionBody(f *catalog.Function) error {
	body, err := BodyExpr(f.Body)
	if err != nil {
		return err
	}
	args := make([]Expr, len(f.Args))
	for i, a := range f.Args {
		b.param(i + 1)
		b.Params[i] = a.Type
		args[i] = &Param{N: i + 1, T: a.Type}
	}
	_, err = b.inlineBody(f, body, args, &exprCtx{sc: b.newScope()}, -1)
	return err
}

// inlineBody binds body with args for f's arguments.
func (b *Binder) inlineBody(f *catalog.Function, body *pg_query.Node, args []Expr, ec *exprCtx, loc int32) (Expr, error) {
	if len(b.inline) >= maxInlineDepth {
		return nil, b.errAt(loc, pgerror.FeatureNotSupported, "SQL function %s calls SQL functions more than %d deep (recursive SQL functions are not supported)", f.Name, maxInlineDepth)
	}
	if err := checkInlinable(f, body); err != nil {
		return nil, err
	}
	b.inline = append(b.inline, inlineFrame{fn: f, args: args})
	stmt := b.Stmt
	b.Stmt = nil // the body's locations are not the statement's
	e, err := b.bindExpr(body, &exprCtx{sc: ec.sc, clause: ec.clause})
	b.Stmt = stmt
	b.inline = b.inline[:len(b.inline)-1]
	if err != nil {
		return nil, err
	}
	if isUnknown(e.Type()) {
		// SELECT 'a' in a function returning text is the literal as text.
		return b.coerce(e, f.Returns, true, loc)
	}
	if !assignCast(e.Type(), f.Returns) || !sameEnum(e.Type(), f.Returns) {
		return nil, pgerror.New(pgerror.InvalidFunctionDefinition, "return type mismatch in function declared to return %s", f.Returns.String()).
			WithDetail("Actual return type is %s.", e.Type().String())
	}
	return b.coerce(e, f.Returns, true, loc)
}

// checkInlinable refuses what an inlined body cannot hold: names that are
// no argument (they would be read from the caller's tables), subqueries,
// aggregates and window calls.
func checkInlinable(f *catalog.Function, body *pg_query.Node) error {
	var err error
	parse.WalkNodes(body, func(n *pg_query.Node) bool {
		if err != nil {
			return false
		}
		switch x := n.Node.(type) {
		case *pg_query.Node_ColumnRef:
			if len(x.ColumnRef.Fields) != 1 || argIndex(f, strVal(x.ColumnRef.Fields[0])) < 0 {
				err = pgerror.New(pgerror.UndefinedColumn, "column \"%s\" does not exist", columnRefText(x.ColumnRef))
			}
		case *pg_query.Node_ParamRef:
			if int(x.ParamRef.Number) > len(f.Args) || x.ParamRef.Number < 1 {
				err = pgerror.New(pgerror.UndefinedParameter, "there is no parameter $%d", x.ParamRef.Number)
			}
		case *pg_query.Node_SubLink:
			err = pgerror.New(pgerror.FeatureNotSupported, "subqueries in SQL function bodies are not supported yet")
		case *pg_query.Node_FuncCall:
			if x.FuncCall.Over != nil || x.FuncCall.AggStar || isAggregateCall(x.FuncCall) {
				err = pgerror.New(pgerror.FeatureNotSupported, "aggregate and window functions in SQL function bodies are not supported yet")
			}
		}
		return err == nil
	})
	return err
}

func columnRefText(c *pg_query.ColumnRef) string {
	var parts []string
	for _, f := range c.Fields {
		parts = append(parts, strVal(f))
	}
	return strings.Join(parts, ".")
}

// argIndex is the position of the argument called name (-1: none).
func argIndex(f *catalog.Function, name string) int {
	for i, a := range f.Args {
		if a.Name != "" && a.Name == name {
			return i
		}
	}
	return -1
}

// inlinedArg answers a column or parameter reference inside a body being
// inlined (false outside one).
func (b *Binder) inlinedArg(n *pg_query.Node) (Expr, bool) {
	if len(b.inline) == 0 {
		return nil, false
	}
	fr := b.inline[len(b.inline)-1]
	switch x := n.Node.(type) {
	case *pg_query.Node_ColumnRef:
		if len(x.ColumnRef.Fields) == 1 {
			if i := argIndex(fr.fn, strVal(x.ColumnRef.Fields[0])); i >= 0 {
				return fr.args[i], true
			}
		}
	case *pg_query.Node_ParamRef:
		if i := int(x.ParamRef.Number) - 1; i >= 0 && i < len(fr.args) {
			return fr.args[i], true
		}
	}
	return nil, false
}

// sqlFunctionCall binds a call of a SQL function: ok is false when no
// SQL function has the name (the caller reports the missing function).
func (b *Binder) sqlFunctionCall(fc *pg_query.FuncCall, parts []string, ec *exprCtx) (Expr, bool, error) {
	if b.Cat == nil {
		return nil, false, nil
	}
	cands := b.Cat.FunctionsNamed(parts, b.SearchPath)
	if len(cands) == 0 {
		return nil, false, nil
	}
	loc := fc.Location
	if fc.Over != nil || fc.AggStar || fc.AggDistinct || fc.AggFilter != nil || len(fc.AggOrder) > 0 {
		return nil, true, b.errAt(loc, pgerror.WrongObjectType, "%s is not an aggregate function", parts[len(parts)-1])
	}
	args := make([]Expr, len(fc.Args))
	for i, a := range fc.Args {
		if a.GetNamedArgExpr() != nil {
			return nil, true, b.errAt(loc, pgerror.FeatureNotSupported, "named arguments of SQL functions are not supported yet")
		}
		e, err := b.bindExpr(a, ec)
		if err != nil {
			return nil, true, err
		}
		args[i] = e
	}
	for _, f := range cands {
		if len(f.Args) != len(args) {
			continue
		}
		fits := true
		for i, a := range args {
			if !implicitCast(a.Type(), f.Args[i].Type) {
				fits = false
			}
		}
		if !fits {
			continue
		}
		co := make([]Expr, len(args))
		for i, a := range args {
			c, err := b.coerce(a, f.Args[i].Type, false, loc)
			if err != nil {
				return nil, true, err
			}
			co[i] = c
		}
		body, err := BodyExpr(f.Body)
		if err != nil {
			return nil, true, err
		}
		e, err := b.inlineBody(f, body, co, ec, loc)
		return e, true, err
	}
	ts := make([]string, len(args))
	for i, a := range args {
		ts[i] = a.Type().String()
		if isUnknown(a.Type()) {
			ts[i] = "unknown"
		}
	}
	return nil, true, b.errAt(loc, pgerror.UndefinedFunction, "function %s(%s) does not exist", strings.Join(parts, "."), strings.Join(ts, ", ")).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
}
