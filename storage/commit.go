package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// The commit pipeline (doc.go, invariants 4–8, 11):
//
//  1. plan: per table, what the commit does (version or not, moved rows for
//     update pairing) and the keys to validate — no locks.
//  2. encode rows, change records and meta keys into one Pebble batch with the
//     versions the tables have now — no locks (optimistic).
//  3. under commitMu: validate (first committer wins, then a serializable
//     transaction's reads), re-encode if another commit took one of our
//     versions meanwhile, add history entries and table states, then,
//     under visMu, ApplyNoSyncWait and seq++.
//  4. update in-memory table state, conflict bookkeeping and the write
//     history, release the mutex, SyncWait (commits in flight share one
//     WAL fsync), notify.

// tablePlan is what a commit does to one table.
type tablePlan struct {
	tw *tableWrites
	st *tableState

	// rows is the key-space id the snapshot holds the table's rows and
	// index entries under (generation.go): the commit deletes and writes
	// them there.
	rows TableID

	makesVersion bool // a new version: rows, Truncate, CreateTable or RecordVersion
	wipes        bool // Truncate (not Drop): snapshot rows get delete records
	writesRows   bool
	// moved: rows that an Update moved to another key, by row id; paired
	// when the row existed in the snapshot (an update, not an insert).
	moved map[int64]*movedRow

	version       int64   // assigned version (valid when makesVersion)
	ins, upd, del int64   // net row changes, counted while encoding
	newRows       TableID // rows id after the commit (encodeVersions)
	dels          int     // rows deleted that the snapshot has (deleted.go)
	rowCount      int64   // rows after the commit (valid when makesVersion)
	ts            time.Time
}

type movedRow struct {
	key, value []byte
	paired     bool
}

// into is the key space the commit writes the table's rows and index
// entries into: the snapshot's, but for a table dropped and created again
// in the transaction, whose previous key space the commit deletes — on
// some engines after the commit, in parts (delKeySpace) — and whose new
// rows therefore go under its own id. That one is empty: a table's own
// key space is deleted within the commit that leaves it.
func (p *tablePlan) into() TableID {
	switch {
	case p.tw.freshRows != 0:
		return p.tw.freshRows // a key space of its own (freshRowsFor)
	case p.tw.dropped && p.tw.created:
		return p.tw.id
	}
	return p.rows
}

// nextVersion is the version the commit would give the table now.
func (p *tablePlan) nextVersion() int64 {
	switch {
	case !p.makesVersion:
		return -1
	case p.tw.dropped:
		return 0
	}
	return p.st.version.Load() + 1
}

func (p *tablePlan) pairedMove(rowID int64) bool {
	m := p.moved[rowID]
	return m != nil && m.paired
}

// conflictKey is a key the commit writes and must validate.
type conflictKey struct {
	tbl    TableID
	key    []byte // row key within tbl, entry key within index idx, or meta key
	meta   bool
	index  bool // a unique index entry (index.go)
	idx    IndexID
	insert bool // a key absent from the snapshot
}

func (k conflictKey) pebbleKey(dst []byte) []byte {
	switch {
	case k.meta:
		return metaKey(dst, k.key)
	case k.index:
		return indexKey(dst, k.tbl, k.idx, k.key)
	}
	return rowKey(dst, k.tbl, k.key)
}

// batchEntryOverhead is a generous per-entry allowance for the batch's
// record header (kind, varint lengths) and the row and change-record
// headers, for sizing the batch up front.
const batchEntryOverhead = 40

