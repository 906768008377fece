package plan

import (
	"strconv"
	"strings"

	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/types"
)

// RuleutilsText prints a bound expression over a table's row (cols are
// the column names, ColRef i is column i) as PostgreSQL 15's ruleutils
// prints a stored expression (pg_get_constraintdef, information_schema
// check_constraints, pg_get_expr): operators by their names (LIKE is ~~),
// IN lists as = ANY (ARRAY[…]), BETWEEN as its two comparisons, every
// literal with its type ('x'::text, '2020-01-01'::date; a bare integer is
// integer), the casts PostgreSQL's operator resolution adds shown (a
// varchar compared with text is (s)::text, an integer compared with
// numeric (1)::numeric). Without pretty every operator is parenthesized,
// as pg_get_constraintdef(oid) prints; with it only where needed, as
// pg_get_constraintdef(oid, true) and psql's \d print.
//
// The binder folds a literal into the type it is compared with, so an
// integer literal compared with numeric or double precision is printed as
// PostgreSQL prints its implicit cast, and a bigint or smallint constant
// that fits an integer as the integer PostgreSQL's cross-type operators
// keep. ok is false for an expression holding a node not printed here;
// the caller then shows the text the catalog keeps.
func RuleutilsText(e Expr, cols []string, pretty bool) (string, bool) {
	p := &ruleutils{cols: cols, pretty: pretty}
	s := p.expr(e, nil, false)
	return s, !p.failed
}

type ruleutils struct {
	cols   []string
	pretty bool
	failed bool
}

// paren prints e as a child of parent: parenthesized in pretty mode when
// PostgreSQL's isSimpleNode says it is not simple there.
func (p *ruleutils) paren(e, parent Expr) string {
	s := p.expr(e, parent, true)
	if p.pretty && !simpleUnder(e, parent) {
		return "(" + s + ")"
	}
	return s
}

// own wraps s in the parentheses a node prints itself outside pretty mode.
func (p *ruleutils) own(s string) string {
	if p.pretty {
		return s
	}
	return "(" + s + ")"
}

func (p *ruleutils) expr(e, parent Expr, showImplicit bool) string {
	switch x := e.(type) {
	case *ColRef:
		if x.Idx < 0 || x.Idx >= len(p.cols) {
			p.failed = true
			return ""
		}
		return funcs.QuoteIdent(p.cols[x.Idx])
	case *Const:
		return p.constant(x, parent)
	case *Cast:
		if !x.Explicit && !showImplicit {
			return p.paren(x.E, parent)
		}
		return p.coercion(x.E, x.T, x)
	case *Binary:
		l, r := textOperand(x.L, x.R), textOperand(x.R, x.L)
		return p.own(p.paren(l, x) + " " + x.Op.String() + " " + p.paren(r, x))
	case *Neg:
		return p.own("- " + p.paren(x.E, x))
	case *And:
		return p.bool(x.Args, " AND ", x)
	case *Or:
		return p.bool(x.Args, " OR ", x)
	case *Not:
		return p.own("NOT " + p.paren(x.E, x))
	case *IsNull:
		s := " IS NULL"
		if x.Not {
			s = " IS NOT NULL"
		}
		return p.own(p.paren(x.E, x) + s)
	case *IsDistinct:
		s := " IS DISTINCT FROM "
		if x.Not {
			s = " IS NOT DISTINCT FROM "
		}
		return p.own(p.paren(x.L, x) + s + p.paren(x.R, x))
	case *In:
		if len(x.List) == 1 {
			// PostgreSQL's parser makes a one-item IN list a comparison.
			op := OpEq
			if x.Not {
				op = OpNe
			}
			return p.expr(&Binary{Op: op, L: x.E, R: x.List[0], T: types.Bool}, parent, showImplicit)
		}
		op := "= ANY"
		if x.Not {
			op = "<> ALL"
		}
		return p.scalarArrayOp(x.E, op, x.List, x)
	case *Func:
		return p.function(x)
	}
	p.failed = true
	return ""
}

func (p *ruleutils) bool(args []Expr, sep string, parent Expr) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = p.paren(a, parent)
	}
	return p.own(strings.Join(parts, sep))
}

// scalarArrayOp prints e op (ARRAY[list]): an IN list, or = ANY (ARRAY[…])
// as written. A varchar operand is compared as text, the array cast to
// text[] as PostgreSQL's operator resolution casts it.
func (p *ruleutils) scalarArrayOp(e Expr, op string, list []Expr, node Expr) string {
	elems := make([]string, len(list))
	for i, l := range list {
		elems[i] = p.expr(l, nil, true)
	}
	arr := "ARRAY[" + strings.Join(elems, ", ") + "]"
	if e.Type().Kind == types.KindVarchar {
		e = &Cast{E: e, T: types.Text}
		if p.pretty {
			arr += "::text[]"
		} else {
			arr = "(" + arr + ")::text[]"
		}
	}
	return p.own(p.paren(e, node) + " " + op + " (" + arr + ")")
}

func (p *ruleutils) function(f *Func) string {
	switch {
	case (f.Name == "= ANY" || f.Name == "<> ALL") && len(f.Args) == 2:
		if arr, ok := f.Args[1].(*Func); ok && arr.Name == "array" {
			return p.scalarArrayOp(f.Args[0], f.Name, arr.Args, f)
		}
		p.failed = true
		return ""
	case f.Name == "array":
		elems := make([]string, len(f.Args))
		for i, a := range f.Args {
			elems[i] = p.expr(a, nil, true)
		}
		return "ARRAY[" + strings.Join(elems, ", ") + "]"
	}
	for _, c := range f.Name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			p.failed = true // an operator or a special form
			return ""
		}
	}
	args := make([]string, len(f.Args))
	for i, a := range f.Args {
		args[i] = p.expr(a, nil, true)
	}
	return f.Name + "(" + strings.Join(args, ", ") + ")"
}

