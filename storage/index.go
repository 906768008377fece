package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
)

// Secondary indexes (SPEC R-T10). Storage keeps the entries of a table's
// indexes in their own key space and maintains them itself, in the same
// transaction as the rows: every row write (Insert, Update, Delete and
// their Row forms, Truncate, DropTable) updates the entries of every index
// the TableInfo lists, and a write that lists other indexes than the table
// has fails (ErrIndexMismatch). So no caller can forget an index, and a
// commit holds rows and entries in one Pebble batch: after a crash both are
// there or neither.
//
// An entry is keyed, within its index, by the caller's encoding of the
// row's key columns (IndexKeyFunc), followed by the row key — except in a
// unique index, where an entry whose columns take part in uniqueness is
// keyed by the columns alone. Two rows with equal columns then write the
// same Pebble key: the second insert finds it (DuplicateKeyError naming the
// index), and two concurrent transactions inserting it conflict like two
// inserts of one row key (first committer wins, the second gets
// DuplicateKeyError). The value of every entry is the row key.
//
// Entries are not rows: they have no change records, no history metrics
// and do not count in RowCount.

// IndexID names a secondary index of a table. The caller allocates ids
// (the catalog uses its object ids); storage only needs them unique within
// a table.
type IndexID uint32

// IndexKeyFunc computes a row's entry in an index from the row's value
// (the caller's bytes): it appends the order-preserving encoding of the
// index's key columns to dst. The encoding of a complete key must never be
// a proper prefix of another's (each column's encoding delimits itself).
// unique reports whether the entry takes part in the index's uniqueness:
// false when a key column is NULL and the index treats NULLs as distinct.
type IndexKeyFunc func(dst, value []byte) (key []byte, unique bool, err error)

// IndexInfo describes one secondary index for storage to maintain.
type IndexInfo struct {
	ID     IndexID
	Unique bool
	Key    IndexKeyFunc
}

// indexKey is the Pebble key of an entry.
func indexKey(dst []byte, tbl TableID, idx IndexID, entry []byte) []byte {
	dst = binary.BigEndian.AppendUint32(appendTablePrefix(dst, prefixIndex, tbl), uint32(idx))
	return append(dst, entry...)
}

const indexPrefixLen = tablePrefixLen + 4

// indexSpan is [start, end) of every entry of one index.
func indexSpan(tbl TableID, idx IndexID) (start, end []byte) {
	start = indexKey(nil, tbl, idx, nil)
	return start, PrefixEnd(start)
}

// indexWrites are a transaction's entry changes in one index: entry key →
// rowWrite (value: the row key; uniq: the key is the columns alone).
type indexWrites struct {
	entries *writeSet
	// fresh: built by this transaction, so nothing of it is on disk.
	fresh bool
	// ingest: the commit writes the entries as an SSTable of their own,
	// not through its batch (index_ingest.go).
	ingest bool
	// bounds answer unique-entry probes of the snapshot (probe.go).
	bounds spanBounds
}

func (tw *tableWrites) indexWrites(id IndexID) *indexWrites {
	if ix := tw.idx[id]; ix != nil {
		return ix
	}
	if tw.idx == nil {
		tw.idx = make(map[IndexID]*indexWrites)
	}
	ix := &indexWrites{entries: newWriteSet()}
	tw.idx[id] = ix
	return ix
}

// writesEntries reports whether the txn changes entries of the table.
func (tw *tableWrites) writesEntries() bool {
	for _, ix := range tw.idx {
		if ix.entries.Len() > 0 {
			return true
		}
	}
	return false
}

