package session

import (
	"context"
	"errors"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/types"
)

// DO: the block is read by parse.DoBlockOf; this runs its statements in
// the session's transaction, as PostgreSQL runs a DO block's.
//
// PostgreSQL runs a block with an EXCEPTION clause in a subtransaction,
// so a caught error undoes the block's writes. mvserver has no
// subtransactions: such a block may hold one statement that is not a
// data change (its failure leaves nothing behind, so catching it is
// exact); other blocks with a handler fail with 0A000 before running.

func (s *Session) prepareDo(p *prepared, n *pg_query.DoStmt) (*prepared, error) {
	blk, err := parse.DoBlockOf(n)
	if err != nil {
		return nil, err
	}
	if len(blk.Handlers) > 0 {
		if len(blk.Body) != 1 || parse.DataChange(blk.Body[0].SQL) {
			return nil, pgerror.New(pgerror.FeatureNotSupported, "a DO block with an EXCEPTION clause may hold only one statement that changes no rows here (there are no subtransactions to undo the block's writes)")
		}
	}
	p.action = func(ctx context.Context, _ []types.Datum) (string, error) {
		err := s.runDoStatements(ctx, blk.Body)
		if err == nil || len(blk.Handlers) == 0 {
			return "DO", err
		}
		var pe *pgerror.Error
		if !errors.As(mapStorageErr(err), &pe) {
			return "", err
		}
		for _, h := range blk.Handlers {
			if h.Catches(pe.Code) {
				return "DO", s.runDoStatements(ctx, h.Body)
			}
		}
		return "", err
	}
	return p, nil
}

// runDoStatements runs a block's statements in order; rows of a PERFORM
// are discarded, and a query that is not one fails as in PL/pgSQL.
func (s *Session) runDoStatements(ctx context.Context, stmts []parse.DoStatement) error {
	for _, d := range stmts {
		st, err := parse.ParseOne(d.SQL)
		if err != nil {
			return err
		}
		if st == nil {
			continue
		}
		if classifyTxn(st) != notTxnControl {
			return pgerror.New(pgerror.FeatureNotSupported, "transaction control in a DO block is not supported")
		}
		p, err := s.prepare(st, nil)
		if err != nil {
			return err
		}
		switch {
		case p.copy != nil:
			return pgerror.New(pgerror.FeatureNotSupported, "COPY in a DO block is not supported")
		case p.node != nil:
			if !d.Perform {
				return pgerror.New(pgerror.SyntaxError, "query has no destination for result data").
					WithHint("If you want to discard the results of a SELECT, use PERFORM instead.")
			}
			if err := s.drainQuery(ctx, p, func([]exec.Row) error { return ctx.Err() }); err != nil {
				return mapStorageErr(err)
			}
		default:
			if _, err := p.action(ctx, nil); err != nil {
				return mapStorageErr(err)
			}
		}
	}
	return nil
}