// coercion prints a cast as PostgreSQL's get_coercion_expr: (arg)::type,
// without the parentheses in pretty mode around a simple argument.
func (p *ruleutils) coercion(arg Expr, t types.T, node Expr) string {
	if p.pretty {
		return p.paren(arg, node) + "::" + t.String()
	}
	return "(" + p.expr(arg, node, true) + ")::" + t.String()
}

// constant prints a constant as PostgreSQL's get_const_expr: an integer
// bare (quoted and labelled when negative), a numeric with a point or an
// exponent bare, true and false, anything else quoted with its type.
func (p *ruleutils) constant(c *Const, parent Expr) string {
	if c.D.IsNull() {
		return "NULL::" + constTypeName(c.T)
	}
	text := c.D.String()
	switch c.T.Kind {
	case types.KindBool:
		if c.D.Bool() {
			return "true"
		}
		return "false"
	case types.KindInt4, types.KindInt2, types.KindInt8:
		if n, err := strconv.ParseInt(text, 10, 64); err == nil && n >= -1<<31 && n < 1<<31 {
			if n < 0 {
				return "'" + text + "'::integer"
			}
			return text
		}
		if c.T.Kind == types.KindInt8 {
			return "'" + text + "'::bigint"
		}
	case types.KindNumeric:
		if c.T.Precision == 0 && strings.ContainsAny(text, ".eE") && text[0] != '-' {
			return text
		}
		if _, err := strconv.ParseInt(text, 10, 32); err == nil && c.T.Precision == 0 {
			return p.coercion(&Const{D: types.NewInt4(int64(mustAtoi(text))), T: types.Int4}, c.T, c)
		}
	case types.KindFloat8, types.KindFloat4:
		// A number literal compared with a float: PostgreSQL casts it.
		if _, err := strconv.ParseInt(text, 10, 32); err == nil {
			return p.coercion(&Const{D: types.NewInt4(int64(mustAtoi(text))), T: types.Int4}, c.T, c)
		}
		if _, err := strconv.ParseFloat(text, 64); err == nil && !strings.ContainsAny(text, "Ii") {
			if d, err := types.ParseText(text, types.Numeric, nil); err == nil {
				return p.coercion(&Const{D: d, T: types.Numeric}, c.T, c)
			}
		}
	}
	return "'" + strings.ReplaceAll(text, "'", "''") + "'::" + constTypeName(c.T)
}

// constTypeName is the type a constant is labelled with: a constant has
// no type modifier (character varying, not character varying(5)), and
// char's name without one is bpchar.
func constTypeName(t types.T) string {
	if t.Kind == types.KindChar {
		return "bpchar"
	}
	t.Width, t.Precision, t.Scale = 0, 0, 0
	return t.String()
}

func mustAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// textOperand is e as an operand of an operator whose other operand is
// other: a varchar (which has no operators of its own) compared as text,
// as PostgreSQL's operator resolution casts it.
func textOperand(e, other Expr) Expr {
	if e.Type().Kind != types.KindVarchar {
		return e
	}
	if k := other.Type().Kind; k != types.KindVarchar && k != types.KindText {
		return e
	}
	if c, ok := e.(*Const); ok {
		return &Const{D: c.D, T: types.Text}
	}
	return &Cast{E: e, T: types.Text}
}

// simpleUnder is PostgreSQL's isSimpleNode for pretty printing: whether e
// needs no parentheses as an argument of parent.
func simpleUnder(e, parent Expr) bool {
	switch x := e.(type) {
	case *Func:
		return x.Name != "= ANY" && x.Name != "<> ALL" // those are operators
	case *ColRef, *Const, *Cast:
		return true
	case *Binary:
		if pb, ok := parent.(*Binary); ok {
			lo, hi := x.Op == OpAdd || x.Op == OpSub, x.Op == OpMul || x.Op == OpDiv || x.Op == OpMod
			plo, phi := pb.Op == OpAdd || pb.Op == OpSub, pb.Op == OpMul || pb.Op == OpDiv || pb.Op == OpMod
			switch {
			case !(lo || hi) || !(plo || phi):
				return false
			case hi && plo:
				return true
			case lo && phi:
				return false
			}
			return pb.L == e // (a - b) - c, not a - (b - c)
		}
		return simpleTestUnder(parent)
	case *IsNull, *IsDistinct:
		return simpleTestUnder(parent)
	case *In:
		return len(x.List) == 1 && simpleTestUnder(parent) // printed as a comparison
	case *Not, *And:
		switch parent.(type) {
		case *And, *Or:
			return true
		case *Func:
			return true
		}
		return false
	case *Or:
		switch parent.(type) {
		case *Or, *Func:
			return true
		}
		return false
	}
	return false
}

// simpleTestUnder: an operator, IS NULL or IS DISTINCT FROM needs no
// parentheses under a boolean connective or as a function's argument.
func simpleTestUnder(parent Expr) bool {
	switch parent.(type) {
	case *And, *Or, *Not, *Func:
		return true
	}
	return false
}
