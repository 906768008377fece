package plan

import (
	"fmt"
	"strings"

	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/types"
)

// Expr is a typed scalar expression.
type Expr interface {
	Type() types.T
	String() string
}

// ColRef reads column Idx of the input row.
type ColRef struct {
	Idx  int
	T    types.T
	Name string
}

// Const is a constant.
type Const struct {
	D types.Datum
	T types.T
}

// Param is a statement parameter ($N, 1-based).
type Param struct {
	N int
	T types.T
}

// Cast converts E to T.
type Cast struct {
	E        Expr
	T        types.T
	Explicit bool
}

// Op is a binary operator kind.
type Op uint8

// Binary operators.
const (
	OpAdd Op = iota
	OpSub
	OpMul
	OpDiv
	OpMod
	OpConcat
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpLike
	OpNotLike
	OpILike
	OpNotILike
	// POSIX regular expression matches: ~ !~ ~* !~*.
	OpRegex
	OpNotRegex
	OpIRegex
	OpNotIRegex
	// Integer bit operators: & | # << >>.
	OpBitAnd
	OpBitOr
	OpBitXor
	OpShl
	OpShr
)

var opNames = [...]string{"+", "-", "*", "/", "%", "||", "=", "<>", "<", "<=", ">", ">=", "~~", "!~~", "~~*", "!~~*", "~", "!~", "~*", "!~*", "&", "|", "#", "<<", ">>"}

func (o Op) String() string { return opNames[o] }

// IsComparison reports whether o compares its operands.
func (o Op) IsComparison() bool { return o >= OpEq && o <= OpGe }

// Binary applies Op to L and R (both already cast to compatible types).
type Binary struct {
	Op   Op
	L, R Expr
	T    types.T
}

// Neg is unary minus.
type Neg struct{ E Expr }

// Not is logical negation.
type Not struct{ E Expr }

// And and Or are n-ary boolean connectives with SQL's three-valued logic.
type And struct{ Args []Expr }

// Or is n-ary disjunction.
type Or struct{ Args []Expr }

// IsNull tests for NULL (Not: IS NOT NULL).
type IsNull struct {
	E   Expr
	Not bool
}

// IsBool is IS [NOT] TRUE / FALSE / UNKNOWN.
type IsBool struct {
	E     Expr
	Value int8 // 1 true, 0 false, -1 unknown
	Not   bool
}

// IsDistinct is IS [NOT] DISTINCT FROM.
type IsDistinct struct {
	L, R Expr
	Not  bool
}

// In is E [NOT] IN (List…).
type In struct {
	E    Expr
	List []Expr
	Not  bool
	// Hashed: List is constants the executor tests E against through a
	// hash set built once, instead of comparing E with each in turn
	// (in_hash.go sets it).
	Hashed bool
}

// When is one WHEN branch of a CASE.
type When struct {
	Cond, Result Expr
}

// Case is a searched CASE (a simple CASE is bound to a searched one).
type Case struct {
	Whens []When
	Else  Expr // nil = NULL
	T     types.T
}

// Coalesce returns its first non-NULL argument.
type Coalesce struct {
	Args []Expr
	T    types.T
}

// NullIf returns NULL when L = R, else L.
type NullIf struct {
	L, R Expr
}

// Greatest is GREATEST/LEAST (Least = true).
type Greatest struct {
	Args  []Expr
	Least bool
	T     types.T
}

// Func calls a scalar function overload.
type Func struct {
	Name     string
	Fn       *funcs.Func
	Overload *funcs.Overload
	Args     []Expr
	T        types.T
}

// OuterRef reads correlation value Idx of the innermost subquery
// evaluation: a column of an enclosing query (R-Q2 correlated subqueries).
// The value is computed by the Subquery (or Apply) node one level up from
// its Params[Idx]; references to deeper levels are relayed through each
// level's Params, so an OuterRef always looks exactly one level out.
type OuterRef struct {
	Idx  int
	T    types.T
	Name string
}

