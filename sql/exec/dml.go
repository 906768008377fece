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
	e.Table, e.RelationID, e.Column = t.Name, t.ID, t.Columns[col].Name
	return e
}

func (c *tableCodec) checkRow(row Row) error {
	for i, col := range c.t.Columns {
		if col.NotNull && row[i].IsNull() {
			e := notNullErr(c.t, i)
			e.Detail = failingRow(c.t, row) // PostgreSQL: Failing row contains (1, null, x).
			return e
		}
	}
	return nil
}

// storageErr turns a duplicate key of the primary key or a unique index
// into PostgreSQL's 23505, its detail from row (the row being written).
func (c *tableCodec) storageErr(err error, row Row) error {
	var de *storage.DuplicateKeyError
	if errors.As(err, &de) {
		var ix *catalog.Index
		ids := c.t.PrimaryKey
		if de.Index != 0 {
			if ix = c.t.IndexByID(uint32(de.Index)); ix == nil {
				return err
			}
			ids = ix.ColumnIDs()
		}
		return uniqueViolation(c.t, ix, rowKeyValues(c.t, ids, row))
	}
	if errors.Is(err, storage.ErrDuplicateKey) {
		return uniqueViolation(c.t, nil, rowKeyValues(c.t, c.t.PrimaryKey, row))
	}
	return err
}

// Inserter writes rows into a table with the checks and bookkeeping of
// INSERT: column defaults for the columns not given, NOT NULL (23502),
// primary-key uniqueness (23505), and the table's change feed and row
// tracking through the storage transaction. INSERT and COPY FROM share it.
type Inserter struct {
	c        *Ctx
	ins      *plan.Insert
	t        *catalog.Table
	targets  []int
	defaults []evalFn
	codec    *tableCodec
	info     storage.TableInfo
	where    evalFn // nil: every row is inserted
	rules    *tableRules
	// conflicts, when set, resolves a taken primary key (ON CONFLICT).
	conflicts *conflictResolver
	// row, key and value are reused from row to row: storage copies what
	// it keeps.
	row        Row
	key, value []byte
}

// NewInserter prepares inserts into ins.Table: values come for ins.Targets,
// the other columns get ins.Defaults. ins.Source is not used.
func NewInserter(c *Ctx, ins *plan.Insert) (*Inserter, error) {
	t := ins.Table
	w := &Inserter{c: c, ins: ins, t: t, targets: ins.Targets, codec: newTableCodec(t), info: StorageInfo(t), row: make(Row, len(t.Columns))}
	w.defaults = make([]evalFn, len(ins.Defaults))
	for i, e := range ins.Defaults {
		if e != nil {
			f, err := compile(e, c)
			if err != nil {
				return nil, err
			}
			w.defaults[i] = f
		}
	}
	var err error
	if w.rules, err = c.rules(t); err != nil {
		return nil, err
	}
	c.Txn.NoteOperation(w.info.ID, "WRITE")
	return w, nil
}

// Close does the foreign-key work the rows inserted owe (foreign_key.go):
// COPY FROM calls it after its last row.
func (w *Inserter) Close() error { return w.c.endStatement() }

// Filter makes Insert skip the rows for which e (bound over the table's
// columns) is not true: COPY FROM … WHERE. It is evaluated once the
// defaults are filled in, before the row's constraints are checked, as in
// PostgreSQL.
func (w *Inserter) Filter(e plan.Expr) error {
	f, err := compile(e, w.c)
	if err != nil {
		return err
	}
	w.where = f
	return nil
}

// Insert writes one row, vals[i] being the value of table column
// Targets[i], and reports whether it passed the filter.
func (w *Inserter) Insert(vals []types.Datum) (bool, error) {
	r, err := w.insert(vals)
	return r != nil, err
}

