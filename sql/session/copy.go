package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/server"
	"github.com/mvserver/mvserver/sql/copyfmt"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// COPY … FROM STDIN and COPY … TO STDOUT (R-T2) in text, CSV and binary.
// Options follow PostgreSQL 15's ProcessCopyOptions (same checks, order,
// SQLSTATEs and messages); the data formats are sql/copyfmt's; rows go in through exec.Inserter, the
// path INSERT takes (defaults, NOT NULL, primary key, change feed, row
// tracking), inside the statement's transaction, so a failed COPY leaves
// nothing behind. Errors about a row carry PostgreSQL's CONTEXT in Where:
// `COPY t, line 3, column b: "x"`.

// copyPlan is a bound COPY statement.
type copyPlan struct {
	from   bool
	binary bool // FORMAT binary: opts and header do not apply
	opts   copyfmt.Options
	header headerChoice
	// relName names the table in error context lines.
	relName string
	// names are the columns in data order: the header's names.
	names []string

	// FROM: the insert (targets and defaults), the target types and the
	// WHERE condition over the table's row (nil: none).
	ins   *plan.Insert
	types []types.T
	where plan.Expr

	// TO: the query whose rows are written.
	node plan.Node
	cols []plan.Column
}

func (s *Session) prepareCopy(p *prepared, st *parse.Statement, cs *pg_query.CopyStmt) (*prepared, error) {
	if cs.Filename != "" || cs.IsProgram {
		return nil, copyFileError(cs)
	}
	o, err := processCopyOptions(st, cs.Options, cs.IsFrom)
	if err != nil {
		return nil, err
	}
	cp := &copyPlan{from: cs.IsFrom, binary: o.binary, header: o.header, opts: o.formatOptions()}
	b := s.binder(st, nil)
	b.Optimize = true
	if cs.IsFrom {
		err = s.bindCopyFrom(b, cs, o, cp)
	} else {
		err = s.bindCopyTo(b, cs, o, cp)
	}
	if err != nil {
		return nil, err
	}
	p.copy = cp
	return p, nil
}

// copyFileError refuses COPY to or from a server file or program with the
// error PostgreSQL gives a user without those privileges: the server's
// files are not the client's business.
func copyFileError(cs *pg_query.CopyStmt) error {
	var e *pgerror.Error
	switch {
	case cs.IsProgram:
		e = pgerror.New(pgerror.InsufficientPrivilege, "must be superuser or have privileges of the pg_execute_server_program role to COPY to or from an external program")
	case cs.IsFrom:
		e = pgerror.New(pgerror.InsufficientPrivilege, "must be superuser or have privileges of the pg_read_server_files role to COPY from a file")
	default:
		e = pgerror.New(pgerror.InsufficientPrivilege, "must be superuser or have privileges of the pg_write_server_files role to COPY to a file")
	}
	return e.WithHint("Anyone can COPY to stdout or from stdin. psql's \\copy command also works for anyone.")
}

