package parse

import (
	"encoding/json"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
)

// DoBlock is an anonymous code block (DO) in the part of PL/pgSQL that
// mvserver runs: a BEGIN … END of SQL statements (and PERFORM queries),
// with an optional EXCEPTION clause whose handlers are SQL statements or
// NULL. This is what ORMs send: Sequelize creates an enum type with
//
//	DO 'BEGIN CREATE TYPE … AS ENUM(…); EXCEPTION WHEN duplicate_object THEN null; END'
//
// Anything else of PL/pgSQL (DECLARE, assignments, IF, loops, RAISE, …)
// fails with 0A000 naming what is not supported. The body is parsed by
// PostgreSQL's own PL/pgSQL parser (libpg_query).
type DoBlock struct {
	Body     []DoStatement
	Handlers []DoHandler
}

// DoStatement is one SQL statement of a block; Perform marks PERFORM (a
// query whose rows are discarded).
type DoStatement struct {
	SQL     string
	Perform bool
}

// DoHandler is one WHEN clause: the SQLSTATEs (or "others") it catches
// and the statements it runs (none for NULL).
type DoHandler struct {
	Conditions []string
	Body       []DoStatement
}

// Catches reports whether the handler catches an error with SQLSTATE code.
func (h DoHandler) Catches(code string) bool {
	for _, c := range h.Conditions {
		if pgerror.ConditionCatches(c, code) {
			return true
		}
	}
	return false
}

// The JSON of libpg_query's PL/pgSQL parse tree, as far as DoBlockOf
// reads it: statements are objects of one key, the statement's kind.
type plFunction struct {
	PLpgSQLFunction struct {
		Datums []map[string]json.RawMessage `json:"datums"`
		Action map[string]json.RawMessage   `json:"action"`
	} `json:"PLpgSQL_function"`
}

type plBlock struct {
	Body       []map[string]json.RawMessage `json:"body"`
	Exceptions *struct {
		Block struct {
			List []struct {
				Exception struct {
					Conditions []struct {
						Condition struct {
							Name string `json:"condname"`
						} `json:"PLpgSQL_condition"`
					} `json:"conditions"`
					Action []map[string]json.RawMessage `json:"action"`
				} `json:"PLpgSQL_exception"`
			} `json:"exc_list"`
		} `json:"PLpgSQL_exception_block"`
	} `json:"exceptions"`
}

type plQuery struct {
	SQL struct {
		Expr struct {
			Query string `json:"query"`
		} `json:"PLpgSQL_expr"`
	} `json:"sqlstmt"`
	Expr struct {
		Expr struct {
			Query string `json:"query"`
		} `json:"PLpgSQL_expr"`
	} `json:"expr"`
}

// plStatementWords names PL/pgSQL statements in messages.
var plStatementWords = map[string]string{
	"PLpgSQL_stmt_assign": "assignment", "PLpgSQL_stmt_if": "IF", "PLpgSQL_stmt_case": "CASE",
	"PLpgSQL_stmt_loop": "LOOP", "PLpgSQL_stmt_while": "WHILE", "PLpgSQL_stmt_fori": "FOR",
	"PLpgSQL_stmt_fors": "FOR", "PLpgSQL_stmt_forc": "FOR", "PLpgSQL_stmt_foreach_a": "FOREACH",
	"PLpgSQL_stmt_exit": "EXIT", "PLpgSQL_stmt_return": "RETURN", "PLpgSQL_stmt_raise": "RAISE",
	"PLpgSQL_stmt_assert": "ASSERT", "PLpgSQL_stmt_dynexecute": "EXECUTE", "PLpgSQL_stmt_dynfors": "FOR … EXECUTE",
	"PLpgSQL_stmt_getdiag": "GET DIAGNOSTICS", "PLpgSQL_stmt_open": "OPEN", "PLpgSQL_stmt_fetch": "FETCH",
	"PLpgSQL_stmt_close": "CLOSE", "PLpgSQL_stmt_commit": "COMMIT", "PLpgSQL_stmt_rollback": "ROLLBACK",
	"PLpgSQL_stmt_call": "CALL", "PLpgSQL_stmt_block": "a nested BEGIN … END block",
}

func doUnsupported(what string) error {
	return pgerror.New(pgerror.FeatureNotSupported, "DO blocks here run SQL statements with an optional EXCEPTION clause; %s is not supported", what)
}

