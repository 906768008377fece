package plan

import (
	"fmt"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/types"
)

// BindRowExpr binds text, SQL kept in the catalog (a CHECK condition, a
// column default or a generation expression), over t's row: table column
// i is ColRef i. With typ set, the result is coerced to it by assignment;
// without, it must be boolean (a CHECK condition).
func (b *Binder) BindRowExpr(t *catalog.Table, text string, typ *types.T) (Expr, error) {
	st, err := parse.ParseOne("SELECT " + text)
	if err != nil {
		return nil, err
	}
	rt := st.AST.GetSelectStmt().TargetList[0].GetResTarget()
	sub := &Binder{Cat: b.Cat, SearchPath: b.SearchPath, Stmt: st, Env: b.Env}
	clause := "check constraints"
	if typ != nil {
		clause = "DEFAULT expressions"
	}
	return sub.bindRowExpr(t, rt.Val, typ, clause)
}

func (b *Binder) bindRowExpr(t *catalog.Table, n *pg_query.Node, typ *types.T, clause string) (Expr, error) {
	b.init()
	scan := NewScan(t)
	sc := b.scanScope(scan, t.Name, false)
	e, err := b.bindExpr(n, &exprCtx{sc: sc, clause: clause})
	if err != nil {
		return nil, err
	}
	var sub bool
	Walk(e, func(x Expr) bool {
		if _, ok := x.(*Subquery); ok {
			sub = true
		}
		return true
	})
	if sub {
		return nil, b.errAt(nodeLocation(n), pgerror.FeatureNotSupported, "cannot use subquery in %s", strings.TrimSuffix(clause, "s"))
	}
	if typ != nil {
		return b.coerce(e, *typ, true, nodeLocation(n))
	}
	if e.Type().Kind == types.KindUnknown {
		return b.coerce(e, types.Bool, false, nodeLocation(n))
	}
	if e.Type().Kind != types.KindBool && e.Type().Kind != types.KindNull {
		return nil, b.errAt(nodeLocation(n), pgerror.DatatypeMismatch, "argument of CHECK must be type boolean, not type %s", e.Type().String())
	}
	return e, nil
}

// BindCheck binds a CHECK constraint of t (CREATE TABLE or ALTER TABLE …
// ADD): its condition over t's row, its name (PostgreSQL's: table, the one
// column it reads if only one, "check", then a number while taken) and
// NOT VALID. taken says whether a name PostgreSQL would choose is in use
// (in the schema); a name given must be new among t's constraints.
func (b *Binder) BindCheck(t *catalog.Table, con *pg_query.Constraint, taken func(string) bool) (*catalog.Check, error) {
	e, err := b.bindRowExpr(t, con.RawExpr, nil, "check constraints")
	if err != nil {
		return nil, err
	}
	text, err := ConstraintExprText(con.RawExpr)
	if err != nil {
		return nil, err
	}
	name := con.Conname
	if name == "" {
		var cols []int
		Walk(e, func(x Expr) bool {
			if c, ok := x.(*ColRef); ok && !slices.Contains(cols, c.Idx) {
				cols = append(cols, c.Idx)
			}
			return true
		})
		label := ""
		if len(cols) == 1 && cols[0] < len(t.Columns) {
			label = t.Columns[cols[0]].Name
		}
		name = ChooseConstraintName(t.Name, label, "check", taken)
	} else if t.ConstraintNameTaken(name) {
		return nil, b.errAt(con.Location, pgerror.DuplicateObject, "constraint \"%s\" for relation \"%s\" already exists", name, t.Name)
	}
	return &catalog.Check{Name: name, Expr: text, NotValid: con.SkipValidation}, nil
}

// ChooseConstraintName is PostgreSQL's ChooseConstraintName: table,
// column (if any) and label joined by "_", cut to fit 63 bytes, then
// numbered from 1 while taken.
func ChooseConstraintName(table, column, label string, taken func(string) bool) string {
	for i := 0; ; i++ {
		suffix := label
		if i > 0 {
			suffix = fmt.Sprintf("%s%d", label, i)
		}
		t, c := table, column
		for len(t)+len(c)+len(suffix)+2 > 63 {
			if len(t) >= len(c) {
				t = t[:len(t)-1]
			} else {
				c = c[:len(c)-1]
			}
		}
		name := t
		if c != "" {
			name += "_" + c
		}
		name += "_" + suffix
		if !taken(name) {
			return name
		}
	}
}

