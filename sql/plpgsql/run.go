package plpgsql

import (
	"context"
	"errors"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/parse"
)

// Runner runs the SQL of a block for Run: the session, in its
// transaction. params are $1, $2, … in the text format (nil is NULL);
// the SQL casts each to its type, so every parameter is text.
type Runner interface {
	Run(ctx context.Context, sql string, params []*string) (*Result, error)
	// Notice sends a RAISE below ERROR to the client.
	Notice(n *pgerror.Error)
}

// Result is what one statement gave: Cols and Rows (text, nil for NULL)
// for a query, Affected for a data change.
type Result struct {
	Cols     []Column
	Rows     [][]*string
	Affected int64
}

// Column is a result column: its name and SQL type name.
type Column struct {
	Name, Type string
}

// PL/pgSQL's own SQLSTATEs.
const (
	codeRaiseException = "P0001"
	codeNoDataFound    = "P0002"
	codeTooManyRows    = "P0003"
)

// Run runs b's statements through r.
func Run(ctx context.Context, b *Block, r Runner) error {
	in := &interp{b: b, r: r, vals: map[int]*string{}, recs: map[int]*record{}, names: map[string]int{}}
	for i, v := range b.Vars {
		if v.Name != "" && (v.Type != "" || v.Record) {
			in.names[strings.ToLower(v.Name)] = i
		}
	}
	in.setFound(false)
	for i, v := range b.Vars {
		if v.Default == "" {
			continue
		}
		val, err := in.eval(ctx, v.Default, v.Type)
		if err != nil {
			return err
		}
		in.vals[i] = val
	}
	err := in.block(ctx, b.Body)
	if errors.Is(err, errReturn) {
		return nil
	}
	return err
}

// errReturn unwinds the blocks at RETURN.
var errReturn = errors.New("return")

type record struct {
	cols []Column
	row  []*string // nil: not assigned yet
}

type interp struct {
	b     *Block
	r     Runner
	vals  map[int]*string // scalar variables by datum number
	recs  map[int]*record
	names map[string]int
}

func (in *interp) setFound(v bool) {
	if i, ok := in.names["found"]; ok {
		in.vals[i] = boolText(v)
	}
}

func boolText(v bool) *string {
	s := "f"
	if v {
		s = "t"
	}
	return &s
}

func (in *interp) block(ctx context.Context, st *Stmt) error {
	err := in.stmts(ctx, st.Body)
	var ex *loopExit
	if errors.As(err, &ex) && st.Label != "" && ex.label == st.Label {
		return nil // EXIT of this labelled block
	}
	if err == nil || len(st.Handlers) == 0 || errors.Is(err, errReturn) {
		return err
	}
	var pe *pgerror.Error
	if !errors.As(err, &pe) {
		return err
	}
	for _, h := range st.Handlers {
		if h.Catches(pe.Code) {
			if i, ok := in.names["sqlstate"]; ok {
				code := pe.Code
				in.vals[i] = &code
			}
			if i, ok := in.names["sqlerrm"]; ok {
				msg := pe.Message
				in.vals[i] = &msg
			}
			return in.stmts(ctx, h.Body)
		}
	}
	return err
}

