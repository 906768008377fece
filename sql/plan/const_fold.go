package plan

import "github.com/mvserver/mvserver/sql/types"

// The constant-folding rule (PostgreSQL's eval_const_expressions): an
// expression whose inputs are all constants and whose operators and
// functions are immutable is replaced by its value, once, at plan time,
// instead of being evaluated again for every row. `l_receiptdate < DATE
// '1994-01-01' + INTERVAL '1' YEAR` becomes `l_receiptdate < TIMESTAMP
// '1995-01-01 00:00:00'`, and EXPLAIN shows the folded constant.
//
// Immutable here means the value depends on the arguments alone:
//   - no column, parameter, outer reference, aggregate or subquery;
//   - no function the registry calls non-deterministic (now(), random(),
//     nextval(), current_setting(), the catalog functions), and no call
//     without arguments (current_user, version(): they read the session);
//   - no value, operand or result of a type whose conversions read the
//     session (timestamptz: TimeZone; the OID alias types: the catalog
//     and search path), which PostgreSQL marks stable and folds no
//     earlier than execution either.
//
// The value is computed by the executor's evaluator (RegisterConstFolder,
// estimate_fold.go). An expression whose evaluation fails (a division by
// zero, an overflow) is left as it is, so the error is raised when, and
// only if, a row evaluates it, as before; PostgreSQL raises it at plan
// time instead. Its sub-expressions that do evaluate are still folded.

// foldConstants is the constant-folding rule.
func foldConstants(_ *Optimizer, n Node) (Node, bool, error) {
	if constFolder == nil {
		return n, false, nil
	}
	return transformUp(n, func(x Node) (Node, bool, error) {
		return mapOwnExprs(x, func(e Expr) (Expr, error) { return foldExpr(e), nil })
	})
}

// foldExpr returns e with its largest foldable sub-expressions replaced
// by their values; e itself (the same pointer) when nothing folds.
func foldExpr(e Expr) Expr {
	if e == nil {
		return nil
	}
	if _, isConst := e.(*Const); isConst {
		return e
	}
	if immutableConst(e) {
		if d, ok := constFolder(e); ok {
			return &Const{D: d, T: e.Type()}
		}
	}
	before := Children(e)
	if len(before) == 0 {
		return e
	}
	out := MapChildren(e, foldExpr)
	switch x := out.(type) {
	case *Binary:
		if nb, ok := narrowDateCompare(x); ok {
			return nb
		}
	case *And:
		if s, ok := simplifyLogic(x.Args, false); ok {
			return s
		}
	case *Or:
		if s, ok := simplifyLogic(x.Args, true); ok {
			return s
		}
	}
	after := Children(out)
	for i := range before {
		if before[i] != after[i] {
			return out
		}
	}
	return e
}

// simplifyLogic simplifies an AND (or false) or an OR (or true) whose
// arguments include a constant true or false, as PostgreSQL does: the
// neutral value drops out (TRUE AND x is x), the absorbing one is the
// result (FALSE AND x is FALSE, even when x is NULL). A NULL argument
// stays (NULL AND x is FALSE or NULL, depending on x).
func simplifyLogic(args []Expr, or bool) (Expr, bool) {
	var kept []Expr
	changed := false
	for _, a := range args {
		c, ok := a.(*Const)
		if !ok || c.D.IsNull() || c.D.K != types.KindBool {
			kept = append(kept, a)
			continue
		}
		if c.D.Bool() == or {
			return &Const{D: types.NewBool(or), T: types.Bool}, true
		}
		changed = true
	}
	switch {
	case !changed:
		return nil, false
	case len(kept) == 0:
		return &Const{D: types.NewBool(!or), T: types.Bool}, true
	case len(kept) == 1:
		return kept[0], true
	case or:
		return &Or{Args: kept}, true
	}
	return &And{Args: kept}, true
}

// immutableConst reports whether e is built of constants and immutable
// operators and functions only (see above).
func immutableConst(e Expr) bool {
	ok := true
	Walk(e, func(x Expr) bool {
		if !ok {
			return false
		}
		if !sessionFreeType(x.Type()) {
			ok = false
			return false
		}
		switch x := x.(type) {
		case *Const, *Cast, *Binary, *Neg, *Not, *And, *Or, *IsNull, *IsBool,
			*IsDistinct, *In, *Case, *Coalesce, *NullIf, *Greatest:
		case *Func:
			ok = x.Fn != nil && x.Fn.Deterministic && x.Fn.Agg == nil && x.Fn.Window == nil &&
				x.Overload != nil && x.Overload.SRF == nil && len(x.Args) > 0
		default:
			ok = false
		}
		return ok
	})
	return ok
}

// sessionFreeType reports whether values of t convert and compute without
// reading the session (see above); unknown-typed literals are left to the
// casts the binder puts around them.
func sessionFreeType(t types.T) bool {
	k := t.Kind
	if k == types.KindArray {
		k = t.Elem
	}
	switch k {
	case types.KindTimestampTZ, types.KindUnknown, types.KindRecord,
		types.KindRegclass, types.KindRegtype, types.KindRegproc, types.KindRegnamespace, types.KindRegrole:
		return false
	}
	return true
}
