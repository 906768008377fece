package storage

import "fmt"

// Serializable transactions (doc.go, invariant 11). Snapshot isolation
// alone lets write skew commit: two transactions each read what the other
// writes, neither writes what the other writes, so first committer wins
// never fires. A transaction begun with BeginSerializable also records
// what it read — point keys and key ranges of rows and index entries,
// including reads that found nothing — and a commit that writes fails
// with ErrReadDependency when a transaction that committed after its
// Begin wrote any key it read (or a key inside a range it read: phantoms
// are caught at range granularity). Validation runs under commitMu right
// after first committer wins, and the batch is applied under the same
// hold, so a transaction that commits read exactly what the state just
// before its commit holds: every committed serializable writer is
// equivalent to running alone at its commit point.
//
// A serializable transaction that writes nothing is not checked. Its
// snapshot is the state after a prefix of the commit order, and every
// committed serializable writer is equivalent to running at its commit
// point, so the reader sees the state of a serial order of them (the
// reader placed at its Begin). The read-only anomaly of snapshot
// isolation (Fekete, O'Neil and O'Neil, 2004) needs a writer whose reads
// a concurrent commit overwrote to commit anyway; here that writer fails.
//
// The price of checking at commit alone is false positives PostgreSQL's
// SSI does not have: a writer fails whenever one of its reads was
// overwritten meanwhile, even when no cycle of dependencies exists (it
// could have been ordered before the other transaction). Reads of meta
// keys (the catalog, refresh state) are not recorded: DDL conflicts with
// DML through CheckUnchanged.
//
// What a transaction that is not serializable pays: nothing while no
// serializable transaction is open; while one is, its commits add their
// keys to the write history (history.go).

// maxReadSpans bounds the reads recorded for one table: past it the table
// counts as read whole (any write to it after Begin conflicts), as
// PostgreSQL promotes predicate locks to the relation.
var maxReadSpans = 4096

// readSet is what a serializable transaction read, by table, as Pebble
// keys: rows (0x06) and index entries (0x07) of the table.
type readSet struct {
	tables map[TableID]*tableReads
}

type tableReads struct {
	// whole: every row and entry of the table (too many reads, or an
	// open-ended read of its change feed).
	whole bool
	spans []readSpan
}

// readSpan is the Pebble keys [lo, hi); hi == nil: the key lo alone.
type readSpan struct{ lo, hi []byte }

func (rs *readSet) table(id TableID) *tableReads {
	if rs.tables == nil {
		rs.tables = make(map[TableID]*tableReads)
	}
	tr := rs.tables[id]
	if tr == nil {
		tr = &tableReads{}
		rs.tables[id] = tr
	}
	return tr
}

// add records the read of [lo, hi) (hi nil: the key lo) of table id's key
// spaces. The set keeps lo and hi.
func (rs *readSet) add(id TableID, lo, hi []byte) {
	tr := rs.table(id)
	if tr.whole {
		return
	}
	if len(tr.spans) >= maxReadSpans {
		tr.whole, tr.spans = true, nil
		return
	}
	tr.spans = append(tr.spans, readSpan{lo: lo, hi: hi})
}

// addWhole records a read of every row and index entry of table id.
func (rs *readSet) addWhole(id TableID) {
	tr := rs.table(id)
	tr.whole, tr.spans = true, nil
}

// Serializable reports whether the transaction was begun with
// BeginSerializable.
func (t *Txn) Serializable() bool { return t.reads != nil }

// readPoint records a read of the Pebble key pkey of tbl (copied).
func (t *Txn) readPoint(tbl TableID, pkey []byte) {
	t.reads.add(tbl, cloneBytes(pkey), nil)
}

// noteOpenReads records what the iterators still open read: a commit
// releases them before it validates (the end of the transaction would
// anyway), which also stops a goroutine reading one (OnRelease).
func (t *Txn) noteOpenReads() {
	for it := range t.iters {
		_ = it.release()
	}
}

// trackReads makes the iterator record, for tbl, the part of the Pebble
// range [lower, upper) it walks.
func (it *Iterator) trackReads(tbl TableID, lower, upper []byte) {
	if it.txn.reads == nil {
		return
	}
	it.rtrack, it.rtbl, it.rlo, it.rhi = true, tbl, lower, upper
}

// noteRead records the keys the iterator walked: from its lower bound to
// the last row it returned, or to its upper bound once it ran out. An
// iterator never advanced read nothing; one that failed counts its whole
// range.
func (it *Iterator) noteRead() {
	if !it.rtrack || !it.started {
		return
	}
	it.rtrack = false
	rs := it.txn.reads
	if it.done || it.err != nil || it.row.Key == nil {
		rs.add(it.rtbl, it.rlo, it.rhi)
		return
	}
	// Keys up to and including the current row: [lo, row key + 0x00).
	hi := make([]byte, 0, it.strip+len(it.row.Key)+1)
	hi = append(append(append(hi, it.rlo[:it.strip]...), it.row.Key...), 0)
	rs.add(it.rtbl, it.rlo, hi)
}

// validateReads fails a serializable transaction with ErrReadDependency
// when a commit applied after its Begin wrote a key it read. Called
// under commitMu, after first committer wins.
func (db *DB) validateReads(t *Txn) error {
	begin := t.beginSeq
	for id, tr := range t.reads.tables {
		st := db.table(id)
		switch {
		case st.dropSeq > begin, st.wipeSeq > begin:
			return readDependency("table %d, which this transaction read, was truncated or dropped by a transaction that committed first", id)
		case st.coarseSeq > begin:
			return readDependency("table %d, which this transaction read, was written by a transaction that committed first (its keys were not kept)", id)
		case st.rowWriteSeq <= begin:
			continue // nothing of the table was written since Begin
		case tr.whole:
			return readDependency("table %d, which this transaction read, was written by a transaction that committed first", id)
		}
		for _, s := range tr.spans {
			if db.history.writtenAfter(s.lo, s.hi, begin) {
				return readDependency("a key of table %d that this transaction read was written by a transaction that committed first", id)
			}
		}
	}
	return nil
}

func readDependency(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrReadDependency, fmt.Sprintf(format, args...))
}

// noteUnwrittenInserts records, as reads, the keys of tw that this
// transaction inserted and deleted again: its insert found them absent in
// the snapshot, and first committer wins does not check them (the commit
// writes nothing there).
func (t *Txn) noteUnwrittenInserts(tw *tableWrites) {
	if tw.truncated {
		return // no snapshot row was probed
	}
	for w := range tw.rows.All() {
		if w.del && !w.origExists && !w.fresh {
			t.reads.add(tw.id, rowKey(nil, tw.id, w.key), nil)
		}
	}
	for id, ix := range tw.idx {
		if ix.fresh {
			continue
		}
		for w := range ix.entries.All() {
			if w.uniq && w.del && !w.origExists {
				t.reads.add(tw.id, indexKey(nil, tw.id, id, w.key), nil)
			}
		}
	}
}