// bindCopyFrom binds COPY t [(cols)] FROM STDIN: the target table must be
// a table; the insert is bound like INSERT INTO t (cols) VALUES (…), which
// checks the column list and binds the defaults of the other columns.
func (s *Session) bindCopyFrom(b *plan.Binder, cs *pg_query.CopyStmt, o *copyOptions, cp *copyPlan) error {
	t, err := resolveCopyTable(b, cs.Relation)
	if err != nil {
		return err
	}
	switch t.Kind {
	case catalog.KindTable:
	case catalog.KindView:
		return pgerror.New(pgerror.WrongObjectType, "cannot copy to view \"%s\"", t.Name).
			WithHint("To enable copying to a view, provide an INSTEAD OF INSERT trigger.")
	case catalog.KindMaterializedView:
		return pgerror.New(pgerror.WrongObjectType, "cannot copy to materialized view \"%s\"", t.Name)
	case catalog.KindStreamingTable:
		return pgerror.New(pgerror.WrongObjectType, "cannot copy to streaming table \"%s\"", t.Name).
			WithHint("A streaming table changes only by REFRESH STREAMING TABLE.")
	default:
		return pgerror.New(pgerror.WrongObjectType, "cannot copy to non-table relation \"%s\"", t.Name)
	}
	// COPY FROM inserts: INSERT on the table, as PostgreSQL asks.
	if err := s.require(t, catalog.PrivInsert); err != nil {
		return err
	}
	n := len(cs.Attlist)
	if n == 0 {
		n = len(t.Columns)
	}
	// VALUES (NULL, …) binds cheaply; the rows come from the data.
	var row []*pg_query.Node
	for range n {
		row = append(row, &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: -1}}})
	}
	// COPY FROM writes an identity column's values as given, GENERATED
	// ALWAYS too (PostgreSQL: as INSERT … OVERRIDING SYSTEM VALUE), which
	// is how pg_dump restores one.
	is := &pg_query.InsertStmt{
		Relation: cs.Relation,
		Override: pg_query.OverridingKind_OVERRIDING_SYSTEM_VALUE,
		SelectStmt: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: &pg_query.SelectStmt{
			ValuesLists: []*pg_query.Node{pg_query.MakeListNode(row)},
			Op:          pg_query.SetOperation_SETOP_NONE,
			LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT,
		}}},
	}
	for _, a := range cs.Attlist {
		is.Cols = append(is.Cols, pg_query.MakeResTargetNodeWithName(a.GetString_().GetSval(), -1))
	}
	ins, err := b.BindInsert(is)
	if err != nil {
		return err
	}
	cp.ins, cp.relName = ins, t.Name
	if cs.WhereClause != nil {
		// Over the whole row, defaults filled in (PostgreSQL's order).
		cols := make([]plan.Column, len(t.Columns))
		for i, c := range t.Columns {
			cols[i] = plan.Column{Name: c.Name, T: c.Type}
		}
		if loc := parse.SubLinkLocation(cs.WhereClause); loc >= 0 {
			return pgerror.New(pgerror.FeatureNotSupported, "cannot use subquery in COPY FROM WHERE condition").
				WithPosition(b.Stmt.Position(loc))
		}
		if cp.where, err = b.BindPredicateOver(cols, cs.WhereClause, "COPY FROM WHERE conditions"); err != nil {
			var pe *pgerror.Error
			if errors.As(err, &pe) && pe.Code == pgerror.DatatypeMismatch {
				// PostgreSQL names the clause plainly here.
				e := *pe
				e.Message = strings.Replace(e.Message, "argument of COPY FROM WHERE conditions", "argument of WHERE", 1)
				return &e
			}
			return err
		}
	}
	for _, ti := range ins.Targets {
		cp.names = append(cp.names, t.Columns[ti].Name)
		cp.types = append(cp.types, t.Columns[ti].Type)
	}
	if cp.opts.ForceNotNull, err = forceFlags(t, cp.names, o.forceNotNull, "FORCE_NOT_NULL"); err != nil {
		return err
	}
	cp.opts.ForceNull, err = forceFlags(t, cp.names, o.forceNull, "FORCE_NULL")
	return err
}

// resolveCopyTable resolves COPY's table. PostgreSQL opens it without a
// parse position, so its errors (42P01) carry none.
func resolveCopyTable(b *plan.Binder, rv *pg_query.RangeVar) (*catalog.Table, error) {
	t, err := b.ResolveTable(rv)
	if err != nil {
		var pe *pgerror.Error
		if errors.As(err, &pe) && pe.Position != 0 {
			e := *pe
			e.Position = 0
			return nil, &e
		}
		return nil, err
	}
	return t, nil
}