// SubqueryKind is what a subquery in an expression computes.
type SubqueryKind uint8

// Subquery kinds.
const (
	// SubExists is EXISTS (…): true when the plan returns a row.
	SubExists SubqueryKind = iota
	// SubScalar is (SELECT x …): the single value of its one row, NULL
	// without rows, 21000 with more than one.
	SubScalar
	// SubAny is left op ANY (…) (IN is = ANY): true if the comparison holds
	// for some row, NULL if none holds but some is unknown.
	SubAny
	// SubAll is left op ALL (…): true if the comparison holds for every row.
	SubAll
	// SubArray is ARRAY(…): the values of its one column, in the order of
	// its rows, as an array (empty without rows).
	SubArray
)

// Subquery is a query nested in an expression. Plan is bound one level
// down: its OuterRefs read the values of Params, which are expressions over
// the row the Subquery is evaluated on. Without Params the subquery is
// uncorrelated and the executor runs it once per statement (PostgreSQL's
// InitPlan); otherwise once per distinct set of parameter values.
type Subquery struct {
	Kind   SubqueryKind
	Plan   Node
	Params []Expr
	// Left are the left operands of ANY/ALL (one per plan column, already
	// cast to the column types); Op compares them with a plan row.
	Left []Expr
	Op   Op
	T    types.T
	// Volatile is set when the plan calls a non-deterministic function, so
	// results must not be reused across rows with equal parameters.
	Volatile bool
	// ID tells subqueries apart in String (each binding is distinct).
	ID int
}

// AggRef marks an aggregate in an expression before it is replaced by a
// column of the aggregation's output (see binder).
type AggRef struct {
	Idx int
	T   types.T
}

func (e *ColRef) Type() types.T     { return e.T }
func (e *Const) Type() types.T      { return e.T }
func (e *Param) Type() types.T      { return e.T }
func (e *Cast) Type() types.T       { return e.T }
func (e *Binary) Type() types.T     { return e.T }
func (e *Neg) Type() types.T        { return e.E.Type().Unmodified() }
func (e *Not) Type() types.T        { return types.Bool }
func (e *And) Type() types.T        { return types.Bool }
func (e *Or) Type() types.T         { return types.Bool }
func (e *IsNull) Type() types.T     { return types.Bool }
func (e *IsBool) Type() types.T     { return types.Bool }
func (e *IsDistinct) Type() types.T { return types.Bool }
func (e *In) Type() types.T         { return types.Bool }
func (e *Case) Type() types.T       { return e.T }
func (e *Coalesce) Type() types.T   { return e.T }
func (e *NullIf) Type() types.T     { return e.L.Type() }
func (e *Greatest) Type() types.T   { return e.T }
func (e *Func) Type() types.T       { return e.T }
func (e *AggRef) Type() types.T     { return e.T }
func (e *OuterRef) Type() types.T   { return e.T }
func (e *Subquery) Type() types.T   { return e.T }

