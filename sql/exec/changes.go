package exec

import (
	"errors"
	"time"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// tableChangesOp reads table_changes(t, start, end) (R-T7).
type tableChangesOp struct {
	c     *Ctx
	node  *plan.TableChanges
	it    *storage.ChangeIterator
	dec   *types.RowDecoder
	nCols int
	done  bool
}

func newTableChanges(c *Ctx, n *plan.TableChanges) (Operator, error) {
	t := n.Table
	tid := storage.TableID(t.ID)
	start, end := n.Start, n.End
	if n.StartTime != nil || n.EndTime != nil {
		hist, err := c.Txn.History(tid)
		if err != nil {
			return nil, err
		}
		// history is newest first
		if n.StartTime != nil {
			start = -1
			for i := len(hist) - 1; i >= 0; i-- {
				if hist[i].Timestamp.UnixMicro() >= *n.StartTime {
					start = hist[i].Version
					break
				}
			}
			if start < 0 {
				return nil, pgerror.New(pgerror.InvalidParameterValue, "the timestamp %s is after the latest version of table %s", time.UnixMicro(*n.StartTime).UTC().Format(time.RFC3339Nano), t.Name)
			}
		}
		if n.EndTime != nil {
			end = -2
			for _, h := range hist {
				if h.Timestamp.UnixMicro() <= *n.EndTime {
					end = h.Version
					break
				}
			}
			if end == -2 {
				return nil, pgerror.New(pgerror.InvalidParameterValue, "the timestamp %s is before the first version of table %s", time.UnixMicro(*n.EndTime).UTC().Format(time.RFC3339Nano), t.Name)
			}
		}
	}
	if start < 0 {
		return nil, pgerror.New(pgerror.InvalidParameterValue, "table_changes: the start version must not be negative")
	}
	if end >= 0 && end < start {
		return nil, pgerror.New(pgerror.InvalidParameterValue, "table_changes: the end version %d is before the start version %d", end, start)
	}
	cur, err := c.Txn.TableVersion(tid)
	if err != nil {
		return nil, err
	}
	if start > cur {
		return nil, pgerror.New(pgerror.InvalidParameterValue, "table_changes: version %d of table %s does not exist; the latest version is %d", start, t.Name, cur)
	}
	ids := make([]uint32, len(t.Columns))
	for i, col := range t.Columns {
		ids[i] = col.ID
	}
	op := &tableChangesOp{c: c, node: n, dec: types.NewRowDecoder(ids), nCols: len(t.Columns)}
	op.it = c.Txn.Changes(tid, start, end)
	return op, nil
}

func (o *tableChangesOp) Next() ([]Row, error) {
	if o.done {
		return nil, nil
	}
	if err := o.c.Context.Err(); err != nil {
		return nil, err
	}
	w := o.nCols + 3
	var out []Row
	for len(out) < BatchSize {
		if !o.it.Next() {
			o.done = true
			if err := o.it.Err(); err != nil {
				return nil, changesError(err, o.node.Table.Name)
			}
			break
		}
		ch := o.it.Change()
		row := make(Row, w)
		if err := o.dec.Decode(ch.Value, row[:o.nCols]); err != nil {
			return nil, err
		}
		row[o.nCols] = types.NewText(ch.Type.String())
		row[o.nCols+1] = types.NewInt8(ch.Version)
		row[o.nCols+2] = types.NewTimestamp(types.KindTimestampTZ, ch.Timestamp.UnixMicro())
		out = append(out, row)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func (o *tableChangesOp) Close() {
	if o.it != nil {
		o.it.Close()
		o.it = nil
	}
}

// changesError explains a change-feed gap (R-T7).
func changesError(err error, table string) error {
	var ce *storage.ChangesUnavailableError
	if errors.As(err, &ce) {
		if ce.Vacuumed {
			return pgerror.New(pgerror.ObjectNotInPrerequisiteState, "the change data feed of table %s no longer holds version %d: it was removed by VACUUM; changes are available from version %d", table, ce.Start, ce.AvailableFrom)
		}
		if ce.Rewritten >= 0 {
			e := pgerror.New(pgerror.ObjectNotInPrerequisiteState, "the change data feed of table %s holds no row changes for version %d: that refresh rewrote it whole", table, ce.Rewritten)
			if ce.AvailableFrom >= 0 {
				e = e.WithDetail("Changes are available from version %d.", ce.AvailableFrom)
			}
			return e
		}
		if ce.AvailableFrom < 0 {
			return pgerror.New(pgerror.ObjectNotInPrerequisiteState, "the change data feed is not enabled for table %s", table).
				WithHint("ALTER TABLE %s SET TBLPROPERTIES (delta.enableChangeDataFeed = true)", table)
		}
		return pgerror.New(pgerror.ObjectNotInPrerequisiteState, "the change data feed of table %s is not available for version %d; it is available from version %d", table, ce.Start, ce.AvailableFrom)
	}
	return err
}
