package storage

import (
	"bytes"
	"context"
	"fmt"
)

// TableID names a table; the catalog allocates them.
type TableID uint32

// TableInfo is what the caller tells storage about a table on each write.
type TableInfo struct {
	ID             TableID
	ChangeDataFeed bool // record row changes of this commit in the CDF (R-T7)
	// Indexes are the table's secondary indexes (index.go), whose entries
	// every row write maintains. A row write must list exactly the indexes
	// the table has as the transaction sees them, or it fails with
	// ErrIndexMismatch; calls that write no rows may leave them out.
	Indexes []IndexInfo
}

// Row is one stored row. Slices are valid until the iterator moves or the
// next call on the Txn; the caller must not modify them.
type Row struct {
	Key           []byte // the row's key within its table (primary key encoding, or RowIDKey)
	Value         []byte // caller's encoded columns (opaque)
	RowID         int64  // stable across updates (R-T6)
	CommitVersion int64  // table version that last wrote the row; -1 for this txn's own uncommitted writes
}

// rowWrite is one buffered write: a row (or meta key) as this transaction
// leaves it, plus what the snapshot held at that key when it was first
// touched (for the change feed and conflict rules). Trees hold rowWrites by
// value and every change replaces the entry, so a cloned tree (an open
// Iterator) keeps seeing the writes as they were when it was opened.
type rowWrite struct {
	key   []byte
	value []byte
	rowID int64
	del   bool
	// moved: the row (rowID) came here from another key by an Update.
	moved bool
	// fresh: key is RowIDKey of a row id allocated by this txn; no other
	// transaction can write it, so it needs no conflict check.
	fresh bool
	// uniq: an index entry keyed by its columns alone (index.go), which
	// concurrent transactions may both write: it is checked at commit.
	uniq bool

	origExists bool // the snapshot has a row at key
	origLoaded bool // origValue holds the snapshot's value
	origRowID  int64
	origValue  []byte
}

// tableWrites is everything one transaction does to one table.
type tableWrites struct {
	id   TableID
	info TableInfo // as given by the latest write call
	// written: the latest TableInfo a row write gave that named the
	// table's indexes (checkIndexes), for a commit that rewrites the
	// table (stage_generation.go, write_generation.go).
	written TableInfo
	st      *tableState
	rows    *writeSet
	// rowBounds answer insert probes of the snapshot's rows (probe.go).
	rowBounds spanBounds

	truncated bool // snapshot rows are invisible: Truncate or DropTable
	dropped   bool // DropTable: rows, CDF, history, state go at commit
	created   bool // CreateTable (after DropTable when both)
	createOp  string
	setOp     string // SetOperation: names the commit whatever else was noted
	recorded  bool   // RecordVersion
	ops       []string
	params    map[string]string

	vacuum      bool
	vacuumBelow int64
	vacuumSlots []int64 // change slots of vacuumed versions (stage_generation.go)

	// freshRows: the key space CreateTable or Truncate gave the table
	// (freshRowsFor); 0 where the commit writes where the snapshot's
	// rows are.
	freshRows TableID

	// Secondary indexes (index.go).
	indexSet    []IndexID // the table's indexes as this txn sees them (once indexLoaded)
	indexLoaded bool
	// rewrite is the table's new content (RewriteRows, generation.go).
	rewrite *Rewrite
	// stage holds the inserts written to runs (stage.go); noStage: the
	// table's writes are not all inserts, so it keeps them in memory.
	stage   *stagedTable
	noStage bool

	indexChanged bool // BuildIndex or DropIndex: the commit writes the new set
	indexBuilt   bool // BuildIndex read the rows: concurrent row writes conflict
	idx          map[IndexID]*indexWrites
	droppedIdx   []IndexID // indexes whose entries on disk go at commit
}

func (tw *tableWrites) note(op string) {
	for _, o := range tw.ops {
		if o == op {
			return
		}
	}
	tw.ops = append(tw.ops, op)
}

func (tw *tableWrites) mergeParams(params map[string]string) {
	if len(params) == 0 {
		return
	}
	if tw.params == nil {
		tw.params = make(map[string]string, len(params))
	}
	for k, v := range params {
		tw.params[k] = v
	}
}

