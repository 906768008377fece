package plan

import (
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/types"
)

// bindFrom binds one FROM item (R-Q2): a table, view or WITH query, a join,
// a derived table (subquery or VALUES), or a function. lat is the scope of
// the items to its left that a LATERAL item may read (nil: none); a LATERAL
// item that reads them comes back as an Apply without Left, for the caller
// to complete.
func (b *Binder) bindFrom(n *pg_query.Node, lat *scope) (Node, *scope, error) {
	switch x := n.Node.(type) {
	case *pg_query.Node_RangeVar:
		rv := x.RangeVar
		if rv.Schemaname == "" && rv.Catalogname == "" {
			if d := b.ctes.lookup(rv.Relname); d != nil {
				return b.bindCTERef(d, rv)
			}
		}
		if r := b.systemRelation(rv); r != nil {
			if b.CheckSystem != nil {
				if err := b.CheckSystem(r, b.readingView()); err != nil {
					return nil, nil, withPos(err, b, rv.Location)
				}
			}
			n, sc, err := b.systemRows(&Rows{Cols: r.Cols, Gen: GenCatalog, Arg: CatalogRelArg{Rel: r, Cat: b.Cat}}, rv.Alias, r.Name, rv.Location)
			if err == nil && len(sc.rels) == 1 {
				sc.withTableOID(sc.rels[0], r.OID)
			}
			return n, sc, err
		}
		t, err := b.resolveTable(rv)
		if err != nil {
			return nil, nil, err
		}
		b.noteRelation(rv, t)
		if err := b.checkRead(t, rv.Location); err != nil {
			return nil, nil, err
		}
		if t.Kind == catalog.KindMaterializedView && t.Dataset != nil && t.Dataset.Unpopulated && !b.DefinitionOnly {
			return nil, nil, pgerror.New(pgerror.ObjectNotInPrerequisiteState, "materialized view \"%s\" has not been populated", t.Name).
				WithHint("Use the REFRESH MATERIALIZED VIEW command.")
		}
		if t.Kind == catalog.KindView {
			return b.bindView(t, rv)
		}
		if t.Kind == catalog.KindSequence {
			// PostgreSQL reads a sequence as its one-row state.
			return b.systemRows(&Rows{Cols: SequenceColumns, Gen: GenSequence, Arg: t}, rv.Alias, t.Name, rv.Location)
		}
		alias, aliased := t.Name, false
		if rv.Alias != nil {
			alias, aliased = rv.Alias.Aliasname, true
		}
		scan := NewScan(t)
		sc := b.scanScope(scan, alias, t.RowTracking())
		if !aliased {
			sc.relIDs = []uint32{t.ID}
		}
		if rv.Alias != nil {
			if err := b.renameColumns(sc, rv.Alias, rv.Location); err != nil {
				return nil, nil, err
			}
		}
		return b.snapshotScan(scan), sc, nil
	case *pg_query.Node_RangeTableSample:
		return b.bindTableSample(x.RangeTableSample, lat)
	case *pg_query.Node_JoinExpr:
		return b.bindJoin(x.JoinExpr)
	case *pg_query.Node_RangeFunction:
		return b.bindRangeFunction(x.RangeFunction, lat)
	case *pg_query.Node_RangeSubselect:
		rs := x.RangeSubselect
		sel := rs.Subquery.GetSelectStmt()
		if sel == nil {
			return nil, nil, b.errAt(-1, pgerror.FeatureNotSupported, "this subquery in FROM is not supported")
		}
		if rs.Lateral && lat != nil {
			return b.bindLateral(sel, rs.Alias, lat)
		}
		// A derived table sees the enclosing queries but not its sibling
		// FROM items: b.outer is still the outer scope of this query.
		saved := b.siblings
		if lat != nil {
			b.siblings = append(append([]string(nil), saved...), lat.rels...)
		}
		node, cols, err := b.bindSelect(sel)
		b.siblings = saved
		if err != nil {
			return nil, nil, err
		}
		sc, err := b.derivedScope(cols, rs.Alias, "", -1)
		if err != nil {
			return nil, nil, err
		}
		return node, sc, nil
	}
	return nil, nil, b.errAt(nodeLocation(n), pgerror.FeatureNotSupported, "%s in FROM is not supported yet", parse.NodeWords(n.Node))
}

