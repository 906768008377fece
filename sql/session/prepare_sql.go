package session

import (
	"context"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/types"
)

// SQL-level prepared statements: PREPARE name [(types)] AS statement,
// EXECUTE name [(args)] and DEALLOCATE [PREPARE] name | ALL (pg_dump
// prepares its per-table queries this way). As in PostgreSQL they belong
// to the session, not to a transaction: ROLLBACK keeps them. The
// statement is bound at PREPARE (so errors show then, and parameter types
// are inferred) and again at each EXECUTE, against the catalog of the
// moment. Their names are kept apart from the wire protocol's Parse
// names.

// sqlPrepared is one PREPAREd statement.
type sqlPrepared struct {
	st         *parse.Statement
	paramTypes []types.T
}

// prepareSQL is PREPARE.
func (s *Session) prepareSQL(p *prepared, st *parse.Statement, ps *pg_query.PrepareStmt) (*prepared, error) {
	if _, ok := s.sqlPrepared[ps.Name]; ok {
		return nil, pgerror.New(pgerror.DuplicatePreparedStatement, "prepared statement \"%s\" already exists", ps.Name)
	}
	b := s.binder(st, nil)
	var paramTypes []types.T
	for _, a := range ps.Argtypes {
		t, err := b.TypeName(a.GetTypeName())
		if err != nil {
			return nil, err
		}
		paramTypes = append(paramTypes, t)
	}
	inner := innerStatement(st, ps.Query)
	if _, ok := inner.AST.Node.(*pg_query.Node_PrepareStmt); ok {
		return nil, pgerror.New(pgerror.SyntaxError, "PREPARE cannot prepare a PREPARE")
	}
	// A write prepared in a READ ONLY transaction fails at EXECUTE.
	ip, err := s.prepareIn(inner, paramTypes, false)
	if err != nil {
		return nil, err
	}
	p.action = func(_ context.Context, _ []types.Datum) (string, error) {
		if s.sqlPrepared == nil {
			s.sqlPrepared = map[string]*sqlPrepared{}
		}
		s.sqlPrepared[ps.Name] = &sqlPrepared{st: inner, paramTypes: ip.paramTypes}
		return "PREPARE", nil
	}
	return p, nil
}

// executeSQL is EXECUTE: the named statement bound again, with the
// arguments evaluated and cast to its parameter types.
func (s *Session) executeSQL(st *parse.Statement, es *pg_query.ExecuteStmt) (*prepared, error) {
	sp, ok := s.sqlPrepared[es.Name]
	if !ok {
		return nil, pgerror.New(pgerror.InvalidSQLStatementName, "prepared statement \"%s\" does not exist", es.Name)
	}
	if len(es.Params) != len(sp.paramTypes) {
		return nil, pgerror.New(pgerror.SyntaxError, "wrong number of parameters for prepared statement \"%s\"", es.Name).
			WithDetail("Expected %d parameters but got %d.", len(sp.paramTypes), len(es.Params))
	}
	b := s.binder(st, nil)
	ec, err := s.execCtx(context.Background(), nil)
	if err != nil {
		return nil, err
	}
	vals := make([]types.Datum, len(es.Params))
	for i, n := range es.Params {
		e, err := b.BindDefault(n, sp.paramTypes[i])
		if err != nil {
			return nil, err
		}
		fn, err := exec.Compile(e, ec)
		if err != nil {
			return nil, err
		}
		if vals[i], err = fn(nil); err != nil {
			return nil, err
		}
	}
	p, err := s.prepare(sp.st, sp.paramTypes)
	if err != nil {
		return nil, err
	}
	// EXECUTE itself takes no protocol parameters: its arguments are
	// the inner statement's.
	p.params, p.paramTypes = vals, nil
	if act := p.action; act != nil {
		p.action = func(ctx context.Context, _ []types.Datum) (string, error) { return act(ctx, vals) }
	}
	return p, nil
}

// deallocateSQL drops the PREPAREd statement name ("" = all of them) and
// reports whether it existed.
func (s *Session) deallocateSQL(name string) bool {
	if name == "" {
		s.sqlPrepared = nil
		return true
	}
	_, ok := s.sqlPrepared[name]
	delete(s.sqlPrepared, name)
	return ok
}

// innerStatement is the statement PREPARE names, sharing st's text (its
// locations are offsets into the same SQL).
func innerStatement(st *parse.Statement, q *pg_query.Node) *parse.Statement {
	inner := *st
	inner.AST = q
	return &inner
}
