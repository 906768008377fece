package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
)

// Generations: a table rewritten in bounded memory (doc.go, "Generations").
//
// A table's rows (0x06) and index entries (0x07) live under a key-space id,
// its rows id: the table's own id until a rewrite, then an id of its own
// (FirstRowsID and up) that the table's state names. A rewrite
// (Txn.RewriteRows) writes the table's new content under a fresh rows id
// in Pebble batches of about rewriteBatchBytes, applied outside the
// transaction as they fill: nothing reads that key space, as no state
// names it. The transaction's commit then switches the state to the new
// rows id and deletes the old key space by ranges, in its one batch. So
//
//   - a snapshot resolves the rows id from the state it sees (Txn.rowsOf):
//     readers see the old content or the new, never a mix; the old key
//     space stays readable to the snapshots that name it, and Pebble
//     reclaims it once none is left (its range deletion is compacted);
//   - a shadow key (0x01 "shadow" | rows id → table id), written with the
//     first batch and deleted by the switch, marks an unfinished rewrite:
//     start-up deletes every marked key space (reclaimShadows), so after a
//     crash at any point the previous content stands and the shadow goes;
//     a rewrite that is rolled back deletes its own;
//   - the switch counts as a TRUNCATE for the conflict rules (first
//     committer wins with every concurrent row write of the table, and a
//     serializable reader of the table fails), and makes one version whose
//     change records are not kept: its history entry has the feed off and
//     Rewritten set, so a reader of its changes gets a
//     *ChangesUnavailableError (a dependent view recomputes in full).

// FirstRowsID is the first key-space id rewrites give out; the caller's
// table ids must stay below it.
const FirstRowsID TableID = 1 << 31

// rewriteBatchBytes is how much a rewrite buffers before it applies a
// batch: what it holds of the new content at any time.
var rewriteBatchBytes = 16 << 20

var (
	globalRowsIDKey = []byte{prefixGlobal, 'r', 'o', 'w', 's', 'i', 'd'}
	shadowPrefix    = []byte{prefixGlobal, 's', 'h', 'a', 'd', 'o', 'w'}
)

func shadowKey(rows TableID) []byte {
	return binary.BigEndian.AppendUint32(append([]byte(nil), shadowPrefix...), uint32(rows))
}

// rowsOf is the key-space id of tbl's rows and index entries in this
// transaction's snapshot.
func (t *Txn) rowsOf(tbl TableID) (TableID, error) {
	shared := t.db.sharedStore
	if !shared && !t.db.anyRewritten.Load() {
		return tbl, nil
	}
	if id, ok := t.rowsIDs[tbl]; ok {
		return id, nil
	}
	id := tbl
	// The flag is set before a switch becomes visible: clear now, the
	// snapshot (older than now) has the table under its own id. On a
	// shared store another process's switch sets no flag here: the
	// snapshot's state is read for every table.
	if shared || t.db.table(tbl).rewritten.Load() {
		ps, ok, err := t.snapState(tbl)
		if err != nil {
			return 0, err
		}
		if ok && ps.rowsID != 0 {
			id = ps.rowsID
		}
	}
	if t.rowsIDs == nil {
		t.rowsIDs = make(map[TableID]TableID)
	}
	t.rowsIDs[tbl] = id
	return id, nil
}

func errRewriting(tbl TableID) error {
	return fmt.Errorf("storage: table %d is being rewritten in this transaction: its rows are written through the Rewrite", tbl)
}

// errRewriteRead: the transaction rewriting a table reads it. Its new
// rows are not in its write set; rather than answer without them, the
// read fails (callers rewrite only where they do not read back).
func errRewriteRead(tbl TableID) error {
	return fmt.Errorf("storage: table %d is being rewritten in this transaction and cannot be read in it", tbl)
}

// rowsKey is the Pebble key of tbl's row key as this snapshot stores it.
func (t *Txn) rowsKey(dst []byte, tbl TableID, key []byte) ([]byte, error) {
	id, err := t.rowsOf(tbl)
	if err != nil {
		return dst, err
	}
	return rowKey(dst, id, key), nil
}