// BindForeignKey binds a FOREIGN KEY constraint of t; column is the
// column a column constraint (REFERENCES) is written on, "" for the table
// form. self is t when t is being created (it can reference itself before
// it is in the catalog). The referenced columns, when not given, are the
// primary key; they must be the primary key or a unique index's columns
// (42830).
func (b *Binder) BindForeignKey(t *catalog.Table, con *pg_query.Constraint, column string, creating bool, taken func(string) bool) (*catalog.ForeignKey, *catalog.Table, error) {
	loc := con.Location
	var parent *catalog.Table
	if creating && con.Pktable.Schemaname == "" && con.Pktable.Relname == t.Name {
		parent = t
	} else {
		p, err := b.resolveTable(con.Pktable)
		if err != nil {
			return nil, nil, err
		}
		if p.ID == t.ID {
			p = t // the table as being altered
		}
		parent = p
	}
	if parent.Kind != catalog.KindTable {
		return nil, nil, b.errAt(con.Pktable.Location, pgerror.WrongObjectType, "referenced relation \"%s\" is not a table", parent.Name)
	}
	tTemp, pTemp := catalog.IsTempSchema(schemaName(b.Cat, t.SchemaID)), catalog.IsTempSchema(schemaName(b.Cat, parent.SchemaID))
	if !tTemp && pTemp {
		return nil, nil, b.errAt(loc, pgerror.InvalidTableDefinition, "constraints on permanent tables may reference only permanent tables")
	}
	if tTemp && !pTemp {
		return nil, nil, b.errAt(loc, pgerror.InvalidTableDefinition, "constraints on temporary tables may reference only temporary tables")
	}
	var names []string
	if column != "" {
		names = []string{column}
	}
	for _, k := range con.FkAttrs {
		names = append(names, strVal(k))
	}
	fk := &catalog.ForeignKey{RefTable: parent.ID, Match: catalog.FKMatchSimple, OnDelete: catalog.FKNoAction, OnUpdate: catalog.FKNoAction,
		Deferrable: con.Deferrable, Deferred: con.Initdeferred, NotValid: con.SkipValidation}
	for _, n := range names {
		i := t.ColumnIndex(n)
		if i < 0 {
			return nil, nil, b.errAt(loc, pgerror.UndefinedColumn, "column \"%s\" referenced in foreign key constraint does not exist", n)
		}
		fk.Cols = append(fk.Cols, t.Columns[i].ID)
	}
	if len(con.PkAttrs) == 0 {
		if len(parent.PrimaryKey) == 0 {
			return nil, nil, b.errAt(loc, pgerror.UndefinedObject, "there is no primary key for referenced table \"%s\"", parent.Name)
		}
		fk.RefCols = append(fk.RefCols, parent.PrimaryKey...)
	} else {
		for _, k := range con.PkAttrs {
			n := strVal(k)
			i := parent.ColumnIndex(n)
			if i < 0 {
				return nil, nil, b.errAt(loc, pgerror.UndefinedColumn, "column \"%s\" referenced in foreign key constraint does not exist", n)
			}
			fk.RefCols = append(fk.RefCols, parent.Columns[i].ID)
		}
	}
	if len(fk.Cols) != len(fk.RefCols) {
		return nil, nil, b.errAt(loc, pgerror.InvalidForeignKey, "number of referencing and referenced columns for foreign key disagree")
	}
	if !hasUniqueOn(parent, fk.RefCols) {
		return nil, nil, b.errAt(loc, pgerror.InvalidForeignKey, "there is no unique constraint matching given keys for referenced table \"%s\"", parent.Name)
	}
	name := con.Conname
	if name == "" {
		var cols []string
		for _, id := range fk.Cols {
			cols = append(cols, t.Columns[t.ColumnByID(id)].Name)
		}
		name = ChooseConstraintName(t.Name, strings.Join(cols, "_"), "fkey", taken)
	} else if t.ConstraintNameTaken(name) {
		return nil, nil, b.errAt(loc, pgerror.DuplicateObject, "constraint \"%s\" for relation \"%s\" already exists", name, t.Name)
	}
	fk.Name = name
	for i, id := range fk.Cols {
		ct := t.Columns[t.ColumnByID(id)].Type
		pt := parent.Columns[parent.ColumnByID(fk.RefCols[i])].Type
		if !comparableKeys(ct, pt) {
			return nil, nil, b.errAt(loc, pgerror.DatatypeMismatch, "foreign key constraint \"%s\" cannot be implemented", name).
				WithDetail("Key columns \"%s\" and \"%s\" are of incompatible types: %s and %s.", t.Columns[t.ColumnByID(id)].Name, parent.Columns[parent.ColumnByID(fk.RefCols[i])].Name, ct.String(), pt.String())
		}
	}
	action := func(s string) (byte, error) {
		switch s {
		case "", "a":
			return catalog.FKNoAction, nil
		case "r":
			return catalog.FKRestrict, nil
		case "c":
			return catalog.FKCascade, nil
		case "n":
			return catalog.FKSetNull, nil
		case "d":
			return catalog.FKSetDefault, nil
		}
		return 0, b.errAt(loc, pgerror.FeatureNotSupported, "this referential action is not supported")
	}
	var err error
	if fk.OnDelete, err = action(con.FkDelAction); err != nil {
		return nil, nil, err
	}
	if fk.OnUpdate, err = action(con.FkUpdAction); err != nil {
		return nil, nil, err
	}
	if len(con.FkDelSetCols) > 0 {
		return nil, nil, b.errAt(loc, pgerror.FeatureNotSupported, "a column list with ON DELETE SET NULL or SET DEFAULT is not supported yet")
	}
	switch con.FkMatchtype {
	case "", "s":
	case "f":
		fk.Match = catalog.FKMatchFull
	default:
		return nil, nil, b.errAt(loc, pgerror.FeatureNotSupported, "MATCH PARTIAL not yet implemented")
	}
	if fk.Deferred && !fk.Deferrable {
		fk.Deferrable = true
	}
	return fk, parent, nil
}

