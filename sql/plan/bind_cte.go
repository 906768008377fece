package plan

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// cteDef is one WITH query (R-Q2). Its body is bound afresh at each
// reference, in the scopes of its definition (outer, env), so a reference
// is simply the query inlined there; a body referenced several times that
// reads no outer column is marked Shared and computed once per statement.
type cteDef struct {
	name  string
	cte   *pg_query.CommonTableExpr
	outer *scope
	env   *cteEnv // WITH queries its body sees
	// recursive: the body of a WITH RECURSIVE query (it may read itself).
	recursive bool
	plan      *CTE
	refs      int
	// correlated: its body reads columns of an enclosing query.
	correlated bool
	binding    bool
	inNonRec   bool
	// set while the recursive term is bound
	work     *RecursiveUnion
	workLvl  *level
	workRefs int
	// modifying: an INSERT, UPDATE or DELETE (bind_modifying_with.go),
	// bound once; returns: it has a RETURNING list, whose columns are
	// modCols.
	modifying bool
	returns   bool
	modCols   []Column
}

// cteEnv is one WITH clause's names, chained to the enclosing ones.
type cteEnv struct {
	defs   map[string]*cteDef
	parent *cteEnv
}

func (e *cteEnv) lookup(name string) *cteDef {
	for ; e != nil; e = e.parent {
		if d, ok := e.defs[name]; ok {
			return d
		}
	}
	return nil
}

// pushWith makes a WITH clause's queries visible; the returned function
// restores the previous names and decides which queries are shared.
func (b *Binder) pushWith(w *pg_query.WithClause) (func(), error) {
	saved := b.ctes
	env := b.ctes
	var all *cteEnv
	if w.Recursive {
		// Every query of WITH RECURSIVE sees all of them, itself included.
		all = &cteEnv{defs: map[string]*cteDef{}, parent: b.ctes}
		env = all
	}
	var defs []*cteDef
	seen := map[string]bool{}
	for _, n := range w.Ctes {
		c := n.GetCommonTableExpr()
		if seen[c.Ctename] {
			return nil, b.errAt(c.Location, pgerror.DuplicateAlias, "WITH query name \"%s\" specified more than once", c.Ctename)
		}
		seen[c.Ctename] = true
		if c.SearchClause != nil || c.CycleClause != nil {
			return nil, b.errAt(c.Location, pgerror.FeatureNotSupported, "SEARCH and CYCLE clauses are not supported yet")
		}
		modifying := isModifying(c)
		if !modifying && c.Ctequery.GetSelectStmt() == nil {
			return nil, b.errAt(c.Location, pgerror.FeatureNotSupported, "this statement in WITH is not supported")
		}
		d := &cteDef{name: c.Ctename, cte: c, outer: b.outer, plan: &CTE{Name: c.Ctename}}
		if w.Recursive {
			d.env, d.recursive = all, true
			all.defs[c.Ctename] = d
		} else {
			// A plain WITH query sees only the ones before it.
			d.env = env
			env = &cteEnv{defs: map[string]*cteDef{c.Ctename: d}, parent: env}
		}
		if modifying {
			if err := b.bindModifyingCTE(w, d); err != nil {
				b.ctes = saved
				return nil, err
			}
		}
		defs = append(defs, d)
	}
	b.ctes = env
	return func() {
		b.ctes = saved
		for _, d := range defs {
			d.plan.Shared = d.modifying || d.refs >= 2 && !d.correlated
		}
	}, nil
}

// bindCTERef binds a FROM reference to a WITH query.
func (b *Binder) bindCTERef(d *cteDef, rv *pg_query.RangeVar) (Node, *scope, error) {
	if d.modifying {
		return b.bindModifyingRef(d, rv)
	}
	if d.binding {
		switch {
		case d.work != nil:
			if b.lvl != d.workLvl {
				return nil, nil, b.errAt(rv.Location, pgerror.InvalidRecursion, "recursive reference to query \"%s\" must not appear within a subquery", d.name)
			}
			d.workRefs++
			if d.workRefs > 1 {
				return nil, nil, b.errAt(rv.Location, pgerror.InvalidRecursion, "recursive reference to query \"%s\" must not appear more than once", d.name)
			}
			sc, err := b.derivedScope(d.work.Work.Cols, rv.Alias, d.name, rv.Location)
			if err != nil {
				return nil, nil, err
			}
			return &WorkTableScan{Work: d.work.Work}, sc, nil
		case d.inNonRec:
			return nil, nil, b.errAt(rv.Location, pgerror.InvalidRecursion, "recursive reference to query \"%s\" must not appear within its non-recursive term", d.name)
		case b.cteTop() == d:
			return nil, nil, b.errAt(rv.Location, pgerror.InvalidRecursion, "recursive query \"%s\" does not have the form non-recursive-term UNION [ALL] recursive-term", d.name)
		}
		return nil, nil, b.errAt(rv.Location, pgerror.FeatureNotSupported, "mutual recursion between WITH items is not implemented")
	}
	d.binding = true
	b.cteStack = append(b.cteStack, d)
	saveOuter, saveCtes := b.outer, b.ctes
	b.outer, b.ctes = d.outer, d.env
	site := b.lvl
	mark := len(b.outerTargets)
	var node Node
	var cols []Column
	var err error
	if d.recursive {
		node, cols, err = b.bindRecursive(d)
	} else {
		node, cols, err = b.bindSelect(d.cte.Ctequery.GetSelectStmt())
	}
	b.outer, b.ctes = saveOuter, saveCtes
	b.cteStack = b.cteStack[:len(b.cteStack)-1]
	d.binding = false
	if err != nil {
		return nil, nil, err
	}
	for _, t := range b.outerTargets[mark:] {
		if isAncestor(t, site) {
			d.correlated = true
		}
	}
	if cols, err = b.cteColumns(d, cols); err != nil {
		return nil, nil, err
	}
	d.refs++
	sc, err := b.derivedScope(cols, rv.Alias, d.name, rv.Location)
	if err != nil {
		return nil, nil, err
	}
	return &CTEScan{CTE: d.plan, Input: node}, sc, nil
}