// Rewrite is a table's new content being written as a new generation
// (RewriteRows). Its writes are not in the transaction's write set, so
// they take no memory beyond one batch; the transaction's commit makes
// them the table's rows. Used by one goroutine, the transaction's.
type Rewrite struct {
	t       *Txn
	tw      *tableWrites
	info    TableInfo
	rows    TableID // the new key space
	version int64   // the version the switch must get (the rows' commit version)
	b       engineBatch
	n       int64 // rows written
	kept    int64 // of them, rows of the snapshot kept as they were (stage_generation.go)
	// slot: where the change records of a staged generation go
	// (changeSlot, stage_generation.go); 0 for a rewrite, which has none.
	slot   int64
	cdfSeq uint32
	// counted: the commit records ins, upd and del as the version's row
	// changes (a big write made a generation, write_generation.go).
	counted       bool
	ins, upd, del int64
	uniq          []int64 // unique-form entries written, by index of info.Indexes
	buf           []byte
	err           error // sticky
	sealed        bool  // every batch applied and synced, unique indexes checked
	done          bool  // switched, or its outcome unknown: never discarded
	chunks        int
}

// RewriteRows starts writing the whole content of info's table anew: the
// rows the transaction (its snapshot) sees are gone for it, as after
// Truncate, and the Rewrite's Insert adds the new ones. The table's later
// row writes in this transaction fail; its commit switches the table to
// the new content atomically (or fails, writing nothing, and the new
// content is deleted). info must list the table's indexes.
func (t *Txn) RewriteRows(info TableInfo) (*Rewrite, error) {
	if err := t.alive(); err != nil {
		return nil, err
	}
	if info.ID >= FirstRowsID {
		return nil, fmt.Errorf("storage: table id %d is not below %d", info.ID, FirstRowsID)
	}
	tw := t.table(info)
	if tw.rewrite != nil {
		return nil, fmt.Errorf("storage: table %d is already being rewritten", info.ID)
	}
	if err := t.checkIndexes(tw); err != nil {
		return nil, err
	}
	if tw.indexChanged {
		return nil, fmt.Errorf("storage: table %d changed its indexes in this transaction and cannot be rewritten in it", info.ID)
	}
	rows, err := t.db.allocRowsID(info.ID)
	if err != nil {
		return nil, err
	}
	version := tw.st.version.Load() + 1
	if t.db.sharedStore {
		// This process's state may be behind another's commits: the
		// version after the snapshot's (a commit after the snapshot
		// fails the switch anyway).
		ps, ok, err := t.snapState(info.ID)
		if err != nil {
			return nil, err
		}
		if ok {
			version = max(version, ps.version+1)
		}
	}
	if tw.dropped {
		version = 0
	}
	r := &Rewrite{t: t, tw: tw, info: info, rows: rows, version: version, b: t.db.eng.newBatch(0),
		uniq: make([]int64, len(info.Indexes))}
	tw.rows = newWriteSet()
	tw.truncated = true
	for _, ix := range tw.idx {
		ix.entries = newWriteSet()
	}
	tw.rewrite = r
	tw.note("TRUNCATE")
	return r, nil
}

// allocRowsID hands out a key-space id and marks it as a shadow, durably,
// before anything is written under it.
func (db *DB) allocRowsID(tbl TableID) (TableID, error) {
	db.rowsIDMu.Lock()
	defer db.rowsIDMu.Unlock()
	if err := db.writable(64); err != nil {
		return 0, err
	}
	if db.sharedStore {
		return db.allocSharedRowsID(tbl)
	}
	id := db.nextRowsID
	b := db.eng.newBatch(0)
	defer b.close()
	_ = b.set(globalRowsIDKey, binary.BigEndian.AppendUint32(nil, uint32(id+1)))
	_ = b.set(shadowKey(id), db.shadowValue(tbl))
	if err := db.eng.write(b, true); err != nil {
		return 0, err
	}
	db.nextRowsID = id + 1
	return id, nil
}

