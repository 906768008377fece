package ddl

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// createFunction runs CREATE [OR REPLACE] FUNCTION name (args) RETURNS t
// LANGUAGE sql … AS 'SELECT expr' | RETURN expr (R-Q7). The body must be
// one expression over the arguments: the binder inlines it into every
// call (plan/bind_sqlfunc.go). Other languages, set-returning and OUT
// forms are 0A000 with plain words.
func createFunction(e *Env, st *pg_query.CreateFunctionStmt) (Result, error) {
	if st.IsProcedure {
		return Result{}, pgerror.New(pgerror.FeatureNotSupported, "CREATE PROCEDURE is not supported yet")
	}
	parts := names(st.Funcname)
	sc, name, err := e.Cat.TargetSchema(parts, e.SearchPath)
	if err != nil {
		return Result{}, err
	}
	if err := e.requireCreate(sc); err != nil {
		return Result{}, err
	}
	b := &plan.Binder{Cat: e.Cat, SearchPath: e.SearchPath}
	f := &catalog.Function{SchemaID: sc.ID, Name: name, Owner: e.Owner, Volatility: 'v'}
	for _, p := range st.Parameters {
		fp := p.GetFunctionParameter()
		if fp == nil {
			continue
		}
		switch fp.Mode {
		case pg_query.FunctionParameterMode_FUNC_PARAM_IN, pg_query.FunctionParameterMode_FUNC_PARAM_DEFAULT:
		default:
			return Result{}, pgerror.New(pgerror.FeatureNotSupported, "OUT, INOUT, VARIADIC and TABLE parameters of SQL functions are not supported yet")
		}
		if fp.Defexpr != nil {
			return Result{}, pgerror.New(pgerror.FeatureNotSupported, "parameter defaults of SQL functions are not supported yet")
		}
		t, err := b.TypeName(fp.ArgType)
		if err != nil {
			return Result{}, err
		}
		f.Args = append(f.Args, catalog.FuncArg{Name: fp.Name, Type: t})
	}
	if st.ReturnType == nil {
		return Result{}, pgerror.New(pgerror.FeatureNotSupported, "SQL functions without a RETURNS type are not supported yet")
	}
	if st.ReturnType.Setof {
		return Result{}, pgerror.New(pgerror.FeatureNotSupported, "set-returning SQL functions (RETURNS SETOF, RETURNS TABLE) are not supported yet")
	}
	if f.Returns, err = b.TypeName(st.ReturnType); err != nil {
		return Result{}, err
	}
	lang := ""
	for _, o := range st.Options {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		switch d.Defname {
		case "language":
			lang = strings.ToLower(d.Arg.GetString_().GetSval())
		case "as":
			if l := d.Arg.GetList(); l != nil && len(l.Items) == 1 {
				f.Source = l.Items[0].GetString_().GetSval()
			} else {
				return Result{}, pgerror.New(pgerror.InvalidFunctionDefinition, "only one AS item needed for language \"sql\"")
			}
		case "volatility":
			f.Volatility = map[string]byte{"immutable": 'i', "stable": 's', "volatile": 'v'}[d.Arg.GetString_().GetSval()]
		case "strict":
			if b := d.Arg.GetBoolean(); b != nil && b.Boolval {
				return Result{}, pgerror.New(pgerror.FeatureNotSupported, "STRICT (RETURNS NULL ON NULL INPUT) SQL functions are not supported yet").
					WithHint("Leave STRICT out: the function is then CALLED ON NULL INPUT, and most expressions return NULL for NULL arguments anyway.")
			}
		case "window":
			return Result{}, pgerror.New(pgerror.FeatureNotSupported, "WINDOW functions written in SQL are not supported")
		case "set":
			return Result{}, pgerror.New(pgerror.FeatureNotSupported, "SET clauses of SQL functions are not supported yet")
		}
		// security, leakproof, parallel, cost, rows and support change
		// nothing for an inlined function.
	}
	if st.SqlBody != nil {
		lang = "sql"
		rs := st.SqlBody.GetReturnStmt()
		if rs == nil {
			if l := st.SqlBody.GetList(); l != nil && len(l.Items) == 1 {
				if in := l.Items[0].GetList(); in != nil && len(in.Items) == 1 {
					rs = in.Items[0].GetReturnStmt()
				}
			}
		}
		if rs == nil {
			return Result{}, pgerror.New(pgerror.FeatureNotSupported, "BEGIN ATOMIC bodies other than one RETURN are not supported yet")
		}
		text, err := parse.DeparseExpr(rs.Returnval)
		if err != nil {
			return Result{}, err
		}
		f.Body = "SELECT " + text
	} else {
		f.Body = f.Source
	}
	switch lang {
	case "sql":
	case "":
		return Result{}, pgerror.New(pgerror.InvalidFunctionDefinition, "no language specified")
	case "plpgsql":
		return Result{}, pgerror.New(pgerror.FeatureNotSupported, "LANGUAGE plpgsql functions are not supported").
			WithHint("Write the function in LANGUAGE sql with a body of one expression: SELECT <expression> or RETURN <expression>.")
	case "c", "internal":
		return Result{}, pgerror.New(pgerror.FeatureNotSupported, "LANGUAGE %s functions are not supported: mvserver loads no native code", lang)
	default:
		return Result{}, pgerror.New(pgerror.UndefinedObject, "language \"%s\" does not exist", lang)
	}
	if err := b.CheckFunctionBody(f); err != nil {
		return Result{}, err
	}
	if old := sameSignature(e.Cat, f); old != nil {
		if !st.Replace {
			return Result{}, pgerror.New(pgerror.DuplicateFunction, "function \"%s\" already exists with same argument types", name)
		}
		if !e.owns(old.Owner) {
			return Result{}, pgerror.New(pgerror.InsufficientPrivilege, "must be owner of function %s", name)
		}
		if old.Returns.OID() != f.Returns.OID() {
			return Result{}, pgerror.New(pgerror.InvalidFunctionDefinition, "cannot change return type of existing function").
				WithHint("Use DROP FUNCTION %s first.", signature(old))
		}
		f.ID, f.Owner, f.Version, f.Comment = old.ID, old.Owner, old.Version+1, old.Comment
	} else {
		f.ID = e.Cat.AllocID()
	}
	e.Cat.PutFunction(f)
	return Result{Tag: "CREATE FUNCTION", Changed: []uint32{f.ID}}, nil
}

