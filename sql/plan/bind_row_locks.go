package plan

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// SELECT … FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE [OF …] [NOWAIT |
// SKIP LOCKED]. A statement the session runs (AllowRowLocks) gets a
// LockRows node (node_lock_rows.go) over the rows of the tables it locks;
// a stored definition and a refresh bind the query without them.
// PostgreSQL refuses some locking clauses whatever the locks: those
// errors are PostgreSQL's here too, and like PostgreSQL's they come after
// the query bound. Not yet: locking the rows a subquery in FROM or a
// plain view reads (0A000).

// lockRequest carries a SELECT's locking clauses into the binding of its
// own query level, which places the LockRows (placeRowLocks) and notes
// what PostgreSQL refuses them with.
type lockRequest struct {
	clauses []*pg_query.Node // LockingClause nodes
	// refused is the first select-list feature PostgreSQL refuses a
	// locking clause with ("aggregate functions", …), "" for none.
	refused string
	// err is placeRowLocks' error, reported after checkLockClauses'.
	err error
}

// strength is the first clause's, for PostgreSQL's messages.
func (r *lockRequest) strength() LockStrength {
	return lockStrength(r.clauses[0].GetLockingClause().GetStrength())
}

// lockStrengths and lockWaits map pg_query's enums to the plan's; a
// strength or policy not listed is FOR UPDATE or the default.
var lockStrengths = map[pg_query.LockClauseStrength]LockStrength{
	pg_query.LockClauseStrength_LCS_FORKEYSHARE:    LockForKeyShare,
	pg_query.LockClauseStrength_LCS_FORSHARE:       LockForShare,
	pg_query.LockClauseStrength_LCS_FORNOKEYUPDATE: LockForNoKeyUpdate,
}

var lockWaits = map[pg_query.LockWaitPolicy]LockWait{
	pg_query.LockWaitPolicy_LockWaitError: LockNoWait,
	pg_query.LockWaitPolicy_LockWaitSkip:  LockSkipLocked,
}

func lockStrength(s pg_query.LockClauseStrength) LockStrength {
	if st, ok := lockStrengths[s]; ok {
		return st
	}
	return LockForUpdate
}

func lockWait(w pg_query.LockWaitPolicy) LockWait { return lockWaits[w] }

// LockingClauseStrength is the strength of a SELECT's first locking
// clause, as PostgreSQL's messages name it (FOR UPDATE, …).
func LockingClauseStrength(clauses []*pg_query.Node) LockStrength {
	return lockStrength(clauses[0].GetLockingClause().GetStrength())
}

// bindLockedSelect binds a SELECT that has a locking clause.
func (b *Binder) bindLockedSelect(s *pg_query.SelectStmt, keepUnknown bool) (Node, []Column, error) {
	lc := s.LockingClause
	s.LockingClause = nil
	req := &lockRequest{clauses: lc}
	if b.AllowRowLocks && s.Op == pg_query.SetOperation_SETOP_NONE {
		b.lockReq = req
	}
	node, cols, err := b.bindSelectOpts(s, keepUnknown)
	b.lockReq = nil
	s.LockingClause = lc
	if err != nil {
		return nil, nil, err
	}
	word := req.strength().String()
	refuse := func(what string) error {
		return b.errAt(-1, pgerror.FeatureNotSupported, "%s is not allowed with %s", word, what)
	}
	switch {
	case s.Op != pg_query.SetOperation_SETOP_NONE:
		return nil, nil, refuse("UNION/INTERSECT/EXCEPT")
	case len(s.DistinctClause) > 0:
		return nil, nil, refuse("DISTINCT clause")
	case len(s.GroupClause) > 0:
		return nil, nil, refuse("GROUP BY clause")
	case s.HavingClause != nil:
		return nil, nil, refuse("HAVING clause")
	case req.refused != "":
		return nil, nil, refuse(req.refused)
	}
	if err := b.checkLockClauses(s); err != nil {
		return nil, nil, err
	}
	if req.err != nil {
		return nil, nil, req.err
	}
	// Without AllowRowLocks the query binds without its locks: a view's
	// stored text keeps the clause (a statement that reads the view locks
	// its rows, as in PostgreSQL), and a refresh reads every source at one
	// snapshot in a transaction of its own, where a lock guards nothing.
	return node, cols, nil
}