// shadowValue is a shadow key's value: the table, and on a shared store
// the node of the process writing the rewrite, whose lease tells another
// process's start-up that the rewrite is live (shared_nodes.go).
func (db *DB) shadowValue(tbl TableID) []byte {
	v := binary.BigEndian.AppendUint32(nil, uint32(tbl))
	if db.sharedStore {
		v = binary.BigEndian.AppendUint64(v, uint64(db.node))
	}
	return v
}

// shadow is a shadow key read back: the key space, its table and the node
// that wrote it (0: unknown, or Pebble's one process).
type shadow struct {
	key  []byte
	rows TableID
	tbl  TableID
	node int64
}

func decodeShadow(k, v []byte) (shadow, error) {
	if len(k) != len(shadowPrefix)+4 || (len(v) != 4 && len(v) != 12) {
		return shadow{}, fmt.Errorf("storage: corrupt shadow key %x (value %x)", k, v)
	}
	sh := shadow{key: cloneBytes(k), rows: TableID(binary.BigEndian.Uint32(k[len(shadowPrefix):])), tbl: TableID(binary.BigEndian.Uint32(v))}
	if len(v) == 12 {
		sh.node = int64(binary.BigEndian.Uint64(v[4:]))
	}
	return sh, nil
}

// allocSharedRowsID is allocRowsID on a shared store: the counter is read
// from a snapshot and written by a batch that conflicts with another
// process's allocation after it (shared.go).
func (db *DB) allocSharedRowsID(tbl TableID) (TableID, error) {
	var id TableID
	err := db.retryShared(func(snap engineSnapshot, b engineBatch) (bool, error) {
		id = FirstRowsID
		v, found, err := snap.get(globalRowsIDKey, nil)
		if err != nil {
			return false, err
		}
		if found && len(v) == 4 {
			id = max(id, TableID(binary.BigEndian.Uint32(v)))
		}
		_ = b.set(globalRowsIDKey, binary.BigEndian.AppendUint32(nil, uint32(id+1)))
		return true, b.set(shadowKey(id), db.shadowValue(tbl))
	})
	if err != nil {
		return 0, err
	}
	db.nextRowsID = id + 1
	return id, nil
}

// Insert adds a row to the new content: key must be new to it (the
// caller's keys are distinct; a repeated key would replace the row).
// A unique index the rows repeat a key of fails the commit with a
// *DuplicateKeyError.
func (r *Rewrite) Insert(key, value []byte) error {
	if r.err != nil {
		return r.err
	}
	return r.insertRow(key, r.tw.st.allocRowID(), r.version, value)
}

// insertRow writes a row of the new content with the row id and commit
// version it is to have: a new row's (Insert), or one the snapshot holds
// and the new content keeps as it is (stage_generation.go).
func (r *Rewrite) insertRow(key []byte, rowID, version int64, value []byte) error {
	if r.err != nil {
		return r.err
	}
	if err := r.t.alive(); err != nil {
		return err
	}
	if r.sealed || r.done {
		return errors.New("storage: write to a finished rewrite")
	}
	hl := rowHeaderLen(rowID, version)
	k, v := r.b.setDeferred(tablePrefixLen+len(key), hl+len(value))
	appendTablePrefix(k[:0], prefixRows, r.rows)
	copy(k[tablePrefixLen:], key)
	n := putRowHeader(v, rowID, version)
	copy(v[n:], value)
	if err := r.b.finishDeferred(); err != nil {
		r.err = err
		return err
	}
	for i := range r.info.Indexes {
		e, err := entryOf(&r.info.Indexes[i], key, value)
		if err != nil {
			r.err = err
			return err
		}
		if e.uniq {
			r.uniq[i]++
		}
		r.buf = indexKey(r.buf[:0], r.rows, r.info.Indexes[i].ID, e.key)
		if err := r.b.set(r.buf, key); err != nil {
			r.err = err
			return err
		}
	}
	r.n++
	if r.b.size() >= rewriteBatchBytes {
		return r.flush(false)
	}
	return nil
}

