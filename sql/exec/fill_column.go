package exec

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/storage"
)

// FillColumn sets column col of every row of t (the table as it is with
// the column) to e evaluated on that row: ALTER TABLE … ADD COLUMN with a
// DEFAULT or a generation expression. A volatile default gets a value per
// row, as in PostgreSQL. A NULL in a NOT NULL column fails with 23502.
func FillColumn(c *Ctx, t *catalog.Table, col int, e plan.Expr) error {
	return fillColumn(c, t, t, col, e)
}

// RetypeColumn rewrites every row of a table whose column col changed
// type (ALTER TABLE … ALTER COLUMN … TYPE): rows are read as from (the
// table before), e (bound over from's row: the USING expression or the
// cast of the column) gives the new value, and rows are written as to
// (the same columns, col with its new type). Indexes on col are the
// caller's to refuse: their entries are not rewritten.
func RetypeColumn(c *Ctx, from, to *catalog.Table, col int, e plan.Expr) error {
	return fillColumn(c, from, to, col, e)
}

// fillColumn reads from's rows and writes them as to's with column col
// set to e.
func fillColumn(c *Ctx, from, t *catalog.Table, col int, e plan.Expr) error {
	f, err := compile(e, c)
	if err != nil {
		return err
	}
	scan := scanColumns(from)
	scan.Needed[len(from.Columns)] = true
	rows, err := collect(c, scan)
	if err != nil {
		return err
	}
	codec := newTableCodec(t)
	info := StorageInfo(t)
	c.Txn.NoteOperation(info.ID, "UPDATE")
	for r, row := range rows {
		d, err := f(row)
		if err != nil {
			return err
		}
		if d.IsNull() && t.Columns[col].NotNull {
			e := pgerror.New(pgerror.NotNullViolation, "column \"%s\" of relation \"%s\" contains null values", t.Columns[col].Name, t.Name)
			e.Table, e.RelationID, e.Column = t.Name, t.ID, t.Columns[col].Name
			return e
		}
		row[col] = d
		key, err := codec.key(row)
		if err != nil {
			return err
		}
		if key == nil {
			key = storage.RowIDKey(row[len(t.Columns)].I)
		}
		if err := c.Txn.Update(info, key, key, codec.value(row)); err != nil {
			return codec.storageErr(err, row)
		}
		if r%1024 == 0 {
			if err := c.Context.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}