// Txn is a snapshot-isolation transaction: reads see the state at Begin plus
// the transaction's own writes; writes are buffered until Commit. One begun
// with BeginSerializable is serializable (serializable.go). A Txn is
// used by one goroutine at a time. Every Txn must end with Commit or
// Rollback (an open Txn pins its snapshot and the conflict bookkeeping).
type Txn struct {
	db         *DB
	snap       engineSnapshot // shared.snap (snapshot.go)
	shared     *sharedSnap
	beginSeq   uint64
	registered bool
	err        error // set once the txn ended: ErrTxnDone or ErrClosed
	// reads is what a serializable transaction read; nil for the others,
	// which record nothing.
	reads *readSet

	tables map[TableID]*tableWrites
	order  []TableID // first-touch order: deterministic batches
	meta   *writeSet
	checks map[string]struct{} // CheckUnchanged meta keys (Pebble keys)
	leases []Lease             // CheckLease's (lease.go)
	locks  []rowLock           // LockRow's (row_locks.go)
	iters  map[*Iterator]struct{}

	changeIters map[*ChangeIterator]struct{}

	// rowsIDs caches the snapshot's rows id of tables (generation.go).
	rowsIDs map[TableID]TableID
	// staging: inserts past the stage threshold may go to runs (stage.go).
	staging bool
	// fresh: the key spaces CreateTable and Truncate gave tables of this
	// transaction on an engine that deletes dead key spaces after the
	// commit (freshRowsFor); their shadow keys go when it ends, and with
	// them what a transaction that did not commit wrote there.
	fresh          []freshSpace
	committedFresh bool // the commit succeeded: the fresh key spaces are the tables'.

	getBuf []byte
	// pointReads counts the snapshot's point reads (snapGet): a test's
	// measure of how often rows are read one by one.
	pointReads int
	keyBuf     []byte
	committed  map[TableID]int64
	fetched    map[string]fetched // Prefetch's snapshot answers (prefetch.go)

	// commitCtx is CommitContext's while it encodes; commitN counts the
	// writes encoded (commitCheck).
	commitCtx context.Context
	commitN   int
}

// Begin starts a transaction. Its snapshot and its place in the commit order
// are taken atomically: it sees exactly the commits applied before it.
func (db *DB) Begin() *Txn { return db.begin(false) }

// BeginSerializable starts a serializable transaction: a Begin that also
// records what it reads, so that its Commit, when it writes, fails with
// ErrReadDependency if a transaction that committed after its Begin wrote
// any of it (serializable.go).
func (db *DB) BeginSerializable() *Txn { return db.begin(true) }

func (db *DB) begin(serializable bool) *Txn {
	t := &Txn{db: db}
	db.visMu.RLock()
	if db.closed.Load() {
		db.visMu.RUnlock()
		t.err = ErrClosed
		return t
	}
	t.shared = db.beginSnap() // a durable state (durable.go)
	if t.shared == nil {
		db.visMu.RUnlock()
		t.err = db.WriteFailure()
		return t
	}
	t.beginSeq = t.shared.seq
	t.snap = t.shared.snap
	db.activeMu.Lock()
	db.active[t.beginSeq]++
	if serializable {
		// Registered before visMu is released: every commit after
		// beginSeq applies later and then finds it (writehistory.go).
		db.serActive[t.beginSeq]++
		t.reads = &readSet{}
	}
	db.activeMu.Unlock()
	db.visMu.RUnlock()
	t.registered = true
	return t
}

// StateSeq identifies the committed state this transaction's snapshot
// observes: the number of commits applied before Begin. Two transactions
// with equal sequences and ok see the same committed data (invariant 4;
// they even share the Pebble snapshot, snapshot.go), so a caller may reuse
// what it derived from one snapshot for the other (the catalog does, to
// skip re-reading its generation). ok is false for an ended transaction
// and once a commit failed inside Pebble, whose batch may be visible
// without having advanced the sequence: no caller should lean on it then.
// ok is always false on a shared store (shared.go): other processes'
// commits do not move this process's sequence, so equal sequences may see
// different data, and the catalog reads its generation key per snapshot.
func (t *Txn) StateSeq() (seq uint64, ok bool) {
	return t.beginSeq, t.err == nil && !t.db.sharedStore && t.db.WriteFailure() == nil
}