// forceFlags maps a FORCE_* column list onto the COPY's columns: each must
// be a column of t (42703) and among the COPY's columns (42P10).
func forceFlags(t *catalog.Table, names, list []string, option string) ([]bool, error) {
	if len(list) == 0 {
		return nil, nil
	}
	flags := make([]bool, len(names))
	for _, c := range list {
		if t != nil && t.ColumnIndex(c) < 0 {
			return nil, pgerror.New(pgerror.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", c, t.Name)
		}
		found := false
		for i, n := range names {
			if n == c {
				flags[i], found = true, true
			}
		}
		if !found {
			if t == nil {
				return nil, pgerror.New(pgerror.UndefinedColumn, "column \"%s\" does not exist", c)
			}
			return nil, pgerror.New(pgerror.InvalidColumnReference, "%s column \"%s\" not referenced by COPY", option, c)
		}
	}
	return flags, nil
}

// bindCopyTo binds COPY t [(cols)] TO STDOUT as SELECT cols FROM t, and
// COPY (query) TO STDOUT as the query. A plain view must be read through a
// query, as in PostgreSQL; a materialized view or streaming table can be
// copied directly (PostgreSQL 18 allows it for materialized views).
func (s *Session) bindCopyTo(b *plan.Binder, cs *pg_query.CopyStmt, o *copyOptions, cp *copyPlan) error {
	var sel *pg_query.SelectStmt
	var t *catalog.Table
	if cs.Query != nil {
		sel = cs.Query.GetSelectStmt()
		if sel == nil {
			return pgerror.New(pgerror.FeatureNotSupported, "COPY (%s … RETURNING) TO is not supported yet", strings.ToUpper(strings.TrimSuffix(strings.TrimPrefix(fmt.Sprintf("%T", cs.Query.Node), "*pg_query.Node_"), "Stmt")))
		}
		cp.relName = "query"
	} else {
		var err error
		if t, err = resolveCopyTable(b, cs.Relation); err != nil {
			return err
		}
		switch t.Kind {
		case catalog.KindTable, catalog.KindMaterializedView, catalog.KindStreamingTable:
		case catalog.KindView:
			return pgerror.New(pgerror.WrongObjectType, "cannot copy from view \"%s\"", t.Name).
				WithHint("Try the COPY (SELECT ...) TO variant.")
		default:
			return pgerror.New(pgerror.WrongObjectType, "cannot copy from non-table relation \"%s\"", t.Name).
				WithHint("Try the COPY (SELECT ...) TO variant.")
		}
		cp.relName = t.Name
		var names []string
		if len(cs.Attlist) == 0 {
			for _, c := range t.Columns {
				names = append(names, c.Name)
			}
		} else {
			seen := map[string]bool{}
			for _, a := range cs.Attlist {
				n := a.GetString_().GetSval()
				if t.ColumnIndex(n) < 0 {
					return pgerror.New(pgerror.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", n, t.Name)
				}
				if seen[n] {
					return pgerror.New(pgerror.DuplicateColumn, "column \"%s\" specified more than once", n)
				}
				seen[n] = true
				names = append(names, n)
			}
		}
		sel = &pg_query.SelectStmt{
			FromClause:  []*pg_query.Node{{Node: &pg_query.Node_RangeVar{RangeVar: cs.Relation}}},
			Op:          pg_query.SetOperation_SETOP_NONE,
			LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT,
		}
		for _, n := range names {
			sel.TargetList = append(sel.TargetList, pg_query.MakeResTargetNodeWithVal(
				pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(n)}, -1), -1))
		}
	}
	q, err := b.BindSelect(sel)
	if err != nil {
		return err
	}
	cp.node, cp.cols = q.Root, q.Cols
	for _, c := range q.Cols {
		cp.names = append(cp.names, c.Name)
	}
	cp.opts.ForceQuote, err = forceFlags(t, cp.names, o.forceQuote, "FORCE_QUOTE")
	return err
}

