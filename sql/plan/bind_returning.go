package plan

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
)

// Returning is the RETURNING list of an INSERT, UPDATE or DELETE: Project
// computes it over Rows, which the statement fills with the rows it wrote
// (the new rows; the old ones for DELETE) in the table's scan layout,
// followed, for UPDATE … FROM and DELETE … USING, by the columns of the
// FROM items the row was joined with (the statement's Input layout).
type Returning struct {
	Project *Project
	Rows    *Given
}

// Columns returns the RETURNING list's columns.
func (r *Returning) Columns() []Column { return r.Project.Cols }

// bindReturning binds a RETURNING list over table rv's rows, as the target
// list of SELECT list FROM rv, from... would be (so *, aliases, expressions
// and subqueries work as there). from is UPDATE's FROM or DELETE's USING
// list: as in PostgreSQL, the list may name their columns too, and *
// expands to the target's columns and then theirs.
//
// The list's subqueries read t, the table written, as it was at the
// statement's start, as PostgreSQL's do (the statement's snapshot); the
// list's own FROM item reads the rows written instead.
func (b *Binder) bindReturning(list []*pg_query.Node, rv *pg_query.RangeVar, t *catalog.Table, from []*pg_query.Node) (*Returning, error) {
	if len(list) == 0 {
		return nil, nil
	}
	items := append([]*pg_query.Node{{Node: &pg_query.Node_RangeVar{RangeVar: rv}}}, from...)
	var q Node
	var cols []Column
	err := b.withWritten(t.ID, func() error {
		// The FROM item is bound first: it is the scan target exempts.
		b.mod.target = true
		var err error
		q, cols, err = b.bindSelect(&pg_query.SelectStmt{TargetList: list, FromClause: items,
			Op: pg_query.SetOperation_SETOP_NONE, LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT})
		b.mod.target = false
		return err
	})
	if err != nil {
		return nil, err
	}
	proj, ok := q.(*Project)
	if !ok {
		return nil, b.errAt(nodeLocation(list[0]), pgerror.FeatureNotSupported, "this RETURNING list is not supported")
	}
	// Without FROM items the input is the target's scan; with them, the
	// target's scan joined with them in FROM order, the layout of the
	// statement's Input (tableInput).
	if _, ok := proj.Input.(*Scan); !ok && len(from) == 0 {
		return nil, b.errAt(nodeLocation(list[0]), pgerror.FeatureNotSupported, "this RETURNING list is not supported")
	}
	given := &Given{Cols: proj.Input.Columns()}
	proj.Input = given
	proj.Cols = cols
	return &Returning{Project: proj, Rows: given}, nil
}