// hasUniqueOn reports whether ids (in any order) are t's primary key or
// the key of one of its unique indexes without a predicate.
func hasUniqueOn(t *catalog.Table, ids []uint32) bool {
	same := func(key []uint32) bool {
		if len(key) != len(ids) {
			return false
		}
		for _, id := range key {
			if !slices.Contains(ids, id) {
				return false
			}
		}
		return true
	}
	if len(t.PrimaryKey) > 0 && same(t.PrimaryKey) {
		return true
	}
	for _, ix := range t.Indexes {
		if ix.Unique && same(ix.ColumnIDs()) {
			return true
		}
	}
	return false
}

// comparableKeys reports whether a referencing column of type a can
// reference one of type b: the same type, or both numeric or both strings.
func comparableKeys(a, b types.T) bool {
	if a.Kind == b.Kind {
		return true
	}
	class := func(t types.T) int {
		switch t.Kind {
		case types.KindInt2, types.KindInt4, types.KindInt8, types.KindNumeric:
			return 1
		case types.KindFloat4, types.KindFloat8:
			return 2
		case types.KindTimestamp, types.KindTimestampTZ, types.KindDate:
			return 4
		}
		if t.IsString() {
			return 3
		}
		return 0
	}
	return class(a) != 0 && class(a) == class(b)
}

func schemaName(c *catalog.Catalog, id uint32) string {
	if sc, ok := c.SchemaByID(id); ok {
		return sc.Name
	}
	return ""
}

// IsImmutable reports whether e calls only deterministic functions (a
// generation expression must be immutable).
func IsImmutable(e Expr) bool {
	ok := true
	Walk(e, func(x Expr) bool {
		if f, is := x.(*Func); is && f.Fn != nil && !f.Fn.Deterministic {
			ok = false
		}
		return ok
	})
	return ok
}

// ConstraintExprText prints a CHECK condition or generation expression as
// PostgreSQL's pg_get_constraintdef and pg_get_expr show it for the common
// shapes: each operator application and boolean combination parenthesized
// ("(qty >= 0)", "((a > 0) AND (b > 0))"). The text is also what the
// catalog keeps and binds again.
func ConstraintExprText(n *pg_query.Node) (string, error) {
	switch x := n.Node.(type) {
	case *pg_query.Node_AExpr:
		e := x.AExpr
		if e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && len(e.Name) == 1 && e.Lexpr != nil && e.Rexpr != nil {
			l, err := ConstraintExprText(e.Lexpr)
			if err != nil {
				return "", err
			}
			r, err := ConstraintExprText(e.Rexpr)
			if err != nil {
				return "", err
			}
			return "(" + l + " " + strVal(e.Name[0]) + " " + r + ")", nil
		}
	case *pg_query.Node_BoolExpr:
		var parts []string
		for _, a := range x.BoolExpr.Args {
			t, err := ConstraintExprText(a)
			if err != nil {
				return "", err
			}
			parts = append(parts, t)
		}
		switch x.BoolExpr.Boolop {
		case pg_query.BoolExprType_AND_EXPR:
			return "(" + strings.Join(parts, " AND ") + ")", nil
		case pg_query.BoolExprType_OR_EXPR:
			return "(" + strings.Join(parts, " OR ") + ")", nil
		case pg_query.BoolExprType_NOT_EXPR:
			return "(NOT " + parts[0] + ")", nil
		}
	case *pg_query.Node_NullTest:
		t, err := ConstraintExprText(x.NullTest.Arg)
		if err != nil {
			return "", err
		}
		if x.NullTest.Nulltesttype == pg_query.NullTestType_IS_NULL {
			return "(" + t + " IS NULL)", nil
		}
		return "(" + t + " IS NOT NULL)", nil
	}
	return parse.DeparseExpr(n)
}
