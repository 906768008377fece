package plan

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/types"
)

// Insert is a bound INSERT.
type Insert struct {
	Table *catalog.Table
	// Source produces one row per inserted row, with len(Targets) columns.
	Source Node
	// Targets[i] is the table column index source column i goes to.
	Targets []int
	// Defaults[c] computes table column c when it is not a target (nil = NULL).
	Defaults []Expr
	// Returning is the RETURNING list (nil: none).
	Returning *Returning
	// OnConflict is the ON CONFLICT clause (nil: a conflict is an error).
	OnConflict *OnConflict
	// With is the statement's data-modifying WITH queries (nil: none),
	// run before it.
	With *ModifyingWith
}

// SetClause assigns E (bound over the table row) to table column Col.
type SetClause struct {
	Col int
	E   Expr
}

// Update is a bound UPDATE.
type Update struct {
	Table *catalog.Table
	Input Node // the table's rows to update (table row layout, then FROM's columns)
	// Joined: the input joins FROM items, so a row may come more than
	// once; as in PostgreSQL it is updated once, by the first.
	Joined    bool
	Sets      []SetClause
	Returning *Returning
	With      *ModifyingWith
}

// Delete is a bound DELETE.
type Delete struct {
	Table     *catalog.Table
	Input     Node
	Joined    bool // DELETE … USING: a row may come more than once (Update.Joined)
	Returning *Returning
	With      *ModifyingWith
}

func (b *Binder) checkWritable(t *catalog.Table, loc int32) error {
	switch t.Kind {
	case catalog.KindTable:
	case catalog.KindMaterializedView:
		return b.errAt(loc, pgerror.WrongObjectType, "cannot change materialized view \"%s\"", t.Name).
			WithHint("A materialized view changes only by REFRESH MATERIALIZED VIEW.")
	case catalog.KindStreamingTable:
		return b.errAt(loc, pgerror.WrongObjectType, "cannot change streaming table \"%s\"", t.Name).
			WithHint("A streaming table changes only by REFRESH STREAMING TABLE.")
	case catalog.KindView:
		return b.errAt(loc, pgerror.WrongObjectType, "cannot change view \"%s\"", t.Name).
			WithDetail("Views are not updatable in mvserver.")
	default:
		return b.errAt(loc, pgerror.WrongObjectType, "cannot change relation \"%s\": it is not a table", t.Name)
	}
	return nil
}