func (b *Binder) cteTop() *cteDef {
	if len(b.cteStack) == 0 {
		return nil
	}
	return b.cteStack[len(b.cteStack)-1]
}

// isAncestor reports whether a is a strict ancestor of l.
func isAncestor(a, l *level) bool {
	for p := l.parent; p != nil; p = p.parent {
		if p == a {
			return true
		}
	}
	return false
}

// cteColumns applies the WITH query's column list, WITH t(a, b) AS ….
func (b *Binder) cteColumns(d *cteDef, cols []Column) ([]Column, error) {
	if len(d.cte.Aliascolnames) == 0 {
		return cols, nil
	}
	if len(d.cte.Aliascolnames) > len(cols) {
		return nil, b.errAt(d.cte.Location, pgerror.InvalidColumnReference, "WITH query \"%s\" has %d columns available but %d columns specified", d.name, len(cols), len(d.cte.Aliascolnames))
	}
	out := append([]Column(nil), cols...)
	for i, n := range d.cte.Aliascolnames {
		out[i].Name = strVal(n)
	}
	return out, nil
}

// bindRecursive binds the body of a WITH RECURSIVE query: non-recursive
// term UNION [ALL] recursive term, the latter reading the rows of the
// previous round through a WorkTableScan (R-Q2). The non-recursive term
// fixes the column types; a recursive term whose types would change them is
// an error, as in PostgreSQL. A body that does not read itself is an
// ordinary query.
func (b *Binder) bindRecursive(d *cteDef) (Node, []Column, error) {
	sel := d.cte.Ctequery.GetSelectStmt()
	if sel.Op != pg_query.SetOperation_SETOP_UNION {
		// Not of the recursive form: fine unless it reads itself (then
		// bindCTERef reports the form).
		return b.bindSelect(sel)
	}
	if sel.WithClause != nil {
		pop, err := b.pushWith(sel.WithClause)
		if err != nil {
			return nil, nil, err
		}
		defer pop()
	}
	d.inNonRec = true
	left, lcols, err := b.bindSelect(sel.Larg)
	d.inNonRec = false
	if err != nil {
		return nil, nil, err
	}
	named, err := b.cteColumns(d, lcols)
	if err != nil {
		return nil, nil, err
	}
	ru := &RecursiveUnion{Work: &WorkTable{Name: d.name}, All: sel.All}
	for _, c := range named {
		ru.Work.Cols = append(ru.Work.Cols, Column{Name: c.Name, T: c.T})
	}
	d.work, d.workLvl, d.workRefs = ru, b.lvl, 0
	right, rcols, err := b.bindSelectOpts(sel.Rarg, true)
	d.work = nil
	if err != nil {
		return nil, nil, err
	}
	if d.workRefs == 0 {
		// Not recursive after all: an ordinary UNION.
		return b.bindSelect(sel)
	}
	if aggregatesWorkTable(right, ru) {
		return nil, nil, b.errAt(-1, pgerror.InvalidRecursion, "aggregate functions are not allowed in a recursive query's recursive term")
	}
	if len(sel.SortClause) > 0 {
		return nil, nil, b.errAt(-1, pgerror.FeatureNotSupported, "ORDER BY in a recursive query is not implemented")
	}
	if sel.LimitCount != nil || sel.LimitOffset != nil {
		return nil, nil, b.errAt(-1, pgerror.FeatureNotSupported, "LIMIT and OFFSET in a recursive query are not implemented")
	}
	nodes, _, err := b.unifySetOp("UNION", left, lcols, right, rcols, func(i int, t types.T) error {
		if t != lcols[i].T {
			loc := int32(-1)
			if i < len(sel.Larg.TargetList) {
				loc = nodeLocation(sel.Larg.TargetList[i])
			}
			return b.errAt(loc, pgerror.DatatypeMismatch,
				"recursive query \"%s\" column %d has type %s in non-recursive term but type %s overall", d.name, i+1, lcols[i].T.String(), t.String()).
				WithHint("Cast the output of the non-recursive term to the correct type.")
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	ru.NonRec, ru.Rec = nodes[0], nodes[1]
	return ru, lcols, nil
}

// readsWorkTable reports whether n reads the previous round of a recursive
// query (which one, when ru is nil: any) at its own level.
func readsWorkTable(n Node, ru *RecursiveUnion) bool {
	if w, ok := n.(*WorkTableScan); ok {
		return ru == nil || w.Work == ru.Work
	}
	for _, c := range inputs(n) {
		if readsWorkTable(c, ru) {
			return true
		}
	}
	return false
}

// aggregatesWorkTable reports whether an aggregation in n reads ru's
// previous round (PostgreSQL forbids aggregates in the recursive term).
func aggregatesWorkTable(n Node, ru *RecursiveUnion) bool {
	if a, ok := n.(*Aggregate); ok && len(a.Aggs) > 0 && readsWorkTable(a.Input, ru) {
		return true
	}
	for _, c := range inputs(n) {
		if aggregatesWorkTable(c, ru) {
			return true
		}
	}
	return false
}
