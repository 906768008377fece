package plpgsql

import (
	"encoding/json"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/parse"
)

// Block is a parsed DO block: its variables and its outermost BEGIN … END.
type Block struct {
	Vars []Var // by PL/pgSQL datum number
	Body *Stmt // a Kind "block"
}

// Var is one PL/pgSQL datum: a scalar variable (Type set), a record
// (Record), or a row of variables a SELECT … INTO fills (Fields).
type Var struct {
	Name    string
	Type    string // SQL type name of a scalar, as DECLARE wrote it
	Default string // DECLARE's default expression, "" for none
	Record  bool
	Fields  []int // a row: the datums it assigns, in order
	// field of a record (r.x): its record's datum and the field name.
	Parent int
	Field  string
}

// Stmt is one PL/pgSQL statement. Kind says which; the fields it uses:
//
//	sql      SQL (INTO: HasInto, Into or IntoFields, Strict); Perform for PERFORM
//	execute  Expr (the query string), Params (USING), INTO as for sql
//	assign   Target, Expr
//	if       Conds[i] guards Bodies[i]; Else
//	fors     Target (a record) or IntoFields, SQL, Body; Dynamic: SQL is
//	         an expression giving the query (FOR … IN EXECUTE), Params USING
//	fori     LoopVar, Lower, Upper, Step, Reverse, Body
//	loop     Body
//	while    Conds[0], Body
//	exit     Continue (CONTINUE, else EXIT), Label, Conds (WHEN; none: always)
//	raise    Level, Message, Params, Options, Condition
//	block    Body, Handlers
//	return   (ends the block)
//
// Label is the <<label>> of a block or loop, or the label EXIT and
// CONTINUE name.
type Stmt struct {
	Kind     string
	Label    string
	SQL      string
	Perform  bool
	Dynamic  bool
	Continue bool
	// HasInto: SELECT … INTO; its target is the record Into (or, for a
	// FOR, Target) or the variables IntoFields.
	HasInto    bool
	Into       int
	IntoFields []int
	Strict     bool
	Target     int
	Expr       string
	Conds      []string
	Bodies     [][]*Stmt
	Else       []*Stmt
	Body       []*Stmt
	LoopVar    string
	Lower      string
	Upper      string
	Step       string
	Reverse    bool
	Level      int
	Message    string
	Params     []string
	Options    []RaiseOption
	// Condition is RAISE condition_name (or SQLSTATE 'xxxxx').
	Condition string
	Handlers  []Handler
}

// RaiseOption is one USING item of RAISE: Kind is ERRCODE, MESSAGE,
// DETAIL, HINT, …; Expr its value.
type RaiseOption struct {
	Kind string
	Expr string
}

// Handler is one EXCEPTION WHEN clause: the SQLSTATEs (or "others") it
// catches and the statements it runs.
type Handler struct {
	Conditions []string
	Body       []*Stmt
}

// Catches reports whether the handler catches an error with SQLSTATE code.
func (h Handler) Catches(code string) bool {
	for _, c := range h.Conditions {
		if pgerror.ConditionCatches(c, code) {
			return true
		}
	}
	return false
}

// Elog levels of RAISE, PostgreSQL's numbering.
const (
	levelDebug   = 14
	levelLog     = 15
	levelInfo    = 17
	levelNotice  = 18
	levelWarning = 19
	levelError   = 21
)

var raiseOptionKinds = [...]string{"ERRCODE", "MESSAGE", "DETAIL", "HINT", "COLUMN", "CONSTRAINT", "DATATYPE", "TABLE", "SCHEMA"}

// unsupported names the PL/pgSQL statements not run here.
var unsupported = map[string]string{
	"PLpgSQL_stmt_case": "CASE",
	"PLpgSQL_stmt_forc": "FOR over a cursor", "PLpgSQL_stmt_foreach_a": "FOREACH",
	"PLpgSQL_stmt_assert":  "ASSERT",
	"PLpgSQL_stmt_getdiag": "GET DIAGNOSTICS", "PLpgSQL_stmt_open": "OPEN",
	"PLpgSQL_stmt_fetch": "FETCH", "PLpgSQL_stmt_close": "CLOSE", "PLpgSQL_stmt_commit": "COMMIT",
	"PLpgSQL_stmt_rollback": "ROLLBACK", "PLpgSQL_stmt_call": "CALL", "PLpgSQL_stmt_return_next": "RETURN NEXT",
	"PLpgSQL_stmt_return_query": "RETURN QUERY",
}

func notSupported(what string) error {
	return pgerror.New(pgerror.FeatureNotSupported, "%s is not supported in DO blocks", what)
}