// insert writes one row and returns it as written (nil when the filter or
// ON CONFLICT skipped it). The row is reused by the next call.
func (w *Inserter) insert(vals []types.Datum) (Row, error) {
	row := w.row
	for i := range row {
		row[i] = types.Datum{}
	}
	for i, ti := range w.targets {
		row[ti] = vals[i]
	}
	for i, f := range w.defaults {
		if f != nil {
			d, err := f(nil)
			if err != nil {
				return nil, err
			}
			row[i] = d
		}
	}
	if w.where != nil {
		d, err := w.where(row)
		if err != nil {
			return nil, err
		}
		if d.K != types.KindBool || !d.Bool() {
			return nil, nil
		}
	}
	if err := w.rules.generate(row); err != nil {
		return nil, err
	}
	if err := w.codec.checkRow(row); err != nil {
		return nil, err
	}
	if err := w.rules.check(w.t, row); err != nil {
		return nil, err
	}
	var key []byte // nil: keyed by a new row id
	if len(w.codec.pkCols) > 0 {
		w.key = w.key[:0]
		for _, i := range w.codec.pkCols {
			var err error
			if w.key, err = appendKeyDatum(w.key, row[i]); err != nil {
				return nil, err
			}
		}
		key = w.key
	}
	w.value = types.AppendRowValue(w.value[:0], w.codec.ids, row[:len(w.codec.ids)])
	rowID, err := w.c.Txn.Insert(w.info, key, w.value)
	if err != nil {
		var de *storage.DuplicateKeyError
		if w.conflicts == nil || !errors.As(err, &de) || !w.ins.OnConflict.IsArbiter(uint32(de.Index)) {
			return nil, w.codec.storageErr(err, row)
		}
		// ON CONFLICT: DO NOTHING (nil), or the row DO UPDATE wrote.
		return w.conflicts.resolve(de, row)
	}
	if err := w.c.noteChildRow(w.rules, w.t, row, nil); err != nil {
		return nil, err
	}
	if w.conflicts != nil {
		if key == nil {
			key = storage.RowIDKey(rowID)
		}
		w.conflicts.inserted(key)
	}
	return row, nil
}

// ExecInsert runs an INSERT and returns the number of rows inserted.
func ExecInsert(c *Ctx, ins *plan.Insert) (int64, error) {
	n, err := execInsert(c, ins, nil)
	if err == nil {
		err = c.endStatement()
	}
	return n, err
}