// Flush applies the rows buffered so far (the caller's chunk ends; a
// batch is applied anyway once it holds rewriteBatchBytes).
func (r *Rewrite) Flush() error {
	if r.err != nil {
		return r.err
	}
	if r.sealed || r.done {
		return errors.New("storage: flush of a finished rewrite")
	}
	return r.flush(false)
}

// Rows is how many rows the rewrite has written.
func (r *Rewrite) Rows() int64 { return r.n }

// flush applies the batch so far (synced: the last one, which makes every
// earlier one durable with it).
func (r *Rewrite) flush(sync bool) error {
	db := r.t.db
	if r.b.empty() && !sync {
		return nil
	}
	if err := db.writable(r.b.size()); err != nil {
		r.err = err
		return err
	}
	if err := db.eng.write(r.b, sync); err != nil {
		r.err = err
		return err
	}
	r.b.reset()
	r.chunks++
	killPoint("rewrite-chunk")
	return nil
}

// Seal applies the last batch and checks the unique indexes: a new row
// that repeats a unique key fails with a *DuplicateKeyError naming the
// index. The commit seals a rewrite its caller did not. After it the
// rewrite takes no more rows.
func (r *Rewrite) Seal() error {
	if r.err != nil || r.sealed {
		return r.err
	}
	if err := r.flush(true); err != nil {
		return err
	}
	for i, ii := range r.info.Indexes {
		if !ii.Unique || r.uniq[i] == 0 {
			continue
		}
		if err := r.checkUnique(&r.info.Indexes[i]); err != nil {
			r.err = err
			return err
		}
	}
	r.sealed = true
	return nil
}

// checkUnique finds a key of a unique index two new rows share: their
// entries are one Pebble key, so the index holds fewer entries than rows.
func (r *Rewrite) checkUnique(ii *IndexInfo) error {
	db := r.t.db
	s, e := indexSpan(r.rows, ii.ID)
	it, err := db.eng.newIter(s, e)
	if err != nil {
		return err
	}
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	if err := it.Close(); err != nil {
		return err
	}
	if n == r.n {
		return nil
	}
	// Some entry names another row than one of those that call for it.
	s, e = tableSpan(prefixRows, r.rows)
	rit, err := db.eng.newIter(s, e)
	if err != nil {
		return err
	}
	defer rit.Close()
	for ok := rit.First(); ok; ok = rit.Next() {
		rv, err := rit.ValueAndErr()
		if err != nil {
			return err
		}
		_, _, val, err := parseRowValue(rv)
		if err != nil {
			return err
		}
		key := rit.Key()[tablePrefixLen:]
		ent, err := entryOf(ii, key, val)
		if err != nil {
			return err
		}
		if !ent.uniq {
			continue
		}
		got, found, err := db.eng.get(indexKey(nil, r.rows, ii.ID, ent.key), nil)
		if err != nil {
			return err
		}
		if !found || !bytes.Equal(got, key) {
			return &DuplicateKeyError{Table: r.info.ID, Index: ii.ID, Key: cloneBytes(ent.key)}
		}
	}
	return fmt.Errorf("storage: rewrite of table %d wrote %d rows but %d entries of index %d", r.info.ID, r.n, n, ii.ID)
}

// discard deletes what the rewrite wrote (the transaction ended without
// switching). A crash before it is applied leaves the shadow key, and
// start-up deletes it all.
func (r *Rewrite) discard() {
	if r.done {
		return
	}
	r.done = true
	r.b.close()
	db := r.t.db
	if db.closed.Load() || db.writable(64) != nil {
		return
	}
	b := db.eng.newBatch(0)
	defer b.close()
	deleteKeySpace(b, r.info.ID, r.rows)
	_ = b.del(shadowKey(r.rows))
	if err := db.eng.write(b, false); err != nil {
		db.log.Warn("could not delete an abandoned rewrite; the next start-up will", "table", r.info.ID, "err", err)
	}
}