// plan also returns an estimate of the batch's size in bytes, so it is
// allocated once instead of grown by doubling (each growth copies it).
// It looks at the commit's context as encode does (commitCheck): planning
// a commit of millions of writes takes a while too.
func (t *Txn) plan() ([]*tablePlan, []conflictKey, int, error) {
	var plans []*tablePlan
	var keys []conflictKey
	size := 0
	for _, id := range t.order {
		tw := t.tables[id]
		p := &tablePlan{tw: tw, st: tw.st}
		p.makesVersion = tw.created || tw.recorded || (tw.truncated && !tw.dropped) || tw.rows.Len() > 0 || tw.stage != nil
		if !p.makesVersion && !tw.dropped && !tw.vacuum && !tw.indexChanged {
			continue // NoteOperation only
		}
		var err error
		if p.rows, err = t.rowsOf(id); err != nil {
			return nil, nil, 0, err
		}
		p.wipes = tw.truncated && !tw.dropped
		p.writesRows = tw.rows.Len() > 0 || p.wipes || tw.stage != nil
		perRow := 1
		if tw.info.ChangeDataFeed {
			perRow = 2 // the row and its change record
		}
		if !tw.truncated {
			keys = slices.Grow(keys, tw.rows.Len())
		}
		for w := range tw.rows.All() {
			if err := t.commitCheck(); err != nil {
				return nil, nil, 0, err
			}
			size += perRow * (tablePrefixLen + batchEntryOverhead + len(w.key) + len(w.value) + len(w.origValue))
			if w.moved && !w.del {
				if p.moved == nil {
					p.moved = make(map[int64]*movedRow)
				}
				p.moved[w.rowID] = &movedRow{key: w.key, value: w.value}
			}
			// Rows of a truncated/dropped table are covered by the
			// table-level checks; fresh row-id keys cannot collide.
			if w.del && w.origExists {
				p.dels++
			}
			if !tw.truncated && !w.fresh && (w.origExists || !w.del) {
				keys = append(keys, conflictKey{tbl: id, key: w.key, insert: !w.origExists})
			}
		}
		for _, ix := range tw.idx {
			size += ix.entries.Len() * (indexPrefixLen + batchEntryOverhead)
		}
		keys = indexConflictKeys(keys, tw)
		if t.reads != nil {
			t.noteUnwrittenInserts(tw)
		}
		pairMoves(p.moved, tw.rows)
		plans = append(plans, p)
	}
	if t.meta != nil {
		for w := range t.meta.All() {
			keys = append(keys, conflictKey{key: w.key, meta: true})
			size += 1 + batchEntryOverhead + len(w.key) + len(w.value)
		}
	}
	keys = t.lockConflictKeys(keys)
	return plans, keys, size, nil
}

// Commit makes the transaction's writes durable and visible atomically. It
// returns nil only after the WAL holding them is fsync'd. Errors:
// ErrSerialization, *DuplicateKeyError, I/O errors. The txn ends either way.
func (t *Txn) Commit() error { return t.CommitContext(context.Background()) }