// Parse reads a DO statement: its language must be plpgsql (the default).
// Errors: 42704 for another language or an unknown condition name, 42601
// for a body that does not parse, 0A000 for what is not run here
// (invariants 2 and 3).
func Parse(n *pg_query.DoStmt) (*Block, error) {
	var body, lang string
	for _, a := range n.Args {
		d := a.GetDefElem()
		if d == nil {
			continue
		}
		switch d.Defname {
		case "as":
			body = d.Arg.GetString_().GetSval()
		case "language":
			lang = d.Arg.GetString_().GetSval()
		}
	}
	if lang != "" && !strings.EqualFold(lang, "plpgsql") {
		return nil, pgerror.New(pgerror.UndefinedObject, "language \"%s\" does not exist", lang)
	}
	tag := "mv_do"
	for strings.Contains(body, "$"+tag+"$") {
		tag += "_"
	}
	out, err := pg_query.ParsePlPgSqlToJSON("CREATE FUNCTION pg_temp.mv_do() RETURNS void LANGUAGE plpgsql AS $" + tag + "$" + body + "$" + tag + "$")
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "error: ")
		if strings.HasPrefix(msg, "unrecognized exception condition") {
			return nil, pgerror.New(pgerror.UndefinedObject, "%s", msg)
		}
		return nil, pgerror.New(pgerror.SyntaxError, "%s", msg)
	}
	var fns []struct {
		F struct {
			Datums []map[string]json.RawMessage `json:"datums"`
			Action map[string]json.RawMessage   `json:"action"`
		} `json:"PLpgSQL_function"`
	}
	if err := json.Unmarshal([]byte(out), &fns); err != nil || len(fns) != 1 {
		return nil, pgerror.New(pgerror.InternalError, "reading the DO block's parse tree: %v", err)
	}
	b := &Block{}
	for _, d := range fns[0].F.Datums {
		v, err := readDatum(d)
		if err != nil {
			return nil, err
		}
		b.Vars = append(b.Vars, v)
	}
	top, err := readStmt(fns[0].F.Action)
	if err != nil {
		return nil, err
	}
	// The function's block holds the DO's block and the implicit RETURN.
	if k := len(top.Body); k > 0 && top.Body[k-1].Kind == "return" {
		top.Body = top.Body[:k-1]
	}
	if len(top.Body) == 1 && top.Body[0].Kind == "block" && len(top.Handlers) == 0 {
		top = top.Body[0]
	}
	b.Body = top
	if err := checkHandlers(top); err != nil {
		return nil, err
	}
	if err := checkExits(top.Body, false, labelsOf(top, nil)); err != nil {
		return nil, err
	}
	return b, nil
}

// checkExits refuses, as PostgreSQL's compiler does (42601), an EXIT or
// CONTINUE outside a loop or naming no enclosing label, and a CONTINUE
// naming a block. labels maps the enclosing labels to whether each is a
// loop's.
func checkExits(list []*Stmt, inLoop bool, labels map[string]bool) error {
	for _, st := range list {
		if st.Kind == "exit" {
			loop, ok := labels[st.Label]
			switch {
			case st.Label == "" && !inLoop && st.Continue:
				return pgerror.New(pgerror.SyntaxError, "CONTINUE cannot be used outside a loop")
			case st.Label == "" && !inLoop:
				return pgerror.New(pgerror.SyntaxError, "EXIT cannot be used outside a loop, unless it has a label")
			case st.Label != "" && !ok:
				return pgerror.New(pgerror.SyntaxError, "there is no label \"%s\" attached to any block or loop enclosing this statement", st.Label)
			case st.Label != "" && st.Continue && !loop:
				return pgerror.New(pgerror.SyntaxError, "block label \"%s\" cannot be used in CONTINUE", st.Label)
			}
		}
		loop := isLoop(st)
		inner := labelsOf(st, labels)
		for _, c := range children(st) {
			if err := checkExits(c, inLoop || loop, inner); err != nil {
				return err
			}
		}
	}
	return nil
}

// labelsOf is labels with st's own label added.
func labelsOf(st *Stmt, labels map[string]bool) map[string]bool {
	if st.Label == "" {
		return labels
	}
	out := map[string]bool{st.Label: isLoop(st)}
	for k, v := range labels {
		if _, shadowed := out[k]; !shadowed {
			out[k] = v
		}
	}
	return out
}

// isLoop reports whether st is a loop (EXIT and CONTINUE apply to it).
func isLoop(st *Stmt) bool {
	switch st.Kind {
	case "loop", "while", "fors", "fori":
		return true
	}
	return false
}