// readingView is the view whose query is being bound (the innermost
// expanded), nil at the statement's own level.
func (b *Binder) readingView() *catalog.Table {
	if len(b.views) == 0 {
		return nil
	}
	v, _ := b.Cat.Table(b.views[len(b.views)-1])
	return v
}

// checkRead asks CheckRead about t, read at loc.
func (b *Binder) checkRead(t *catalog.Table, loc int32) error {
	if b.CheckRead == nil {
		return nil
	}
	if err := b.CheckRead(t, b.readingView()); err != nil {
		return withPos(err, b, loc)
	}
	return nil
}

// derivedScope is the scope of a relation computed by a query: one column
// per output column, under the alias (or name when there is no alias).
func (b *Binder) derivedScope(cols []Column, alias *pg_query.Alias, name string, loc int32) (*scope, error) {
	rel := name
	if alias != nil {
		rel = alias.Aliasname
	}
	s := b.newScope()
	if rel != "" {
		s.rels = []string{rel}
		s.relIDs = []uint32{0}
	}
	for _, c := range cols {
		s.cols = append(s.cols, scopeCol{rel: rel, name: c.Name, t: c.T, table: c.Table, attnum: c.AttrNum, scanIdx: -1, fields: c.Fields})
	}
	if alias != nil {
		if err := b.renameColumns(s, alias, loc); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// renameColumns applies an alias's column list, AS t(x, y), to the first
// visible columns of s.
func (b *Binder) renameColumns(s *scope, alias *pg_query.Alias, loc int32) error {
	if len(alias.Colnames) == 0 {
		return nil
	}
	vis := s.visible()
	if len(alias.Colnames) > len(vis) {
		return b.errAt(loc, pgerror.InvalidColumnReference, "table \"%s\" has %d columns available but %d columns specified", alias.Aliasname, len(vis), len(alias.Colnames))
	}
	for i, n := range alias.Colnames {
		s.cols[vis[i]].name = strVal(n)
	}
	return nil
}

// checkRelConflicts reports a relation name used twice in one FROM clause
// (42712), except two unaliased tables of different schemas (PostgreSQL's
// rule).
func (b *Binder) checkRelConflicts(l, r *scope) error {
	for i, rel := range r.rels {
		if rel == "" {
			continue
		}
		for j, other := range l.rels {
			if other != rel {
				continue
			}
			if r.relIDs[i] != 0 && l.relIDs[j] != 0 && r.relIDs[i] != l.relIDs[j] {
				continue
			}
			return b.errAt(-1, pgerror.DuplicateAlias, "table name \"%s\" specified more than once", rel)
		}
	}
	return nil
}

func (b *Binder) resolveTable(rv *pg_query.RangeVar) (*catalog.Table, error) {
	t, err := b.Cat.Resolve(parse.RangeVarParts(rv), b.SearchPath)
	if err != nil {
		return nil, withPos(err, b, rv.Location)
	}
	return t, nil
}

// ResolveTable resolves a RangeVar (for DDL and DML).
func (b *Binder) ResolveTable(rv *pg_query.RangeVar) (*catalog.Table, error) {
	return b.resolveTable(rv)
}

// maxViewDepth bounds view expansion (a cycle is caught earlier; this
// guards against absurd nesting).
const maxViewDepth = 64

// bindView expands a plain view (R-Q4): its defining query, parsed from the
// catalog's text and bound as a derived table named after the view. The
// body sees neither the enclosing query nor its WITH queries.
func (b *Binder) bindView(t *catalog.Table, rv *pg_query.RangeVar) (Node, *scope, error) {
	for _, id := range b.views {
		if id == t.ID {
			return nil, nil, b.errAt(rv.Location, pgerror.InvalidObjectDefinition, "infinite recursion detected in rules for relation \"%s\"", t.Name)
		}
	}
	if len(b.views) >= maxViewDepth {
		return nil, nil, b.errAt(rv.Location, pgerror.StatementTooComplex, "views nested more than %d deep", maxViewDepth)
	}
	st, err := parse.ParseOne(t.Query)
	if err != nil || st == nil || st.AST == nil || st.AST.GetSelectStmt() == nil {
		return nil, nil, b.errAt(rv.Location, pgerror.InternalError, "view \"%s\" has an invalid definition", t.Name)
	}
	path := b.SearchPath
	if len(t.ViewSearchPath) > 0 {
		path = t.ViewSearchPath // its names mean what they meant at CREATE VIEW
	}
	if !b.Cat.IsTemp(t) {
		// A permanent view reads no temporary relation: the reader's
		// temporary tables do not hide what it was defined over.
		path = slices.DeleteFunc(slices.Clone(path), catalog.IsTempSchema)
	}
	sub := &Binder{Cat: b.Cat, SearchPath: path, Stmt: st, Env: b.Env, lvl: b.lvl, CheckRead: b.CheckRead, CheckSystem: b.CheckSystem, DefinitionOnly: b.DefinitionOnly, AllowRowLocks: b.AllowRowLocks,
		views: append(append([]uint32(nil), b.views...), t.ID), subqueries: b.subqueries}
	node, cols, err := sub.bindSelect(st.AST.GetSelectStmt())
	b.subqueries, b.volatile = sub.subqueries, b.volatile+sub.volatile
	if err != nil {
		// Positions inside the view's text mean nothing to the client.
		if pe, ok := err.(*pgerror.Error); ok {
			pe.Position = 0
		}
		return nil, nil, err
	}
	if len(t.Columns) == len(cols) {
		cols = append([]Column(nil), cols...)
		for i := range cols {
			cols[i].Name = t.Columns[i].Name
		}
	}
	sc, err := b.derivedScope(cols, rv.Alias, t.Name, rv.Location)
	if err != nil {
		return nil, nil, err
	}
	if rv.Alias == nil {
		sc.relIDs = []uint32{t.ID} // an unaliased relation, as a table's
	}
	return node, sc, nil
}

// bindLateral binds a LATERAL subquery one evaluation level down, seeing
// the items to its left (lat) as an enclosing query. One that reads none of
// them is an ordinary derived table.
func (b *Binder) bindLateral(sel *pg_query.SelectStmt, alias *pg_query.Alias, lat *scope) (Node, *scope, error) {
	saveOuter, saveLvl := b.outer, b.lvl
	lvl := &level{parent: lat.lvl}
	b.outer, b.lvl = lat, lvl
	node, cols, err := b.bindSelect(sel)
	b.outer, b.lvl = saveOuter, saveLvl
	if err != nil {
		return nil, nil, err
	}
	sc, err := b.derivedScope(cols, alias, "", -1)
	if err != nil {
		return nil, nil, err
	}
	if len(lvl.params) == 0 {
		return node, sc, nil
	}
	return &Apply{Kind: JoinInner, Right: node, Params: lvl.params}, sc, nil
}

// pendingApply reports whether n is a LATERAL item waiting for its left
// input.
func pendingApply(n Node) (*Apply, bool) {
	a, ok := n.(*Apply)
	return a, ok && a.Left == nil
}

func (b *Binder) bindJoin(j *pg_query.JoinExpr) (Node, *scope, error) {
	// Only the right side of a join may be LATERAL over its left side
	// (items further left in a FROM list are not in the join's rows).
	left, lsc, err := b.bindFrom(j.Larg, nil)
	if err != nil {
		return nil, nil, err
	}
	right, rsc, err := b.bindFrom(j.Rarg, lsc)
	if err != nil {
		return nil, nil, err
	}
	if ap, ok := pendingApply(right); ok {
		return b.bindLateralJoin(j, ap, left, lsc, rsc)
	}
	if err := b.checkRelConflicts(lsc, rsc); err != nil {
		return nil, nil, err
	}
	sc := lsc.add(rsc)
	var kind JoinKind
	switch j.Jointype {
	case pg_query.JoinType_JOIN_INNER:
		kind = JoinInner
		if j.Quals == nil && !j.IsNatural && len(j.UsingClause) == 0 {
			kind = JoinCross
		}
	case pg_query.JoinType_JOIN_LEFT:
		kind = JoinLeft
	case pg_query.JoinType_JOIN_RIGHT:
		kind = JoinRight
	case pg_query.JoinType_JOIN_FULL:
		kind = JoinFull
	case pg_query.JoinType_JOIN_SEMI:
		// Databricks LEFT SEMI JOIN (sql/parse marks it).
		kind = JoinSemi
	case pg_query.JoinType_JOIN_ANTI:
		kind = JoinAnti
	default:
		return nil, nil, b.errAt(-1, pgerror.FeatureNotSupported, "this join type is not supported yet")
	}
	// PostgreSQL: a recursive query's previous round must not be read on
	// the side of an outer join that is padded with NULLs.
	if kind == JoinLeft && readsWorkTable(right, nil) || kind == JoinRight && readsWorkTable(left, nil) ||
		kind == JoinFull && (readsWorkTable(left, nil) || readsWorkTable(right, nil)) {
		name := ""
		if d := b.cteTop(); d != nil {
			name = d.name
		}
		return nil, nil, b.errAt(-1, pgerror.InvalidRecursion, "recursive reference to query \"%s\" must not appear within an outer join", name)
	}
	join := &Join{Kind: kind, Left: left, Right: right}
	var out *scope
	var node Node = join
	switch {
	case j.IsNatural || len(j.UsingClause) > 0:
		node, out, err = b.bindUsing(j, join, lsc, rsc)
		if err != nil {
			return nil, nil, err
		}
	default:
		if j.Quals != nil {
			cond, err := b.bindExpr(j.Quals, &exprCtx{sc: sc, clause: "JOIN conditions"})
			if err != nil {
				return nil, nil, err
			}
			if cond, err = b.boolArg(cond, nodeLocation(j.Quals), "JOIN/ON"); err != nil {
				return nil, nil, err
			}
			splitJoinCond(join, factorOrs(cond), len(lsc.cols))
		}
		out = sc
		if kind == JoinSemi || kind == JoinAnti {
			// Only the left side's columns come out of a semi/anti join.
			out = lsc
		}
	}
	if j.Alias != nil {
		out = b.joinAlias(out, j.Alias)
		if err := b.renameColumns(out, j.Alias, -1); err != nil {
			return nil, nil, err
		}
	}
	return node, out, nil
}

// joinAlias hides the relations inside a join behind its alias: the columns
// * would show become alias.column, the others unreachable.
func (b *Binder) joinAlias(s *scope, alias *pg_query.Alias) *scope {
	out := &scope{rels: []string{alias.Aliasname}, relIDs: []uint32{0}, outer: s.outer, lvl: s.lvl,
		hidden: append(append([]string(nil), s.hidden...), s.rels...)}
	vis := map[int]bool{}
	for _, i := range s.visible() {
		vis[i] = true
	}
	for i, c := range s.cols {
		if vis[i] {
			c.rel = alias.Aliasname
		} else {
			c.rel, c.name, c.hidden, c.qualifiedOnly = "", "", true, false
		}
		out.cols = append(out.cols, c)
	}
	return out
}

// bindUsing binds NATURAL JOIN and JOIN … USING (…): equality keys on the
// named columns, and a projection that puts one merged column per name
// first (the left value; the right one for RIGHT JOIN; COALESCE of both for
// FULL JOIN), as PostgreSQL does, so that * lists the merged columns, then
// the other left columns, then the other right ones (R-Q2).
func (b *Binder) bindUsing(j *pg_query.JoinExpr, join *Join, lsc, rsc *scope) (Node, *scope, error) {
	var names []string
	if j.IsNatural {
		for _, i := range lsc.visible() {
			name := lsc.cols[i].name
			for _, k := range rsc.visible() {
				if rsc.cols[k].name == name {
					names = append(names, name)
					break
				}
			}
		}
	} else {
		seen := map[string]bool{}
		for _, u := range j.UsingClause {
			name := strVal(u)
			if seen[name] {
				return nil, nil, b.errAt(-1, pgerror.DuplicateColumn, "column name \"%s\" appears more than once in USING clause", name)
			}
			seen[name] = true
			names = append(names, name)
		}
	}
	nl := len(lsc.cols)
	usingAlias := ""
	if j.JoinUsingAlias != nil {
		usingAlias = j.JoinUsingAlias.Aliasname
	}
	lq, rq := map[int]bool{}, map[int]bool{}
	var merged []Expr
	var mcols []scopeCol
	for _, name := range names {
		li, err := b.usingColumn(lsc, name, "left")
		if err != nil {
			return nil, nil, err
		}
		ri, err := b.usingColumn(rsc, name, "right")
		if err != nil {
			return nil, nil, err
		}
		lsc.markNeeded(li)
		rsc.markNeeded(ri)
		lc, rc := lsc.cols[li], rsc.cols[ri]
		t, ok := commonType(lc.t, rc.t)
		if !ok {
			return nil, nil, b.errAt(-1, pgerror.DatatypeMismatch, "JOIN/USING types %s and %s cannot be matched", lc.t.String(), rc.t.String())
		}
		if isUnknown(t) {
			t = types.Text
		}
		le, err := b.coerce(&ColRef{Idx: li, T: lc.t, Name: name}, t, false, -1)
		if err != nil {
			return nil, nil, err
		}
		re, err := b.coerce(&ColRef{Idx: ri, T: rc.t, Name: name}, t, false, -1)
		if err != nil {
			return nil, nil, err
		}
		join.LeftKeys = append(join.LeftKeys, le)
		join.RightKeys = append(join.RightKeys, re)
		lq[li], rq[ri] = true, true
		var m Expr
		switch join.Kind {
		case JoinRight:
			m = shift(re, -nl)
		case JoinFull:
			m = &Coalesce{Args: []Expr{le, shift(re, -nl)}, T: t}
		default:
			m = le
		}
		merged = append(merged, m)
		mc := scopeCol{rel: usingAlias, name: name, t: t, scanIdx: -1}
		if join.Kind != JoinFull && join.Kind != JoinRight && lc.t == t {
			mc.table, mc.attnum = lc.table, lc.attnum
		}
		mcols = append(mcols, mc)
	}
	if join.Kind == JoinCross {
		join.Kind = JoinInner
	}
	if join.Kind == JoinSemi || join.Kind == JoinAnti {
		return join, lsc, nil
	}
	out := b.newScope()
	out.rels = append(append([]string(nil), lsc.rels...), rsc.rels...)
	out.relIDs = append(append([]uint32(nil), lsc.relIDs...), rsc.relIDs...)
	out.oids = mergeOIDs(lsc.oids, rsc.oids)
	if usingAlias != "" {
		out.rels = append(out.rels, usingAlias)
		out.relIDs = append(out.relIDs, 0)
	}
	proj := &Project{Input: join}
	for i, m := range merged {
		proj.Exprs = append(proj.Exprs, m)
		out.cols = append(out.cols, mcols[i])
	}
	for i, c := range lsc.cols {
		c.qualifiedOnly = c.qualifiedOnly || lq[i]
		out.cols = append(out.cols, c)
		proj.Exprs = append(proj.Exprs, &ColRef{Idx: i, T: c.t, Name: c.name})
	}
	for i, c := range rsc.cols {
		c.qualifiedOnly = c.qualifiedOnly || rq[i]
		out.cols = append(out.cols, c)
		proj.Exprs = append(proj.Exprs, &ColRef{Idx: nl + i, T: c.t, Name: c.name})
	}
	for _, c := range out.cols {
		proj.Cols = append(proj.Cols, Column{Name: c.name, T: c.t, Table: c.table, AttrNum: c.attnum})
	}
	return proj, out, nil
}

// usingColumn finds the one column a USING name denotes on one side.
func (b *Binder) usingColumn(s *scope, name, side string) (int, error) {
	found := -1
	for _, i := range s.visible() {
		if s.cols[i].name != name {
			continue
		}
		if found >= 0 {
			return 0, b.errAt(-1, pgerror.AmbiguousColumn, "common column name \"%s\" appears more than once in %s table", name, side)
		}
		found = i
	}
	if found < 0 {
		return 0, b.errAt(-1, pgerror.UndefinedColumn, "column \"%s\" specified in USING clause does not exist in %s table", name, side)
	}
	return found, nil
}

// splitJoinCond extracts equality keys (left side = right side) from the ON
// condition; the rest stays as the residual over the combined row.
func splitJoinCond(j *Join, cond Expr, nLeft int) {
	var residual []Expr
	for _, c := range conjuncts(cond) {
		if bin, ok := c.(*Binary); ok && bin.Op == OpEq {
			ls, rs := sides(bin.L, nLeft), sides(bin.R, nLeft)
			switch {
			case ls == 1 && rs == 2:
				j.LeftKeys = append(j.LeftKeys, bin.L)
				j.RightKeys = append(j.RightKeys, shift(bin.R, nLeft))
				continue
			case ls == 2 && rs == 1:
				j.LeftKeys = append(j.LeftKeys, bin.R)
				j.RightKeys = append(j.RightKeys, shift(bin.L, nLeft))
				continue
			}
		}
		residual = append(residual, c)
	}
	switch len(residual) {
	case 0:
	case 1:
		j.Residual = residual[0]
	default:
		j.Residual = &And{Args: residual}
	}
}

// sides reports which join side an expression reads: 0 none, 1 left, 2
// right, 3 both.
func sides(e Expr, nLeft int) int {
	s := 0
	Walk(e, func(x Expr) bool {
		if c, ok := x.(*ColRef); ok {
			if c.Idx < nLeft {
				s |= 1
			} else {
				s |= 2
			}
		}
		return true
	})
	return s
}

// shift renumbers column references by -n (right side of a join).
func shift(e Expr, n int) Expr {
	return Rewrite(e, func(x Expr) Expr {
		if c, ok := x.(*ColRef); ok {
			return &ColRef{Idx: c.Idx - n, T: c.T, Name: c.Name}
		}
		return x
	})
}

// conjuncts splits an AND tree.
func conjuncts(e Expr) []Expr {
	if a, ok := e.(*And); ok {
		var out []Expr
		for _, x := range a.Args {
			out = append(out, conjuncts(x)...)
		}
		return out
	}
	return []Expr{e}
}

// bindLateralJoin completes `left [INNER|LEFT] JOIN LATERAL (…) ON cond`.
func (b *Binder) bindLateralJoin(j *pg_query.JoinExpr, ap *Apply, left Node, lsc, rsc *scope) (Node, *scope, error) {
	if err := b.checkRelConflicts(lsc, rsc); err != nil {
		return nil, nil, err
	}
	switch j.Jointype {
	case pg_query.JoinType_JOIN_INNER:
		ap.Kind = JoinInner
	case pg_query.JoinType_JOIN_LEFT:
		ap.Kind = JoinLeft
	default:
		return nil, nil, b.errAt(-1, pgerror.InvalidColumnReference, "the combining JOIN type must be INNER or LEFT for a LATERAL reference")
	}
	if j.IsNatural || len(j.UsingClause) > 0 {
		return nil, nil, b.errAt(-1, pgerror.FeatureNotSupported, "NATURAL and USING joins with a LATERAL item are not supported yet")
	}
	ap.Left = left
	sc := lsc.add(rsc)

	if j.Quals != nil {
		cond, err := b.bindExpr(j.Quals, &exprCtx{sc: sc, clause: "JOIN conditions"})
		if err != nil {
			return nil, nil, err
		}
		if cond, err = b.boolArg(cond, nodeLocation(j.Quals), "JOIN/ON"); err != nil {
			return nil, nil, err
		}
		ap.Residual = cond
	}
	if j.Alias != nil {
		sc = b.joinAlias(sc, j.Alias)
		if err := b.renameColumns(sc, j.Alias, -1); err != nil {
			return nil, nil, err
		}
	}
	return flattenSRFApply(ap), sc, nil
}

// systemRelation finds the pg_catalog or information_schema relation rv
// names, nil if it names none. Bare names look in pg_catalog first, as
// PostgreSQL searches it before the search path.
func (b *Binder) systemRelation(rv *pg_query.RangeVar) *SystemRelation {
	if rv.Catalogname != "" && rv.Catalogname != b.Cat.Database {
		return nil
	}
	schema := rv.Schemaname
	if schema == "" {
		schema = "pg_catalog"
	}
	r, _ := LookupSystemRelation(schema, rv.Relname)
	return r
}