func (e *ColRef) String() string { return fmt.Sprintf("#%d", e.Idx) }
func (e *Const) String() string {
	if e.D.IsNull() {
		return "NULL"
	}
	return fmt.Sprintf("%s::%s", e.D.String(), e.T.String())
}
func (e *Param) String() string { return fmt.Sprintf("$%d", e.N) }
func (e *Cast) String() string  { return fmt.Sprintf("(%s)::%s", e.E.String(), e.T.String()) }
func (e *Binary) String() string {
	return fmt.Sprintf("(%s %s %s)", e.L.String(), e.Op.String(), e.R.String())
}
func (e *Neg) String() string { return fmt.Sprintf("(-%s)", e.E.String()) }
func (e *Not) String() string { return fmt.Sprintf("(NOT %s)", e.E.String()) }
func (e *And) String() string { return "(" + joinExprs(e.Args, " AND ") + ")" }
func (e *Or) String() string  { return "(" + joinExprs(e.Args, " OR ") + ")" }
func (e *IsNull) String() string {
	if e.Not {
		return fmt.Sprintf("(%s IS NOT NULL)", e.E.String())
	}
	return fmt.Sprintf("(%s IS NULL)", e.E.String())
}
func (e *IsBool) String() string {
	return fmt.Sprintf("(%s IS %v %d)", e.E.String(), e.Not, e.Value)
}
func (e *IsDistinct) String() string {
	return fmt.Sprintf("(%s IS DISTINCT %v %s)", e.L.String(), e.Not, e.R.String())
}
func (e *In) String() string {
	return fmt.Sprintf("(%s IN %v (%s))", e.E.String(), e.Not, joinExprs(e.List, ", "))
}
func (e *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	for _, w := range e.Whens {
		fmt.Fprintf(&b, " WHEN %s THEN %s", w.Cond.String(), w.Result.String())
	}
	if e.Else != nil {
		fmt.Fprintf(&b, " ELSE %s", e.Else.String())
	}
	b.WriteString(" END")
	return b.String()
}
func (e *Coalesce) String() string { return "coalesce(" + joinExprs(e.Args, ", ") + ")" }
func (e *NullIf) String() string   { return "nullif(" + e.L.String() + ", " + e.R.String() + ")" }
func (e *Greatest) String() string {
	if e.Least {
		return "least(" + joinExprs(e.Args, ", ") + ")"
	}
	return "greatest(" + joinExprs(e.Args, ", ") + ")"
}
func (e *Func) String() string   { return e.Name + "(" + joinExprs(e.Args, ", ") + ")" }
func (e *AggRef) String() string { return fmt.Sprintf("agg#%d", e.Idx) }
func (e *OuterRef) String() string {
	return fmt.Sprintf("outer#%d", e.Idx)
}
func (e *Subquery) String() string {
	kind := [...]string{"exists", "scalar", "any", "all", "array"}[e.Kind]
	return fmt.Sprintf("%s#%d[%s](%s)", kind, e.ID, joinExprs(e.Params, ", "), joinExprs(e.Left, ", "))
}

func joinExprs(es []Expr, sep string) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return strings.Join(parts, sep)
}

// Walk calls fn on e and every sub-expression (pre-order); fn returning false
// stops descent into that node's children.
func Walk(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	for _, c := range Children(e) {
		Walk(c, fn)
	}
}

// Children returns the direct sub-expressions of e.
func Children(e Expr) []Expr {
	switch e := e.(type) {
	case *Cast:
		return []Expr{e.E}
	case *Binary:
		return []Expr{e.L, e.R}
	case *Neg:
		return []Expr{e.E}
	case *Not:
		return []Expr{e.E}
	case *And:
		return e.Args
	case *Or:
		return e.Args
	case *IsNull:
		return []Expr{e.E}
	case *IsBool:
		return []Expr{e.E}
	case *IsDistinct:
		return []Expr{e.L, e.R}
	case *In:
		return append([]Expr{e.E}, e.List...)
	case *Case:
		var out []Expr
		for _, w := range e.Whens {
			out = append(out, w.Cond, w.Result)
		}
		if e.Else != nil {
			out = append(out, e.Else)
		}
		return out
	case *Coalesce:
		return e.Args
	case *NullIf:
		return []Expr{e.L, e.R}
	case *Greatest:
		return e.Args
	case *Func:
		return e.Args
	case *Subquery:
		return append(append([]Expr(nil), e.Params...), e.Left...)
	}
	return nil
}