type plExpr struct {
	E struct {
		Query string `json:"query"`
	} `json:"PLpgSQL_expr"`
}

type plType struct {
	T struct {
		Name string `json:"typname"`
	} `json:"PLpgSQL_type"`
}

type plRow struct {
	Fields []struct {
		Varno int `json:"varno"`
	} `json:"fields"`
}

func readDatum(d map[string]json.RawMessage) (Var, error) {
	var v Var
	for kind, raw := range d {
		switch kind {
		case "PLpgSQL_var":
			var x struct {
				Name    string  `json:"refname"`
				Type    plType  `json:"datatype"`
				Default *plExpr `json:"default_val"`
			}
			if err := json.Unmarshal(raw, &x); err != nil {
				return v, err
			}
			v.Name, v.Type = x.Name, strings.TrimSpace(x.Type.T.Name)
			if x.Default != nil {
				v.Default = x.Default.E.Query
			}
		case "PLpgSQL_rec":
			var x struct {
				Name string `json:"refname"`
			}
			if err := json.Unmarshal(raw, &x); err != nil {
				return v, err
			}
			v.Name, v.Record = x.Name, true
		case "PLpgSQL_row":
			var x plRow
			if err := json.Unmarshal(raw, &x); err != nil {
				return v, err
			}
			v.Fields = []int{}
			for _, f := range x.Fields {
				v.Fields = append(v.Fields, f.Varno)
			}
		case "PLpgSQL_recfield":
			var x struct {
				Field  string `json:"fieldname"`
				Parent int    `json:"recparentno"`
			}
			if err := json.Unmarshal(raw, &x); err != nil {
				return v, err
			}
			v.Parent, v.Field = x.Parent, x.Field
		default:
			return v, notSupported("this kind of variable")
		}
	}
	return v, nil
}

// target reads an INTO or FOR target: a record's datum number, or the
// variables of a row (which the tree gives inline, without its number).
func target(raw json.RawMessage) (int, []int, error) {
	var t map[string]json.RawMessage
	if err := json.Unmarshal(raw, &t); err != nil {
		return -1, nil, err
	}
	if r, ok := t["PLpgSQL_row"]; ok {
		var x plRow
		if err := json.Unmarshal(r, &x); err != nil {
			return -1, nil, err
		}
		fields := []int{}
		for _, f := range x.Fields {
			fields = append(fields, f.Varno)
		}
		return -1, fields, nil
	}
	for _, r := range t {
		var x struct {
			Dno int `json:"dno"`
		}
		if err := json.Unmarshal(r, &x); err != nil {
			return -1, nil, err
		}
		return x.Dno, nil, nil
	}
	return -1, nil, nil
}