// checkLockClauses is what PostgreSQL refuses whatever the locks: 42P01
// for an OF name that no FROM item has, 42809 for a locked materialized
// view or streaming table (also one a locked plain view or subquery
// reads).
func (b *Binder) checkLockClauses(s *pg_query.SelectStmt) error {
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
				return b.errAt(rv.Location, pgerror.UndefinedTable, "relation \"%s\" in %s clause not found in FROM clause", rv.Relname, lockStrength(lc.GetLockingClause().Strength))
			}
		}
	}
	return nil
}

// placeRowLocks puts a LockRows over node (the query's rows, projected by
// proj over the FROM scope sc) for the tables the clauses lock, with their
// keys as hidden projection columns the final projection drops. It
// returns node unchanged when nothing is locked.
func (b *Binder) placeRowLocks(req *lockRequest, s *pg_query.SelectStmt, sc *scope, proj *Project, node Node) (Node, error) {
	var targets []LockTarget
	err := b.lockFromItems(req, s.FromClause, s.WithClause, sc, false, func(t *catalog.Table, name string, st LockStrength, w LockWait) error {
		lt := LockTarget{Table: t, Strength: st, Wait: w}
		var scan *Scan // the item's scan: one of its named columns
		for _, c := range sc.cols {
			if c.scan != nil && c.scan.Table.ID == t.ID && c.rel == name && c.name != "" {
				scan = c.scan
				break
			}
		}
		find := func(pos int) int {
			for k, c := range sc.cols {
				if scan != nil && c.scan == scan && c.scanIdx == pos {
					return k
				}
			}
			return -1
		}
		var positions []int
		if len(t.PrimaryKey) > 0 {
			for _, id := range t.PrimaryKey {
				positions = append(positions, t.ColumnByID(id))
			}
		} else {
			positions, lt.RowID = []int{len(t.Columns)}, true
		}
		for _, pos := range positions {
			k := find(pos)
			if k < 0 {
				return b.errAt(-1, pgerror.InternalError, "the rows of %s to lock are not in the query", name)
			}
			sc.markNeeded(k)
			proj.Exprs = append(proj.Exprs, &ColRef{Idx: k, T: sc.cols[k].t})
			proj.Cols = append(proj.Cols, Column{Name: "?lock?", T: sc.cols[k].t})
			lt.Key = append(lt.Key, len(proj.Exprs)-1)
		}
		targets = append(targets, lt)
		return nil
	})
	if err != nil || len(targets) == 0 {
		return node, err
	}
	return &LockRows{Input: node, Targets: targets}, nil
}