// DoBlockOf reads a DO statement: its language must be plpgsql (the
// default), its body a block DoBlock describes. Errors: 42704 for another
// language or an unknown condition name, 42601 for a body that does not
// parse, 0A000 for PL/pgSQL beyond the supported part.
func DoBlockOf(n *pg_query.DoStmt) (*DoBlock, error) {
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
	var fns []plFunction
	if err := json.Unmarshal([]byte(out), &fns); err != nil || len(fns) != 1 {
		return nil, pgerror.New(pgerror.InternalError, "reading the DO block's parse tree: %v", err)
	}
	fn := fns[0].PLpgSQLFunction
	// found, sqlstate and sqlerrm are the implicit variables; more is DECLARE.
	for _, d := range fn.Datums {
		if v, ok := d["PLpgSQL_var"]; ok {
			var name struct {
				Refname string `json:"refname"`
			}
			_ = json.Unmarshal(v, &name)
			if name.Refname == "found" || name.Refname == "sqlstate" || name.Refname == "sqlerrm" {
				continue
			}
		}
		return nil, doUnsupported("DECLARE")
	}
	var outer plBlock
	if err := json.Unmarshal(fn.Action["PLpgSQL_stmt_block"], &outer); err != nil {
		return nil, pgerror.New(pgerror.InternalError, "reading the DO block's parse tree: %v", err)
	}
	// The function's block holds the DO's block and the implicit RETURN.
	stmts := outer.Body
	if k := len(stmts); k > 0 {
		if _, ok := stmts[k-1]["PLpgSQL_stmt_return"]; ok {
			stmts = stmts[:k-1]
		}
	}
	blk := &outer
	if len(stmts) == 1 {
		if raw, ok := stmts[0]["PLpgSQL_stmt_block"]; ok {
			var inner plBlock // fresh: decoding into outer would merge into its maps
			if err := json.Unmarshal(raw, &inner); err != nil {
				return nil, pgerror.New(pgerror.InternalError, "reading the DO block's parse tree: %v", err)
			}
			blk, stmts = &inner, inner.Body
		}
	}
	res := &DoBlock{}
	if res.Body, err = doStatements(stmts); err != nil {
		return nil, err
	}
	if blk.Exceptions != nil {
		for _, e := range blk.Exceptions.Block.List {
			var h DoHandler
			for _, c := range e.Exception.Conditions {
				name := strings.ToLower(c.Condition.Name)
				switch code, ok := pgerror.ConditionCode(name); {
				case name == "others":
					h.Conditions = append(h.Conditions, name)
				case ok:
					h.Conditions = append(h.Conditions, code)
				case len(name) == 5 && strings.ToUpper(name) == c.Condition.Name:
					h.Conditions = append(h.Conditions, c.Condition.Name) // SQLSTATE 'xxxxx'
				default:
					return nil, pgerror.New(pgerror.UndefinedObject, "unrecognized exception condition \"%s\"", c.Condition.Name)
				}
			}
			if h.Body, err = doStatements(e.Exception.Action); err != nil {
				return nil, err
			}
			res.Handlers = append(res.Handlers, h)
		}
	}
	return res, nil
}

func doStatements(stmts []map[string]json.RawMessage) ([]DoStatement, error) {
	var out []DoStatement
	for _, s := range stmts {
		for kind, raw := range s {
			var q plQuery
			switch kind {
			case "PLpgSQL_stmt_execsql":
				if err := json.Unmarshal(raw, &q); err != nil {
					return nil, err
				}
				out = append(out, DoStatement{SQL: q.SQL.Expr.Query})
			case "PLpgSQL_stmt_perform":
				if err := json.Unmarshal(raw, &q); err != nil {
					return nil, err
				}
				out = append(out, DoStatement{SQL: q.Expr.Expr.Query, Perform: true})
			default:
				w, ok := plStatementWords[kind]
				if !ok {
					w = "this PL/pgSQL statement"
				}
				return nil, doUnsupported(w)
			}
		}
	}
	return out, nil
}

// DataChange reports whether sql is one INSERT, UPDATE, DELETE or MERGE
// (what a DO block's EXCEPTION clause cannot undo without
// subtransactions).
func DataChange(sql string) bool {
	st, err := ParseOne(sql)
	if err != nil || st == nil || st.AST == nil {
		return false
	}
	switch st.AST.Node.(type) {
	case *pg_query.Node_InsertStmt, *pg_query.Node_UpdateStmt, *pg_query.Node_DeleteStmt, *pg_query.Node_MergeStmt:
		return true
	}
	return false
}