// BindInsert binds INSERT … VALUES / SELECT.
func (b *Binder) BindInsert(s *pg_query.InsertStmt) (*Insert, error) {
	b.init()
	b.setTopWith(s.WithClause)
	if s.WithClause != nil {
		pop, err := b.pushWith(s.WithClause)
		if err != nil {
			return nil, err
		}
		defer pop()
	}
	t, err := b.resolveTable(s.Relation)
	if err != nil {
		return nil, err
	}
	if err := b.checkWritable(t, s.Relation.Location); err != nil {
		return nil, err
	}
	ins := &Insert{Table: t}
	if ins.Returning, err = b.bindReturning(s.ReturningList, s.Relation, t, nil); err != nil {
		return nil, err
	}
	if s.OnConflictClause != nil {
		if ins.OnConflict, err = b.bindOnConflict(s.OnConflictClause, t, s.Relation); err != nil {
			return nil, err
		}
	}
	if len(s.Cols) == 0 {
		for i := range t.Columns {
			ins.Targets = append(ins.Targets, i)
		}
	} else {
		seen := map[int]bool{}
		for _, c := range s.Cols {
			rt := c.GetResTarget()
			if len(rt.Indirection) > 0 {
				return nil, b.errAt(rt.Location, pgerror.FeatureNotSupported, "assigning to a part of a column is not supported")
			}
			idx := t.ColumnIndex(rt.Name)
			if idx < 0 {
				return nil, b.errAt(rt.Location, pgerror.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", rt.Name, t.Name)
			}
			if seen[idx] {
				return nil, b.errAt(rt.Location, pgerror.DuplicateColumn, "column \"%s\" specified more than once", rt.Name)
			}
			seen[idx] = true
			ins.Targets = append(ins.Targets, idx)
		}
	}
	targetTypes := make([]types.T, len(ins.Targets))
	for i, c := range ins.Targets {
		targetTypes[i] = t.Columns[c].Type
	}
	if s.SelectStmt == nil {
		// INSERT … DEFAULT VALUES
		ins.Targets = nil
		ins.Source = &Values{Rows: [][]Expr{{}}}
	} else {
		sel := s.SelectStmt.GetSelectStmt()
		// Without a column list, fewer values than columns fill the first
		// columns; the rest take their defaults (as in PostgreSQL).
		implicit := len(s.Cols) == 0
		if len(sel.ValuesLists) > 0 {
			if n := len(sel.ValuesLists[0].GetList().Items); implicit && n < len(ins.Targets) {
				ins.Targets, targetTypes = ins.Targets[:n], targetTypes[:n]
			}
			for _, l := range sel.ValuesLists {
				n := len(l.GetList().Items)
				if n > len(ins.Targets) {
					return nil, b.errAt(nodeLocation(l.GetList().Items[len(ins.Targets)]), pgerror.SyntaxError, "INSERT has more expressions than target columns")
				}
				if n < len(ins.Targets) {
					return nil, b.errAt(-1, pgerror.SyntaxError, "INSERT has more target columns than expressions")
				}
			}
			names := make([]string, len(ins.Targets))
			for i, c := range ins.Targets {
				names[i] = t.Columns[c].Name
			}
			src, _, err := b.bindValues(sel.ValuesLists, targetTypes, names)
			if err != nil {
				return nil, err
			}
			// DEFAULT markers become the column default.
			v := src.(*Values)
			for _, row := range v.Rows {
				for i, e := range row {
					if _, ok := e.(*defaultMarker); !ok {
						if err := b.checkGeneratedTarget(t, ins.Targets[i], s.Override); err != nil {
							return nil, err
						}
					}
					if _, ok := e.(*defaultMarker); ok {
						d, err := b.columnDefault(t, ins.Targets[i])
						if err != nil {
							return nil, err
						}
						if d == nil {
							d = &Const{D: types.NullDatum, T: targetTypes[i]}
						}
						row[i] = d
					}
				}
			}
			ins.Source = src
		} else {
			// Untyped literals take the target column's type (PostgreSQL
			// resolves them against the INSERT target, not as text).
			src, cols, err := b.bindSelectOpts(sel, true)
			if err != nil {
				return nil, err
			}
			if implicit && len(cols) < len(ins.Targets) {
				ins.Targets, targetTypes = ins.Targets[:len(cols)], targetTypes[:len(cols)]
			}
			if len(cols) > len(ins.Targets) {
				return nil, b.errAt(-1, pgerror.SyntaxError, "INSERT has more expressions than target columns")
			}
			if len(cols) < len(ins.Targets) {
				return nil, b.errAt(-1, pgerror.SyntaxError, "INSERT has more target columns than expressions")
			}
			for _, ti := range ins.Targets {
				if err := b.checkGeneratedTarget(t, ti, s.Override); err != nil {
					return nil, err
				}
			}
			// assignment casts to the target types
			proj := &Project{Input: src}
			for i, c := range cols {
				b.assignTo = t.Columns[ins.Targets[i]].Name
				e, err := b.coerce(&ColRef{Idx: i, T: c.T}, targetTypes[i], true, -1)
				b.assignTo = ""
				if err != nil {
					return nil, err
				}
				proj.Exprs = append(proj.Exprs, e)
				proj.Cols = append(proj.Cols, Column{Name: t.Columns[ins.Targets[i]].Name, T: targetTypes[i]})
			}
			ins.Source = foldAssignment(proj)
		}
	}
	ins.Defaults = make([]Expr, len(t.Columns))
	targeted := map[int]bool{}
	for _, c := range ins.Targets {
		targeted[c] = true
	}
	for i := range t.Columns {
		if targeted[i] {
			continue
		}
		d, err := b.columnDefault(t, i)
		if err != nil {
			return nil, err
		}
		ins.Defaults[i] = d
	}
	if b.Optimize {
		var err error
		if ins.Source, err = Optimize(ins.Source, b.estimator()); err != nil {
			return nil, err
		}
	}
	if s.WithClause == b.mod.top { // the statement itself, not a WITH query of it
		ins.With = b.modifyingWith()
	}
	return ins, nil
}

// checkGeneratedTarget refuses a value given for a generated column, or
// for a GENERATED ALWAYS identity column without OVERRIDING SYSTEM VALUE
// (428C9, as PostgreSQL).
func (b *Binder) checkGeneratedTarget(t *catalog.Table, col int, override pg_query.OverridingKind) error {
	c := t.Columns[col]
	if override == pg_query.OverridingKind_OVERRIDING_USER_VALUE && c.Identity != 0 {
		return b.errAt(-1, pgerror.FeatureNotSupported, "INSERT … OVERRIDING USER VALUE is not supported yet")
	}
	if c.Generated == "" && (c.Identity != 'a' || override == pg_query.OverridingKind_OVERRIDING_SYSTEM_VALUE) {
		return nil
	}
	e := b.errAt(-1, pgerror.GeneratedAlways, "cannot insert a non-DEFAULT value into column \"%s\"", c.Name).WithDetail("%s", generatedDetail(c))
	if c.Generated == "" {
		e = e.WithHint("Use OVERRIDING SYSTEM VALUE to override.")
	}
	return e
}

func generatedDetail(c catalog.Column) string {
	if c.Generated != "" {
		return "Column \"" + c.Name + "\" is a generated column."
	}
	return "Column \"" + c.Name + "\" is an identity column defined as GENERATED ALWAYS."
}

// foldAssignment moves the assignment casts of INSERT … SELECT into the
// select's own projection when it ends in one, so that each row is computed
// and cast before the next one is computed (a batch would otherwise compute
// every row first): the first row in error is the one reported, as in
// PostgreSQL (22003 for row 1's overflow, not 22012 for row 3's division).
func foldAssignment(proj *Project) Node {
	sp, ok := proj.Input.(*Project)
	if !ok {
		return proj
	}
	out := &Project{Input: sp.Input, Cols: proj.Cols}
	for _, e := range proj.Exprs {
		out.Exprs = append(out.Exprs, Rewrite(e, func(x Expr) Expr {
			if c, ok := x.(*ColRef); ok && c.Idx < len(sp.Exprs) {
				return sp.Exprs[c.Idx]
			}
			return x
		}))
	}
	return out
}

// columnDefault binds a column's stored default expression (nil if none).
func (b *Binder) columnDefault(t *catalog.Table, col int) (Expr, error) {
	c := t.Columns[col]
	if c.Default == "" {
		return nil, nil
	}
	st, err := parse.ParseOne("SELECT " + c.Default)
	if err != nil {
		return nil, err
	}
	rt := st.AST.GetSelectStmt().TargetList[0].GetResTarget()
	sub := &Binder{Cat: b.Cat, SearchPath: b.SearchPath, Stmt: st, Env: b.Env}
	e, err := sub.bindExpr(rt.Val, &exprCtx{clause: "DEFAULT expressions"})
	if err != nil {
		return nil, err
	}
	return sub.coerce(e, c.Type, true, -1)
}

// BindDefault binds a DEFAULT expression of a new column (CREATE TABLE).
func (b *Binder) BindDefault(n *pg_query.Node, t types.T) (Expr, error) {
	e, err := b.bindExpr(n, &exprCtx{clause: "DEFAULT expressions"})
	if err != nil {
		return nil, err
	}
	return b.coerce(e, t, true, nodeLocation(n))
}

// tableInput binds the rows an UPDATE or DELETE changes: the target's
// scan (its scan layout first, as the writes read it), joined with the
// items of UPDATE … FROM or DELETE … USING when there are any, filtered
// by WHERE. The returned scope sees the target and those items.
func (b *Binder) tableInput(rv *pg_query.RangeVar, from []*pg_query.Node, where *pg_query.Node) (*catalog.Table, Node, *scope, error) {
	t, err := b.resolveTable(rv)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := b.checkWritable(t, rv.Location); err != nil {
		return nil, nil, nil, err
	}
	scan := NewScan(t)
	for i := range t.Columns {
		scan.Needed[i] = true // the whole row is rewritten or logged
	}
	scan.Needed[len(t.Columns)] = true // the row id keys rows of tables without a primary key
	alias := t.Name
	if rv.Alias != nil {
		alias = rv.Alias.Aliasname
	}
	sc := b.scanScope(scan, alias, t.RowTracking())
	// After an earlier data-modifying WITH query wrote the table, the
	// target too reads it as it was at the statement's start.
	input := b.snapshotScan(scan)
	for _, f := range from {
		n, fsc, err := b.bindFrom(f, sc)
		if err != nil {
			return nil, nil, nil, err
		}
		if err := b.checkRelConflicts(sc, fsc); err != nil {
			return nil, nil, nil, err
		}
		input = crossJoinItem(input, n)
		sc = sc.add(fsc)
	}
	if where != nil {
		cond, err := b.bindExpr(where, &exprCtx{sc: sc, clause: "WHERE"})
		if err != nil {
			return nil, nil, nil, err
		}
		if cond, err = b.boolArg(cond, nodeLocation(where), "WHERE"); err != nil {
			return nil, nil, nil, err
		}
		input = filterWhere(input, cond, len(sc.cols), false)
	}
	return t, input, sc, nil
}

// fromNeeded marks every column of the FROM / USING items in sc (those
// from index from on, past the target's scan layout) as read: the
// RETURNING list, bound over its own copy of them, may show any of them.
func fromNeeded(sc *scope, from int) {
	for i := from; i < len(sc.cols); i++ {
		sc.markNeeded(i)
	}
}

// BindUpdate binds UPDATE … SET … WHERE.
func (b *Binder) BindUpdate(s *pg_query.UpdateStmt) (*Update, error) {
	b.init()
	b.setTopWith(s.WithClause)
	if s.WithClause != nil {
		pop, err := b.pushWith(s.WithClause)
		if err != nil {
			return nil, err
		}
		defer pop()
	}
	t, input, sc, err := b.tableInput(s.Relation, s.FromClause, s.WhereClause)
	if err != nil {
		return nil, err
	}
	up := &Update{Table: t, Input: input, Joined: len(s.FromClause) > 0}
	if up.Returning, err = b.bindReturning(s.ReturningList, s.Relation, t, s.FromClause); err != nil {
		return nil, err
	}
	if up.Returning != nil {
		fromNeeded(sc, len(t.Columns)+2)
	}
	if up.Sets, err = b.bindSetClauses(s.TargetList, t, sc); err != nil {
		return nil, err
	}
	if b.Optimize {
		if up.Input, err = Optimize(up.Input, b.estimator()); err != nil {
			return nil, err
		}
		for i := range up.Sets {
			if up.Sets[i].E, err = OptimizeExpr(up.Sets[i].E, b.estimator()); err != nil {
				return nil, err
			}
		}
	}
	if s.WithClause == b.mod.top { // the statement itself, not a WITH query of it
		up.With = b.modifyingWith()
	}
	return up, nil
}

// BindDelete binds DELETE … WHERE.
func (b *Binder) BindDelete(s *pg_query.DeleteStmt) (*Delete, error) {
	b.init()
	b.setTopWith(s.WithClause)
	if s.WithClause != nil {
		pop, err := b.pushWith(s.WithClause)
		if err != nil {
			return nil, err
		}
		defer pop()
	}
	t, input, sc, err := b.tableInput(s.Relation, s.UsingClause, s.WhereClause)
	if err != nil {
		return nil, err
	}
	del := &Delete{Table: t, Input: input, Joined: len(s.UsingClause) > 0}
	if del.Returning, err = b.bindReturning(s.ReturningList, s.Relation, t, s.UsingClause); err != nil {
		return nil, err
	}
	if del.Returning != nil {
		fromNeeded(sc, len(t.Columns)+2)
	}
	if b.Optimize {
		if del.Input, err = Optimize(del.Input, b.estimator()); err != nil {
			return nil, err
		}
	}
	if s.WithClause == b.mod.top { // the statement itself, not a WITH query of it
		del.With = b.modifyingWith()
	}
	return del, nil
}

// bindSetClauses binds the SET list of an UPDATE or of ON CONFLICT DO
// UPDATE over scope sc: each target a column of t named once, its value
// DEFAULT or an expression cast as an assignment to the column's type.
func (b *Binder) bindSetClauses(targets []*pg_query.Node, t *catalog.Table, sc *scope) ([]SetClause, error) {
	var sets []SetClause
	seen := map[int]bool{}
	for _, n := range targets {
		rt := n.GetResTarget()
		if _, ok := rt.Val.Node.(*pg_query.Node_MultiAssignRef); ok {
			return nil, b.errAt(rt.Location, pgerror.FeatureNotSupported, "multiple-column assignment is not supported yet")
		}
		idx := t.ColumnIndex(rt.Name)
		if idx < 0 {
			return nil, b.errAt(rt.Location, pgerror.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", rt.Name, t.Name)
		}
		if seen[idx] {
			return nil, b.errAt(rt.Location, pgerror.DuplicateColumn, "multiple assignments to same column \"%s\"", rt.Name)
		}
		seen[idx] = true
		var e Expr
		var err error
		if _, ok := rt.Val.Node.(*pg_query.Node_SetToDefault); !ok {
			if c := t.Columns[idx]; c.Generated != "" || c.Identity == 'a' {
				return nil, b.errAt(rt.Location, pgerror.GeneratedAlways, "column \"%s\" can only be updated to DEFAULT", rt.Name).
					WithDetail("%s", generatedDetail(c))
			}
		}
		if _, ok := rt.Val.Node.(*pg_query.Node_SetToDefault); ok {
			if e, err = b.columnDefault(t, idx); err != nil {
				return nil, err
			}
			if e == nil {
				e = &Const{D: types.NullDatum, T: t.Columns[idx].Type}
			}
		} else {
			if e, err = b.bindExpr(rt.Val, &exprCtx{sc: sc, clause: "UPDATE"}); err != nil {
				return nil, err
			}
			b.assignTo = t.Columns[idx].Name
			e, err = b.coerce(e, t.Columns[idx].Type, true, nodeLocation(rt.Val))
			b.assignTo = ""
			if err != nil {
				return nil, err
			}
		}
		sets = append(sets, SetClause{Col: idx, E: e})
	}
	return sets, nil
}