// execInsert runs an INSERT; with written set, it also collects the rows
// written (new rows, and the rows ON CONFLICT DO UPDATE rewrote).
func execInsert(c *Ctx, ins *plan.Insert, written *[]Row) (int64, error) {
	t := ins.Table
	w, err := NewInserter(c, ins)
	if err != nil {
		return 0, err
	}
	if ins.OnConflict != nil {
		if w.conflicts, err = newConflictResolver(c, ins, w.codec, w.info); err != nil {
			return 0, err
		}
	}
	var src Operator
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
	var n int64
	err = Drain(src, func(b []Row) error {
		for _, in := range b {
			row, err := w.insert(in[:len(w.targets)])
			if err != nil {
				return err
			}
			if row == nil {
				continue // DO NOTHING, or DO UPDATE's WHERE said no
			}
			if written != nil {
				*written = append(*written, append(Row(nil), row...))
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
func ExecUpdate(c *Ctx, up *plan.Update) (int64, error) {
	n, err := execUpdate(c, up, nil)
	if err == nil {
		err = c.endStatement()
	}
	return n, err
}

// execUpdate runs an UPDATE; with written set, it also collects the new rows.
func execUpdate(c *Ctx, up *plan.Update, written *[]Row) (int64, error) {
	t := up.Table
	sets := make([]evalFn, len(up.Sets))
	for i, s := range up.Sets {
		f, err := compile(s.E, c)
		if err != nil {
			return 0, err
		}
		sets[i] = f
	}
	kept, stop := keepRowsFor(c, storage.TableID(t.ID))
	rows, err := collect(c, up.Input)
	stop()
	if err == nil {
		rows, err = c.unchanged(t, rows)
	}
	if err == nil && up.Joined {
		rows, err = firstPerRow(t, rows)
	}
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
		news[r] = nw
	}
	mark := 0
	if written != nil {
		mark = len(*written)
	}
	if err := updateRows(c, t, rows, news, kept, written); err != nil {
		return 0, err
	}
	if written != nil && up.Joined {
		joinedReturning((*written)[mark:], rows, len(t.Columns))
	}
	return int64(len(rows)), c.Context.Err()
}

// joinedReturning extends each new row of an UPDATE … FROM (news[i]
// written for input row rows[i]) with the columns of the FROM items it was
// joined with, for a RETURNING list that names them. The hidden
// row-tracking columns between them read NULL, as without FROM.
func joinedReturning(news, rows []Row, width int) {
	for i, nw := range news {
		full := make(Row, len(rows[i]))
		copy(full, nw[:width])
		copy(full[width+2:], rows[i][width+2:]) // full[width:width+2] stay NULL
		news[i] = full
	}
}

// updateRows replaces rows (t's scan layout, row id included) by news:
// generated columns, NOT NULL and CHECK first for every row, then the
// writes, each noting its foreign-key work. kept may be nil.
func updateRows(c *Ctx, t *catalog.Table, rows, news []Row, kept *keptRows, written *[]Row) error {
	codec := newTableCodec(t)
	rules, err := c.rules(t)
	if err != nil {
		return err
	}
	for _, nw := range news {
		if err := rules.generate(nw); err != nil {
			return err
		}
		if err := codec.checkRow(nw); err != nil {
			return err
		}
		if err := rules.check(t, nw); err != nil {
			return err
		}
	}
	info := StorageInfo(t)
	c.Txn.NoteOperation(info.ID, "UPDATE")
	hasPK := len(t.PrimaryKey) > 0
	for r, old := range rows {
		nw := news[r]
		var oldKey, newKey []byte
		if hasPK {
			if oldKey, err = codec.key(old); err != nil {
				return err
			}
			if newKey, err = codec.key(nw); err != nil {
				return err
			}
		} else {
			oldKey = storage.RowIDKey(old[len(t.Columns)].I)
			newKey = oldKey
		}
		c.noteChanged(t, oldKey)
		if raw, ok := kept.get(oldKey); ok {
			err = c.Txn.UpdateRow(info, raw, newKey, codec.value(nw))
		} else {
			err = c.Txn.Update(info, oldKey, newKey, codec.value(nw))
		}
		if err != nil {
			return codec.storageErr(err, nw)
		}
		if err := c.noteChildRow(rules, t, nw, old); err != nil {
			return err
		}
		if err := c.noteParentRow(rules, t, old, nw); err != nil {
			return err
		}
		if written != nil {
			*written = append(*written, nw)
		}
	}
	return nil
}

// ExecDelete runs a DELETE and returns the number of rows deleted.
func ExecDelete(c *Ctx, del *plan.Delete) (int64, error) {
	n, err := execDelete(c, del, nil)
	if err == nil {
		err = c.endStatement()
	}
	return n, err
}

// execDelete runs a DELETE; with written set, it also collects the old rows.
func execDelete(c *Ctx, del *plan.Delete, written *[]Row) (int64, error) {
	t := del.Table
	kept, stop := keepRowsFor(c, storage.TableID(t.ID))
	rows, err := collect(c, del.Input)
	stop()
	if err == nil {
		rows, err = c.unchanged(t, rows)
	}
	if err == nil && del.Joined {
		rows, err = firstPerRow(t, rows)
	}
	if err != nil {
		return 0, err
	}
	if err := deleteRows(c, t, rows, kept, written); err != nil {
		return 0, err
	}
	return int64(len(rows)), nil
}

// deleteRows deletes rows (t's scan layout, row id included), each noting
// the keys it gives up. kept may be nil.
func deleteRows(c *Ctx, t *catalog.Table, rows []Row, kept *keptRows, written *[]Row) error {
	codec := newTableCodec(t)
	rules, err := c.rules(t)
	if err != nil {
		return err
	}
	info := StorageInfo(t)
	c.Txn.NoteOperation(info.ID, "DELETE")
	for _, old := range rows {
		var key []byte
		if len(t.PrimaryKey) > 0 {
			if key, err = codec.key(old); err != nil {
				return err
			}
		} else {
			key = storage.RowIDKey(old[len(t.Columns)].I)
		}
		c.noteChanged(t, key)
		if raw, ok := kept.get(key); ok {
			err = c.Txn.DeleteRow(info, raw)
		} else {
			err = c.Txn.Delete(info, key)
		}
		if err != nil {
			return err
		}
		if err := c.noteParentRow(rules, t, old, nil); err != nil {
			return err
		}
		if written != nil {
			*written = append(*written, old)
		}
	}
	return nil
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
	if err == nil {
		err = c.endStatement()
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