func (in *interp) stmts(ctx context.Context, list []*Stmt) error {
	for _, st := range list {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := in.stmt(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

func (in *interp) stmt(ctx context.Context, st *Stmt) error {
	switch st.Kind {
	case "sql":
		return in.sql(ctx, st)
	case "assign":
		return in.assign(ctx, st)
	case "if":
		for i, c := range st.Conds {
			ok, err := in.cond(ctx, c)
			if err != nil {
				return err
			}
			if ok {
				return in.stmts(ctx, st.Bodies[i])
			}
		}
		return in.stmts(ctx, st.Else)
	case "fors":
		var res *Result
		var err error
		if st.Dynamic {
			res, err = in.execute(ctx, st.SQL, st.Params)
		} else {
			res, err = in.run(ctx, st.SQL)
		}
		if err != nil {
			return err
		}
		for _, row := range res.Rows {
			if err := in.assignRow(st.Target, st.IntoFields, res.Cols, row); err != nil {
				return err
			}
			stop, err := in.iteration(ctx, st)
			if err != nil {
				return err
			}
			if stop {
				break
			}
		}
		in.setFound(len(res.Rows) > 0)
		return nil
	case "fori":
		return in.fori(ctx, st)
	case "loop", "while":
		for {
			if st.Kind == "while" {
				ok, err := in.cond(ctx, st.Conds[0])
				if err != nil || !ok {
					return err
				}
			}
			stop, err := in.iteration(ctx, st)
			if err != nil || stop {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	case "exit":
		if len(st.Conds) > 0 {
			ok, err := in.cond(ctx, st.Conds[0])
			if err != nil || !ok {
				return err
			}
		}
		return &loopExit{label: st.Label, cont: st.Continue}
	case "execute":
		return in.executeStmt(ctx, st)
	case "raise":
		return in.raise(ctx, st)
	case "block":
		return in.block(ctx, st)
	case "return":
		return errReturn
	}
	return notSupported("this PL/pgSQL statement")
}

func (in *interp) sql(ctx context.Context, st *Stmt) error {
	res, err := in.run(ctx, st.SQL)
	if err != nil {
		return err
	}
	switch {
	case st.HasInto:
		if st.Strict && len(res.Rows) == 0 {
			return pgerror.New(codeNoDataFound, "query returned no rows")
		}
		if st.Strict && len(res.Rows) > 1 {
			return pgerror.New(codeTooManyRows, "query returned more than one row").
				WithHint("Make sure the query returns a single row, or use LIMIT 1.")
		}
		var row []*string
		if len(res.Rows) > 0 {
			row = res.Rows[0]
		} else {
			row = make([]*string, len(res.Cols))
		}
		if err := in.assignRow(st.Into, st.IntoFields, res.Cols, row); err != nil {
			return err
		}
		in.setFound(len(res.Rows) > 0)
	case res.Cols != nil && !st.Perform:
		return pgerror.New(pgerror.SyntaxError, "query has no destination for result data").
			WithHint("If you want to discard the results of a SELECT, use PERFORM instead.")
	case res.Cols != nil:
		in.setFound(len(res.Rows) > 0)
	default:
		in.setFound(res.Affected > 0)
	}
	return nil
}

// assignRow assigns a result row to an INTO or FOR target: the record
// dno takes the row; else the variables fields take its columns in order
// (missing ones NULL).
func (in *interp) assignRow(dno int, fields []int, cols []Column, row []*string) error {
	if fields != nil {
		for i, f := range fields {
			var val *string
			if i < len(row) {
				val = row[i]
			}
			in.vals[f] = val
		}
		return nil
	}
	if dno < 0 || dno >= len(in.b.Vars) || !in.b.Vars[dno].Record {
		return notSupported("this INTO target")
	}
	in.recs[dno] = &record{cols: cols, row: row}
	return nil
}

func (in *interp) assign(ctx context.Context, st *Stmt) error {
	if st.Target < 0 || st.Target >= len(in.b.Vars) || in.b.Vars[st.Target].Type == "" {
		return notSupported("assigning to a record or one of its fields")
	}
	v := in.b.Vars[st.Target]
	rhs := st.Expr
	if i := strings.Index(rhs, ":="); i >= 0 {
		rhs = rhs[i+2:]
	} else if i := strings.Index(rhs, "="); i >= 0 {
		rhs = rhs[i+1:]
	}
	val, err := in.eval(ctx, rhs, v.Type)
	if err != nil {
		return err
	}
	in.vals[st.Target] = val
	return nil
}

func (in *interp) fori(ctx context.Context, st *Stmt) error {
	bound := func(e string) (int64, error) {
		v, err := in.eval(ctx, e, "bigint")
		if err != nil {
			return 0, err
		}
		if v == nil {
			return 0, pgerror.New(pgerror.NullValueNotAllowed, "lower bound of FOR loop cannot be null")
		}
		return strconv.ParseInt(*v, 10, 64)
	}
	lo, err := bound(st.Lower)
	if err != nil {
		return err
	}
	hi, err := bound(st.Upper)
	if err != nil {
		return err
	}
	step := int64(1)
	if st.Step != "" {
		if step, err = bound(st.Step); err != nil {
			return err
		}
		if step <= 0 {
			return pgerror.New(pgerror.InvalidParameterValue, "BY value of FOR loop must be greater than zero")
		}
	}
	dno, ok := in.names[strings.ToLower(st.LoopVar)]
	if !ok {
		return pgerror.New(pgerror.InternalError, "DO block: no loop variable %s", st.LoopVar)
	}
	found := false
	for i := lo; (!st.Reverse && i <= hi) || (st.Reverse && i >= hi); {
		found = true
		s := strconv.FormatInt(i, 10)
		in.vals[dno] = &s
		stop, err := in.iteration(ctx, st)
		if err != nil {
			return err
		}
		if stop {
			break
		}
		if st.Reverse {
			i -= step
		} else {
			i += step
		}
	}
	in.setFound(found)
	return nil
}

// loopExit unwinds to the loop (or labelled block) an EXIT or CONTINUE
// names: the innermost loop when label is "".
type loopExit struct {
	label string
	cont  bool
}

func (e *loopExit) Error() string { return "EXIT outside its loop" }

// iteration runs one pass of loop st's body. stop: an EXIT of this loop
// ended it; err: an error, a RETURN or an EXIT of an outer statement,
// which the loop passes on.
func (in *interp) iteration(ctx context.Context, st *Stmt) (stop bool, err error) {
	err = in.stmts(ctx, st.Body)
	var ex *loopExit
	if errors.As(err, &ex) && (ex.label == "" || ex.label == st.Label) {
		return !ex.cont, nil // CONTINUE: the next pass
	}
	return false, err
}

// execute runs a dynamic query: the text expr gives, with the USING
// values as its parameters $1, $2, … (each cast to its expression's
// type, as PostgreSQL types them).
func (in *interp) execute(ctx context.Context, expr string, using []string) (*Result, error) {
	q, err := in.eval(ctx, expr, "text")
	if err != nil {
		return nil, err
	}
	if q == nil {
		return nil, pgerror.New(pgerror.NullValueNotAllowed, "query string argument of EXECUTE is null")
	}
	sql := *q
	var params []*string
	var typs []string
	for _, u := range using {
		res, err := in.run(ctx, "SELECT "+u)
		if err != nil {
			return nil, err
		}
		if len(res.Cols) != 1 || len(res.Rows) != 1 {
			return nil, pgerror.New(pgerror.SyntaxError, "query \"SELECT %s\" returned %d columns", u, len(res.Cols))
		}
		params, typs = append(params, res.Rows[0][0]), append(typs, res.Cols[0].Type)
	}
	if len(params) > 0 {
		if sql, err = typeParams(sql, typs); err != nil {
			return nil, err
		}
	}
	return in.r.Run(ctx, sql, params)
}

// typeParams casts each $n of sql to typs[n-1].
func typeParams(sql string, typs []string) (string, error) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return sql, nil // the runner reports it as PostgreSQL would
	}
	var castErr error
	parse.WalkNodes(tree.Stmts[0].Stmt, func(n *pg_query.Node) bool {
		p := n.GetParamRef()
		if p == nil || p.Number < 1 || int(p.Number) > len(typs) || castErr != nil {
			return true
		}
		tn, err := typeName(typs[p.Number-1])
		if err != nil {
			castErr = err
			return false
		}
		n.Node = &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
			Arg:      &pg_query.Node{Node: &pg_query.Node_ParamRef{ParamRef: &pg_query.ParamRef{Number: p.Number}}},
			TypeName: tn, Location: -1}}
		return false
	})
	if castErr != nil {
		return "", castErr
	}
	return parse.Deparse(tree.Stmts[0].Stmt)
}

// executeStmt runs EXECUTE … [INTO [STRICT] target] [USING …]. As in
// PostgreSQL it leaves FOUND alone, and a query's rows without INTO are
// discarded.
func (in *interp) executeStmt(ctx context.Context, st *Stmt) error {
	res, err := in.execute(ctx, st.Expr, st.Params)
	if err != nil || !st.HasInto {
		return err
	}
	if res.Cols == nil {
		return pgerror.New(pgerror.SyntaxError, "INTO used with a command that cannot return data")
	}
	if st.Strict && len(res.Rows) == 0 {
		return pgerror.New(codeNoDataFound, "query returned no rows")
	}
	if st.Strict && len(res.Rows) > 1 {
		return pgerror.New(codeTooManyRows, "query returned more than one row")
	}
	row := make([]*string, len(res.Cols))
	if len(res.Rows) > 0 {
		row = res.Rows[0]
	}
	return in.assignRow(st.Into, st.IntoFields, res.Cols, row)
}

func (in *interp) raise(ctx context.Context, st *Stmt) error {
	var args []*string
	for _, p := range st.Params {
		v, err := in.eval(ctx, p, "")
		if err != nil {
			return err
		}
		args = append(args, v)
	}
	msg, err := formatRaise(st.Message, args)
	if err != nil {
		return err
	}
	code := ""
	if st.Condition != "" {
		if code, err = conditionCode(st.Condition); err != nil {
			return err
		}
		if msg == "" {
			msg = strings.ToLower(st.Condition)
		}
	}
	e := &pgerror.Error{}
	for _, o := range st.Options {
		v, err := in.eval(ctx, o.Expr, "text")
		if err != nil {
			return err
		}
		text := ""
		if v != nil {
			text = *v
		}
		switch o.Kind {
		case "ERRCODE":
			if code, err = conditionCode(text); err != nil {
				if len(text) != 5 {
					return err
				}
				code = text
			}
		case "MESSAGE":
			msg = text
		case "DETAIL":
			e.Detail = text
		case "HINT":
			e.Hint = text
		}
	}
	e.Message = msg
	switch {
	case st.Level >= levelError:
		if code == "" {
			code = codeRaiseException
		}
		e.Code = code
		return e
	case st.Level == levelNotice:
		e.Severity, e.Code = pgerror.SeverityNotice, orDefault(code, pgerror.SuccessfulCompletion)
	case st.Level == levelWarning:
		e.Severity, e.Code = pgerror.SeverityWarning, orDefault(code, "01000")
	case st.Level == levelInfo:
		e.Severity, e.Code = "INFO", orDefault(code, pgerror.SuccessfulCompletion)
	default:
		return nil // LOG and DEBUG go to the server log only, below client_min_messages
	}
	in.r.Notice(e)
	return nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// formatRaise fills RAISE's % placeholders with args (NULL prints as
// <NULL>); %% is a %.
func formatRaise(format string, args []*string) (string, error) {
	var b strings.Builder
	n := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(format) && format[i+1] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		if n >= len(args) {
			return "", pgerror.New(pgerror.SyntaxError, "too few parameters specified for RAISE")
		}
		if args[n] == nil {
			b.WriteString("<NULL>")
		} else {
			b.WriteString(*args[n])
		}
		n++
	}
	if n < len(args) {
		return "", pgerror.New(pgerror.SyntaxError, "too many parameters specified for RAISE")
	}
	return b.String(), nil
}

// cond evaluates an IF condition: NULL is false.
func (in *interp) cond(ctx context.Context, c string) (bool, error) {
	v, err := in.eval(ctx, c, "boolean")
	if err != nil {
		return false, err
	}
	return v != nil && *v == "t", nil
}

// eval evaluates a PL/pgSQL expression, cast to typ when given, as a
// one-row SELECT.
func (in *interp) eval(ctx context.Context, expr, typ string) (*string, error) {
	sql := "SELECT " + expr
	if typ != "" {
		sql = "SELECT (" + expr + ")::" + typ
	}
	res, err := in.run(ctx, sql)
	if err != nil {
		return nil, err
	}
	if len(res.Cols) != 1 {
		return nil, pgerror.New(pgerror.SyntaxError, "query \"%s\" returned %d columns", sql, len(res.Cols))
	}
	switch len(res.Rows) {
	case 0:
		return nil, nil
	case 1:
		return res.Rows[0][0], nil
	}
	return nil, pgerror.New(pgerror.CardinalityViolation, "query \"%s\" returned more than one row", sql)
}

// run binds the block's variables in sql and runs it.
func (in *interp) run(ctx context.Context, sql string) (*Result, error) {
	text, params, err := in.bind(sql)
	if err != nil {
		return nil, err
	}
	return in.r.Run(ctx, text, params)
}

// bind replaces the references to the block's variables in sql (n, or
// r.field of a record) by parameters cast to the variables' types.
func (in *interp) bind(sql string) (string, []*string, error) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return sql, nil, nil // the runner reports it as PostgreSQL would
	}
	var params []*string
	var bindErr error
	parse.WalkNodes(tree.Stmts[0].Stmt, func(n *pg_query.Node) bool {
		cr := n.GetColumnRef()
		if cr == nil || bindErr != nil {
			return true
		}
		var names []string
		for _, f := range cr.Fields {
			s := f.GetString_()
			if s == nil {
				return true // a *
			}
			names = append(names, strings.ToLower(s.Sval))
		}
		dno, ok := in.names[names[0]]
		if !ok {
			return true
		}
		v := in.b.Vars[dno]
		var val *string
		typ := v.Type
		switch {
		case len(names) == 1 && !v.Record:
			val = in.vals[dno]
		case len(names) == 2 && v.Record:
			r := in.recs[dno]
			if r == nil || r.row == nil {
				bindErr = pgerror.New(pgerror.ObjectNotInPrerequisiteState, "record \"%s\" is not assigned yet", v.Name).
					WithDetail("The tuple structure of a not-yet-assigned record is indeterminate.")
				return false
			}
			i := -1
			for j, c := range r.cols {
				if c.Name == names[1] {
					i = j
				}
			}
			if i < 0 {
				bindErr = pgerror.New(pgerror.UndefinedColumn, "record \"%s\" has no field \"%s\"", v.Name, names[1])
				return false
			}
			val, typ = r.row[i], r.cols[i].Type
		default:
			return true
		}
		tn, err := typeName(typ)
		if err != nil {
			bindErr = err
			return false
		}
		params = append(params, val)
		n.Node = &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
			Arg:      &pg_query.Node{Node: &pg_query.Node_ParamRef{ParamRef: &pg_query.ParamRef{Number: int32(len(params))}}},
			TypeName: tn, Location: -1}}
		return false
	})
	if bindErr != nil {
		return "", nil, bindErr
	}
	if len(params) == 0 {
		return sql, nil, nil
	}
	text, err := parse.Deparse(tree.Stmts[0].Stmt)
	if err != nil {
		return "", nil, err
	}
	return text, params, nil
}

// typeName parses a SQL type name (a variable's declared type).
func typeName(typ string) (*pg_query.TypeName, error) {
	if typ == "" {
		typ = "text"
	}
	tree, err := pg_query.Parse("SELECT NULL::" + typ)
	if err == nil && len(tree.Stmts) == 1 {
		if sel := tree.Stmts[0].Stmt.GetSelectStmt(); sel != nil && len(sel.TargetList) == 1 {
			if tc := sel.TargetList[0].GetResTarget().GetVal().GetTypeCast(); tc != nil {
				return tc.TypeName, nil
			}
		}
	}
	return nil, pgerror.New(pgerror.UndefinedObject, "type \"%s\" does not exist", typ)
}
