package pgcatalog

import (
	"strings"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// tableConstraint is a CHECK or FOREIGN KEY constraint as pg_constraint
// and information_schema present it.
type tableConstraint struct {
	t      *catalog.Table
	check  *catalog.Check      // contype c
	fk     *catalog.ForeignKey // contype f
	parent *catalog.Table      // fk's referenced table (nil if gone)
}

func (k *tableConstraint) oid() uint32 {
	if k.check != nil {
		return k.check.ID
	}
	return k.fk.ID
}

func (k *tableConstraint) name() string {
	if k.check != nil {
		return k.check.Name
	}
	return k.fk.Name
}

// tableConstraints lists the CHECK and FOREIGN KEY constraints of every
// table.
func (v *View) tableConstraints() []*tableConstraint {
	var out []*tableConstraint
	for _, t := range v.Cat.Tables() {
		for i := range t.Checks {
			out = append(out, &tableConstraint{t: t, check: &t.Checks[i]})
		}
		for i := range t.ForeignKeys {
			fk := &t.ForeignKeys[i]
			p, _ := v.Cat.Table(fk.RefTable)
			out = append(out, &tableConstraint{t: t, fk: fk, parent: p})
		}
	}
	return out
}

func attnums(t *catalog.Table, ids []uint32) []int16 {
	out := make([]int16, len(ids))
	for i, id := range ids {
		out[i] = int16(t.ColumnByID(id) + 1)
	}
	return out
}

// refIndex is the unique index (its OID and constraint name) a foreign key
// relies on: the referenced table's primary key or unique index on its
// referenced columns.
func refIndex(p *catalog.Table, cols []uint32) (uint32, string) {
	same := func(key []uint32) bool {
		if len(key) != len(cols) {
			return false
		}
		for _, id := range key {
			found := false
			for _, c := range cols {
				found = found || c == id
			}
			if !found {
				return false
			}
		}
		return true
	}
	if len(p.PrimaryKey) > 0 && same(p.PrimaryKey) {
		return pkIndexOID(p.ID), pkName(p)
	}
	for _, ix := range p.Indexes {
		if ix.Unique && same(ix.ColumnIDs()) {
			return ix.ID, ix.Name
		}
	}
	return 0, ""
}

// actionRule is information_schema's name of a referential action.
func actionRule(a byte) string {
	return map[byte]string{catalog.FKNoAction: "NO ACTION", catalog.FKRestrict: "RESTRICT", catalog.FKCascade: "CASCADE",
		catalog.FKSetNull: "SET NULL", catalog.FKSetDefault: "SET DEFAULT"}[a]
}

// A CHECK condition is printed as PostgreSQL prints the tree it stores
// (plan.RuleutilsText: 'x'::text, = ANY (ARRAY[…]), the casts operator
// resolution adds), from the condition bound over the table; one that
// does not bind or holds what that printer does not know shows the text
// the catalog keeps.
func (v *View) checkText(t *catalog.Table, expr string, pretty bool) string {
	b := &plan.Binder{Cat: v.Cat}
	if v.F != nil {
		b.Env = v.F.Env
	}
	if e, err := b.BindRowExpr(t, expr, nil); err == nil {
		cols := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			cols[i] = c.Name
		}
		if text, ok := plan.RuleutilsText(e, cols, pretty); ok {
			return text
		}
	}
	if pretty {
		return parse.PrettyExpr(expr)
	}
	return expr
}

// def is pg_get_constraintdef of the constraint; the referenced table of
// a foreign key is schema-qualified when the search path would not find
// it (qualify.go). pretty is pg_get_constraintdef(oid, true): a CHECK's
// condition without its redundant parentheses ("CHECK (qty > 0)", where
// the plain form is "CHECK ((qty > 0))").
func (k *tableConstraint) def(v *View, pretty bool) string {
	if k.check != nil {
		d := "CHECK (" + v.checkText(k.t, k.check.Expr, pretty) + ")"
		if k.check.NotValid {
			d += " NOT VALID"
		}
		return d
	}
	fk := k.fk
	d := "FOREIGN KEY (" + quotedColumns(k.t, fk.Cols) + ") REFERENCES "
	if k.parent != nil {
		name := quoteIdent(k.parent.Name)
		if r := v.relation(k.parent.ID); r != nil {
			name = v.qualifiedName(r)
		}
		d += name + "(" + quotedColumns(k.parent, fk.RefCols) + ")"
	}
	if fk.Match == catalog.FKMatchFull {
		d += " MATCH FULL"
	}
	if fk.OnUpdate != catalog.FKNoAction {
		d += " ON UPDATE " + actionRule(fk.OnUpdate)
	}
	if fk.OnDelete != catalog.FKNoAction {
		d += " ON DELETE " + actionRule(fk.OnDelete)
	}
	if fk.Deferrable {
		d += " DEFERRABLE"
	}
	if fk.Deferred {
		d += " INITIALLY DEFERRED"
	}
	if fk.NotValid {
		d += " NOT VALID"
	}
	return d
}

func quotedColumns(t *catalog.Table, ids []uint32) string {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = quoteIdent(t.Columns[t.ColumnByID(id)].Name)
	}
	return strings.Join(names, ", ")
}

// checkColumns are the columns a CHECK condition names, in table order
// (pg_constraint.conkey): read from its text, as the catalog keeps it.
func checkColumns(t *catalog.Table, expr string) []int16 {
	var out []int16
	for i, c := range t.Columns {
		if parse.MentionsIdent(expr, c.Name) {
			out = append(out, int16(i+1))
		}
	}
	return out
}