// deleteKeySpace deletes every row and index entry under rows id id, a
// generation of table tbl never switched to, and the change records of
// its slot (stage_generation.go).
func deleteKeySpace(b engineBatch, tbl, id TableID) {
	for _, prefix := range []byte{prefixRows, prefixIndex} {
		_ = delKeySpace(b, prefix, id)
	}
	if id >= FirstRowsID {
		_ = b.delDead(slotSpan(tbl, changeSlot(id)))
	}
}

// delKeySpace deletes the keys under prefix of rows id id that a commit
// leaves behind (a dropped table's, a rewritten table's previous
// generation, a shadow's). A rewrite's id (FirstRowsID and up) is never
// given out again, so its key space is dead: the engine may delete it
// after the commit, in parts (engineBatch.delDead). A table's own id is
// not: a table re-created under it (CREATE OR REPLACE) writes there
// again, so its deletion stays in the commit.
func delKeySpace(b engineBatch, prefix byte, id TableID) error {
	s, e := tableSpan(prefix, id)
	if id >= FirstRowsID {
		return b.delDead(s, e)
	}
	return b.delRange(s, e)
}

// sealRewrites seals the transaction's rewrites before its commit.
func (t *Txn) sealRewrites() error {
	for _, id := range t.order {
		if r := t.tables[id].rewrite; r != nil {
			if err := r.Seal(); err != nil {
				return err
			}
		}
	}
	return nil
}

// endRewrites discards the rewrites a transaction that ends did not switch.
func (t *Txn) endRewrites() {
	for _, tw := range t.tables {
		if tw.rewrite != nil {
			tw.rewrite.discard()
		}
	}
}

// markRewrites flags the tables a commit switches, before its batch is
// applied (rowsOf trusts a clear flag), and forgets the recently deleted
// keys: they name rows by key within the table, and the new content may
// hold any of them. Called under commitMu.
func markRewrites(db *DB, plans []*tablePlan) []*Rewrite {
	var rs []*Rewrite
	for _, p := range plans {
		if r := p.tw.rewrite; r != nil {
			p.st.rewritten.Store(true)
			db.anyRewritten.Store(true)
			rs = append(rs, r)
		} else if p.tw.freshRows != 0 {
			p.st.rewritten.Store(true) // it lives under another id than its own
			db.anyRewritten.Store(true)
		}
	}
	if len(rs) > 0 {
		db.deleted.forgetAll()
	}
	return rs
}

// latestKey is the Pebble key of conflict key k in the latest state
// (buf is its key by the table's own id).
func (db *DB) latestKey(k conflictKey, buf []byte) []byte {
	if k.meta || !db.anyRewritten.Load() {
		return buf
	}
	rows := TableID(db.table(k.tbl).rowsID.Load())
	if rows == k.tbl {
		return buf
	}
	if k.index {
		return indexKey(nil, rows, k.idx, k.key)
	}
	return rowKey(nil, rows, k.key)
}

// applyDirect applies a batch outside the commit pipeline (a rewrite's own
// key space and markers).
func (db *DB) applyDirect(b *pebble.Batch, opts *pebble.WriteOptions) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = db.applyPanic(r)
		}
	}()
	return db.pdb.Apply(b, opts)
}