// sameSignature returns the function of f's schema with f's name and
// argument types (nil: none).
func sameSignature(c *catalog.Catalog, f *catalog.Function) *catalog.Function {
	for _, g := range c.Functions() {
		if g.SchemaID == f.SchemaID && g.Name == f.Name && sameArgs(g, argTypes(f)) {
			return g
		}
	}
	return nil
}

func argTypes(f *catalog.Function) []types.T {
	out := make([]types.T, len(f.Args))
	for i, a := range f.Args {
		out[i] = a.Type
	}
	return out
}

func sameArgs(f *catalog.Function, ts []types.T) bool {
	if len(f.Args) != len(ts) {
		return false
	}
	for i, a := range f.Args {
		if a.Type.OID() != ts[i].OID() {
			return false
		}
	}
	return true
}

// signature is name(type, …) as PostgreSQL's messages print a function.
func signature(f *catalog.Function) string {
	ts := make([]string, len(f.Args))
	for i, a := range f.Args {
		ts[i] = types.T{Kind: a.Type.Kind, Elem: a.Type.Elem, Enum: a.Type.Enum}.String()
	}
	return f.Name + "(" + strings.Join(ts, ", ") + ")"
}

// dropFunctions runs DROP FUNCTION [IF EXISTS] name [(types)], … A
// function that a view's or materialized view's query calls is not
// dropped (2BP01), as PostgreSQL records that dependency.
func dropFunctions(e *Env, st *pg_query.DropStmt) (Result, error) {
	r := Result{Tag: "DROP FUNCTION"}
	b := &plan.Binder{Cat: e.Cat, SearchPath: e.SearchPath}
	for _, o := range st.Objects {
		ow := o.GetObjectWithArgs()
		if ow == nil {
			continue
		}
		parts := names(ow.Objname)
		cands := e.Cat.FunctionsNamed(parts, e.SearchPath)
		var ts []types.T
		var tnames []string
		for _, a := range ow.Objargs {
			t, err := b.TypeName(a.GetTypeName())
			if err != nil {
				return Result{}, err
			}
			ts = append(ts, t)
			tnames = append(tnames, types.T{Kind: t.Kind, Elem: t.Elem, Enum: t.Enum}.String())
		}
		var f *catalog.Function
		for _, c := range cands {
			if ow.ArgsUnspecified || sameArgs(c, ts) {
				if f != nil {
					return Result{}, pgerror.New(pgerror.AmbiguousFunction, "function name \"%s\" is not unique", strings.Join(parts, ".")).
						WithHint("Specify the argument list to select the function unambiguously.")
				}
				f = c
			}
		}
		if f == nil {
			what := strings.Join(parts, ".")
			if !ow.ArgsUnspecified {
				what += "(" + strings.Join(tnames, ", ") + ")"
			}
			if st.MissingOk {
				e.notice("function %s does not exist, skipping", what)
				continue
			}
			if ow.ArgsUnspecified {
				return Result{}, pgerror.New(pgerror.UndefinedFunction, "could not find a function named \"%s\"", what)
			}
			return Result{}, pgerror.New(pgerror.UndefinedFunction, "function %s does not exist", what)
		}
		if !e.owns(f.Owner) {
			return Result{}, pgerror.New(pgerror.InsufficientPrivilege, "must be owner of function %s", f.Name)
		}
		if t := FunctionUser(e.Cat, f); t != nil {
			if st.Behavior == pg_query.DropBehavior_DROP_CASCADE {
				return Result{}, pgerror.New(pgerror.FeatureNotSupported, "DROP FUNCTION … CASCADE of a function that views use is not supported yet").
					WithDetail("%s %s depends on function %s", t.Noun(), t.Name, signature(f)).
					WithHint("Drop those views first.")
			}
			return Result{}, pgerror.New(pgerror.DependentObjectsStillExist, "cannot drop function %s because other objects depend on it", signature(f)).
				WithDetail("%s %s depends on function %s", t.Noun(), t.Name, signature(f)).
				WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
		}
		e.Cat.DropFunction(f.ID)
		r.Dropped = append(r.Dropped, f.ID)
	}
	return r, nil
}

// FunctionUser returns a view or materialized view whose query calls f
// by name (nil: none).
func FunctionUser(c *catalog.Catalog, f *catalog.Function) *catalog.Table {
	for _, t := range c.Tables() {
		if t.Query == "" {
			continue
		}
		for _, n := range parse.QueryCalls(t.Query) {
			if n == f.Name {
				return t
			}
		}
	}
	return nil
}
