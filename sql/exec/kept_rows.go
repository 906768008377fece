package exec

import "github.com/mvserver/mvserver/storage"

// keptRows are the snapshot rows of the table an UPDATE or DELETE writes,
// as the statement's table scans read them, by key: the write hands the
// row to storage (UpdateRow, DeleteRow) instead of storage looking it up
// again, a point Get per row (a fifth of a 1000-row UPDATE in mvbench's
// profile). Rows of the transaction's own writes are not kept (storage
// reads those from its buffer), nor rows read through an index.
type keptRows struct {
	table storage.TableID
	rows  map[string]storage.Row
	bytes int
}

// maxKeptRows and maxKeptBytes (keys and values) bound the memory, which
// the statement's budget does not count: past them, rows are looked up as
// before.
const (
	maxKeptRows  = 1 << 16
	maxKeptBytes = 8 << 20
)

// keepRowsFor starts keeping table's rows for the statement of c; the
// returned func stops (a DML statement nested in a WITH keeps its own).
func keepRowsFor(c *Ctx, table storage.TableID) (*keptRows, func()) {
	st := c.state()
	prev := st.kept
	k := &keptRows{table: table, rows: map[string]storage.Row{}}
	st.kept = k
	return k, func() { st.kept = prev }
}

// keep records r, a row of table that a table scan of c's statement read.
func (c *Ctx) keep(table storage.TableID, r storage.Row) {
	if c.stmt == nil {
		return
	}
	k := c.stmt.kept
	size := len(r.Key) + len(r.Value)
	if k == nil || table != k.table || r.CommitVersion < 0 || len(k.rows) >= maxKeptRows || k.bytes+size > maxKeptBytes {
		return
	}
	k.bytes += size
	buf := make([]byte, size)
	n := copy(buf, r.Key)
	copy(buf[n:], r.Value)
	k.rows[string(r.Key)] = storage.Row{Key: buf[:n:n], Value: buf[n:], RowID: r.RowID, CommitVersion: r.CommitVersion}
}

// keeping reports whether c's statement keeps the rows of table that its
// scans read: such a scan does not read ahead (readahead.go), so that
// every row it reads is kept.
func (c *Ctx) keeping(table storage.TableID) bool {
	return c.stmt != nil && c.stmt.kept != nil && c.stmt.kept.table == table
}

// get returns the kept row at key.
func (k *keptRows) get(key []byte) (storage.Row, bool) {
	if k == nil {
		return storage.Row{}, false
	}
	r, ok := k.rows[string(key)]
	return r, ok
}