func readStmts(list []map[string]json.RawMessage) ([]*Stmt, error) {
	var out []*Stmt
	for _, s := range list {
		st, err := readStmt(s)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func readStmt(s map[string]json.RawMessage) (*Stmt, error) {
	for kind, raw := range s {
		if w, ok := unsupported[kind]; ok {
			return nil, notSupported(w)
		}
		var x struct {
			Label   string                       `json:"label"`
			IsExit  bool                         `json:"is_exit"`
			SQL     plExpr                       `json:"sqlstmt"`
			Expr    plExpr                       `json:"expr"`
			Into    bool                         `json:"into"`
			Strict  bool                         `json:"strict"`
			Target  json.RawMessage              `json:"target"`
			Varno   int                          `json:"varno"`
			Cond    plExpr                       `json:"cond"`
			Then    []map[string]json.RawMessage `json:"then_body"`
			Elsifs  []map[string]json.RawMessage `json:"elsif_list"`
			Else    []map[string]json.RawMessage `json:"else_body"`
			Body    []map[string]json.RawMessage `json:"body"`
			Var     json.RawMessage              `json:"var"`
			Query   plExpr                       `json:"query"`
			Lower   plExpr                       `json:"lower"`
			Upper   plExpr                       `json:"upper"`
			Step    *plExpr                      `json:"step"`
			Reverse bool                         `json:"reverse"`
			Level   int                          `json:"elog_level"`
			Message string                       `json:"message"`
			Params  []plExpr                     `json:"params"`
			CondNm  string                       `json:"condname"`
			Options []struct {
				O struct {
					Type int    `json:"opt_type"`
					Expr plExpr `json:"expr"`
				} `json:"PLpgSQL_raise_option"`
			} `json:"options"`
			Exceptions *struct {
				Block struct {
					List []struct {
						E struct {
							Conditions []struct {
								C struct {
									Name string `json:"condname"`
								} `json:"PLpgSQL_condition"`
							} `json:"conditions"`
							Action []map[string]json.RawMessage `json:"action"`
						} `json:"PLpgSQL_exception"`
					} `json:"exc_list"`
				} `json:"PLpgSQL_exception_block"`
			} `json:"exceptions"`
		}
		if err := json.Unmarshal(raw, &x); err != nil {
			return nil, pgerror.New(pgerror.InternalError, "reading the DO block's parse tree: %v", err)
		}
		st := &Stmt{Into: -1, Target: -1, Label: x.Label}
		var err error
		switch kind {
		case "PLpgSQL_stmt_loop":
			st.Kind = "loop"
			if st.Body, err = readStmts(x.Body); err != nil {
				return nil, err
			}
		case "PLpgSQL_stmt_while":
			st.Kind, st.Conds = "while", []string{x.Cond.E.Query}
			if st.Body, err = readStmts(x.Body); err != nil {
				return nil, err
			}
		case "PLpgSQL_stmt_exit":
			st.Kind, st.Continue = "exit", !x.IsExit
			if x.Cond.E.Query != "" {
				st.Conds = []string{x.Cond.E.Query}
			}
		case "PLpgSQL_stmt_dynexecute":
			st.Kind, st.Expr, st.Strict, st.Params = "execute", x.Query.E.Query, x.Strict, exprTexts(x.Params)
			if err := st.readInto(x.Into, x.Target); err != nil {
				return nil, err
			}
		case "PLpgSQL_stmt_dynfors":
			st.Kind, st.SQL, st.Dynamic, st.Params = "fors", x.Query.E.Query, true, exprTexts(x.Params)
			if st.Target, st.IntoFields, err = target(x.Var); err != nil {
				return nil, err
			}
			if st.Body, err = readStmts(x.Body); err != nil {
				return nil, err
			}
		case "PLpgSQL_stmt_execsql":
			st.Kind, st.SQL, st.Strict = "sql", x.SQL.E.Query, x.Strict
			if err := st.readInto(x.Into, x.Target); err != nil {
				return nil, err
			}
		case "PLpgSQL_stmt_perform":
			st.Kind, st.SQL, st.Perform = "sql", x.Expr.E.Query, true
		case "PLpgSQL_stmt_assign":
			st.Kind, st.Target, st.Expr = "assign", x.Varno, x.Expr.E.Query
		case "PLpgSQL_stmt_if":
			st.Kind = "if"
			st.Conds = append(st.Conds, x.Cond.E.Query)
			body, err := readStmts(x.Then)
			if err != nil {
				return nil, err
			}
			st.Bodies = append(st.Bodies, body)
			for _, e := range x.Elsifs {
				var ei struct {
					E struct {
						Cond  plExpr                       `json:"cond"`
						Stmts []map[string]json.RawMessage `json:"stmts"`
					} `json:"PLpgSQL_if_elsif"`
				}
				if err := json.Unmarshal(mustJSON(e), &ei); err != nil {
					return nil, err
				}
				body, err := readStmts(ei.E.Stmts)
				if err != nil {
					return nil, err
				}
				st.Conds, st.Bodies = append(st.Conds, ei.E.Cond.E.Query), append(st.Bodies, body)
			}
			if st.Else, err = readStmts(x.Else); err != nil {
				return nil, err
			}
		case "PLpgSQL_stmt_fors":
			st.Kind, st.SQL = "fors", x.Query.E.Query
			if st.Target, st.IntoFields, err = target(x.Var); err != nil {
				return nil, err
			}
			if st.Body, err = readStmts(x.Body); err != nil {
				return nil, err
			}
		case "PLpgSQL_stmt_fori":
			var v map[string]struct {
				Name string `json:"refname"`
			}
			if err := json.Unmarshal(x.Var, &v); err != nil {
				return nil, err
			}
			st.Kind, st.LoopVar = "fori", v["PLpgSQL_var"].Name
			st.Lower, st.Upper, st.Reverse = x.Lower.E.Query, x.Upper.E.Query, x.Reverse
			if x.Step != nil {
				st.Step = x.Step.E.Query
			}
			if st.Body, err = readStmts(x.Body); err != nil {
				return nil, err
			}
		case "PLpgSQL_stmt_raise":
			st.Kind, st.Level, st.Message, st.Condition = "raise", x.Level, x.Message, x.CondNm
			if st.Message == "" && st.Condition == "" && len(x.Options) == 0 {
				return nil, notSupported("RAISE without a message (re-raising)")
			}
			st.Params = exprTexts(x.Params)
			for _, o := range x.Options {
				k := "OPTION"
				if o.O.Type >= 0 && o.O.Type < len(raiseOptionKinds) {
					k = raiseOptionKinds[o.O.Type]
				}
				st.Options = append(st.Options, RaiseOption{Kind: k, Expr: o.O.Expr.E.Query})
			}
		case "PLpgSQL_stmt_block":
			st.Kind = "block"
			if st.Body, err = readStmts(x.Body); err != nil {
				return nil, err
			}
			if x.Exceptions != nil {
				for _, e := range x.Exceptions.Block.List {
					var h Handler
					for _, c := range e.E.Conditions {
						code, err := conditionCode(c.C.Name)
						if err != nil {
							return nil, err
						}
						h.Conditions = append(h.Conditions, code)
					}
					if h.Body, err = readStmts(e.E.Action); err != nil {
						return nil, err
					}
					st.Handlers = append(st.Handlers, h)
				}
			}
		case "PLpgSQL_stmt_return":
			st.Kind = "return"
		default:
			return nil, notSupported("this PL/pgSQL statement")
		}
		return st, nil
	}
	return nil, pgerror.New(pgerror.InternalError, "reading the DO block's parse tree: an empty statement")
}

// readInto sets the INTO target of a SELECT … INTO or EXECUTE … INTO.
func (st *Stmt) readInto(into bool, raw json.RawMessage) error {
	if !into {
		return nil
	}
	var err error
	st.Into, st.IntoFields, err = target(raw)
	st.HasInto = err == nil
	return err
}

// exprTexts are the texts of PL/pgSQL expressions.
func exprTexts(list []plExpr) []string {
	var out []string
	for _, p := range list {
		out = append(out, p.E.Query)
	}
	return out
}

func mustJSON(m map[string]json.RawMessage) []byte {
	b, _ := json.Marshal(m)
	return b
}

// conditionCode is a handler's condition as a SQLSTATE, or "others".
func conditionCode(name string) (string, error) {
	lower := strings.ToLower(name)
	if lower == "others" {
		return lower, nil
	}
	if code, ok := pgerror.ConditionCode(lower); ok {
		return code, nil
	}
	if len(name) == 5 && strings.ToUpper(name) == name {
		return name, nil // SQLSTATE 'xxxxx'
	}
	return "", pgerror.New(pgerror.UndefinedObject, "unrecognized exception condition \"%s\"", name)
}

// checkHandlers enforces invariant 2 on every block with handlers.
func checkHandlers(st *Stmt) error {
	if st.Kind == "block" && len(st.Handlers) > 0 {
		n, change := effects(st.Body)
		if n > 1 || change {
			return pgerror.New(pgerror.FeatureNotSupported, "a DO block with an EXCEPTION clause may hold only one statement that changes no rows here (there are no subtransactions to undo the block's writes)")
		}
	}
	for _, list := range children(st) {
		for _, c := range list {
			if err := checkHandlers(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// effects counts the SQL statements of stmts (nested ones included) and
// reports whether one changes rows.
func effects(stmts []*Stmt) (int, bool) {
	n, change := 0, false
	for _, s := range stmts {
		switch {
		case s.Kind == "sql" || s.Kind == "fors" && !s.Dynamic:
			n++
			change = change || parse.DataChange(s.SQL)
		case s.Kind == "execute" || s.Kind == "fors":
			// A constant query string is known; any other may change rows.
			n++
			text, ok := constantString(s.Expr)
			if s.Kind == "fors" {
				text, ok = constantString(s.SQL)
			}
			change = change || !ok || parse.DataChange(text)
		}
		for _, list := range children(s) {
			k, c := effects(list)
			n, change = n+k, change || c
		}
	}
	return n, change
}

func children(s *Stmt) [][]*Stmt {
	out := append([][]*Stmt{s.Body, s.Else}, s.Bodies...)
	for _, h := range s.Handlers {
		out = append(out, h.Body)
	}
	return out
}

// constantString is the value of expr when it is a string literal (an
// EXECUTE of a constant query).
func constantString(expr string) (string, bool) {
	tree, err := pg_query.Parse("SELECT " + expr)
	if err != nil || len(tree.Stmts) != 1 {
		return "", false
	}
	sel := tree.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 {
		return "", false
	}
	c := sel.TargetList[0].GetResTarget().GetVal().GetAConst()
	if c == nil || c.GetSval() == nil {
		return "", false
	}
	return c.GetSval().GetSval(), true
}