// runCopy runs a bound COPY against the client behind w.
func (s *Session) runCopy(ctx context.Context, cp *copyPlan, w server.ResultWriter) (string, error) {
	cw, ok := w.(server.Copier)
	if !ok {
		dir := "COPY TO STDOUT"
		if cp.from {
			dir = "COPY FROM STDIN"
		}
		return "", pgerror.New(pgerror.FeatureNotSupported, "%s needs a client connection", dir)
	}
	c, err := s.execCtx(ctx, nil)
	if err != nil {
		return "", err
	}
	var n int64
	if cp.from {
		n, err = s.copyFrom(c, cp, cw)
	} else {
		n, err = s.copyTo(c, cp, cw)
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("COPY %d", n), nil
}

// A COPY FROM line counts against the statement's memory budget (R-X3):
// the decoder's buffers, which grow to the longest line, are charged as
// they grow (and kept until the COPY ends), and a large value is reserved
// while it is converted and inserted (its text and the row it becomes),
// so a line too large for the budget fails with 53200 as it arrives.

func copyLineGrow(c *exec.Ctx) func(int64) error {
	return func(n int64) error { return c.Mem.Grow("COPY line", n) }
}

// copyValueHold reserves what converting and inserting a value of n bytes
// builds, when that is large; the caller gives it back after the insert.
func copyValueHold(c *exec.Ctx, n int) (int64, error) {
	if n < funcs.LargeValue {
		return 0, nil
	}
	return 2 * int64(n), c.Mem.Grow("COPY line", 2*int64(n))
}

// copyBatch is how many lines COPY FROM reads between cancellation checks.
const copyBatch = 1024

func (s *Session) copyFrom(c *exec.Ctx, cp *copyPlan, cw server.Copier) (int64, error) {
	s.txn.CheckUnchanged(catalog.DescriptorKey(cp.ins.Table.ID))
	s.allowStaging(cp.ins.Table)
	ins, err := exec.NewInserter(c, cp.ins)
	if err != nil {
		return 0, err
	}
	n, err := s.copyRows(c, cp, cw, ins)
	if err == nil {
		err = ins.Close() // the foreign keys of the rows copied
	}
	return n, err
}

func (s *Session) copyRows(c *exec.Ctx, cp *copyPlan, cw server.Copier, ins *exec.Inserter) (int64, error) {
	if cp.where != nil {
		if err := ins.Filter(cp.where); err != nil {
			return 0, err
		}
	}
	if cp.binary {
		r, err := cw.CopyIn(1, formats(len(cp.types), 1))
		if err != nil {
			return 0, err
		}
		return s.copyFromBinary(c, cp, ins, r)
	}
	r, err := cw.CopyIn(0, formats(len(cp.types), 0))
	if err != nil {
		return 0, err
	}
	dec := copyfmt.NewDecoder(r, cp.opts)
	dec.Grow = copyLineGrow(c)
	fail := func(err error) (int64, error) {
		return 0, copyContext(err, cp.relName, dec, "", nil)
	}
	switch cp.header {
	case headerTrue:
		if err := dec.SkipLine(); err != nil {
			if errors.Is(err, io.EOF) {
				return 0, nil
			}
			return fail(err)
		}
	case headerMatch:
		if err := dec.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return 0, nil
			}
			return fail(err)
		}
		if err := matchHeader(dec, cp); err != nil {
			return fail(err)
		}
	}
	vals := make([]types.Datum, len(cp.types))
	var n int64
	for {
		if err := dec.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return fail(err)
		}
		nf := dec.NumFields()
		if len(vals) > 0 && nf > len(vals) {
			return fail(pgerror.New(pgerror.BadCopyFileFormat, "extra data after last expected column"))
		}
		var held int64
		for i, typ := range cp.types {
			if i >= nf {
				return fail(pgerror.New(pgerror.BadCopyFileFormat, "missing data for column \"%s\"", cp.names[i]))
			}
			v, null := dec.Field(i)
			if null {
				vals[i] = types.NullDatum
				continue
			}
			n, err := copyValueHold(c, len(v))
			if err != nil {
				return fail(err)
			}
			held += n
			d, err := types.ParseText(string(v), typ, s.env)
			if err != nil {
				return 0, copyContext(err, cp.relName, dec, cp.names[i], v)
			}
			vals[i] = d
		}
		inserted, err := ins.Insert(vals)
		c.Mem.Shrink(held)
		if err != nil {
			return fail(err)
		}
		if inserted {
			n++
		}
		if dec.Line()%copyBatch == 0 {
			if err := c.Context.Err(); err != nil {
				return fail(err)
			}
		}
	}
}

func formats(n int, f int16) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = f
	}
	return out
}