// loadRewrites reads the next rows id and deletes the key spaces of
// unfinished rewrites (start-up). A shadow whose key space the table's
// state names is a finished rewrite whose marker outlived its switch (a
// shared store deletes it after the switch commits): only the marker
// goes. On a shared store a shadow of a live node (one that holds its
// lease) is another process's rewrite under way and stays.
func (db *DB) loadRewrites() error {
	db.nextRowsID = FirstRowsID
	v, found, err := db.eng.get(globalRowsIDKey, nil)
	switch {
	case err != nil:
		return err
	case found && len(v) == 4:
		db.nextRowsID = max(FirstRowsID, TableID(binary.BigEndian.Uint32(v)))
	}
	it, err := db.eng.newIter(shadowPrefix, PrefixEnd(shadowPrefix))
	if err != nil {
		return err
	}
	var shadows []shadow
	for ok := it.First(); ok; ok = it.Next() {
		sv, err := it.ValueAndErr()
		var sh shadow
		if err == nil {
			sh, err = decodeShadow(it.Key(), sv)
		}
		if err != nil {
			_ = it.Close()
			return err
		}
		shadows = append(shadows, sh)
	}
	if err := it.Close(); err != nil {
		return err
	}
	if len(shadows) == 0 || db.readOnly != nil {
		return nil
	}
	if db.sharedStore {
		return db.reclaimSharedShadows(shadows)
	}
	b := db.eng.newBatch(0)
	defer b.close()
	for _, sh := range shadows {
		if st := db.tables[sh.tbl]; st == nil || TableID(st.rowsID.Load()) != sh.rows {
			deleteKeySpace(b, sh.tbl, sh.rows)
		}
		_ = b.del(sh.key)
	}
	db.log.Info("deleted the new content of rewrites a crash interrupted", "rewrites", len(shadows))
	return db.eng.write(b, true)
}

// reclaimSharedShadows is loadRewrites' reclaim on a shared store, one
// shadow at a time, each in a transaction that conflicts with writes
// after its snapshot: it reads the table's state there (a switch another
// process committed since this one loaded makes it a finished rewrite),
// and writes the state key back unchanged (or deletes it, when absent),
// so that the rewrite's own switch, if its process is only paused, fails
// on that key instead of naming the deleted key space.
func (db *DB) reclaimSharedShadows(shadows []shadow) error {
	reclaimed := 0
	for _, sh := range shadows {
		var deleted bool
		err := db.retryShared(func(snap engineSnapshot, b engineBatch) (bool, error) {
			deleted = false
			if _, found, err := snap.get(sh.key, nil); err != nil || !found {
				return false, err // gone: reclaimed or switched meanwhile
			}
			sv, found, err := snap.get(stateKey(sh.tbl), nil)
			if err != nil {
				return false, err
			}
			if found {
				ps, err := decodeState(sv)
				if err != nil {
					return false, err
				}
				if ps.rowsID == sh.rows {
					return true, b.del(sh.key) // finished: the marker outlived the switch
				}
			}
			if sh.node != 0 {
				if alive, err := db.nodeAlive(snap, sh.node); err != nil || alive {
					return false, err
				}
			}
			if found {
				_ = b.set(stateKey(sh.tbl), sv)
			} else {
				_ = b.del(stateKey(sh.tbl))
			}
			deleteKeySpace(b, sh.tbl, sh.rows)
			deleted = true
			return true, b.del(sh.key)
		})
		if err != nil {
			return fmt.Errorf("storage: reclaim the rewrite of table %d (key space %d): %w", sh.tbl, sh.rows, err)
		}
		if deleted {
			reclaimed++
		}
	}
	if reclaimed > 0 {
		db.log.Info("deleted the new content of rewrites whose process ended before their switch", "rewrites", reclaimed)
	}
	return nil
}

// dropSharedShadows deletes the markers of rewrites a commit switched, on
// a shared store: outside the switch's own transaction, whose snapshot is
// older than the markers (writing them there would conflict with their
// own creation). A marker left by a crash just before this is deleted by
// the next start-up, which finds the state naming its key space.
func (db *DB) dropSharedShadows(rs []*Rewrite) {
	b := db.eng.newBatch(0)
	defer b.close()
	for _, r := range rs {
		_ = b.del(shadowKey(r.rows))
	}
	if err := db.eng.write(b, false); err != nil {
		db.log.Warn("could not delete the markers of finished rewrites; the next start-up will", "err", err)
	}
}