// CommitContext is Commit that gives up, writing nothing, when ctx ends
// before the commit point (Pebble applying the batch): building the batch
// of a large transaction takes seconds (a full rewrite of a 5M-row view),
// and it checks ctx every commitCheckEvery writes and once more just
// before the batch is applied. After that point the commit completes.
func (t *Txn) CommitContext(ctx context.Context) error {
	if err := t.alive(); err != nil {
		t.finish()
		return err
	}
	defer t.finish()
	t.commitCtx, t.commitN = ctx, 0
	defer func() { t.commitCtx = nil }()
	db := t.db
	if t.hasStage() {
		if err := t.spillAll(); err != nil {
			return err
		}
		if db.pdb == nil { // no ingest: new generations (stage_generation.go)
			if err := t.stageAsGenerations(ctx); err != nil {
				return err
			}
		}
	}
	if db.pdb == nil { // big writes: new generations too (write_generation.go)
		if err := t.writesAsGenerations(ctx); err != nil {
			return err
		}
	}
	if err := t.sealRewrites(); err != nil {
		return err
	}
	if t.ReadOnly() && !t.exclusiveLocks() {
		if len(t.checks) == 0 && len(t.locks) == 0 {
			return nil
		}
		db.commitMu.Lock()
		defer db.commitMu.Unlock()
		return db.validate(t, nil, nil)
	}
	plans, keys, size, err := t.plan()
	if err != nil {
		return err
	}
	if t.reads != nil {
		t.noteOpenReads()
	}

	ingest := t.ingestIndexes(plans) // built indexes as SSTables (index_ingest.go)
	staged := ingest > 0 || t.hasStage()
	b := db.eng.newBatch(size)
	defer b.close()
	guess := make([]int64, len(plans))
	for i, p := range plans {
		guess[i] = p.nextVersion()
		p.version = guess[i]
	}
	if err := t.encode(b, plans); err != nil {
		return err
	}
	var sc *stagedCommit // the SSTables of staged inserts and built indexes (stage.go)
	if staged {
		if sc, err = t.buildStaged(ctx, plans); err != nil {
			return err
		}
		defer sc.cleanup()
	}

	if err := db.writable(b.size() + ingest); err != nil {
		return err
	}
	db.commitMu.Lock()
	if db.closed.Load() {
		db.commitMu.Unlock()
		return ErrClosed
	}
	if err := db.logFailure(); err != nil {
		// Read again under commitMu: no batch may reach Pebble once its
		// log failed (log_watch.go).
		db.commitMu.Unlock()
		return err
	}
	if err := db.validate(t, plans, keys); err != nil {
		db.commitMu.Unlock()
		return err
	}
	if t.reads != nil {
		if err := db.validateReads(t); err != nil {
			db.commitMu.Unlock()
			return err
		}
	}
	if err := ctx.Err(); err != nil { // the last moment to give up
		db.commitMu.Unlock()
		return err
	}
	if db.sharedStore {
		if err := t.syncStates(plans); err != nil {
			db.commitMu.Unlock()
			return err
		}
	}
	stale := false
	for i, p := range plans {
		if v := p.nextVersion(); v != guess[i] {
			stale, p.version = true, v
		}
		if r := p.tw.rewrite; r != nil && p.version != r.version {
			// Its rows carry the version it expected as their commit
			// version.
			db.commitMu.Unlock()
			return serializationError("table %d got a new version from a concurrent transaction while it was rewritten", p.tw.id)
		}
		if p.tw.stage != nil && p.version != guess[i] {
			// Its staged rows carry the version it expected.
			db.commitMu.Unlock()
			return serializationError("table %d got a new version from a concurrent transaction while its inserts were staged", p.tw.id)
		}
	}
	if stale { // a concurrent commit to one of our tables took the version
		b.reset()
		if err := t.encode(b, plans); err != nil {
			db.commitMu.Unlock()
			return err
		}
	}
	events := t.encodeVersions(b, plans, db.clock().UTC().Truncate(time.Microsecond))
	if len(t.leases) > 0 {
		db.leases.mu.Lock()
		defer db.leases.mu.Unlock()
		if err := t.checkLeases(b); err != nil {
			db.commitMu.Unlock()
			return err
		}
	}
	if sc != nil {
		if err := sc.prepare(b.(*pebbleBatch).b); err != nil {
			db.commitMu.Unlock()
			return err
		}
	}

	db.deleted.forgetSet(plans)
	rewrites := markRewrites(db, plans)
	if len(rewrites) > 0 {
		killPoint("rewrite-switch")
	}
	if sc != nil {
		// The staged keys are not in the write sets forgetSet read.
		db.deleted.forgetAll()
		killPoint("stage-ingest")
	}
	db.visMu.Lock()
	if sc != nil {
		if err = sc.ingest(); err == nil {
			killPoint("stage-ingested")
		}
	} else {
		if db.sharedStore {
			b.conflictSince(t.snap)
		}
		err = db.eng.commit(b)
	}
	if err == nil {
		db.seq++
		db.deleted.noteDeleted(plans, db.seq)
	}
	seq := db.seq
	db.visMu.Unlock()
	if err != nil {
		db.commitMu.Unlock()
		if !errors.Is(err, errEngineConflict) {
			// The engine may have applied it: the key spaces it gave
			// are left to start-up, which reads the state (endFresh).
			t.fresh = nil
		}
		var wf *WriteFailedError
		if errors.As(err, &wf) { // Pebble's commit pipeline gave up
			// The switch may be applied: its new content must stay
			// (a restart deletes it when it was not).
			for _, r := range rewrites {
				r.done = true
			}
			return err
		}
		if sc == nil {
			_ = b.wait()
		}
		return fmt.Errorf("storage: commit: %w", err)
	}
	applyPlans(plans, seq)
	t.committedFresh = true
	for _, r := range rewrites {
		r.done = true
	}
	if db.sharedStore && len(rewrites) > 0 {
		db.dropSharedShadows(rewrites)
	}
	if sc != nil {
		markStaged(plans, seq)
	}
	t.deregister()
	oldest, oldestSer := db.oldestActive(seq)
	if oldest < seq && len(keys) > 0 {
		db.conflicts.record(seq, conflictStrings(keys))
	}
	db.conflicts.prune(oldest)
	if oldestSer < seq {
		db.history.record(seq, plans)
	}
	db.history.prune(oldestSer)
	db.commitMu.Unlock()

	if sc == nil { // an ingest is durable when it returns
		err = b.wait()
	}
	if err != nil {
		err = db.logFailed(err)
		db.publish(seq, nil) // in order, but nobody hears of it: it failed
		return err
	}
	db.markDurable(seq)
	if len(rewrites) > 0 {
		killPoint("rewrite-switched") // durable, not yet acknowledged
	}
	db.snapAfterSync(seq)
	db.publish(seq, events)
	t.committed = make(map[TableID]int64, len(events))
	for _, ev := range events {
		t.committed[ev.Table] = ev.Version
	}
	return nil
}

