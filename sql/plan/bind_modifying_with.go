package plan

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
)

// Data-modifying WITH queries (R-Q2), PostgreSQL's semantics:
//  1. Each INSERT, UPDATE or DELETE in the statement's top-level WITH runs
//     exactly once, to completion, whether or not anything reads it, in
//     the order written, before the main query.
//  2. Every part of the statement reads the tables as they were when the
//     statement began: a reference to a table an earlier data-modifying
//     WITH query wrote reads a copy of its rows taken before the first one
//     ran (a shared CTE, ModifyingWith.Snapshots). The main query sees the
//     WITH query's changes only through its RETURNING rows.
//  3. So does the target of an UPDATE or DELETE: it reads the copy, less
//     the rows an earlier part of the statement already updated or deleted
//     (exec skips those, as PostgreSQL skips a row its own command
//     changed), so a row two of them change is changed once, and rows
//     inserted by the statement are not seen. Which of two parts changing
//     the same row wins is not specified by PostgreSQL either; here the
//     first in the order they run.
//  4. A reference to the WITH query reads its RETURNING rows, kept for the
//     statement (a shared CTE).
//  5. Subqueries in a RETURNING list, of any statement, read the table it
//     writes as it was at the statement's start (a copy, as in 2).

// ModifyingCTE is one data-modifying WITH query.
type ModifyingCTE struct {
	CTE  *CTE
	Stmt any // *Insert, *Update or *Delete
}

// Table is the table the WITH query writes.
func (m ModifyingCTE) Table() *catalog.Table {
	switch s := m.Stmt.(type) {
	case *Insert:
		return s.Table
	case *Update:
		return s.Table
	case *Delete:
		return s.Table
	}
	return nil
}

// Snapshot is the copy of a table's rows, every column in its scan
// layout, taken before the first data-modifying WITH query runs. Reads of
// the table after one wrote it are CTEScans of CTE, whose Input (the scan
// it replaces, never run) gives the layout.
type Snapshot struct {
	CTE   *CTE
	Table *catalog.Table
}

// ModifyingWith is a statement's data-modifying WITH queries, in order,
// and the table copies its other parts read (a statement without WITH
// has copies when its RETURNING list reads the table it writes).
type ModifyingWith struct {
	CTEs      []ModifyingCTE
	Snapshots []Snapshot
}

// isModifying reports whether a WITH query's body is an INSERT, UPDATE or
// DELETE.
func isModifying(c *pg_query.CommonTableExpr) bool {
	switch c.Ctequery.Node.(type) {
	case *pg_query.Node_InsertStmt, *pg_query.Node_UpdateStmt, *pg_query.Node_DeleteStmt:
		return true
	}
	return false
}

// modifyingState is what the binder tracks of a statement's data-modifying
// WITH queries.
type modifyingState struct {
	top     *pg_query.WithClause // the statement's own WITH clause
	with    ModifyingWith
	written map[uint32]bool // tables written by the WITH queries bound so far
	snap    map[uint32]*CTE // the copies of the tables read after a write
	// target is set while a RETURNING list's own FROM item is bound (it
	// reads the rows written, not the table): the next table scan bound
	// is not a copy, and clears it.
	target bool
}

// setTopWith records the statement's top-level WITH clause: only it may
// hold data-modifying queries.
func (b *Binder) setTopWith(w *pg_query.WithClause) {
	if b.mod.top == nil && w != nil {
		b.mod.top = w
	}
}