func (t *Txn) alive() error {
	if t.err != nil {
		return t.err
	}
	if t.db.closed.Load() {
		return ErrClosed
	}
	return nil
}

// deregister removes the txn from the open set (idempotent).
func (t *Txn) deregister() {
	if !t.registered {
		return
	}
	t.registered = false
	db := t.db
	db.activeMu.Lock()
	if db.active[t.beginSeq]--; db.active[t.beginSeq] <= 0 {
		delete(db.active, t.beginSeq)
	}
	if t.reads != nil {
		if db.serActive[t.beginSeq]--; db.serActive[t.beginSeq] <= 0 {
			delete(db.serActive, t.beginSeq)
		}
	}
	db.activeMu.Unlock()
}

// finish ends the txn: closes its iterators and snapshot.
func (t *Txn) finish() {
	if t.err != nil {
		return
	}
	t.endRewrites()
	t.endFresh()
	t.endStages()
	t.err = ErrTxnDone
	for it := range t.iters {
		it.release()
	}
	t.iters = nil
	for it := range t.changeIters {
		it.release()
	}
	t.changeIters = nil
	if t.shared != nil {
		t.db.releaseSnap(t.shared)
	}
	t.snap, t.shared = nil, nil
	t.fetched = nil
	t.releaseLocks()
	t.deregister()
}

// Rollback discards the transaction (no-op when it already ended).
func (t *Txn) Rollback() { t.finish() }

// table returns the write set of tbl, recording info as the latest.
func (t *Txn) table(info TableInfo) *tableWrites {
	tw := t.tableByID(info.ID)
	tw.info = info
	return tw
}

func (t *Txn) tableByID(id TableID) *tableWrites {
	if tw := t.tables[id]; tw != nil {
		return tw
	}
	if t.tables == nil {
		t.tables = make(map[TableID]*tableWrites)
	}
	tw := &tableWrites{id: id, info: TableInfo{ID: id}, st: t.db.table(id), rows: newWriteSet()}
	t.tables[id] = tw
	t.order = append(t.order, id)
	return tw
}

// snapGet reads a Pebble key from the snapshot into t.getBuf (valid until
// the next snapGet).
func (t *Txn) snapGet(pkey []byte) ([]byte, bool, error) {
	if f, ok := t.fetched[string(pkey)]; ok {
		t.getBuf = append(t.getBuf[:0], f.value...)
		return t.getBuf, f.ok, nil
	}
	t.pointReads++
	v, ok, err := t.snap.get(pkey, t.getBuf)
	if !ok || err != nil {
		return nil, false, err
	}
	t.getBuf = v
	return v, true, nil
}

func (t *Txn) snapHas(pkey []byte) (bool, error) {
	if f, ok := t.fetched[string(pkey)]; ok {
		return f.ok, nil
	}
	return t.snap.has(pkey)
}

// snapRow reads the snapshot's row of tbl at key.
func (t *Txn) snapRow(tbl TableID, key []byte) (Row, bool, error) {
	var err error
	if t.keyBuf, err = t.rowsKey(t.keyBuf[:0], tbl, key); err != nil {
		return Row{}, false, err
	}
	v, ok, err := t.snapGet(t.keyBuf)
	if !ok || err != nil {
		return Row{}, false, err
	}
	rowID, ver, val, err := parseRowValue(v)
	if err != nil {
		return Row{}, false, fmt.Errorf("%w (table %d key %x)", err, tbl, key)
	}
	return Row{Key: key, Value: val, RowID: rowID, CommitVersion: ver}, true, nil
}

