package session

import (
	"context"
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// Data-modifying WITH queries (plan/bind_modifying_with.go): the session
// checks their privileges when it binds them and runs them
// (exec.RunModifyingWith) in the statement's context before its main
// query. A SELECT whose WITH modifies data reads all its rows before the
// first is sent, as PostgreSQL runs every such query to completion.

// requireModifying checks the privileges of each data-modifying WITH
// query, as for the statement alone.
func (s *Session) requireModifying(w *plan.ModifyingWith) error {
	if w == nil {
		return nil
	}
	for _, m := range w.CTEs {
		t := m.Table()
		var privs []byte
		switch x := m.Stmt.(type) {
		case *plan.Insert:
			privs = append(privs, catalog.PrivInsert)
			if x.OnConflict != nil && !x.OnConflict.DoNothing {
				privs = append(privs, catalog.PrivUpdate)
			}
			if x.Returning != nil {
				privs = append(privs, catalog.PrivSelect)
			}
		case *plan.Update:
			privs = append(privs, catalog.PrivUpdate, catalog.PrivSelect)
		case *plan.Delete:
			privs = append(privs, catalog.PrivDelete, catalog.PrivSelect)
		}
		for _, p := range privs {
			if err := s.require(t, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// runModifying runs w's queries in c (nil: none), after noting the
// tables they write for the transaction's descriptor check.
func (s *Session) runModifying(c *exec.Ctx, w *plan.ModifyingWith) error {
	if w == nil {
		return nil
	}
	for _, m := range w.CTEs {
		s.txn.CheckUnchanged(catalog.DescriptorKey(m.Table().ID))
	}
	return exec.RunModifyingWith(c, w)
}

// modifyingSelect makes a SELECT whose WITH modifies data a row statement
// that runs the WITH queries, then the query, when it executes.
func (s *Session) modifyingSelect(p *prepared, q *plan.Query) {
	p.node = &plan.Rows{Cols: q.Cols, Gen: genDeferred, Arg: deferredRows(func(c *exec.Ctx) ([]exec.Row, error) {
		return s.runModifyingSelect(c, q)
	})}
}

// runModifyingSelect runs q's WITH queries, then q, and returns its rows.
func (s *Session) runModifyingSelect(c *exec.Ctx, q *plan.Query) ([]exec.Row, error) {
	if err := s.runModifying(c, q.With); err != nil {
		return nil, err
	}
	op, err := exec.Build(c, q.Root)
	if err != nil {
		return nil, err
	}
	var rows []exec.Row
	err = exec.Drain(op, func(b []exec.Row) error {
		rows = append(rows, b...)
		return c.Context.Err()
	})
	return rows, err
}

// merge runs a MERGE bound as a SELECT over its data-modifying WITH
// queries (plan.BindMerge), whose one row is the count for the tag.
func (s *Session) merge(q, check *plan.Query) func(context.Context, []types.Datum) (string, error) {
	return func(ctx context.Context, params []types.Datum) (string, error) {
		c, err := s.execCtx(ctx, params)
		if err != nil {
			return "", err
		}
		if check != nil {
			twice, err := s.runModifyingSelect(c, check)
			if err != nil {
				return "", err
			}
			if len(twice) > 0 {
				return "", plan.ErrMergeTwice()
			}
		}
		rows, err := s.runModifyingSelect(c, q)
		if err != nil || len(rows) != 1 {
			return "", err
		}
		return fmt.Sprintf("MERGE %d", rows[0][0].I), nil
	}
}

// refuseModifyingWith fails a statement kind that may not hold a
// data-modifying WITH query (views, materialized views, cursors) with
// PostgreSQL's message for it; what is the message's subject.
func refuseModifyingWith(sel *pg_query.SelectStmt, msg string) error {
	if sel != nil && plan.HasModifyingWith(sel.WithClause) {
		return pgerror.New(pgerror.FeatureNotSupported, "%s", msg)
	}
	return nil
}
