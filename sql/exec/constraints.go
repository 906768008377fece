package exec

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// Constraints gives DML what it needs to enforce CHECK and FOREIGN KEY
// constraints and to compute generated columns: the statement's catalog,
// a binder for the SQL text the catalog keeps, and the transaction's
// deferred foreign-key checks. A Ctx without one (a refresh writing a
// view) enforces none: views have no such constraints.
type Constraints struct {
	Cat *catalog.Catalog
	// Bind binds text, kept in the catalog, over t's row (table column i
	// is ColRef i). With typ set, the result is coerced to it (a default
	// or generation expression); without, it is a CHECK condition.
	Bind func(t *catalog.Table, text string, typ *types.T) (plan.Expr, error)
	// Deferred collects the checks of INITIALLY DEFERRED foreign keys for
	// commit (CheckDeferred); nil checks them at the statement's end.
	Deferred *DeferredChecks
}

// tableRules are one table's row rules, compiled once per statement.
type tableRules struct {
	checks    []rowCheck
	generated []genColumn
	// fks are the table's foreign keys (it is their referencing side);
	// refs the foreign keys that reference it.
	fks  []*catalog.ForeignKey
	refs []catalog.Reference
}

type rowCheck struct {
	name string
	f    evalFn
}

type genColumn struct {
	col int
	f   evalFn
}

// rules returns t's compiled rules (nil when c enforces none).
func (c *Ctx) rules(t *catalog.Table) (*tableRules, error) {
	if c.Constraints == nil || t.Kind != catalog.KindTable {
		return nil, nil
	}
	st := c.state()
	if r, ok := st.rules[t.ID]; ok {
		return r, nil
	}
	r := &tableRules{}
	for _, ck := range t.Checks {
		f, err := c.bindRow(t, ck.Expr, nil)
		if err != nil {
			return nil, err
		}
		r.checks = append(r.checks, rowCheck{ck.Name, f})
	}
	for i, col := range t.Columns {
		if col.Generated == "" {
			continue
		}
		typ := col.Type
		f, err := c.bindRow(t, col.Generated, &typ)
		if err != nil {
			return nil, err
		}
		r.generated = append(r.generated, genColumn{i, f})
	}
	for i := range t.ForeignKeys {
		r.fks = append(r.fks, &t.ForeignKeys[i])
	}
	r.refs = c.Constraints.Cat.Referencing(t.ID)
	if st.rules == nil {
		st.rules = map[uint32]*tableRules{}
	}
	st.rules[t.ID] = r
	return r, nil
}

func (c *Ctx) bindRow(t *catalog.Table, text string, typ *types.T) (evalFn, error) {
	e, err := c.Constraints.Bind(t, text, typ)
	if err != nil {
		return nil, err
	}
	return compile(e, c)
}

// generate computes the generated columns of row.
func (r *tableRules) generate(row Row) error {
	if r == nil {
		return nil
	}
	for _, g := range r.generated {
		d, err := g.f(row)
		if err != nil {
			return err
		}
		row[g.col] = d
	}
	return nil
}

// check evaluates the CHECK constraints on row: one that is false (not
// NULL) fails with 23514, as in PostgreSQL.
func (r *tableRules) check(t *catalog.Table, row Row) error {
	if r == nil {
		return nil
	}
	for _, ck := range r.checks {
		d, err := ck.f(row)
		if err != nil {
			return err
		}
		if d.K == types.KindBool && !d.Bool() {
			e := pgerror.New(pgerror.CheckViolation, "new row for relation \"%s\" violates check constraint \"%s\"", t.Name, ck.name)
			e.Detail = failingRow(t, row)
			e.Table, e.RelationID, e.Constraint = t.Name, t.ID, ck.name
			return e
		}
	}
	return nil
}

// failingRow is PostgreSQL's detail "Failing row contains (1, null, x).".
func failingRow(t *catalog.Table, row Row) string {
	b := []byte("Failing row contains (")
	for j := range t.Columns {
		if j > 0 {
			b = append(b, ", "...)
		}
		if row[j].IsNull() {
			b = append(b, "null"...)
		} else {
			b = types.AppendText(b, row[j], nil)
		}
	}
	return string(append(b, ")."...))
}

// ValidateCheck checks every row of t against the CHECK condition e
// (bound over t's row): ALTER TABLE … ADD CONSTRAINT … CHECK and
// VALIDATE CONSTRAINT.
func ValidateCheck(c *Ctx, t *catalog.Table, name string, e plan.Expr) error {
	f, err := compile(e, c)
	if err != nil {
		return err
	}
	op, err := Build(c, scanColumns(t))
	if err != nil {
		return err
	}
	return Drain(op, func(rows []Row) error {
		for _, r := range rows {
			d, err := f(r)
			if err != nil {
				return err
			}
			if d.K == types.KindBool && !d.Bool() {
				e := pgerror.New(pgerror.CheckViolation, "check constraint \"%s\" of relation \"%s\" is violated by some row", name, t.Name)
				e.Table, e.RelationID, e.Constraint = t.Name, t.ID, name
				return e
			}
		}
		return c.Context.Err()
	})
}

// scanColumns is a scan of t that reads every column of its rows.
func scanColumns(t *catalog.Table) *plan.Scan {
	scan := plan.NewScan(t)
	for i := range t.Columns {
		scan.Needed[i] = true
	}
	return scan
}