// lockFromItems calls lock for each table among the FROM items that the
// clauses lock (every table, or those an OF names), with the strongest
// strength and wait policy of the clauses that name it. nullable: the
// items are on the nullable side of an outer join.
func (b *Binder) lockFromItems(req *lockRequest, from []*pg_query.Node, with *pg_query.WithClause, sc *scope, nullable bool,
	lock func(t *catalog.Table, name string, s LockStrength, w LockWait) error) error {
	word := req.strength().String()
	namedAt := int32(-1) // the OF entry applies last found, for error positions
	applies := func(name string) (LockStrength, LockWait, bool, bool) {
		var st LockStrength
		w := LockWaitDefault
		any, named := false, false
		for _, lc := range req.clauses {
			l := lc.GetLockingClause()
			hit := len(l.LockedRels) == 0
			for _, r := range l.LockedRels {
				if rv := r.GetRangeVar(); rv != nil && rv.Relname == name {
					hit, named, namedAt = true, true, rv.Location
				}
			}
			if !hit {
				continue
			}
			any = true
			st = max(st, lockStrength(l.Strength))
			if lw := lockWait(l.WaitPolicy); lw == LockNoWait || lw == LockSkipLocked && w != LockNoWait {
				w = lw
			}
		}
		return st, w, any, named
	}
	for _, n := range from {
		switch {
		case n.GetRangeVar() != nil || n.GetRangeTableSample() != nil:
			rv := n.GetRangeVar()
			if rv == nil {
				rv = n.GetRangeTableSample().GetRelation().GetRangeVar()
			}
			if rv == nil {
				continue
			}
			name := rv.Relname
			if rv.Alias != nil {
				name = rv.Alias.Aliasname
			}
			st, w, any, named := applies(name)
			if !any {
				continue
			}
			if b.withQuery(rv, with) {
				if named {
					return b.errAt(namedAt, pgerror.FeatureNotSupported, "%s cannot be applied to a WITH query", word)
				}
				continue
			}
			if b.systemRelation(rv) != nil {
				return b.errAt(rv.Location, pgerror.FeatureNotSupported, "%s of the rows of system relation \"%s\" is not supported", word, rv.Relname)
			}
			t, err := b.resolveTable(rv)
			if err != nil {
				return err
			}
			switch {
			case t.Kind == catalog.KindSequence:
				return b.errAt(rv.Location, pgerror.WrongObjectType, "cannot lock rows in sequence \"%s\"", t.Name)
			case t.Kind != catalog.KindTable:
				return b.errAt(rv.Location, pgerror.FeatureNotSupported, "%s of the rows a view reads is not supported yet: lock the rows of its tables in a query over them", word)
			case nullable:
				return b.errAt(-1, pgerror.FeatureNotSupported, "%s cannot be applied to the nullable side of an outer join", st)
			}
			if err := lock(t, name, st, w); err != nil {
				return err
			}
		case n.GetJoinExpr() != nil:
			j := n.GetJoinExpr()
			ln, rn := nullable, nullable
			switch j.Jointype {
			case pg_query.JoinType_JOIN_LEFT:
				rn = true
			case pg_query.JoinType_JOIN_RIGHT:
				ln = true
			case pg_query.JoinType_JOIN_FULL:
				ln, rn = true, true
			}
			if j.Alias != nil {
				if _, _, _, named := applies(j.Alias.Aliasname); named {
					return b.errAt(namedAt, pgerror.FeatureNotSupported, "%s cannot be applied to a join", word)
				}
			}
			if err := b.lockFromItems(req, []*pg_query.Node{j.Larg}, with, sc, ln, lock); err != nil {
				return err
			}
			if err := b.lockFromItems(req, []*pg_query.Node{j.Rarg}, with, sc, rn, lock); err != nil {
				return err
			}
		case n.GetRangeSubselect() != nil:
			name := ""
			if a := n.GetRangeSubselect().Alias; a != nil {
				name = a.Aliasname
			}
			if _, _, any, _ := applies(name); any {
				return b.errAt(-1, pgerror.FeatureNotSupported, "%s of the rows a subquery in FROM reads is not supported yet: lock them in the subquery", word)
			}
		case n.GetRangeFunction() != nil:
			name := ""
			if a := n.GetRangeFunction().Alias; a != nil {
				name = a.Aliasname
			}
			if _, _, _, named := applies(name); named && name != "" {
				return b.errAt(namedAt, pgerror.FeatureNotSupported, "%s cannot be applied to a function", word)
			}
		}
	}
	return nil
}

// noteLockRefusal records in req the select-list features PostgreSQL
// refuses a locking clause with.
func (req *lockRequest) noteLockRefusal(aggs, wins, srfs int) {
	switch {
	case req == nil:
	case aggs > 0:
		req.refused = "aggregate functions"
	case wins > 0:
		req.refused = "window functions"
	case srfs > 0:
		req.refused = "set-returning functions in the target list"
	}
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