// Kill points: a test of crashes names one (MVSERVER_KILL_POINT=name:n,
// read at start-up by SetKillPointFromEnv) and the process kills itself
// with SIGKILL the n-th time it passes there: "rewrite-chunk" after each
// batch of a rewrite, "rewrite-switch" just before its switch is applied;
// "stage-spill" after each run of staged inserts is written, "stage-ingest"
// just before their commit's ingest, "stage-ingested" just after it
// (stage.go).
var kill struct {
	name  string
	after int64
	n     atomic.Int64
}

// SetKillPoint arms kill point name to fire at its n-th pass (tests of
// crashes; n <= 0 disarms).
func SetKillPoint(name string, n int64) {
	kill.name, kill.after = name, n
	kill.n.Store(0)
}

// SetKillPointFromEnv arms the kill point MVSERVER_KILL_POINT names
// ("name:n"), if any.
func SetKillPointFromEnv() {
	v := os.Getenv("MVSERVER_KILL_POINT")
	if v == "" {
		return
	}
	var n int64
	i := bytes.LastIndexByte([]byte(v), ':')
	if i < 0 {
		return
	}
	if _, err := fmt.Sscan(v[i+1:], &n); err != nil {
		return
	}
	SetKillPoint(v[:i], n)
}

func killPoint(name string) {
	if kill.after <= 0 || kill.name != name {
		return
	}
	if kill.n.Add(1) == kill.after {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
}

// freshRowsFor gives a table that tw's transaction creates or
// truncates a key space of its own, as a rewrite's (a rows id, marked by
// a shadow key until the transaction ends), on an engine that deletes
// dead key spaces after the commit (TiKV). A table created under its own
// id would share it with the deletion of a table dropped before under
// that id (a CREATE OR REPLACE, or a storage caller's later CreateTable),
// which may still be under way; one truncated in place would delete its
// rows within the commit. So every key space a DROP, a TRUNCATE or a
// rewrite leaves behind is dead, and deleted after the commit in parts.
// Pebble deletes within the commit and keeps tables under their own ids.
func (t *Txn) freshRowsFor(tw *tableWrites, create bool) error {
	if t.db.pdb != nil || tw.freshRows != 0 {
		return nil
	}
	// A DROP of the id before deletes its history and change records
	// after its commit, in parts: that must be done before they are
	// written again.
	if f, ok := t.db.eng.(interface{ finishDead(start, end []byte) error }); ok && create && !tw.dropped {
		for _, prefix := range []byte{prefixCDF, prefixHistory} {
			if err := f.finishDead(tableSpan(prefix, tw.id)); err != nil {
				return err
			}
		}
	}
	id, err := t.db.allocRowsID(tw.id)
	if err != nil {
		return err
	}
	tw.freshRows = id
	t.fresh = append(t.fresh, freshSpace{tbl: tw.id, rows: id})
	return nil
}

// freshSpace is a key space freshRowsFor gave a table.
type freshSpace struct{ tbl, rows TableID }

// endFresh deletes the shadow keys of the key spaces freshRowsFor gave
// when the transaction ends. A committed table's state names its key
// space by then; a transaction that did not commit wrote nothing there
// but the change records of a truncate (encodeChanges), deleted with it.
// A crash before this leaves the shadow for start-up, which tells the two
// cases apart by the state.
func (t *Txn) endFresh() {
	if len(t.fresh) == 0 {
		return
	}
	db := t.db
	if db.closed.Load() || db.writable(64) != nil {
		return
	}
	b := db.eng.newBatch(0)
	defer b.close()
	for _, f := range t.fresh {
		if !t.committedFresh {
			deleteKeySpace(b, f.tbl, f.rows)
		}
		_ = b.del(shadowKey(f.rows))
	}
	if err := db.eng.write(b, false); err != nil {
		db.log.Warn("could not delete the markers of new key spaces; the next start-up will", "err", err)
	}
	t.fresh = nil
}
