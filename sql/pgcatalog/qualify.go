package pgcatalog

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/parse"
)

// Schema qualification of the SQL text the catalog functions return
// (pg_get_viewdef, pg_get_expr, pg_get_constraintdef): as in PostgreSQL,
// a relation is named with its schema when the session's search path
// would not find it by its bare name. pg_dump sets an empty search path,
// so its dump names every relation in full and restores under any path.

// qualifyText qualifies sql (an expression when expr) for an object in
// schema home that reads deps (the relations a view's query reads;
// nil for an expression).
func (v *View) qualifyText(sql string, expr bool, deps []uint32, home uint32) string {
	return parse.QualifyNames(sql, expr, func(name string, seq bool) string {
		t := v.nameTarget(name, seq, deps, home)
		if t == nil {
			return ""
		}
		if r := v.relation(t.ID); r == nil || v.visible(r) {
			return ""
		}
		ns, _ := v.namespaceName(t.SchemaID)
		return ns
	})
}

// nameTarget is the relation a bare name in an object's text means: one
// of deps by that name, else the one relation by that name, preferring
// schema home when several schemas have one.
func (v *View) nameTarget(name string, seq bool, deps []uint32, home uint32) *catalog.Table {
	fits := func(t *catalog.Table) bool { return t.Name == name && (t.Kind == catalog.KindSequence) == seq }
	var cands []*catalog.Table
	for _, id := range deps {
		if t, ok := v.Cat.Table(id); ok && fits(t) {
			cands = append(cands, t)
		}
	}
	if len(cands) == 0 {
		for _, t := range v.Cat.Tables() {
			if fits(t) {
				cands = append(cands, t)
			}
		}
	}
	if len(cands) == 1 {
		return cands[0]
	}
	for _, t := range cands {
		if t.SchemaID == home {
			return t
		}
	}
	return nil
}