// constraintRow is k's pg_constraint row.
func (v *View) constraintRow(k *tableConstraint) vals {
	row := vals{"oid": k.oid(), "conname": k.name(), "connamespace": k.t.SchemaID, "conrelid": k.t.ID,
		"conislocal": true, "confupdtype": " ", "confdeltype": " ", "confmatchtype": " "}
	if k.check != nil {
		row["contype"] = "c"
		row["convalidated"] = !k.check.NotValid
		row["conkey"] = checkColumns(k.t, k.check.Expr)
		row["conbin"] = k.check.Expr
		return row
	}
	fk := k.fk
	row["contype"] = "f"
	row["condeferrable"], row["condeferred"], row["convalidated"] = fk.Deferrable, fk.Deferred, !fk.NotValid
	row["connoinherit"] = true
	row["confrelid"] = fk.RefTable
	if k.parent != nil {
		ix, _ := refIndex(k.parent, fk.RefCols)
		row["conindid"] = ix
		row["confkey"] = attnums(k.parent, fk.RefCols)
	}
	row["confupdtype"], row["confdeltype"], row["confmatchtype"] = string(fk.OnUpdate), string(fk.OnDelete), string(fk.Match)
	row["conkey"] = attnums(k.t, fk.Cols)
	return row
}

func (v *View) constraintByOID(oid uint32) *tableConstraint {
	for _, k := range v.tableConstraints() {
		if k.oid() == oid {
			return k
		}
	}
	return nil
}

// The information_schema views of constraints PostgreSQL fills from
// pg_constraint alone.
func init() {
	is := func(name string, f rowsFunc) { generators["information_schema."+name] = f }
	is("check_constraints", func(v *View, b *builder) {
		for _, k := range v.tableConstraints() {
			if k.check == nil {
				continue
			}
			ns, _ := v.namespaceName(k.t.SchemaID)
			b.add(vals{"constraint_catalog": v.Cat.Database, "constraint_schema": ns, "constraint_name": k.name(),
				"check_clause": strings.TrimPrefix(k.def(v, false), "CHECK ")})
		}
		// NOT NULL columns are CHECK constraints there too, as PostgreSQL
		// lists them.
		for _, r := range v.relations() {
			if r.kind != 'r' || r.table == nil {
				continue
			}
			ns, _ := v.namespaceName(r.ns)
			for i, c := range r.cols {
				if c.notNull {
					b.add(vals{"constraint_catalog": v.Cat.Database, "constraint_schema": ns,
						"constraint_name": notNullName(r.ns, r.oid, i+1), "check_clause": quoteIdent(c.name) + " IS NOT NULL"})
				}
			}
		}
	})
	is("constraint_column_usage", func(v *View, b *builder) {
		// The columns a constraint uses: a key's own columns, a foreign
		// key's referenced columns, a check's columns.
		add := func(t *catalog.Table, attnums []int16, conName string, conNS uint32) {
			ns, _ := v.namespaceName(t.SchemaID)
			cns, _ := v.namespaceName(conNS)
			for _, a := range attnums {
				b.add(vals{"table_catalog": v.Cat.Database, "table_schema": ns, "table_name": t.Name,
					"column_name": t.Columns[a-1].Name, "constraint_catalog": v.Cat.Database, "constraint_schema": cns, "constraint_name": conName})
			}
		}
		for _, r := range v.relations() {
			if r.kind == 'i' {
				if f := r.indexFacts(); f.conOID != 0 {
					add(r.indexOf, f.keys, r.name, r.ns)
				}
			}
		}
		for _, k := range v.tableConstraints() {
			if k.check != nil {
				add(k.t, checkColumns(k.t, k.check.Expr), k.name(), k.t.SchemaID)
			} else if k.parent != nil {
				add(k.parent, attnums(k.parent, k.fk.RefCols), k.name(), k.t.SchemaID)
			}
		}
	})
	is("referential_constraints", func(v *View, b *builder) {
		for _, k := range v.tableConstraints() {
			if k.fk == nil {
				continue
			}
			ns, _ := v.namespaceName(k.t.SchemaID)
			var uname, uschema any
			if k.parent != nil {
				if _, n := refIndex(k.parent, k.fk.RefCols); n != "" {
					uname = n
					uschema, _ = v.namespaceName(k.parent.SchemaID)
				}
			}
			match := "NONE"
			if k.fk.Match == catalog.FKMatchFull {
				match = "FULL"
			}
			b.add(vals{"constraint_catalog": v.Cat.Database, "constraint_schema": ns, "constraint_name": k.name(),
				"unique_constraint_catalog": v.Cat.Database, "unique_constraint_schema": uschema, "unique_constraint_name": uname,
				"match_option": match, "update_rule": actionRule(k.fk.OnUpdate), "delete_rule": actionRule(k.fk.OnDelete)})
		}
	})
}

// notNullName is the name information_schema gives a NOT NULL column's
// implicit check: PostgreSQL's "<namespace oid>_<table oid>_<attnum>_not_null".
func notNullName(ns, rel uint32, attnum int) string {
	return types.NewInt(types.KindOid, int64(ns)).String() + "_" + types.NewInt(types.KindOid, int64(rel)).String() + "_" +
		types.NewInt(types.KindInt4, int64(attnum)).String() + "_not_null"
}
