package ddl

import (
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// ColumnTypeChange checks ALTER TABLE … ALTER COLUMN … TYPE typ [USING
// using] of column i of t and returns the expression, bound over t's row
// as it is, that gives each row its new value; nil when the type does
// not change (ORMs restate a column's type: Sequelize's sync({alter:
// true}) sends one for every column). Without USING the column must have
// an assignment cast to typ (42804 otherwise, with PostgreSQL's hint).
//
// Indexes over the column are rebuilt and CHECKs over it checked again
// (RetypedIndexes; the caller does both after the rows are rewritten), as
// PostgreSQL rebuilds them. What mvserver does not rewrite yet fails with
// 0A000: a column that the primary key (the table's storage key), a
// foreign key or a generation expression uses. A column a view
// or materialized view uses fails as in PostgreSQL (0A000 "cannot alter
// type of a column used by a view or rule"); views over the table's other
// columns do not stop it.
func ColumnTypeChange(b *plan.Binder, cat *catalog.Catalog, t *catalog.Table, i int, typ types.T, using *pg_query.Node) (plan.Expr, error) {
	col := t.Columns[i]
	if using == nil && col.Type.Kind == typ.Kind && col.Type.Elem == typ.Elem && col.Type.Width == typ.Width &&
		col.Type.Precision == typ.Precision && col.Type.Scale == typ.Scale && col.Type.Enum == typ.Enum {
		return nil, nil
	}
	if users := ColumnUsers(cat, nil, b.Env, t, i); len(users) > 0 {
		return nil, pgerror.New(pgerror.FeatureNotSupported, "cannot alter type of a column used by a view or rule").
			WithDetail("rule _RETURN on %s %s depends on column \"%s\"", relationKindWord(users[0]), users[0].Name, col.Name)
	}
	uses := false
	for _, id := range t.PrimaryKey {
		uses = uses || id == col.ID
	}
	for _, fk := range t.ForeignKeys {
		for _, id := range fk.Cols {
			uses = uses || id == col.ID
		}
	}
	for _, c := range cat.Tables() {
		for _, fk := range c.ForeignKeys {
			if fk.RefTable == t.ID && slices.Contains(fk.RefCols, col.ID) {
				uses = true
			}
		}
	}
	if uses || col.Generated != "" {
		return nil, pgerror.New(pgerror.FeatureNotSupported, "changing the type of column \"%s\": the primary key, a foreign key or a generation expression uses it, and rewriting those is not supported yet", col.Name)
	}
	text := funcs.QuoteIdent(col.Name)
	if using != nil {
		var err error
		if text, err = parse.DeparseExpr(using); err != nil {
			return nil, err
		}
	}
	e, err := b.BindRowExpr(t, text, &typ)
	if err != nil {
		if using == nil && pgerror.Code(err) == pgerror.DatatypeMismatch {
			return nil, pgerror.New(pgerror.DatatypeMismatch, "column \"%s\" cannot be cast automatically to type %s", col.Name, typ.String()).
				WithHint("You might need to specify \"USING %s::%s\".", text, typ.String())
		}
		return nil, err
	}
	if col.Default != "" {
		// The default must convert too, as PostgreSQL checks.
		if _, err := b.BindRowExpr(t, col.Default, &typ); err != nil {
			return nil, pgerror.New(pgerror.DatatypeMismatch, "default for column \"%s\" cannot be cast automatically to type %s", col.Name, typ.String())
		}
	}
	return e, nil
}

// RetypedIndexes lists the indexes of t over column col: ALTER COLUMN …
// TYPE rebuilds each as a new index (a new OID, as PostgreSQL's rebuild
// gives it) from the rewritten rows. rebuilt are their replacements, ids
// from cat.
func RetypedIndexes(cat *catalog.Catalog, t *catalog.Table, col int) (old []uint32, rebuilt []catalog.Index) {
	for _, ix := range t.Indexes {
		if !ix.Uses(t.Columns[col].ID) {
			continue
		}
		old = append(old, ix.ID)
		nx := ix
		nx.ID = cat.AllocID()
		rebuilt = append(rebuilt, nx)
	}
	return old, rebuilt
}

// RetypedChecks lists the CHECK constraints of t that name column col,
// which the rewritten rows must satisfy again.
func RetypedChecks(t *catalog.Table, col int) []catalog.Check {
	var out []catalog.Check
	for _, ck := range t.Checks {
		if parse.MentionsIdent(ck.Expr, t.Columns[col].Name) {
			out = append(out, ck)
		}
	}
	return out
}

// SwapRetypedIndexes puts the replacements of RetypedIndexes into nt (the
// table after ALTER COLUMN … TYPE of column col) and returns the table the
// row rewrite writes through, which has neither the old indexes nor their
// replacements (those are built from the rewritten rows), with the old
// and the new index ids.
func SwapRetypedIndexes(cat *catalog.Catalog, nt *catalog.Table, col int) (rewrite *catalog.Table, old, built []uint32) {
	old, rebuilt := RetypedIndexes(cat, nt, col)
	rewrite = nt.Clone()
	for k, id := range old {
		for j := range nt.Indexes {
			if nt.Indexes[j].ID == id {
				nt.Indexes[j] = rebuilt[k]
			}
		}
		rewrite.Indexes = slices.DeleteFunc(rewrite.Indexes, func(ix catalog.Index) bool { return ix.ID == id })
		built = append(built, rebuilt[k].ID)
	}
	return rewrite, old, built
}
