package plan

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// SELECT … FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE [OF …]. mvserver
// takes no row locks: a transaction reads one snapshot and of two
// concurrent writes of a row the second to commit fails with 40001, so a
// locking clause is refused with 0A000. PostgreSQL refuses some locking
// clauses whatever the locks: those errors are PostgreSQL's here too, and
// like PostgreSQL's (raised as the executor starts) they come after the
// query bound.

// rowLockError is the error of a SELECT whose every other part bound: 42P01
// for an OF name that no FROM item has, 42809 for a locked materialized
// view or streaming table (also one a locked plain view reads), 0A000
// otherwise.
func (b *Binder) rowLockError(s *pg_query.SelectStmt) error {
	locked := map[string]bool{} // FROM-item names the OF lists name; empty: all
	for _, lc := range s.LockingClause {
		l := lc.GetLockingClause()
		if l == nil {
			continue
		}
		if len(l.LockedRels) == 0 {
			locked = nil
			break
		}
		for _, r := range l.LockedRels {
			if rv := r.GetRangeVar(); rv != nil {
				if locked != nil {
					locked[rv.Relname] = true
				}
			}
		}
	}
	found := map[string]bool{}
	if err := b.lockedItems(s.FromClause, s.WithClause, locked, found); err != nil {
		return err
	}
	for _, lc := range s.LockingClause {
		for _, r := range lc.GetLockingClause().GetLockedRels() {
			if rv := r.GetRangeVar(); rv != nil && !found[rv.Relname] {
				return b.errAt(rv.Location, pgerror.UndefinedTable, "relation \"%s\" in FOR UPDATE clause not found in FROM clause", rv.Relname)
			}
		}
	}
	return b.errAt(-1, pgerror.FeatureNotSupported, "SELECT … FOR UPDATE/SHARE is not supported: mvserver takes no row locks; a transaction reads one snapshot, and of two concurrent writes of the same row the second to commit fails with 40001")
}

// lockedItems walks FROM items: each one named in locked (or every one
// when locked is nil) is checked by lockable; found collects the names
// of the items seen, for the OF check.
func (b *Binder) lockedItems(from []*pg_query.Node, with *pg_query.WithClause, locked, found map[string]bool) error {
	for _, n := range from {
		switch {
		case n.GetRangeVar() != nil:
			rv := n.GetRangeVar()
			name := rv.Relname
			if rv.Alias != nil {
				name = rv.Alias.Aliasname
			}
			found[name] = true
			if locked != nil && !locked[name] {
				continue
			}
			if b.withQuery(rv, with) {
				continue
			}
			t, err := b.resolveTable(rv)
			if err != nil {
				continue // a system relation; nothing to refuse but the clause
			}
			if err := b.lockable(t); err != nil {
				return err
			}
		case n.GetJoinExpr() != nil:
			j := n.GetJoinExpr()
			if err := b.lockedItems([]*pg_query.Node{j.Larg, j.Rarg}, with, locked, found); err != nil {
				return err
			}
		case n.GetRangeSubselect() != nil:
			sub := n.GetRangeSubselect()
			if sub.Alias != nil {
				found[sub.Alias.Aliasname] = true
				if locked != nil && !locked[sub.Alias.Aliasname] {
					continue
				}
			}
			// PostgreSQL locks a locked subquery's own FROM items.
			if sel := sub.Subquery.GetSelectStmt(); sel != nil {
				if err := b.lockedItems(sel.FromClause, sel.WithClause, nil, map[string]bool{}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// lockable is 42809 for a relation whose rows PostgreSQL cannot lock: a
// materialized view (mvserver's streaming tables are materialized views
// to PostgreSQL's clients), directly or through plain views.
func (b *Binder) lockable(t *catalog.Table) error {
	return b.Cat.WalkSources([]uint32{t.ID}, func(_ uint32, s *catalog.Table, _ bool) error {
		if s != nil && s.IsDataset() {
			return pgerror.New(pgerror.WrongObjectType, "cannot lock rows in materialized view \"%s\"", s.Name)
		}
		return nil
	})
}

// withQuery reports whether rv names a WITH query: one of with's or one
// in scope.
func (b *Binder) withQuery(rv *pg_query.RangeVar, with *pg_query.WithClause) bool {
	if rv.Schemaname != "" {
		return false
	}
	for _, c := range with.GetCtes() {
		if c.GetCommonTableExpr().GetCtename() == rv.Relname {
			return true
		}
	}
	return b.ctes.lookup(rv.Relname) != nil
}