func serializationError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSerialization, fmt.Sprintf(format, args...))
}

// validate applies first-committer-wins. Called under commitMu.
func (db *DB) validate(t *Txn, plans []*tablePlan, keys []conflictKey) error {
	begin := t.beginSeq
	for _, p := range plans {
		st, tw := p.st, p.tw
		switch {
		case st.dropSeq > begin:
			return serializationError("table %d was dropped by a concurrent transaction", tw.id)
		case tw.rows.Len() > 0 && !tw.truncated && st.wipeSeq > begin:
			return serializationError("table %d was truncated by a concurrent transaction", tw.id)
		case tw.stage != nil && (st.rowWriteSeq > begin || st.wipeSeq > begin):
			return serializationError("table %d was written by a concurrent transaction while this one staged inserts into it", tw.id)
		case p.wipes && st.rowWriteSeq > begin:
			return serializationError("table %d was written by a concurrent transaction", tw.id)
		case tw.created && !tw.dropped && st.version.Load() >= 0:
			return serializationError("table %d was created by a concurrent transaction", tw.id)
		case tw.indexBuilt && st.rowWriteSeq > begin:
			return serializationError("table %d was written by a concurrent transaction", tw.id)
		case tw.dropped && st.switchSeq > begin:
			return serializationError("table %d was rewritten by a concurrent transaction", tw.id)
		case (tw.indexChanged || tw.rows.Len() > 0 || tw.writesEntries() || tw.rewrite != nil || tw.stage != nil) && st.indexSeq > begin:
			return serializationError("the indexes of table %d were changed by a concurrent transaction", tw.id)
		}
	}
	last := db.conflicts.last
	if len(last) == 0 {
		return nil
	}
	var buf []byte
	for _, k := range keys {
		buf = k.pebbleKey(buf[:0])
		if last[string(buf)] <= begin {
			continue
		}
		if k.insert {
			// PostgreSQL reports a concurrent insert of the same key as a
			// unique violation, not a serialization failure.
			exists, err := db.latestHas(db.latestKey(k, buf))
			if err != nil {
				return err
			}
			if exists {
				return &DuplicateKeyError{Table: k.tbl, Index: k.idx, Key: cloneBytes(k.key)}
			}
			continue
		}
		if k.meta {
			return serializationError("meta key %q was written by a concurrent transaction", k.key)
		}
		if k.index {
			return serializationError("entry %x of index %d of table %d was written by a concurrent transaction", k.key, k.idx, k.tbl)
		}
		return serializationError("row %x of table %d was written by a concurrent transaction", k.key, k.tbl)
	}
	for k := range t.checks {
		if last[k] > begin {
			return serializationError("meta key %q was changed by a concurrent transaction", k[1:])
		}
	}
	return db.validateSharedLocks(t)
}