// Get returns the row of tbl at key as this transaction sees it.
func (t *Txn) Get(tbl TableID, key []byte) (Row, bool, error) {
	if err := t.alive(); err != nil {
		return Row{}, false, err
	}
	if tw := t.tables[tbl]; tw != nil {
		if err := tw.unreadable(); err != nil {
			return Row{}, false, err
		}
		if w, ok := tw.rows.Get(key); ok {
			if w.del {
				return Row{}, false, nil
			}
			return Row{Key: w.key, Value: w.value, RowID: w.rowID, CommitVersion: -1}, true, nil
		}
		if tw.truncated {
			return Row{}, false, nil
		}
	}
	if t.reads != nil {
		t.reads.add(tbl, rowKey(nil, tbl, key), nil)
	}
	return t.snapRow(tbl, key)
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return append(make([]byte, 0, len(b)), b...)
}

// Insert writes a new row. key == nil keys the row by its row id (tables
// without a primary key): storage allocates the id and uses RowIDKey(id). A
// key that exists (own writes or snapshot) → *DuplicateKeyError. Returns the
// new row id.
func (t *Txn) Insert(tbl TableInfo, key, value []byte) (rowID int64, err error) {
	if err := t.alive(); err != nil {
		return 0, err
	}
	tw := t.table(tbl)
	if err := t.checkIndexes(tw); err != nil {
		return 0, err
	}
	if key == nil {
		id := tw.st.allocRowID()
		w := rowWrite{key: RowIDKey(id), value: cloneBytes(value), rowID: id, fresh: true}
		if err := t.maintainIndexes(tw, nil, nil, false, w.key, w.value, true); err != nil {
			return 0, err
		}
		tw.rows.Put(w)
		return id, t.maybeStage(tw)
	}
	w, had := tw.rows.Get(key)
	if had && !w.del {
		return 0, &DuplicateKeyError{Table: tbl.ID, Key: cloneBytes(key)}
	}
	if !had {
		if !tw.truncated {
			exists, err := t.rowExists(tw, key)
			if err != nil {
				return 0, err
			}
			if exists {
				return 0, &DuplicateKeyError{Table: tbl.ID, Key: cloneBytes(key)}
			}
		}
		w = rowWrite{key: cloneBytes(key)}
	}
	if err := t.maintainIndexes(tw, nil, nil, false, key, value, true); err != nil {
		return 0, err
	}
	id := tw.st.allocRowID()
	w.value, w.rowID, w.del, w.moved = cloneBytes(value), id, false, false
	tw.rows.Put(w)
	return id, t.maybeStage(tw)
}

// Update replaces the row at oldKey with value at newKey (newKey may equal
// oldKey); the row id is kept (R-T6). A newKey that exists (other than
// oldKey) → *DuplicateKeyError. Missing oldKey → ErrNotFound.
func (t *Txn) Update(tbl TableInfo, oldKey, newKey, value []byte) error {
	if err := t.alive(); err != nil {
		return err
	}
	tw := t.table(tbl)
	if err := t.checkIndexes(tw); err != nil {
		return err
	}
	return t.update(tw, oldKey, newKey, value, nil)
}

// UpdateRow is Update for a row the caller just read with Get or Scan in this
// transaction: it saves the point lookup of the old row. old must be the Row
// as returned (its Key, RowID, CommitVersion and Value are used).
func (t *Txn) UpdateRow(tbl TableInfo, old Row, newKey, value []byte) error {
	if err := t.alive(); err != nil {
		return err
	}
	tw := t.table(tbl)
	if err := t.checkIndexes(tw); err != nil {
		return err
	}
	return t.update(tw, old.Key, newKey, value, &old)
}

// DeleteRow is Delete for a row the caller just read with Get or Scan in this
// transaction (see UpdateRow).
func (t *Txn) DeleteRow(tbl TableInfo, old Row) error {
	if err := t.alive(); err != nil {
		return err
	}
	tw := t.table(tbl)
	if err := t.checkIndexes(tw); err != nil {
		return err
	}
	return t.delete(tw, old.Key, &old)
}

