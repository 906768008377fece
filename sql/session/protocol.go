package session

import (
	"context"
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/server"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

var errAborted = pgerror.New(pgerror.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block")

// SimpleQuery implements server.Session: every statement of the message
// runs in order; outside BEGIN they share one implicit transaction that
// commits at the end of the message (PostgreSQL's rule).
func (s *Session) SimpleQuery(ctx context.Context, sql string, w server.ResultWriter) error {
	stmts, err := parse.Parse(sql)
	if err != nil {
		s.fail()
		return err
	}
	if len(stmts) == 0 {
		return w.EmptyQuery()
	}
	s.lone, s.multi = len(stmts) == 1, len(stmts) > 1
	defer func() { s.lone, s.multi = false, false }()
	for _, st := range stmts {
		if err := s.runSimple(ctx, st, w); err != nil {
			s.cat.FillErrorSchema(err) // before fail rolls the catalog back
			s.fail()
			_ = s.flushParams(w)
			return err
		}
		if err := s.flushParams(w); err != nil {
			return err
		}
	}
	if !s.explicit {
		if err := s.commit(); err != nil {
			return err
		}
	}
	return nil
}

// fail applies a statement error to the transaction state.
func (s *Session) fail() {
	if s.explicit {
		s.failed = true
		return
	}
	s.rollback()
}

// AbortTransaction implements server.Aborter.
func (s *Session) AbortTransaction(*pgerror.Error) {
	if s.explicit {
		s.failed = true
	} else {
		s.extErr = true
	}
}

// txnCommand runs BEGIN / COMMIT / ROLLBACK and returns the command tag.
func (s *Session) txnCommand(st *parse.Statement, ctl txnControl) (string, error) {
	switch ctl {
	case txnBegin:
		opts := st.AST.GetTransactionStmt().GetOptions()
		if s.explicit {
			// PostgreSQL warns and still applies the modes.
			s.notices = append(s.notices, &pgerror.Error{Severity: pgerror.SeverityWarning, Code: pgerror.ActiveSQLTransaction, Message: "there is already a transaction in progress"})
			return "BEGIN", s.transactionModes(opts)
		}
		// The first snapshot is already of the kind BEGIN's modes ask for.
		lvl, ro := beginModes(opts)
		if lvl != "" {
			if _, err := checkIsolationOf("transaction_isolation")(lvl); err != nil {
				return "", err
			}
		}
		if err := s.beginTxn(lvl, ro); err != nil {
			return "", err
		}
		s.explicit = true
		if err := s.transactionModes(opts); err != nil {
			return "", err
		}
		return "BEGIN", nil
	case txnCommit:
		if !s.explicit {
			s.notices = append(s.notices, &pgerror.Error{Severity: pgerror.SeverityWarning, Code: pgerror.NoActiveSQLTransaction, Message: "there is no transaction in progress"})
			return "COMMIT", s.commit()
		}
		s.explicit = false
		if s.failed {
			s.failed = false
			s.rollback()
			return "ROLLBACK", nil
		}
		return "COMMIT", s.commit()
	default:
		if !s.explicit {
			s.notices = append(s.notices, &pgerror.Error{Severity: pgerror.SeverityWarning, Code: pgerror.NoActiveSQLTransaction, Message: "there is no transaction in progress"})
		}
		s.explicit, s.failed = false, false
		s.rollback()
		return "ROLLBACK", nil
	}
}

func (s *Session) runSimple(ctx context.Context, st *parse.Statement, w server.ResultWriter) error {
	if ctl := classifyTxn(st); ctl != notTxnControl {
		tag, err := s.txnCommand(st, ctl)
		if err != nil {
			return err
		}
		return s.complete(w, tag)
	}
	if s.failed {
		return errAborted
	}
	if err := s.ensureTxn(); err != nil {
		return err
	}
	s.noteSnapshot(st)
	ctx, cancel := s.statementContext(ctx)
	defer cancel()
	p, err := s.prepare(st, nil)
	if err != nil {
		return err
	}
	if p.copy != nil {
		tag, err := s.runCopy(ctx, p.copy, w)
		if err != nil {
			return mapStorageErr(err)
		}
		return w.CommandComplete(tag)
	}
	if p.node == nil {
		tag, err := p.action(ctx, nil)
		if err != nil {
			return mapStorageErr(err)
		}
		if s.lone && !s.explicit && s.ddl == ddlTempOnly {
			if tag, err = s.commitTempDDL(ctx, st, tag); err != nil {
				return err
			}
		}
		return s.complete(w, tag)
	}
	if err := w.RowDescription(wireColumns(p.cols, nil)); err != nil {
		return err
	}
	enc := &rowEncoder{cols: p.cols, env: s.env}
	var n int64
	err = s.drainQuery(ctx, p, func(rows []exec.Row) error {
		for _, r := range rows {
			vals, err := enc.encode(r)
			if err != nil {
				return err
			}
			if err := w.DataRow(vals); err != nil {
				return err
			}
		}
		n += int64(len(rows))
		return ctx.Err()
	})
	if err != nil {
		return err
	}
	return w.CommandComplete(rowsTag(p.rowsTag, n))
}

// drainQuery runs a prepared query's plan, handing its rows to fn.
func (s *Session) drainQuery(ctx context.Context, p *prepared, fn func([]exec.Row) error) error {
	c, err := s.execCtx(ctx, p.params)
	if err != nil {
		return err
	}
	op, err := exec.Build(c, p.node)
	if err != nil {
		return err
	}
	return exec.Drain(op, fn)
}

// rowsTag is the command tag of a row-returning statement: PostgreSQL
// counts rows for SELECT, not for SHOW or EXPLAIN.
func rowsTag(word string, n int64) string {
	if word == "SHOW" || word == "EXPLAIN" {
		return word
	}
	return fmt.Sprintf("%s %d", word, n)
}

// preparedStatement implements server.PreparedStatement.
type preparedStatement struct {
	st         *parse.Statement // nil: empty query
	paramTypes []types.T
	p          *prepared
	// bound is the SELECT's plan as the last Execute bound it, reused
	// while what it was bound under is unchanged (boundFor).
	bound *boundPlan
}

// boundPlan is a query plan and what its binding read besides the
// statement: the catalog (DDL replaces the session's catalog with a new
// one, never changes one in place), the session's environment (replaced
// when TimeZone changes), its search path and user (privileges).
type boundPlan struct {
	cat  *catalog.Catalog
	env  *types.Env
	path string
	user string
	p    *prepared
}

// prepareBound binds a portal's statement against the transaction's
// catalog, reusing the plan of the last Execute of a SELECT when nothing
// it was bound under changed: a prepared point read then skips the
// binder (PostgreSQL likewise keeps a prepared statement's plan until
// DDL invalidates it).
func (s *Session) prepareBound(ps *preparedStatement) (*prepared, error) {
	if _, sel := ps.st.AST.GetNode().(*pg_query.Node_SelectStmt); !sel || ps.st.Ext != nil {
		return s.prepare(ps.st, ps.paramTypes)
	}
	if err := s.checkReadOnly(ps.st); err != nil {
		return nil, err
	}
	path := s.setting("search_path")
	if b := ps.bound; b != nil && b.cat == s.cat && b.env == s.env && b.path == path && b.user == s.currentUser() {
		return b.p, nil
	}
	pr, err := s.prepare(ps.st, ps.paramTypes)
	if err != nil {
		return nil, err
	}
	ps.bound = &boundPlan{cat: s.cat, env: s.env, path: path, user: s.currentUser(), p: pr}
	return pr, nil
}

func (ps *preparedStatement) ParamOIDs() []uint32 {
	out := make([]uint32, len(ps.paramTypes))
	for i, t := range ps.paramTypes {
		out[i] = t.OID()
	}
	return out
}

func (ps *preparedStatement) Columns() []server.Column {
	if ps.p == nil || ps.p.node == nil {
		return nil
	}
	return wireColumns(ps.p.cols, nil)
}

func (ps *preparedStatement) Close() {}

// withCatalog runs fn with s.cat set: the open transaction's, or a
// snapshot's for the call.
func (s *Session) withCatalog(fn func() error) error {
	if s.txn != nil {
		return fn()
	}
	if err := s.ensureTxn(); err != nil {
		return err
	}
	defer s.rollback()
	return fn()
}

// Prepare implements server.Session.
func (s *Session) Prepare(ctx context.Context, sql string, paramOIDs []uint32) (server.PreparedStatement, error) {
	st, err := parse.ParseOne(sql)
	if err != nil {
		s.AbortTransaction(nil)
		return nil, err
	}
	// In a failed block only COMMIT/ROLLBACK may run (PostgreSQL's rule).
	if s.failed && (st == nil || classifyTxn(st) == notTxnControl) {
		return nil, errAborted
	}
	ps := &preparedStatement{st: st}
	types0 := make([]types.T, len(paramOIDs))
	for i, oid := range paramOIDs {
		if oid == 0 {
			types0[i] = types.Unknown
			continue
		}
		t, ok := types.FromOID(oid)
		if !ok {
			s.AbortTransaction(nil)
			return nil, pgerror.New(pgerror.FeatureNotSupported, "parameter $%d has a type (OID %d) that is not supported", i+1, oid)
		}
		types0[i] = t
	}
	if st == nil {
		return ps, nil
	}
	if classifyTxn(st) != notTxnControl {
		ps.p = &prepared{st: st, ctl: classifyTxn(st)}
		return ps, nil
	}
	err = s.withCatalog(func() error {
		p, err := s.prepare(st, types0)
		if err != nil {
			return err
		}
		ps.p = p
		ps.paramTypes = p.paramTypes
		return nil
	})
	if err != nil {
		s.AbortTransaction(nil)
		return nil, err
	}
	if ps.paramTypes == nil {
		ps.paramTypes = types0
		for i, t := range ps.paramTypes {
			if t.Kind == types.KindUnknown {
				ps.paramTypes[i] = types.Text
			}
		}
	}
	return ps, nil
}

// Bind implements server.Session.
func (s *Session) Bind(ctx context.Context, sps server.PreparedStatement, params [][]byte, paramFormats, resultFormats []int16) (server.Portal, error) {
	ps := sps.(*preparedStatement)
	if s.failed && (ps.st == nil || classifyTxn(ps.st) == notTxnControl) {
		return nil, errAborted
	}
	if len(params) != len(ps.paramTypes) {
		s.AbortTransaction(nil)
		return nil, pgerror.New(pgerror.ProtocolViolation, "bind message supplies %d parameters, but prepared statement requires %d", len(params), len(ps.paramTypes))
	}
	vals := make([]types.Datum, len(params))
	for i, raw := range params {
		if raw == nil {
			continue
		}
		var d types.Datum
		var err error
		if formatFor(paramFormats, i) == 1 {
			d, err = types.ParseBinary(raw, ps.paramTypes[i])
		} else {
			d, err = types.ParseText(string(raw), ps.paramTypes[i], s.env)
		}
		if err != nil {
			s.AbortTransaction(nil)
			return nil, &server.BindParamError{N: i + 1, Err: err}
		}
		vals[i] = d
	}
	return &portal{s: s, ps: ps, params: vals, formats: resultFormats}, nil
}

// Sync implements server.Session: the end of an extended-protocol batch
// commits its implicit transaction (or rolls it back after an error).
func (s *Session) Sync(ctx context.Context) error {
	failed := s.extErr
	s.extErr = false
	if s.explicit {
		return nil
	}
	if failed {
		s.rollback()
		return nil
	}
	return s.commit()
}

// portal implements server.Portal.
type portal struct {
	s       *Session
	ps      *preparedStatement
	params  []types.Datum
	formats []int16

	started bool
	done    bool
	op      exec.Operator
	c       *exec.Ctx // the running query's context; its Context is each Execute's
	pending []exec.Row
	enc     *rowEncoder
	tag     string
	// word is a row portal's tag word (SELECT, FETCH, …): each Execute
	// reports the rows it sent, as PostgreSQL does.
	word string
}

func (p *portal) Columns() []server.Column {
	if p.ps.p == nil || p.ps.p.node == nil {
		return nil
	}
	return wireColumns(p.ps.p.cols, p.formats)
}

func (p *portal) Close() {
	if p.op != nil {
		p.op.Close()
		p.op = nil
	}
}

// Execute implements server.Portal.
func (p *portal) Execute(ctx context.Context, maxRows int, w server.ResultWriter) (bool, error) {
	s := p.s
	suspended, err := p.execute(ctx, maxRows, w)
	if err != nil {
		s.cat.FillErrorSchema(err)
		p.Close()
		s.AbortTransaction(nil)
		_ = s.flushParams(w)
		return false, err
	}
	return suspended, s.flushParams(w)
}

func (p *portal) execute(ctx context.Context, maxRows int, w server.ResultWriter) (bool, error) {
	s := p.s
	if p.ps.st == nil {
		return false, w.EmptyQuery()
	}
	if p.done {
		// PostgreSQL answers a finished portal with an empty result.
		if p.word != "" {
			return false, w.CommandComplete(rowsTag(p.word, 0))
		}
		return false, w.CommandComplete(p.tag)
	}
	if !p.started {
		p.started = true
		if ctl := classifyTxn(p.ps.st); ctl != notTxnControl {
			tag, err := s.txnCommand(p.ps.st, ctl)
			if err != nil {
				return false, err
			}
			p.done, p.tag = true, tag
			return false, s.complete(w, tag)
		}
		if s.failed {
			return false, errAborted
		}
		if err := s.ensureTxn(); err != nil {
			return false, err
		}
		s.noteSnapshot(p.ps.st)
		sctx, cancel := s.statementContext(ctx)
		defer cancel()
		// Bind again against the transaction's catalog: DDL since Parse is seen.
		pr, err := s.prepareBound(p.ps)
		if err != nil {
			return false, err
		}
		if pr.node != nil && p.ps.p != nil && p.ps.p.node != nil {
			if err := plan.CheckSameResult(p.ps.p.cols, pr.cols); err != nil {
				return false, err
			}
		}
		if pr.copy != nil {
			tag, err := s.runCopy(sctx, pr.copy, w)
			if err != nil {
				return false, mapStorageErr(err)
			}
			p.done, p.tag = true, tag
			return false, s.complete(w, tag)
		}
		if pr.node == nil {
			tag, err := pr.action(sctx, p.params)
			if err != nil {
				return false, mapStorageErr(err)
			}
			p.done, p.tag = true, tag
			return false, s.complete(w, tag)
		}
		params := p.params
		if pr.params != nil {
			params = pr.params // EXECUTE's own arguments
		}
		c, err := s.execCtx(sctx, params)
		if err != nil {
			return false, err
		}
		p.c = c
		if p.op, err = exec.Build(c, pr.node); err != nil {
			return false, err
		}
		p.enc = &rowEncoder{cols: pr.cols, formats: p.formats, env: s.env}
		p.tag, p.word = pr.rowsTag, pr.rowsTag
	}
	sctx, cancel := s.statementContext(ctx)
	defer cancel()
	p.c.Context = sctx
	sent := 0
	for {
		if maxRows > 0 && sent >= maxRows {
			// The rows asked for are sent: suspend without looking for
			// more, as PostgreSQL does (the next Execute may find none).
			return true, nil
		}
		if len(p.pending) == 0 {
			if err := sctx.Err(); err != nil {
				return false, err
			}
			rows, err := p.op.Next()
			if err != nil {
				return false, err
			}
			if rows == nil {
				p.Close()
				p.done = true
				p.tag = rowsTag(p.word, int64(sent))
				return false, w.CommandComplete(p.tag)
			}
			p.pending = rows
		}
		for len(p.pending) > 0 && (maxRows <= 0 || sent < maxRows) {
			vals, err := p.enc.encode(p.pending[0])
			if err != nil {
				return false, err
			}
			if err := w.DataRow(vals); err != nil {
				return false, err
			}
			p.pending = p.pending[1:]
			sent++
		}
	}
}