// Rewrite rebuilds e bottom-up, replacing each node by fn(node) (fn sees
// the node with its children already rewritten).
func Rewrite(e Expr, fn func(Expr) Expr) Expr {
	if e == nil {
		return nil
	}
	switch n := e.(type) {
	case *Cast:
		c := *n
		c.E = Rewrite(n.E, fn)
		return fn(&c)
	case *Binary:
		c := *n
		c.L, c.R = Rewrite(n.L, fn), Rewrite(n.R, fn)
		return fn(&c)
	case *Neg:
		return fn(&Neg{E: Rewrite(n.E, fn)})
	case *Not:
		return fn(&Not{E: Rewrite(n.E, fn)})
	case *And:
		return fn(&And{Args: rewriteAll(n.Args, fn)})
	case *Or:
		return fn(&Or{Args: rewriteAll(n.Args, fn)})
	case *IsNull:
		return fn(&IsNull{E: Rewrite(n.E, fn), Not: n.Not})
	case *IsBool:
		c := *n
		c.E = Rewrite(n.E, fn)
		return fn(&c)
	case *IsDistinct:
		return fn(&IsDistinct{L: Rewrite(n.L, fn), R: Rewrite(n.R, fn), Not: n.Not})
	case *In:
		return fn(&In{E: Rewrite(n.E, fn), List: rewriteAll(n.List, fn), Not: n.Not, Hashed: n.Hashed})
	case *Case:
		c := &Case{T: n.T}
		for _, w := range n.Whens {
			c.Whens = append(c.Whens, When{Cond: Rewrite(w.Cond, fn), Result: Rewrite(w.Result, fn)})
		}
		c.Else = Rewrite(n.Else, fn)
		return fn(c)
	case *Coalesce:
		return fn(&Coalesce{Args: rewriteAll(n.Args, fn), T: n.T})
	case *NullIf:
		return fn(&NullIf{L: Rewrite(n.L, fn), R: Rewrite(n.R, fn)})
	case *Greatest:
		return fn(&Greatest{Args: rewriteAll(n.Args, fn), Least: n.Least, T: n.T})
	case *Func:
		c := *n
		c.Args = rewriteAll(n.Args, fn)
		return fn(&c)
	case *Subquery:
		c := *n
		c.Params, c.Left = rewriteAll(n.Params, fn), rewriteAll(n.Left, fn)
		return fn(&c)
	}
	return fn(e)
}

func rewriteAll(es []Expr, fn func(Expr) Expr) []Expr {
	out := make([]Expr, len(es))
	for i, e := range es {
		out[i] = Rewrite(e, fn)
	}
	return out
}

// MapChildren returns a copy of e whose direct children are fn(child).
func MapChildren(e Expr, fn func(Expr) Expr) Expr {
	all := func(es []Expr) []Expr {
		out := make([]Expr, len(es))
		for i, x := range es {
			out[i] = fn(x)
		}
		return out
	}
	switch n := e.(type) {
	case *Cast:
		c := *n
		c.E = fn(n.E)
		return &c
	case *Binary:
		c := *n
		c.L, c.R = fn(n.L), fn(n.R)
		return &c
	case *Neg:
		return &Neg{E: fn(n.E)}
	case *Not:
		return &Not{E: fn(n.E)}
	case *And:
		return &And{Args: all(n.Args)}
	case *Or:
		return &Or{Args: all(n.Args)}
	case *IsNull:
		return &IsNull{E: fn(n.E), Not: n.Not}
	case *IsBool:
		c := *n
		c.E = fn(n.E)
		return &c
	case *IsDistinct:
		return &IsDistinct{L: fn(n.L), R: fn(n.R), Not: n.Not}
	case *In:
		return &In{E: fn(n.E), List: all(n.List), Not: n.Not, Hashed: n.Hashed}
	case *Case:
		c := &Case{T: n.T}
		for _, w := range n.Whens {
			c.Whens = append(c.Whens, When{Cond: fn(w.Cond), Result: fn(w.Result)})
		}
		if n.Else != nil {
			c.Else = fn(n.Else)
		}
		return c
	case *Coalesce:
		return &Coalesce{Args: all(n.Args), T: n.T}
	case *NullIf:
		return &NullIf{L: fn(n.L), R: fn(n.R)}
	case *Greatest:
		return &Greatest{Args: all(n.Args), Least: n.Least, T: n.T}
	case *Func:
		c := *n
		c.Args = all(n.Args)
		return &c
	case *Subquery:
		c := *n
		c.Params, c.Left = all(n.Params), all(n.Left)
		return &c
	}
	return e
}