// oldRow finds the row at key for Update/Delete: the own write when there is
// one, else the snapshot row (known, when the caller passed the row it read
// from the snapshot). The returned entry is what the tree should hold for key
// before the change; value is the row's current value when the table has
// indexes (their old entries are computed from it), else nil.
func (t *Txn) oldRow(tw *tableWrites, key []byte, known *Row) (w rowWrite, value []byte, err error) {
	w, err = t.oldRowWrite(tw, key, known)
	if err != nil || len(tw.info.Indexes) == 0 {
		return w, nil, err
	}
	if own, ok := tw.rows.Get(key); ok {
		return w, own.value, nil
	}
	return w, w.origValue, nil // loaded by oldRowWrite
}

func (t *Txn) oldRowWrite(tw *tableWrites, key []byte, known *Row) (rowWrite, error) {
	if w, ok := tw.rows.Get(key); ok {
		if w.del {
			return w, ErrNotFound
		}
		return w, nil
	}
	if tw.truncated {
		return rowWrite{}, ErrNotFound
	}
	var r Row
	if known != nil && known.CommitVersion >= 0 {
		r = *known
	} else {
		var ok bool
		var err error
		if r, ok, err = t.snapRow(tw.id, key); err != nil {
			return rowWrite{}, err
		} else if !ok {
			return rowWrite{}, ErrNotFound
		}
	}
	w := rowWrite{key: cloneBytes(key), rowID: r.RowID, origExists: true, origRowID: r.RowID}
	if tw.info.ChangeDataFeed || len(tw.info.Indexes) > 0 {
		w.origValue, w.origLoaded = cloneBytes(r.Value), true
	}
	return w, nil
}

// checkWriteConflict fails an update or delete of a row that a transaction
// committed after this one began wrote — at once, as PostgreSQL's
// REPEATABLE READ fails the statement itself; Commit would fail anyway
// (first committer wins).
func (t *Txn) checkWriteConflict(tw *tableWrites, key []byte) error {
	if _, own := tw.rows.Get(key); own {
		return nil
	}
	t.keyBuf = rowKey(t.keyBuf[:0], tw.id, key)
	row, wiped := t.db.writtenSince(t.keyBuf, tw.st, t.beginSeq)
	if row {
		return serializationError("row %x of table %d was written by a concurrent transaction", key, tw.id)
	}
	if wiped && !tw.truncated {
		// Its rows were replaced whole (a TRUNCATE, or a write committed
		// as a new generation: write_generation.go), keeping no keys.
		return serializationError("table %d was truncated or rewritten by a concurrent transaction", tw.id)
	}
	return nil
}

func (t *Txn) update(tw *tableWrites, oldKey, newKey, value []byte, known *Row) error {
	if tw.stage != nil {
		return errStagedRead(tw.id)
	}
	if err := t.checkWriteConflict(tw, oldKey); err != nil {
		return err
	}
	old, oldValue, err := t.oldRow(tw, oldKey, known)
	if err != nil {
		return err
	}
	if bytes.Equal(oldKey, newKey) {
		if err := t.maintainIndexes(tw, oldKey, oldValue, true, newKey, value, true); err != nil {
			return err
		}
		old.value = cloneBytes(value)
		tw.rows.Put(old)
		return nil
	}
	nw, had := tw.rows.Get(newKey)
	if had && !nw.del {
		return &DuplicateKeyError{Table: tw.id, Key: cloneBytes(newKey)}
	}
	if !had {
		if !tw.truncated {
			exists, err := t.rowExists(tw, newKey)
			if err != nil {
				return err
			}
			if exists {
				return &DuplicateKeyError{Table: tw.id, Key: cloneBytes(newKey)}
			}
		}
		nw = rowWrite{key: cloneBytes(newKey)}
	}
	if err := t.maintainIndexes(tw, oldKey, oldValue, true, newKey, value, true); err != nil {
		return err
	}
	nw.value, nw.rowID, nw.del, nw.moved = cloneBytes(value), old.rowID, false, true
	old.del, old.value = true, nil
	tw.rows.Put(old)
	tw.rows.Put(nw)
	return nil
}

