package exec

import (
	"errors"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

func notNullErr(t *catalog.Table, col int) *pgerror.Error {
	e := pgerror.New(pgerror.NotNullViolation, "null value in column \"%s\" of relation \"%s\" violates not-null constraint", t.Columns[col].Name, t.Name)
	e.Table, e.Column = t.Name, t.Columns[col].Name
	return e
}

func (c *tableCodec) checkRow(row Row) error {
	for i, col := range c.t.Columns {
		if col.NotNull && row[i].IsNull() {
			e := notNullErr(c.t, i)
			// PostgreSQL: Failing row contains (1, null, x).
			b := []byte("Failing row contains (")
			for j := range c.t.Columns {
				if j > 0 {
					b = append(b, ", "...)
				}
				if row[j].IsNull() {
					b = append(b, "null"...)
				} else {
					b = types.AppendText(b, row[j], nil)
				}
			}
			e.Detail = string(append(b, ")."...))
			return e
		}
	}
	return nil
}

func (c *tableCodec) storageErr(err error, row Row) error {
	if errors.Is(err, storage.ErrDuplicateKey) {
		e := pgerror.New(pgerror.UniqueViolation, "duplicate key value violates unique constraint \"%s_pkey\"", c.t.Name)
		e.Detail = "Key " + c.describeKey(row) + " already exists."
		e.Table, e.Constraint = c.t.Name, c.t.Name+"_pkey"
		return e
	}
	return err
}

// ExecInsert runs an INSERT and returns the number of rows inserted.
func ExecInsert(c *Ctx, ins *plan.Insert) (int64, error) { return execInsert(c, ins, nil) }

// execInsert runs an INSERT; with written set, it also collects the new rows.
func execInsert(c *Ctx, ins *plan.Insert, written *[]Row) (int64, error) {
	t := ins.Table
	codec := newTableCodec(t)
	defaults := make([]evalFn, len(ins.Defaults))
	for i, e := range ins.Defaults {
		if e != nil {
			f, err := compile(e, c)
			if err != nil {
				return 0, err
			}
			defaults[i] = f
		}
	}
	var src Operator
	var err error
	if plan.ReadsTable(ins.Source, t.ID) {
		// The statement must not see its own rows (PostgreSQL reads the
		// source at the statement's start): a subquery opening a new scan
		// after rows were written would. Read the source completely first.
		rows, err := collect(c, ins.Source)
		if err != nil {
			return 0, err
		}
		src = &sliceOp{rows: rows}
	} else {
		if src, err = Build(c, ins.Source); err != nil {
			return 0, err
		}
	}
	info := t.StorageInfo()
	c.Txn.NoteOperation(info.ID, "WRITE")
	var conflicts *conflictResolver
	if ins.OnConflict != nil {
		if conflicts, err = newConflictResolver(c, ins, codec); err != nil {
			return 0, err
		}
	}
	var n int64
	err = Drain(src, func(b []Row) error {
		for _, in := range b {
			row := make(Row, len(t.Columns))
			for i, ti := range ins.Targets {
				row[ti] = in[i]
			}
			for i, f := range defaults {
				if f != nil {
					d, err := f(nil)
					if err != nil {
						return err
					}
					row[i] = d
				}
			}
			if err := codec.checkRow(row); err != nil {
				return err
			}
			key, err := codec.key(row)
			if err != nil {
				return err
			}
			if _, err := c.Txn.Insert(info, key, codec.value(row)); err != nil {
				if conflicts == nil || !errors.Is(err, storage.ErrDuplicateKey) {
					return codec.storageErr(err, row)
				}
				if row, err = conflicts.resolve(key, row); err != nil {
					return err
				}
				if row == nil {
					continue // DO NOTHING, or DO UPDATE's WHERE said no
				}
			} else if conflicts != nil {
				conflicts.inserted(key)
			}
			if written != nil {
				*written = append(*written, row)
			}
			n++
		}
		return c.Context.Err()
	})
	return n, err
}

// collect runs an operator and returns all its rows.
func collect(c *Ctx, n plan.Node) ([]Row, error) {
	op, err := Build(c, n)
	if err != nil {
		return nil, err
	}
	var rows []Row
	err = Drain(op, func(b []Row) error {
		rows = append(rows, b...)
		return c.Context.Err()
	})
	return rows, err
}

// ExecUpdate runs an UPDATE and returns the number of rows updated. The rows
// to change are read completely before any is written.
func ExecUpdate(c *Ctx, up *plan.Update) (int64, error) { return execUpdate(c, up, nil) }

// execUpdate runs an UPDATE; with written set, it also collects the new rows.
func execUpdate(c *Ctx, up *plan.Update, written *[]Row) (int64, error) {
	t := up.Table
	codec := newTableCodec(t)
	sets := make([]evalFn, len(up.Sets))
	for i, s := range up.Sets {
		f, err := compile(s.E, c)
		if err != nil {
			return 0, err
		}
		sets[i] = f
	}
	rows, err := collect(c, up.Input)
	if err != nil {
		return 0, err
	}
	// Compute every new row before writing any: a subquery in SET reads the
	// table as it was at the statement's start, not half updated.
	news := make([]Row, len(rows))
	for r, old := range rows {
		nw := make(Row, len(t.Columns))
		copy(nw, old[:len(t.Columns)])
		for i, f := range sets {
			d, err := f(old)
			if err != nil {
				return 0, err
			}
			nw[up.Sets[i].Col] = d
		}
		if err := codec.checkRow(nw); err != nil {
			return 0, err
		}
		news[r] = nw
	}
	info := t.StorageInfo()
	c.Txn.NoteOperation(info.ID, "UPDATE")
	hasPK := len(t.PrimaryKey) > 0
	for r, old := range rows {
		nw := news[r]
		var oldKey, newKey []byte
		if hasPK {
			if oldKey, err = codec.key(old); err != nil {
				return 0, err
			}
			if newKey, err = codec.key(nw); err != nil {
				return 0, err
			}
		} else {
			oldKey = storage.RowIDKey(old[len(t.Columns)].I)
			newKey = oldKey
		}
		if err := c.Txn.Update(info, oldKey, newKey, codec.value(nw)); err != nil {
			return 0, codec.storageErr(err, nw)
		}
		if written != nil {
			*written = append(*written, nw)
		}
	}
	return int64(len(rows)), c.Context.Err()
}

// ExecDelete runs a DELETE and returns the number of rows deleted.
func ExecDelete(c *Ctx, del *plan.Delete) (int64, error) { return execDelete(c, del, nil) }

// execDelete runs a DELETE; with written set, it also collects the old rows.
func execDelete(c *Ctx, del *plan.Delete, written *[]Row) (int64, error) {
	t := del.Table
	codec := newTableCodec(t)
	rows, err := collect(c, del.Input)
	if err != nil {
		return 0, err
	}
	info := t.StorageInfo()
	c.Txn.NoteOperation(info.ID, "DELETE")
	for _, old := range rows {
		var key []byte
		if len(t.PrimaryKey) > 0 {
			if key, err = codec.key(old); err != nil {
				return 0, err
			}
		} else {
			key = storage.RowIDKey(old[len(t.Columns)].I)
		}
		if err := c.Txn.Delete(info, key); err != nil {
			return 0, err
		}
		if written != nil {
			*written = append(*written, old)
		}
	}
	return int64(len(rows)), nil
}

// ExecReturning runs a DML statement with a RETURNING list (an *plan.Insert,
// *plan.Update or *plan.Delete whose Returning is set) and returns the
// list's rows, one per row written, in the order written.
func ExecReturning(c *Ctx, stmt any) ([]Row, error) {
	var written []Row
	var ret *plan.Returning
	var err error
	switch s := stmt.(type) {
	case *plan.Insert:
		ret = s.Returning
		_, err = execInsert(c, s, &written)
	case *plan.Update:
		ret = s.Returning
		_, err = execUpdate(c, s, &written)
	case *plan.Delete:
		ret = s.Returning
		_, err = execDelete(c, s, &written)
	}
	if err != nil {
		return nil, err
	}
	// The RETURNING list reads the rows in the table's scan layout: the
	// hidden row-tracking columns are not known here and read NULL.
	width := len(ret.Rows.Cols)
	given := &plan.Given{Cols: ret.Rows.Cols, Rows: make([][]types.Datum, len(written))}
	for i, r := range written {
		full := make([]types.Datum, width)
		copy(full, r)
		given.Rows[i] = full
	}
	proj := *ret.Project
	proj.Input = given
	return collect(c, &proj)
}