// copyFromBinary reads FORMAT binary rows (pgx's CopyFrom sends them).
// Errors carry PostgreSQL's context for binary data: the row and column,
// never the data.
func (s *Session) copyFromBinary(c *exec.Ctx, cp *copyPlan, ins *exec.Inserter, r io.Reader) (int64, error) {
	dec := copyfmt.NewBinaryDecoder(r)
	dec.Grow = copyLineGrow(c)
	if err := dec.ReadHeader(); err != nil {
		return 0, err // PostgreSQL reads the header before its context applies
	}
	where := func(err error, col int) error {
		pe := pgerror.Convert(err)
		if pe.Code == pgerror.InternalError {
			return err
		}
		e := *pe
		if col >= 0 {
			e.Where = fmt.Sprintf("COPY %s, line %d, column %s", cp.relName, dec.Line(), cp.names[col])
		} else {
			e.Where = fmt.Sprintf("COPY %s, line %d", cp.relName, dec.Line())
		}
		return &e
	}
	vals := make([]types.Datum, len(cp.types))
	var n int64
	for {
		if err := dec.Next(len(cp.types)); err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return 0, where(err, dec.Column())
		}
		var held int64
		for i, typ := range cp.types {
			v, null := dec.Field(i)
			if null {
				vals[i] = types.NullDatum
				continue
			}
			n, err := copyValueHold(c, len(v))
			if err != nil {
				return 0, where(err, i)
			}
			held += n
			d, err := binaryInput(v, typ)
			if err != nil {
				return 0, where(err, i)
			}
			vals[i] = d
		}
		inserted, err := ins.Insert(vals)
		c.Mem.Shrink(held)
		if err != nil {
			return 0, where(err, -1)
		}
		if inserted {
			n++
		}
		if dec.Line()%copyBatch == 0 {
			if err := c.Context.Err(); err != nil {
				return 0, where(err, -1)
			}
		}
	}
}

// binarySizes are the sizes of the fixed-size types' binary forms.
var binarySizes = map[types.Kind]int{
	types.KindBool: 1, types.KindInt2: 2, types.KindInt4: 4, types.KindOid: 4, types.KindInt8: 8,
	types.KindFloat4: 4, types.KindFloat8: 8, types.KindDate: 4, types.KindTimestamp: 8,
	types.KindTimestampTZ: 8, types.KindInterval: 16,
}

// binaryInput is the type's binary input function as PostgreSQL's receive
// functions behave in COPY: too few bytes is 08P01, bytes left over or a
// malformed value 22P03; the column's type modifier applies.
func binaryInput(v []byte, t types.T) (types.Datum, error) {
	if size, ok := binarySizes[t.Kind]; ok && len(v) < size {
		return types.Datum{}, pgerror.New(pgerror.ProtocolViolation, "insufficient data left in message")
	}
	d, err := types.ParseBinary(v, t)
	if err != nil {
		if pgerror.Code(err) == pgerror.InvalidBinaryRepresentation {
			return types.Datum{}, pgerror.New(pgerror.InvalidBinaryRepresentation, "incorrect binary data format")
		}
		return types.Datum{}, err
	}
	if t.Kind == types.KindNumeric {
		return types.ApplyNumericTypmod(d, t)
	}
	return d, nil
}

// matchHeader is HEADER MATCH: the header line names the COPY's columns in
// order.
func matchHeader(dec *copyfmt.Decoder, cp *copyPlan) error {
	if dec.NumFields() != len(cp.names) {
		return pgerror.New(pgerror.BadCopyFileFormat, "wrong number of fields in header line: got %d, expected %d", dec.NumFields(), len(cp.names))
	}
	for i, want := range cp.names {
		v, null := dec.Field(i)
		if null {
			return pgerror.New(pgerror.BadCopyFileFormat, "column name mismatch in header line field %d: got null value (\"%s\"), expected \"%s\"", i+1, cp.opts.Null, want)
		}
		if string(v) != want {
			return pgerror.New(pgerror.BadCopyFileFormat, "column name mismatch in header line field %d: got \"%s\", expected \"%s\"", i+1, v, want)
		}
	}
	return nil
}