// bindModifyingCTE binds a data-modifying WITH query once, where it is
// defined, seeing the WITH queries before it.
func (b *Binder) bindModifyingCTE(w *pg_query.WithClause, d *cteDef) error {
	c := d.cte
	if w != b.mod.top || b.lvl != nil && b.lvl.parent != nil || len(b.cteStack) > 0 {
		return b.errAt(c.Location, pgerror.FeatureNotSupported, "WITH clause containing a data-modifying statement must be at the top level")
	}
	if !b.AllowModifyingWith {
		return b.errAt(c.Location, pgerror.FeatureNotSupported, "data-modifying statements in WITH are not allowed here")
	}
	saved := b.ctes
	b.ctes = d.env
	defer func() { b.ctes = saved }()
	var stmt any
	var ret *Returning
	var err error
	switch q := c.Ctequery.Node.(type) {
	case *pg_query.Node_InsertStmt:
		var ins *Insert
		ins, err = b.BindInsert(q.InsertStmt)
		stmt = ins
		if ins != nil {
			ret = ins.Returning
		}
	case *pg_query.Node_UpdateStmt:
		var up *Update
		up, err = b.BindUpdate(q.UpdateStmt)
		stmt = up
		if up != nil {
			ret = up.Returning
		}
	case *pg_query.Node_DeleteStmt:
		var del *Delete
		del, err = b.BindDelete(q.DeleteStmt)
		stmt = del
		if del != nil {
			ret = del.Returning
		}
	}
	if err != nil {
		return err
	}
	m := ModifyingCTE{CTE: d.plan, Stmt: stmt}
	d.plan.Shared = true
	d.modifying = true
	if ret != nil {
		cols := make([]Column, len(ret.Columns()))
		for i, col := range ret.Columns() {
			cols[i] = Column{Name: col.Name, T: col.T}
		}
		if d.modCols, err = b.cteColumns(d, cols); err != nil {
			return err
		}
		d.returns = true
	}
	if b.mod.written == nil {
		b.mod.written = map[uint32]bool{}
	}
	b.mod.written[m.Table().ID] = true
	b.mod.with.CTEs = append(b.mod.with.CTEs, m)
	return nil
}

// bindModifyingRef binds a FROM reference to a data-modifying WITH query:
// its RETURNING rows.
func (b *Binder) bindModifyingRef(d *cteDef, rv *pg_query.RangeVar) (Node, *scope, error) {
	if !d.returns {
		return nil, nil, b.errAt(rv.Location, pgerror.FeatureNotSupported, "WITH query \"%s\" does not have a RETURNING clause", d.name)
	}
	d.refs++
	sc, err := b.derivedScope(d.modCols, rv.Alias, d.name, rv.Location)
	if err != nil {
		return nil, nil, err
	}
	return &CTEScan{CTE: d.plan, Input: &Given{Cols: d.modCols}}, sc, nil
}

// snapshotScan turns a scan of a table an earlier data-modifying WITH
// query wrote into a read of the table's copy as of the statement's start.
func (b *Binder) snapshotScan(scan *Scan) Node {
	if b.mod.target {
		b.mod.target = false
		return scan
	}
	if !b.mod.written[scan.Table.ID] {
		return scan
	}
	if b.mod.snap == nil {
		b.mod.snap = map[uint32]*CTE{}
	}
	cte := b.mod.snap[scan.Table.ID]
	if cte == nil {
		cte = &CTE{Name: scan.Table.Name + " (at the statement's start)", Shared: true}
		b.mod.snap[scan.Table.ID] = cte
		b.mod.with.Snapshots = append(b.mod.with.Snapshots, Snapshot{CTE: cte, Table: scan.Table})
	}
	return &CTEScan{CTE: cte, Input: scan}
}

// modifyingWith returns the statement's data-modifying WITH queries and
// table copies (nil: none).
func (b *Binder) modifyingWith() *ModifyingWith {
	if len(b.mod.with.CTEs) == 0 && len(b.mod.with.Snapshots) == 0 {
		return nil
	}
	w := b.mod.with
	return &w
}

// HasModifyingWith reports whether a statement's top-level WITH holds an
// INSERT, UPDATE or DELETE (views, materialized views and cursors refuse
// them).
func HasModifyingWith(w *pg_query.WithClause) bool {
	if w == nil {
		return false
	}
	for _, n := range w.Ctes {
		if c := n.GetCommonTableExpr(); c != nil && isModifying(c) {
			return true
		}
	}
	return false
}

// withWritten binds f as if the statement had already written table id:
// its reads of the table are of the copy taken at the statement's start.
func (b *Binder) withWritten(id uint32, f func() error) error {
	if b.mod.written[id] {
		return f()
	}
	if b.mod.written == nil {
		b.mod.written = map[uint32]bool{}
	}
	b.mod.written[id] = true
	defer delete(b.mod.written, id)
	return f()
}
