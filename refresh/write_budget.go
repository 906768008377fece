package refresh

import (
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/storage"
)

// The write set counts against the refresh's budget (R-X3,
// --refresh-memory-limit): what a refresh writes is held by its
// transaction until the commit, and once more in the commit's batch, so a
// full rewrite of a large view holds all of it twice. Every write a
// viewWriter makes is charged (in steps) before it is made, and the charge
// stays until the refresh ends: a refresh past its budget fails with 53200
// before it commits, and the view keeps its previous content.

// Per-write costs besides the key and value, which are held twice (the
// write set and the batch). Measured on a REFRESH … FULL of a 5M-row
// projection view (37-byte rows, change data feed on) at its commit: the
// write set held 190 bytes a row (B-tree entry, row header, key and value
// copies) and the commit's batch 768 MB — the row and its change record for
// each new row, a change record for each old one (about 70 bytes).
const (
	writeInsertBytes = 200
	// A deletion holds its key in the write set, and its change record
	// (the key and the old value) in the batch.
	writeDeleteBytes = 180
	// truncatedRowBytes is what the batch holds for each row of a view
	// truncated in full (its change record), rows assumed 48 bytes.
	truncatedRowBytes = 80
	// writeStep is how much the charges pile up before the budget is
	// charged.
	writeStep = 64 << 10
)

// writeBudget charges a refresh's writes to its budget.
type writeBudget struct {
	mem     *exec.Memory
	pending int64
}

// charge counts n bytes the transaction is about to hold.
func (b *writeBudget) charge(n int64) error {
	b.pending += n
	if b.pending < writeStep {
		return nil
	}
	n, b.pending = b.pending, 0
	return b.mem.Charge("write set of the refresh", n)
}

// insert writes a view row, charging it first.
func (w *viewWriter) insert(key, value []byte) error {
	if err := w.writes.charge(2*int64(len(key)+len(value)) + writeInsertBytes); err != nil {
		return err
	}
	_, err := w.txn.Insert(w.info, key, value)
	return err
}

// deleteRow deletes a stored view row, charging it first.
func (w *viewWriter) deleteRow(r storage.Row) error {
	if err := w.writes.charge(2*int64(len(r.Key)) + int64(len(r.Value)) + writeDeleteBytes); err != nil {
		return err
	}
	return w.txn.DeleteRow(w.info, r)
}

// truncated charges what truncating a view of n rows makes the commit
// hold: a change record for each of its rows.
func (w *viewWriter) truncated(n int64) error {
	return w.writes.charge(n * truncatedRowBytes)
}