// copyContext adds PostgreSQL's COPY error context to err: the line, and
// the column and value when one value was at fault, else the line's text
// when it is known whole (not for a unique violation, which PostgreSQL
// finds when its insert buffer is flushed and reports by line number).
func copyContext(err error, rel string, dec *copyfmt.Decoder, col string, val []byte) error {
	pe := pgerror.Convert(err)
	if pe.Code == pgerror.InternalError {
		return err
	}
	e := *pe
	var where string
	switch text, ok := dec.LineText(); {
	case col != "":
		where = fmt.Sprintf("COPY %s, line %d, column %s: \"%s\"", rel, dec.Line(), col, limitPrintout(val))
	case ok && e.Code != pgerror.UniqueViolation:
		where = fmt.Sprintf("COPY %s, line %d: \"%s\"", rel, dec.Line(), limitPrintout(text))
	default:
		where = fmt.Sprintf("COPY %s, line %d", rel, dec.Line())
	}
	if e.Where != "" {
		where = e.Where + "\n" + where
	}
	e.Where = where
	return &e
}

// limitPrintout is PostgreSQL's limit_printout_length: at most 100 bytes,
// cut at a character boundary, then "...".
func limitPrintout(b []byte) string {
	const max = 100
	if len(b) <= max {
		return string(b)
	}
	n := max
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n]) + "..."
}

func (s *Session) copyTo(c *exec.Ctx, cp *copyPlan, cw server.Copier) (int64, error) {
	op, err := exec.Build(c, cp.node)
	if err != nil {
		return 0, err
	}
	defer op.Close()
	if cp.binary {
		return s.copyToBinary(c, cp, op, cw)
	}
	if err := cw.CopyOut(0, formats(len(cp.cols), 0)); err != nil {
		return 0, err
	}
	enc := copyfmt.NewEncoder(cp.opts, len(cp.cols))
	var buf, val []byte
	if cp.header != headerNone {
		if err := cw.CopyData(enc.AppendHeader(buf[:0], cp.names)); err != nil {
			return 0, err
		}
	}
	var n int64
	err = exec.Drain(op, func(rows []exec.Row) error {
		for _, r := range rows {
			buf = buf[:0]
			for i := range cp.cols {
				if r[i].IsNull() {
					buf = enc.AppendNull(buf, i)
					continue
				}
				val = types.AppendText(val[:0], r[i], s.env)
				buf = enc.AppendField(buf, i, val)
			}
			if err := cw.CopyData(enc.AppendEnd(buf)); err != nil {
				return err
			}
		}
		n += int64(len(rows))
		return c.Context.Err()
	})
	if err != nil {
		return 0, err
	}
	return n, cw.CopyDone()
}

// copyToBinary writes FORMAT binary. Like PostgreSQL, the header goes out
// with the first row (or with the end marker when there is none) and the
// end marker in its own CopyData.
func (s *Session) copyToBinary(c *exec.Ctx, cp *copyPlan, op exec.Operator, cw server.Copier) (int64, error) {
	if err := cw.CopyOut(1, formats(len(cp.cols), 1)); err != nil {
		return 0, err
	}
	buf := copyfmt.AppendBinaryHeader(nil)
	var val []byte
	var n int64
	err := exec.Drain(op, func(rows []exec.Row) error {
		for _, r := range rows {
			buf = copyfmt.AppendBinaryRowStart(buf, len(cp.cols))
			for i, col := range cp.cols {
				if r[i].IsNull() {
					buf = copyfmt.AppendBinaryNull(buf)
					continue
				}
				t := col.T
				if t.Kind == types.KindNull || t.Kind == types.KindUnknown {
					t = types.Text
				}
				var err error
				if val, err = types.AppendBinary(val[:0], r[i], t); err != nil {
					return err
				}
				buf = copyfmt.AppendBinaryField(buf, val)
			}
			if err := cw.CopyData(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
		n += int64(len(rows))
		return c.Context.Err()
	})
	if err != nil {
		return 0, err
	}
	if err := cw.CopyData(copyfmt.AppendBinaryTrailer(buf)); err != nil {
		return 0, err
	}
	return n, cw.CopyDone()
}