// sortedIndexes lists the index ids with entry changes in id order, so a
// commit's batch is deterministic.
func (tw *tableWrites) sortedIndexes() []IndexID {
	ids := make([]IndexID, 0, len(tw.idx))
	for id := range tw.idx {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// loadIndexSet reads the table's indexes as the snapshot has them, once
// per transaction and table.
func (t *Txn) loadIndexSet(tw *tableWrites) error {
	if tw.indexLoaded {
		return nil
	}
	ps, _, err := t.snapState(tw.id)
	if err != nil {
		return err
	}
	tw.indexSet = append([]IndexID(nil), ps.indexes...)
	tw.indexLoaded = true
	return nil
}

// checkIndexes fails a row write whose TableInfo does not list exactly the
// table's indexes: its entries would be wrong.
func (t *Txn) checkIndexes(tw *tableWrites) error {
	if tw.rewrite != nil {
		return errRewriting(tw.id)
	}
	if err := t.loadIndexSet(tw); err != nil {
		return err
	}
	given := tw.info.Indexes
	ok := len(given) == len(tw.indexSet)
	for i := 0; ok && i < len(given); i++ {
		ok = slices.Contains(tw.indexSet, given[i].ID) && given[i].Key != nil
	}
	if ok {
		tw.written = tw.info
		return nil
	}
	ids := make([]IndexID, len(given))
	for i, g := range given {
		ids[i] = g.ID
	}
	return fmt.Errorf("%w: a write to table %d names indexes %v, the table has %v", ErrIndexMismatch, tw.id, ids, tw.indexSet)
}

// indexEntry is one entry a row write adds or removes.
type indexEntry struct {
	key  []byte // within the index
	uniq bool   // the key is the columns alone (unique form)
}

func entryOf(ii *IndexInfo, rowKey, value []byte) (indexEntry, error) {
	k, uniq, err := ii.Key(nil, value)
	if err != nil {
		return indexEntry{}, err
	}
	uniq = uniq && ii.Unique
	if !uniq {
		k = append(k, rowKey...)
	}
	return indexEntry{key: k, uniq: uniq}, nil
}

// entryChange is what one row write does to one index.
type entryChange struct {
	id         IndexID
	ix         *indexWrites
	old, new   indexEntry
	hasOld     bool
	hasNew     bool
	rewireOnly bool // same unique key, the row moved: only the value changes
}

// maintainIndexes applies a row write to the table's indexes (tw.info):
// the row at oldKey with oldValue (hasOld) becomes the row at newKey with
// newValue (hasNew). Every unique entry it would add is checked first, so
// on a violation nothing has changed.
func (t *Txn) maintainIndexes(tw *tableWrites, oldKey, oldValue []byte, hasOld bool, newKey, newValue []byte, hasNew bool) error {
	infos := tw.info.Indexes
	if len(infos) == 0 {
		return nil
	}
	changes := make([]entryChange, 0, len(infos))
	for i := range infos {
		ii := &infos[i]
		c := entryChange{id: ii.ID, ix: tw.indexWrites(ii.ID), hasOld: hasOld, hasNew: hasNew}
		var err error
		if hasOld {
			if c.old, err = entryOf(ii, oldKey, oldValue); err != nil {
				return err
			}
		}
		if hasNew {
			if c.new, err = entryOf(ii, newKey, newValue); err != nil {
				return err
			}
		}
		if hasOld && hasNew && bytes.Equal(c.old.key, c.new.key) {
			if !c.new.uniq || bytes.Equal(oldKey, newKey) {
				continue // the entry does not change
			}
			c.rewireOnly = true
		} else if hasNew && c.new.uniq {
			taken, err := t.entryTaken(tw, c.ix, ii.ID, c.new.key)
			if err != nil {
				return err
			}
			if taken {
				return &DuplicateKeyError{Table: tw.id, Index: ii.ID, Key: c.new.key}
			}
		}
		changes = append(changes, c)
	}
	for i := range changes {
		c := &changes[i]
		if c.hasOld && !c.rewireOnly {
			t.deleteEntry(tw, c.ix, c.old)
		}
	}
	for i := range changes {
		c := &changes[i]
		if c.hasNew {
			putEntry(c.ix, c.new, newKey)
		}
	}
	return nil
}

// entryTaken reports whether a unique entry key holds a row as this
// transaction sees it.
func (t *Txn) entryTaken(tw *tableWrites, ix *indexWrites, id IndexID, key []byte) (bool, error) {
	if w, ok := ix.entries.Get(key); ok {
		return !w.del, nil
	}
	if tw.truncated || ix.fresh {
		return false, nil
	}
	rows, err := t.rowsOf(tw.id)
	if err != nil {
		return false, err
	}
	t.keyBuf = indexKey(t.keyBuf[:0], rows, id, key)
	taken, err := t.snapHasIn(&ix.bounds, func() ([]byte, []byte) { return indexSpan(rows, id) }, t.keyBuf)
	if taken && t.reads != nil {
		// The write fails on what the snapshot holds (ON CONFLICT acts on
		// it): a read. An absent entry is written, and first committer
		// wins covers it. Read sets name entries by the table's own id.
		t.readPoint(tw.id, indexKey(nil, tw.id, id, key))
	}
	return taken, err
}

func (t *Txn) deleteEntry(tw *tableWrites, ix *indexWrites, e indexEntry) {
	if w, ok := ix.entries.Get(e.key); ok {
		w.del, w.value = true, nil
		ix.entries.Put(w)
		return
	}
	// Not written by this txn: the entry of a snapshot row.
	ix.entries.Put(rowWrite{key: e.key, del: true, uniq: e.uniq, origExists: !tw.truncated && !ix.fresh})
}

func putEntry(ix *indexWrites, e indexEntry, rowKey []byte) {
	if w, ok := ix.entries.Get(e.key); ok {
		w.del, w.value, w.uniq = false, cloneBytes(rowKey), e.uniq
		ix.entries.Put(w)
		return
	}
	ix.entries.Put(rowWrite{key: e.key, value: cloneBytes(rowKey), uniq: e.uniq})
}

// DropIndex removes index idx of tbl and its entries at commit (DROP
// INDEX). Later row writes of the transaction must not list it.
func (t *Txn) DropIndex(tbl TableID, idx IndexID) error {
	if err := t.alive(); err != nil {
		return err
	}
	tw := t.tableByID(tbl)
	if err := t.loadIndexSet(tw); err != nil {
		return err
	}
	i := slices.Index(tw.indexSet, idx)
	if i < 0 {
		return fmt.Errorf("storage: table %d has no index %d", tbl, idx)
	}
	tw.indexSet = slices.Delete(tw.indexSet, i, i+1)
	if ix := tw.idx[idx]; ix == nil || !ix.fresh {
		tw.droppedIdx = append(tw.droppedIdx, idx)
	}
	delete(tw.idx, idx)
	tw.indexChanged = true
	return nil
}

// Indexes lists the table's indexes as this transaction sees them.
func (t *Txn) Indexes(tbl TableID) ([]IndexID, error) {
	if err := t.alive(); err != nil {
		return nil, err
	}
	if tw := t.tables[tbl]; tw != nil {
		if err := t.loadIndexSet(tw); err != nil {
			return nil, err
		}
		return slices.Clone(tw.indexSet), nil
	}
	ps, _, err := t.snapState(tbl)
	return slices.Clone(ps.indexes), err
}

// GetUnique returns the row whose entry in unique index idx is keyed by
// key (the columns alone: no NULL, or NULLs not distinct), as this
// transaction sees it: a point lookup without an iterator.
func (t *Txn) GetUnique(tbl TableID, idx IndexID, key []byte) (Row, bool, error) {
	if err := t.alive(); err != nil {
		return Row{}, false, err
	}
	tw := t.tables[tbl]
	var ix *indexWrites
	if tw != nil {
		if err := tw.unreadable(); err != nil {
			return Row{}, false, err
		}
		ix = tw.idx[idx]
	}
	var rowKey []byte
	if ix != nil {
		if w, ok := ix.entries.Get(key); ok {
			if w.del {
				return Row{}, false, nil
			}
			rowKey = w.value
		}
	}
	if rowKey == nil {
		if (tw != nil && tw.truncated) || (ix != nil && ix.fresh) {
			return Row{}, false, nil
		}
		rows, err := t.rowsOf(tbl)
		if err != nil {
			return Row{}, false, err
		}
		if t.reads != nil {
			t.readPoint(tbl, indexKey(nil, tbl, idx, key))
		}
		t.keyBuf = indexKey(t.keyBuf[:0], rows, idx, key)
		v, ok, err := t.snapGet(t.keyBuf)
		if !ok || err != nil {
			return Row{}, false, err
		}
		rowKey = cloneBytes(v) // Get reuses the buffer
	}
	r, ok, err := t.Get(tbl, rowKey)
	if err == nil && !ok {
		err = fmt.Errorf("storage: entry %x of index %d of table %d names no row", key, idx, tbl)
	}
	return r, ok, err
}

// IndexIterator walks the rows of a table in the order of one of its
// indexes: the entries with start <= entry key < end (their columns; nil:
// unbounded), each followed to its row. Own writes are seen as Scan sees
// them. The rows are fetched a batch of entries at a time (getRows: one
// snapshot iterator in row-key order per batch, not a Get per row);
// batches start small, so a scan that stops early reads few rows.
type IndexIterator struct {
	txn     *Txn
	tbl     TableID
	idx     IndexID
	entries *Iterator
	row     Row
	err     error

	batch     int      // entries per batch (doubles up to indexBatchMax)
	keys      [][]byte // the batch's row keys, in entry order
	kbuf      []byte   // their bytes
	rows      []Row
	found     []bool
	ends      []int // the end of each row key in kbuf
	pos       int   // next of rows to return
	exhausted bool  // no entry is left
	entryErr  error // the entries' error, returned after the batch
	mg        multiGet
}

// Index scans fetch rows in batches of indexBatchMin entries first, then
// twice as many each time up to indexBatchMax.
const (
	indexBatchMin = 16
	indexBatchMax = 256
)

// ScanIndex returns the rows of tbl whose entries in index idx lie in
// [start, end).
func (t *Txn) ScanIndex(tbl TableID, idx IndexID, start, end []byte) *IndexIterator {
	it := &IndexIterator{txn: t, tbl: tbl, idx: idx}
	ei := &Iterator{txn: t, strip: indexPrefixLen, meta: true}
	it.entries = ei
	it.mg.owner = ei
	if err := t.alive(); err != nil {
		ei.err, ei.done = err, true
		return it
	}
	if end != nil && bytes.Compare(start, end) >= 0 {
		ei.done = true
		return it
	}
	tw := t.tables[tbl]
	var ix *indexWrites
	if tw != nil {
		if err := tw.unreadable(); err != nil {
			ei.err, ei.done = err, true
			return it
		}
		ix = tw.idx[idx]
	}
	if (tw == nil || !tw.truncated) && (ix == nil || !ix.fresh) {
		rows, err := t.rowsOf(tbl)
		if err != nil {
			ei.err, ei.done = err, true
			return it
		}
		lower, upper := indexRange(rows, idx, start, end)
		if !ei.openPebble(lower, upper) {
			return it
		}
		// Read sets name entries by the table's own id.
		lower, upper = indexRange(tbl, idx, start, end)
		ei.trackReads(tbl, lower, upper)
	}
	if ix != nil && ix.entries.Len() > 0 {
		ei.openBuffer(ix.entries, start, end)
	}
	t.track(ei)
	return it
}

// indexRange is the Pebble key range of the entries of index idx of the
// table whose rows id is id with start <= entry key < end (nil end:
// unbounded).
func indexRange(id TableID, idx IndexID, start, end []byte) (lower, upper []byte) {
	lower = indexKey(nil, id, idx, start)
	if end != nil {
		upper = indexKey(nil, id, idx, end)
	} else {
		_, upper = indexSpan(id, idx)
	}
	return lower, upper
}

// Retarget points the iterator at the rows whose entries in index idx of
// tbl lie in [start, end), reusing its Pebble iterators (the entries' and
// the one its rows are fetched with): an index nested-loop join's probes
// then open none, and probes in key order walk each iterator forward
// through blocks it holds. It applies as Iterator.Retarget does: to an
// iterator of the same index that reads the snapshot alone and has not
// failed, while the transaction has no own writes of the index; otherwise
// it returns false and changes nothing, and the caller opens a new
// ScanIndex.
func (it *IndexIterator) Retarget(tbl TableID, idx IndexID, start, end []byte) bool {
	ei := it.entries
	if it.err != nil || it.entryErr != nil || it.tbl != tbl || it.idx != idx ||
		ei.closed || ei.err != nil || ei.pit == nil || ei.bnext != nil || ei.onRelease != nil {
		return false
	}
	if tw := it.txn.tables[tbl]; tw != nil {
		if tw.unreadable() != nil || tw.truncated {
			return false
		}
		if ix := tw.idx[idx]; ix != nil && (ix.fresh || ix.entries.Len() > 0) {
			return false
		}
	}
	span := func(id TableID, start, end []byte) ([]byte, []byte) { return indexRange(id, idx, start, end) }
	if !ei.retarget(tbl, start, end, span) {
		return false
	}
	it.batch, it.pos, it.exhausted = 0, 0, false
	it.rows, it.keys, it.ends, it.found = it.rows[:0], it.keys[:0], it.ends[:0], it.found[:0]
	it.row = Row{}
	return true
}

// Next advances to the next row; false at the end or on error (see Err).
func (it *IndexIterator) Next() bool {
	if it.err != nil {
		return false
	}
	for it.pos >= len(it.rows) {
		if it.exhausted {
			// The entries' error comes after the rows read before it.
			it.err = it.entryErr
			return false
		}
		if !it.fill() {
			return false
		}
	}
	i := it.pos
	it.pos++
	if !it.found[i] {
		it.err = fmt.Errorf("storage: an entry of an index of table %d names row %x, which is not there", it.tbl, it.keys[i])
		return false
	}
	it.row = it.rows[i]
	return true
}

// fill reads the next batch of entries and fetches their rows; false on
// error (it.err).
func (it *IndexIterator) fill() bool {
	it.batch = min(max(2*it.batch, indexBatchMin), indexBatchMax)
	it.kbuf, it.keys, it.ends, it.pos = it.kbuf[:0], it.keys[:0], it.ends[:0], 0
	for len(it.ends) < it.batch {
		if !it.entries.Next() {
			it.exhausted, it.entryErr = true, it.entries.Err()
			break
		}
		it.kbuf = append(it.kbuf, it.entries.Row().Value...)
		it.ends = append(it.ends, len(it.kbuf))
	}
	start := 0
	for _, e := range it.ends {
		it.keys = append(it.keys, it.kbuf[start:e:e])
		start = e
	}
	n := len(it.keys)
	it.rows = slices.Grow(it.rows[:0], n)[:n]
	it.found = slices.Grow(it.found[:0], n)[:n]
	if n == 0 {
		return true
	}
	if err := it.txn.getRows(&it.mg, it.tbl, it.keys, it.rows, it.found); err != nil {
		it.err = err
		return false
	}
	return true
}

// HasIndexEntry reports whether index idx of tbl has an entry in [start,
// end) as this transaction sees it, reading no row: a semi or anti join's
// probe (sql/plan/key_probe.go).
func (t *Txn) HasIndexEntry(tbl TableID, idx IndexID, start, end []byte) (bool, error) {
	it := t.ScanIndex(tbl, idx, start, end)
	found := it.entries.Next()
	err := it.Close()
	return found && err == nil, err
}

// Row returns the current row; its slices are valid until Next.
func (it *IndexIterator) Row() Row { return it.row }

// Err returns the error that stopped the iteration, if any.
func (it *IndexIterator) Err() error { return it.err }

// Close releases the iterator and returns Err.
func (it *IndexIterator) Close() error {
	if err := it.entries.Close(); err != nil && it.err == nil {
		it.err = err
	}
	return it.err
}

// indexConflictKeys adds the unique-form entries a commit writes to its
// conflict keys; the other entries hold their row key, so the rows'
// conflicts cover them.
func indexConflictKeys(keys []conflictKey, tw *tableWrites) []conflictKey {
	if tw.truncated {
		return keys
	}
	for _, id := range tw.sortedIndexes() {
		ix := tw.idx[id]
		if ix.fresh {
			continue
		}
		for w := range ix.entries.All() {
			if w.uniq && (w.origExists || !w.del) {
				keys = append(keys, conflictKey{tbl: tw.id, idx: id, index: true, key: w.key, insert: !w.origExists})
			}
		}
	}
	return keys
}

// encodeIndexes writes a table's index changes into the batch: spans of
// dropped indexes (of a wiped or dropped table: every index) are deleted,
// then entries written.
func (t *Txn) encodeIndexes(b engineBatch, p *tablePlan) error {
	tw := p.tw
	tbl := p.rows     // the snapshot's key space (generation.go)
	if tw.truncated { // Truncate or DropTable: every entry on disk goes
		var err error
		if tw.dropped || tw.rewrite != nil || tw.freshRows != 0 { // a key space left behind (commit.go's encodeTable)
			err = delKeySpace(b, prefixIndex, tbl)
		} else {
			s, e := tableSpan(prefixIndex, tbl)
			err = b.delRange(s, e)
		}
		if err != nil {
			return err
		}
	} else {
		for _, id := range tw.droppedIdx {
			s, e := indexSpan(tbl, id)
			if err := b.delRange(s, e); err != nil {
				return err
			}
		}
	}
	for _, id := range tw.sortedIndexes() {
		ix := tw.idx[id]
		if ix.ingest {
			continue
		}
		onDisk := !tw.truncated && !ix.fresh
		for w := range ix.entries.All() {
			if err := t.commitCheck(); err != nil {
				return err
			}
			t.keyBuf = indexKey(t.keyBuf[:0], p.into(), id, w.key)
			var err error
			switch {
			case !w.del:
				err = b.set(t.keyBuf, w.value)
			case onDisk:
				err = b.del(t.keyBuf)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// VerifyIndex checks that index idx of tbl holds exactly the entries the
// table's rows call for, as this transaction sees them (a full scan of
// both). Tests and consistency checks use it.
func (t *Txn) VerifyIndex(tbl TableID, idx IndexInfo) error {
	want := map[string]string{}
	rows := t.Scan(tbl, nil, nil)
	for rows.Next() {
		r := rows.Row()
		e, err := entryOf(&idx, r.Key, r.Value)
		if err != nil {
			rows.Close()
			return err
		}
		if _, dup := want[string(e.key)]; dup {
			rows.Close()
			return fmt.Errorf("storage: rows of table %d repeat the unique key %x of index %d", tbl, e.key, idx.ID)
		}
		want[string(e.key)] = string(r.Key)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	it := t.ScanIndex(tbl, idx.ID, nil, nil)
	defer it.Close()
	ents := it.entries
	for ents.Next() {
		e := ents.Row()
		rk, ok := want[string(e.Key)]
		if !ok {
			return fmt.Errorf("storage: index %d of table %d has entry %x no row calls for", idx.ID, tbl, e.Key)
		}
		if rk != string(e.Value) {
			return fmt.Errorf("storage: entry %x of index %d of table %d names row %x, not %x", e.Key, idx.ID, tbl, e.Value, rk)
		}
		delete(want, string(e.Key))
	}
	if err := ents.Err(); err != nil {
		return err
	}
	for k, rk := range want {
		return fmt.Errorf("storage: index %d of table %d lacks entry %x of row %x (and %d more)", idx.ID, tbl, k, rk, len(want)-1)
	}
	return nil
}