// Delete removes the row at key; a missing row → ErrNotFound.
func (t *Txn) Delete(tbl TableInfo, key []byte) error {
	if err := t.alive(); err != nil {
		return err
	}
	tw := t.table(tbl)
	if err := t.checkIndexes(tw); err != nil {
		return err
	}
	return t.delete(tw, key, nil)
}

func (t *Txn) delete(tw *tableWrites, key []byte, known *Row) error {
	if tw.stage != nil {
		return errStagedRead(tw.id)
	}
	if err := t.checkWriteConflict(tw, key); err != nil {
		return err
	}
	w, oldValue, err := t.oldRow(tw, key, known)
	if err != nil {
		return err
	}
	if err := t.maintainIndexes(tw, key, oldValue, true, nil, nil, false); err != nil {
		return err
	}
	w.del, w.value = true, nil
	tw.rows.Put(w)
	return nil
}

// Truncate deletes every row of the table (with the change feed on, a delete
// record per row). It notes the operation "TRUNCATE".
func (t *Txn) Truncate(tbl TableInfo) error {
	if err := t.alive(); err != nil {
		return err
	}
	tw := t.table(tbl)
	if tw.rewrite != nil {
		return errRewriting(tbl.ID)
	}
	if tw.stage != nil {
		return errStagedRead(tbl.ID)
	}
	if err := t.freshRowsFor(tw, false); err != nil {
		return err
	}
	tw.rows = newWriteSet()
	tw.truncated = true
	for _, ix := range tw.idx {
		ix.entries = newWriteSet()
	}
	tw.note("TRUNCATE")
	return nil
}

// NoteOperation names the operation of this transaction on tbl for its
// history entry: "WRITE", "UPDATE", "DELETE", "TRUNCATE", … A table touched by
// several distinct operations records "MERGE". Noting alone makes no version.
func (t *Txn) NoteOperation(tbl TableID, op string) {
	if t.alive() != nil {
		return
	}
	t.tableByID(tbl).note(op)
}

// SetOperation names this transaction's history entry of tbl op, with
// params, whatever other operations it notes (a refresh that truncates and
// inserts is one "REFRESH" version). CreateTable's op still wins.
func (t *Txn) SetOperation(tbl TableInfo, op string, params map[string]string) {
	if t.alive() != nil {
		return
	}
	tw := t.table(tbl)
	tw.setOp = op
	tw.mergeParams(params)
}

// CreateTable makes version 0 of a new table with history operation op
// (e.g. "CREATE TABLE"; it wins over other noted operations of the txn).
func (t *Txn) CreateTable(tbl TableInfo, op string, params map[string]string) error {
	if err := t.alive(); err != nil {
		return err
	}
	tw := t.table(tbl)
	if tw.created {
		return fmt.Errorf("%w: table %d", ErrTableExists, tbl.ID)
	}
	if !tw.dropped {
		v, err := t.TableVersion(tbl.ID)
		if err != nil {
			return err
		}
		if v >= 0 {
			return fmt.Errorf("%w: table %d", ErrTableExists, tbl.ID)
		}
	}
	if err := t.freshRowsFor(tw, true); err != nil {
		return err
	}
	tw.created, tw.createOp = true, op
	tw.mergeParams(params)
	return nil
}

// RecordVersion makes a new version without row changes (SET TBLPROPERTIES,
// ALTER …) with history operation op.
func (t *Txn) RecordVersion(tbl TableInfo, op string, params map[string]string) error {
	if err := t.alive(); err != nil {
		return err
	}
	tw := t.table(tbl)
	tw.recorded = true
	tw.note(op)
	tw.mergeParams(params)
	return nil
}

// DropTable removes the table's rows, change feed, history and state at
// commit. A later CreateTable in the same txn starts a new table at version 0.
func (t *Txn) DropTable(tbl TableID) error {
	if err := t.alive(); err != nil {
		return err
	}
	tw := t.tableByID(tbl)
	if tw.rewrite != nil {
		tw.rewrite.discard()
	}
	if tw.stage != nil {
		return errStagedRead(tbl)
	}
	*tw = tableWrites{id: tbl, info: TableInfo{ID: tbl}, st: tw.st, rows: newWriteSet(), truncated: true, dropped: true,
		indexLoaded: true, indexChanged: true}
	return nil
}