func (db *DB) latestHas(pkey []byte) (bool, error) {
	return db.eng.has(pkey)
}

func conflictStrings(keys []conflictKey) []string {
	out := make([]string, len(keys))
	var buf []byte
	for i, k := range keys {
		buf = k.pebbleKey(buf[:0])
		out[i] = string(buf)
	}
	return out
}

// encode writes rows, change records and meta keys with the plans' versions.
// It is deterministic (it reads only the txn and its snapshot), so it can be
// redone when a version changes.
func (t *Txn) encode(b engineBatch, plans []*tablePlan) error {
	for _, p := range plans {
		if err := t.encodeTable(b, p); err != nil {
			return err
		}
	}
	if t.meta != nil {
		for w := range t.meta.All() {
			t.keyBuf = metaKey(t.keyBuf[:0], w.key)
			var err error
			if w.del {
				err = b.del(t.keyBuf)
			} else {
				err = b.set(t.keyBuf, w.value)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *Txn) encodeTable(b engineBatch, p *tablePlan) error {
	tw := p.tw
	tbl := tw.id
	if tw.dropped {
		for _, prefix := range []byte{prefixCDF, prefixHistory} {
			s, e := tableSpan(prefix, tbl)
			del := b.delRange
			if !tw.created && t.db.pdb == nil {
				// Dropped for good: after the commit, in parts (a
				// later CreateTable of the id waits for it: createdRows).
				del = b.delDead
			}
			if err := del(s, e); err != nil {
				return err
			}
		}
		if err := delKeySpace(b, prefixRows, p.rows); err != nil {
			return err
		}
		if err := b.del(stateKey(tbl)); err != nil {
			return err
		}
	} else if p.wipes && tw.rewrite != nil {
		if err := delKeySpace(b, prefixRows, p.rows); err != nil { // the previous generation
			return err
		}
	} else if p.wipes && tw.freshRows != 0 {
		// The rows written after the Truncate go to a key space of
		// their own (freshRowsFor): this one is left behind.
		if err := delKeySpace(b, prefixRows, p.rows); err != nil {
			return err
		}
	} else if p.wipes {
		// The same key space gets the rows written after the Truncate.
		s, e := tableSpan(prefixRows, p.rows)
		if err := b.delRange(s, e); err != nil {
			return err
		}
	}
	if r := tw.rewrite; r != nil && !t.db.sharedStore {
		// The switch: the shadow becomes the table's content. (On a shared
		// store its marker goes after the commit: dropSharedShadows.)
		if err := b.del(shadowKey(r.rows)); err != nil {
			return err
		}
	}
	if tw.vacuum && !tw.dropped {
		s, _ := tableSpan(prefixCDF, tbl)
		if err := b.delRange(s, cdfKey(nil, tbl, tw.vacuumBelow, 0)); err != nil {
			return err
		}
		for _, slot := range tw.vacuumSlots {
			if err := b.delDead(slotSpan(tbl, slot)); err != nil {
				return err
			}
		}
	}
	if !p.makesVersion {
		return t.encodeIndexes(b, p)
	}
	// Change records (0x05), then rows (0x06), then index entries (0x07),
	// each in key order: a one-table commit's batch is then (nearly)
	// sorted, which makes Pebble's sort of a large batch cheap. Range
	// deletes come first, before anything they must not cover.
	if err := t.encodeChanges(b, p); err != nil {
		return err
	}
	for w := range tw.rows.All() {
		if err := t.commitCheck(); err != nil {
			return err
		}
		if err := t.encodeRow(b, p, &w); err != nil {
			return err
		}
	}
	return t.encodeIndexes(b, p)
}

// commitCheckEvery is how many writes a commit encodes between checks of
// its context.
const commitCheckEvery = 1 << 12

// commitCheck is the commit context's error, looked at every
// commitCheckEvery calls (a commit encodes millions of writes).
func (t *Txn) commitCheck() error {
	t.commitN++
	if t.commitN%commitCheckEvery != 0 || t.commitCtx == nil {
		return nil
	}
	return t.commitCtx.Err()
}

// encodeChanges counts the table's net row changes and, with the feed on,
// writes their change records.
func (t *Txn) encodeChanges(b engineBatch, p *tablePlan) (err error) {
	tw := p.tw
	tbl := tw.id
	p.ins, p.upd, p.del = 0, 0, 0
	if st := tw.stage; st != nil {
		p.ins = st.n // its write set holds nothing (spillAll)
	}
	if r := tw.rewrite; r != nil && r.counted {
		p.ins, p.upd, p.del = r.ins, r.upd, r.del // a big write's (write_generation.go)
		return nil
	}
	if r := tw.rewrite; r != nil {
		// A rewrite keeps no change records (its version has the feed
		// off): every row of the snapshot goes, every new one comes,
		// but for those it kept as they were (stage_generation.go).
		n, err := t.RowCount(tbl)
		if err != nil {
			return err
		}
		p.ins, p.del = r.n-r.kept, n-r.kept
		return nil
	}
	ce := changeEncoder{t: t, b: b, p: p, cdf: tw.info.ChangeDataFeed}
	if p.wipes && tw.freshRows != 0 && ce.cdf {
		// A delete record per row the table had: too many for one
		// transaction. They go, with the rest of the version's records,
		// to the slot of the new key space, written and synced before
		// the commit, which names the slot (stage_generation.go).
		ce.toSlot(changeSlot(tw.freshRows))
		defer func() {
			if ferr := ce.endSlot(); err == nil {
				err = ferr
			}
		}()
	}

	// A truncated table: every snapshot row is deleted; merged in key order
	// with the rows written after the Truncate.
	var pit engineIter
	pValid := false
	if p.wipes {
		s, e := tableSpan(prefixRows, p.rows)
		var err error
		if pit, err = t.snap.newIter(s, e); err != nil {
			return err
		}
		defer pit.Close()
		pValid = pit.First()
	}
	for w := range tw.rows.All() {
		for pValid && bytes.Compare(pit.Key()[tablePrefixLen:], w.key) <= 0 {
			if err := t.commitCheck(); err != nil {
				return err
			}
			if err := ce.snapshotDelete(pit); err != nil {
				return err
			}
			pValid = pit.Next()
		}
		if err := t.commitCheck(); err != nil {
			return err
		}
		if err := ce.diff(&w); err != nil {
			return err
		}
	}
	for pValid {
		if err := t.commitCheck(); err != nil {
			return err
		}
		if err := ce.snapshotDelete(pit); err != nil {
			return err
		}
		pValid = pit.Next()
	}
	if pit != nil {
		return pit.Error()
	}
	return ce.err
}

// encodeRow writes the row (header with the new commit version) or its
// deletion.
func (t *Txn) encodeRow(b engineBatch, p *tablePlan, w *rowWrite) error {
	if w.del {
		if !w.origExists || p.tw.truncated {
			return nil // nothing on disk to delete (or the range delete covers it)
		}
		t.keyBuf = rowKey(t.keyBuf[:0], p.into(), w.key)
		return b.del(t.keyBuf)
	}
	hl := rowHeaderLen(w.rowID, p.version)
	k, v := b.setDeferred(tablePrefixLen+len(w.key), hl+len(w.value))
	appendTablePrefix(k[:0], prefixRows, p.into())
	copy(k[tablePrefixLen:], w.key)
	n := putRowHeader(v, w.rowID, p.version)
	copy(v[n:], w.value)
	return b.finishDeferred()
}

// changeEncoder computes a table's net row changes (snapshot → final state,
// matched by row id) in key order, counts them and, with the feed on,
// writes them as change records.
type changeEncoder struct {
	t    *Txn
	b    engineBatch
	p    *tablePlan
	cdf  bool
	seq  uint32
	kbuf []byte
	vbuf []byte
	err  error
	// slot: the records go under this change slot, in b, a batch of
	// their own written whenever it is full (encodeChanges); 0: under
	// the version, in the commit's batch.
	slot int64
}

func (ce *changeEncoder) diff(w *rowWrite) error {
	p := ce.p
	if w.origExists {
		if !w.del && w.rowID == w.origRowID {
			return ce.update(w, w.key, w.value)
		}
		var err error
		if m := p.moved[w.origRowID]; m != nil && m.paired {
			err = ce.update(w, m.key, m.value)
		} else {
			err = ce.delete(w)
		}
		if err != nil {
			return err
		}
	}
	if !w.del && !(w.moved && p.pairedMove(w.rowID)) {
		return ce.insert(w)
	}
	return nil
}

func (ce *changeEncoder) origValue(w *rowWrite) ([]byte, error) {
	if w.origLoaded {
		return w.origValue, nil
	}
	r, ok, err := ce.t.snapRow(ce.p.tw.id, w.key)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("storage: snapshot row %x of table %d vanished", w.key, ce.p.tw.id)
	}
	return r.Value, nil
}

func (ce *changeEncoder) insert(w *rowWrite) error {
	ce.p.ins++
	return ce.put(recInsert, w.rowID, w.key, w.value, nil, nil)
}

func (ce *changeEncoder) delete(w *rowWrite) error {
	ce.p.del++
	if !ce.cdf {
		return nil
	}
	old, err := ce.origValue(w)
	if err != nil {
		return err
	}
	return ce.put(recDelete, w.origRowID, w.key, old, nil, nil)
}

func (ce *changeEncoder) update(w *rowWrite, newKey, newValue []byte) error {
	ce.p.upd++
	if !ce.cdf {
		return nil
	}
	old, err := ce.origValue(w)
	if err != nil {
		return err
	}
	return ce.put(recUpdate, w.origRowID, w.key, old, newKey, newValue)
}

func (ce *changeEncoder) snapshotDelete(pit engineIter) error {
	ce.p.del++
	if !ce.cdf {
		return nil
	}
	v, err := pit.ValueAndErr()
	if err != nil {
		return err
	}
	rowID, _, val, err := parseRowValue(v)
	if err != nil {
		return err
	}
	return ce.put(recDelete, rowID, pit.Key()[tablePrefixLen:], val, nil, nil)
}

func (ce *changeEncoder) put(typ byte, rowID int64, key, value, newKey, newValue []byte) error {
	if !ce.cdf {
		return nil
	}
	version := ce.p.version
	if ce.slot != 0 {
		version = ce.slot
	}
	ce.kbuf = cdfKey(ce.kbuf[:0], ce.p.tw.id, version, ce.seq)
	ce.seq++
	ce.vbuf = appendChangeRecord(ce.vbuf[:0], typ, rowID, key, value, newKey, newValue)
	if err := ce.b.set(ce.kbuf, ce.vbuf); err != nil {
		return err
	}
	if ce.slot != 0 && ce.b.size() >= rewriteBatchBytes {
		if err := ce.t.db.eng.write(ce.b, false); err != nil {
			return err
		}
		ce.b.reset()
	}
	return nil
}

// toSlot makes the encoder write its records under slot, in batches of
// its own written whenever full, instead of into the commit's batch.
func (ce *changeEncoder) toSlot(slot int64) {
	ce.slot = slot
	ce.b = ce.t.db.eng.newBatch(0)
}

// endSlot writes the last batch of a slot's records, synced (every one
// before it is durable with it).
func (ce *changeEncoder) endSlot() error {
	defer ce.b.close()
	return ce.t.db.eng.write(ce.b, true)
}

// encodeVersions adds history entries and table states; called under
// commitMu with versions final. It returns the commit's events.
func (t *Txn) encodeVersions(b engineBatch, plans []*tablePlan, now time.Time) []CommitEvent {
	var events []CommitEvent
	for _, p := range plans {
		tw, st := p.tw, p.st
		tbl := tw.id
		vacuumed := st.vacuumedBelow
		last := st.lastTS
		if tw.dropped {
			vacuumed, last = 0, time.Time{}
		}
		if tw.vacuum && !tw.dropped {
			vacuumed = max(vacuumed, tw.vacuumBelow)
		}
		ps := persistedState{version: st.version.Load(), nextRowID: st.nextRowID.Load(), lastTS: last, vacuumedBelow: vacuumed, rowCount: st.rowCount, indexes: st.indexes}
		// Where the rows live after the commit: the latest state's key
		// space (a commit that writes rows has the snapshot's: a
		// concurrent rewrite conflicts), the table's own for one dropped
		// and created again (into), or the rewrite's.
		p.newRows = TableID(st.rowsID.Load())
		if tw.created || tw.freshRows != 0 {
			p.newRows = p.into()
		}
		if tw.rewrite != nil {
			p.newRows = tw.rewrite.rows
		}
		if p.newRows != tbl {
			ps.rowsID = p.newRows
		}
		if tw.indexChanged {
			// validate made sure no concurrent commit changed the set.
			ps.indexes = tw.indexSet
		}
		if p.makesVersion {
			base := st.rowCount
			if tw.dropped {
				base = 0
			}
			p.rowCount = max(base+p.ins-p.del, 0)
			ps.rowCount = p.rowCount
			ts := now
			if !ts.After(last) { // strictly increasing per table (R-T4)
				ts = last.Add(time.Microsecond)
			}
			p.ts = ts
			h := HistoryEntry{
				Version: p.version, Timestamp: ts, Operation: p.operation(), Params: tw.params,
				RowsInserted: p.ins, RowsUpdated: p.upd, RowsDeleted: p.del,
				ChangeDataFeed: tw.info.ChangeDataFeed && (tw.rewrite == nil || tw.rewrite.slot != 0),
				Rewritten:      tw.rewrite != nil && tw.rewrite.slot == 0,
			}
			if tw.rewrite != nil {
				h.ChangesAt = tw.rewrite.slot
			} else if p.wipes && tw.freshRows != 0 && tw.info.ChangeDataFeed {
				h.ChangesAt = changeSlot(tw.freshRows)
			}
			_ = b.set(versionKey(prefixHistory, tbl, p.version), encodeHistory(&h))
			ps.version, ps.lastTS = p.version, ts
			events = append(events, CommitEvent{Table: tbl, Version: p.version})
		} else if tw.dropped {
			events = append(events, CommitEvent{Table: tbl, Version: -1})
			continue // state key deleted in encodeTable
		}
		_ = b.set(stateKey(tbl), encodeState(ps))
	}
	return events
}

// applyPlans updates the in-memory table states after the batch applied
// (under commitMu).
func applyPlans(plans []*tablePlan, seq uint64) {
	for _, p := range plans {
		tw, st := p.tw, p.st
		if tw.dropped {
			st.version.Store(-1)
			st.lastTS = time.Time{}
			st.vacuumedBelow = 0
			st.dropSeq, st.wipeSeq = seq, seq
		}
		if p.makesVersion {
			st.version.Store(p.version)
			st.lastTS = p.ts
			st.rowCount = p.rowCount
			st.rowsID.Store(uint32(p.newRows))
		} else if tw.dropped {
			st.rowCount = 0
			st.rowsID.Store(uint32(tw.id))
		}
		if tw.rewrite != nil {
			st.switchSeq = seq
		}
		if p.wipes {
			st.wipeSeq = seq
		}
		if p.writesRows {
			st.rowWriteSeq = seq
		}
		if tw.vacuum && !tw.dropped {
			st.vacuumedBelow = max(st.vacuumedBelow, tw.vacuumBelow)
		}
		if tw.indexChanged {
			st.indexes = append([]IndexID(nil), tw.indexSet...)
			st.indexSeq = seq
		}
	}
}