// TableVersion returns the table's current version as this txn's snapshot
// sees it (-1 when the table has no versions).
func (t *Txn) TableVersion(tbl TableID) (int64, error) {
	ps, ok, err := t.snapState(tbl)
	if err != nil || !ok {
		return -1, err
	}
	return ps.version, nil
}

// RowCount returns the number of rows of tbl as this txn's snapshot sees
// them (committed rows; the txn's own writes are not counted). It is kept
// per commit, for the refresh cost model (R-I6).
func (t *Txn) RowCount(tbl TableID) (int64, error) {
	ps, _, err := t.snapState(tbl)
	return ps.rowCount, err
}

func (t *Txn) snapState(tbl TableID) (persistedState, bool, error) {
	if err := t.alive(); err != nil {
		return persistedState{}, false, err
	}
	// Not through snapGet: a row value the caller holds (Get's) may live
	// in getBuf, and row writes read the state (their table's indexes).
	v, ok, err := t.snap.get(stateKey(tbl), nil)
	if !ok || err != nil {
		return persistedState{}, false, err
	}
	ps, err := decodeState(v)
	return ps, err == nil, err
}

// Meta key space: the catalog's (and refresh state's) keys, transactional
// with the same conflict rules as rows.

// PutMeta writes a meta key.
func (t *Txn) PutMeta(key, value []byte) error {
	if err := t.alive(); err != nil {
		return err
	}
	t.metaSet().Put(rowWrite{key: cloneBytes(key), value: cloneBytes(value)})
	return nil
}

// DeleteMeta deletes a meta key (deleting a missing key is not an error).
func (t *Txn) DeleteMeta(key []byte) error {
	if err := t.alive(); err != nil {
		return err
	}
	t.metaSet().Put(rowWrite{key: cloneBytes(key), del: true})
	return nil
}

// GetMeta reads a meta key. The value is valid until the next call.
func (t *Txn) GetMeta(key []byte) ([]byte, bool, error) {
	if err := t.alive(); err != nil {
		return nil, false, err
	}
	if t.meta != nil {
		if w, ok := t.meta.Get(key); ok {
			if w.del {
				return nil, false, nil
			}
			return w.value, true, nil
		}
	}
	t.keyBuf = metaKey(t.keyBuf[:0], key)
	return t.snapGet(t.keyBuf)
}

func (t *Txn) metaSet() *writeSet {
	if t.meta == nil {
		t.meta = newWriteSet()
	}
	return t.meta
}

// CheckUnchanged makes Commit fail with ErrSerialization if another
// transaction committed a write to the meta key after this one began (so
// DML conflicts with concurrent DDL of its table).
func (t *Txn) CheckUnchanged(key []byte) {
	if t.alive() != nil {
		return
	}
	if t.checks == nil {
		t.checks = make(map[string]struct{})
	}
	t.checks[string(metaKey(nil, key))] = struct{}{}
}

// WroteMeta reports whether the txn wrote or deleted a meta key.
func (t *Txn) WroteMeta() bool { return t.meta != nil && t.meta.Len() > 0 }

// ReadOnly reports whether Commit would write nothing.
func (t *Txn) ReadOnly() bool {
	if t.WroteMeta() {
		return false
	}
	for _, tw := range t.tables {
		if tw.rows.Len() > 0 || tw.stage != nil || tw.truncated || tw.created || tw.recorded || tw.vacuum || tw.indexChanged {
			return false
		}
	}
	return true
}

// WritesTable reports whether Commit would make a new version of tbl with
// row changes: rows written, truncated, created or dropped in this txn.
func (t *Txn) WritesTable(tbl TableID) bool {
	tw, ok := t.tables[tbl]
	return ok && (tw.rows.Len() > 0 || tw.stage != nil || tw.truncated || tw.created || tw.dropped)
}

// CommittedVersions reports, after a successful Commit, the new version of
// every table the commit versioned (-1 for a table it dropped).
func (t *Txn) CommittedVersions() map[TableID]int64 { return t.committed }
