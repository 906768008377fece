package storage

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Staged writes: a big insert in bounded memory (doc.go, "Staged
// writes").
//
// A transaction that allows staging (Txn.AllowStaging: one autocommit
// INSERT, COPY or CREATE TABLE AS) keeps a table's inserts in its write
// set until they pass the DB's stage threshold; then it writes them,
// sorted, as a run file under <dir>/tmp/storage-stage (rows: key →
// row id and value; each index: entry → row key) and empties the write
// set. Its commit merges the runs into SSTables, in key order, with the
// version the table is expected to get: the rows, their change records
// (with the feed on) and each index's entries; the rest of the commit
// (table states, history entries, meta keys, other tables' writes) is
// written as SSTables too, split around those, and one Pebble ingest
// makes them all visible at one sequence number. So
//
//   - snapshots older than the ingest do not see it, newer ones see all
//     of it: readers see all or nothing;
//   - a crash before the ingest leaves only files under the stage
//     directory, which start-up deletes; the ingest itself is atomic
//     (one version edit);
//   - the commit counts as a TRUNCATE for the conflict rules (like a
//     rewrite's switch): it fails when a concurrent commit wrote the
//     table's rows or gave it a new version, and a concurrent
//     transaction that writes the table's rows (or read it,
//     serializable) fails after it. The staged keys are never held as
//     conflict keys;
//   - keys repeated between runs (a primary key, a unique index's
//     columns) are found by the merge and fail the commit with a
//     *DuplicateKeyError; keys the snapshot holds were refused by
//     Insert's probe, as before;
//   - the transaction cannot read the table's rows once they are staged
//     (the statement does not read its target after writing; a
//     transaction block never stages).

// DefaultStageRows is the default stage threshold: a table's buffered
// inserts past this many rows are written to a run.
const DefaultStageRows = 1 << 18

// stageDirName is the stage directory's path under the data directory.
const stageDirName = "tmp/storage-stage"

// stagedTable is what a transaction has staged of one table's inserts.
type stagedTable struct {
	rows []string             // run files of rows, in the order written
	idx  map[IndexID][]string // run files of each index's entries
	n    int64                // rows staged
}

// stageState is the DB's stage configuration and file naming.
type stageState struct {
	threshold int // rows; <= 0: never stage
	dir       string
	fs        vfs.FS
	files     atomic.Uint64
	popts     *pebble.Options
}

// AllowStaging lets this transaction write the inserts of a table past
// the DB's stage threshold to disk instead of holding them (the caller
// reads none of those tables afterwards; reads of a staged table fail).
// The SQL layer calls it for autocommit INSERT, COPY and CREATE TABLE AS.
// A serializable transaction never stages.
func (t *Txn) AllowStaging() {
	if t.reads == nil {
		t.staging = true
	}
}

// Staged reports how many rows of tbl this transaction holds in runs.
func (t *Txn) Staged(tbl TableID) int64 {
	if tw := t.tables[tbl]; tw != nil && tw.stage != nil {
		return tw.stage.n
	}
	return 0
}

// ErrStagedRead: a transaction read or changed rows of a table whose
// inserts it staged (AllowStaging).
var ErrStagedRead = errors.New("storage: the table's inserts are staged on disk in this transaction")

func errStagedRead(tbl TableID) error {
	return fmt.Errorf("%w: table %d cannot be read or changed in it", ErrStagedRead, tbl)
}

// unreadable is the error of a read of tw's rows in its transaction: it
// is being rewritten or its inserts are staged.
func (tw *tableWrites) unreadable() error {
	switch {
	case tw.rewrite != nil:
		return errRewriteRead(tw.id)
	case tw.stage != nil:
		return errStagedRead(tw.id)
	}
	return nil
}

// maybeStage writes tw's inserts to a run when they pass the threshold.
func (t *Txn) maybeStage(tw *tableWrites) error {
	s := &t.db.stage
	if !t.staging || s.threshold <= 0 || tw.rows.Len() < s.threshold || tw.noStage {
		return nil
	}
	if !tw.stageable() {
		tw.noStage = true
		return nil
	}
	return t.spill(tw)
}

// stageable: every write tw holds is an insert of a key the snapshot does
// not have, and the table is neither truncated, rewritten, dropped nor
// changing its indexes (those keep the in-memory path).
func (tw *tableWrites) stageable() bool {
	if tw.truncated || tw.dropped || tw.rewrite != nil || tw.indexChanged || tw.indexBuilt {
		return false
	}
	for w := range tw.rows.All() {
		if w.del || w.moved || w.origExists {
			return false
		}
	}
	for _, ix := range tw.idx {
		for w := range ix.entries.All() {
			if w.del {
				return false
			}
		}
	}
	return true
}

// spill writes tw's buffered rows and index entries as sorted runs and
// empties its write sets.
func (t *Txn) spill(tw *tableWrites) error {
	if tw.rows.Len() == 0 {
		return nil
	}
	st := tw.stage
	if st == nil {
		st = &stagedTable{idx: make(map[IndexID][]string)}
	}
	path, err := t.db.writeRun(func(put func(k, v []byte) error) error {
		var vb []byte
		for w := range tw.rows.All() {
			vb = binary.AppendUvarint(vb[:0], uint64(w.rowID))
			vb = append(vb, w.value...)
			if err := put(w.key, vb); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	st.rows = append(st.rows, path)
	for _, id := range tw.sortedIndexes() {
		ix := tw.idx[id]
		if ix.entries.Len() == 0 {
			continue
		}
		if t.db.pdb == nil {
			// An engine that cannot ingest writes a generation, whose
			// entries are made from its rows (stage_generation.go).
			ix.entries = newWriteSet()
			continue
		}
		path, err := t.db.writeRun(func(put func(k, v []byte) error) error {
			for w := range ix.entries.All() {
				if err := put(w.key, w.value); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		st.idx[id] = append(st.idx[id], path)
		ix.entries = newWriteSet()
	}
	st.n += int64(tw.rows.Len())
	tw.rows = newWriteSet()
	tw.stage = st
	killPoint("stage-spill")
	return nil
}

// writeRun writes one sorted run file: records of uvarint length-prefixed
// key and value.
func (db *DB) writeRun(fill func(put func(k, v []byte) error) error) (string, error) {
	s := &db.stage
	if err := s.fs.MkdirAll(s.dir, 0o755); err != nil {
		return "", err
	}
	path := s.fs.PathJoin(s.dir, fmt.Sprintf("run-%06d", s.files.Add(1)))
	f, err := s.fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return "", err
	}
	bw := bufio.NewWriterSize(f, 1<<18)
	var hdr [2 * binary.MaxVarintLen64]byte
	put := func(k, v []byte) error {
		n := binary.PutUvarint(hdr[:], uint64(len(k)))
		n += binary.PutUvarint(hdr[n:], uint64(len(v)))
		if _, err := bw.Write(hdr[:n]); err != nil {
			return err
		}
		if _, err := bw.Write(k); err != nil {
			return err
		}
		_, err := bw.Write(v)
		return err
	}
	err = fill(put)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = s.fs.Remove(path)
		return "", fmt.Errorf("storage: write staged run: %w", err)
	}
	return path, nil
}

// runReader reads a run file back in order.
type runReader struct {
	f    vfs.File
	r    *bufio.Reader
	key  []byte
	val  []byte
	ord  int // the run's place: ties between runs are reported, not ordered
	done bool
}

func (db *DB) openRun(path string, ord int) (*runReader, error) {
	f, err := db.stage.fs.Open(path)
	if err != nil {
		return nil, err
	}
	rr := &runReader{f: f, r: bufio.NewReaderSize(f, 1<<16), ord: ord}
	return rr, rr.next()
}

func (rr *runReader) next() error {
	kl, err := binary.ReadUvarint(rr.r)
	if errors.Is(err, io.EOF) {
		rr.done = true
		return nil
	}
	if err != nil {
		return err
	}
	vl, err := binary.ReadUvarint(rr.r)
	if err != nil {
		return err
	}
	rr.key = slices.Grow(rr.key[:0], int(kl))[:kl]
	rr.val = slices.Grow(rr.val[:0], int(vl))[:vl]
	if _, err := io.ReadFull(rr.r, rr.key); err != nil {
		return err
	}
	_, err = io.ReadFull(rr.r, rr.val)
	return err
}

// runHeap merges runs by key.
type runHeap []*runReader

func (h runHeap) Len() int { return len(h) }
func (h runHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].key, h[j].key); c != 0 {
		return c < 0
	}
	return h[i].ord < h[j].ord
}
func (h runHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)   { *h = append(*h, x.(*runReader)) }
func (h *runHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// mergeRuns calls fn with every record of the runs in key order; a key
// in more than one run is reported to dup (which returns the error).
func (db *DB) mergeRuns(ctx context.Context, paths []string, fn func(k, v []byte) error, dup func(k []byte) error) error {
	var h runHeap
	defer func() {
		for _, rr := range h {
			_ = rr.f.Close()
		}
	}()
	for i, p := range paths {
		rr, err := db.openRun(p, i)
		if err != nil {
			return err
		}
		if rr.done {
			_ = rr.f.Close()
			continue
		}
		h = append(h, rr)
	}
	heap.Init(&h)
	var prev []byte
	first := true
	for n := 0; len(h) > 0; n++ {
		if n%commitCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		rr := h[0]
		if !first && bytes.Equal(prev, rr.key) {
			return dup(rr.key)
		}
		first = false
		prev = append(prev[:0], rr.key...)
		if err := fn(rr.key, rr.val); err != nil {
			return err
		}
		if err := rr.next(); err != nil {
			return err
		}
		if rr.done {
			_ = rr.f.Close()
			heap.Pop(&h)
		} else {
			heap.Fix(&h, 0)
		}
	}
	return nil
}

// sstWriter writes one SSTable for the ingest.
type sstWriter struct {
	path string
	w    *sstable.Writer
	n    int
}

func (db *DB) newSST() (*sstWriter, error) {
	s := &db.stage
	if err := s.fs.MkdirAll(s.dir, 0o755); err != nil {
		return nil, err
	}
	path := s.fs.PathJoin(s.dir, fmt.Sprintf("ingest-%06d.sst", s.files.Add(1)))
	f, err := s.fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, err
	}
	opts := s.popts.MakeWriterOptions(0, db.pdb.TableFormat())
	return &sstWriter{path: path, w: sstable.NewWriter(objstorageprovider.NewFileWritable(f), opts)}, nil
}

func (w *sstWriter) set(k, v []byte) error {
	w.n++
	return w.w.Set(k, v)
}

// stagedCommit is the SSTables of a commit with staged tables.
type stagedCommit struct {
	db    *DB
	files []string // every file made (removed when the commit ends)
	ssts  []*sstSpan
}

// sstSpan is one SSTable to ingest and its key range.
type sstSpan struct {
	path        string
	first, last []byte
}

func (sc *stagedCommit) cleanup() {
	for _, f := range sc.files {
		_ = sc.db.stage.fs.Remove(f)
	}
	sc.files = nil
}

// finishSST closes w and keeps it for the ingest if it holds anything.
func (sc *stagedCommit) finishSST(w *sstWriter, first, last []byte) error {
	sc.files = append(sc.files, w.path)
	if err := w.w.Close(); err != nil {
		return err
	}
	if w.n > 0 {
		sc.ssts = append(sc.ssts, &sstSpan{path: w.path, first: cloneBytes(first), last: cloneBytes(last)})
	}
	return nil
}

// hasStage reports whether some table of the transaction has staged rows.
func (t *Txn) hasStage() bool {
	for _, tw := range t.tables {
		if tw.stage != nil {
			return true
		}
	}
	return false
}

// spillAll writes the rest of every staged table's inserts to runs
// before the commit plans (the write sets of staged tables end empty).
func (t *Txn) spillAll() error {
	for _, id := range t.order {
		tw := t.tables[id]
		if tw.stage == nil {
			continue
		}
		if !tw.stageable() {
			return fmt.Errorf("storage: table %d has staged inserts and other writes in one transaction", id)
		}
		if err := t.spill(tw); err != nil {
			return err
		}
	}
	return nil
}

// buildStaged writes the staged tables' rows, change records and index
// entries, and the indexes the commit ingests (index_ingest.go), as
// SSTables with the plans' versions (outside commitMu).
func (t *Txn) buildStaged(ctx context.Context, plans []*tablePlan) (*stagedCommit, error) {
	sc := &stagedCommit{db: t.db}
	for _, p := range plans {
		if st := p.tw.stage; st != nil {
			if err := sc.buildTable(ctx, t, p, st); err != nil {
				sc.cleanup()
				return nil, err
			}
		}
		if err := sc.buildIndexes(ctx, t, p); err != nil {
			sc.cleanup()
			return nil, err
		}
	}
	return sc, nil
}

func (sc *stagedCommit) buildTable(ctx context.Context, t *Txn, p *tablePlan, st *stagedTable) error {
	db := sc.db
	tw := p.tw
	rows, err := db.newSST()
	if err != nil {
		return err
	}
	var cdf *sstWriter
	if tw.info.ChangeDataFeed {
		if cdf, err = db.newSST(); err != nil {
			sc.files = append(sc.files, rows.path)
			return err
		}
	}
	var kbuf, vbuf, first, last, cfirst, clast []byte
	var seq uint32
	err = db.mergeRuns(ctx, st.rows, func(k, v []byte) error {
		id, n := binary.Uvarint(v)
		if n <= 0 {
			return fmt.Errorf("storage: corrupt staged row of table %d", tw.id)
		}
		val := v[n:]
		kbuf = rowKey(kbuf[:0], p.rows, k)
		vbuf = slices.Grow(vbuf[:0], rowHeaderLen(int64(id), p.version)+len(val))
		vbuf = vbuf[:rowHeaderLen(int64(id), p.version)]
		putRowHeader(vbuf, int64(id), p.version)
		vbuf = append(vbuf, val...)
		if first == nil {
			first = cloneBytes(kbuf)
		}
		last = append(last[:0], kbuf...)
		if err := rows.set(kbuf, vbuf); err != nil {
			return err
		}
		if cdf == nil {
			return nil
		}
		kbuf = cdfKey(kbuf[:0], tw.id, p.version, seq)
		seq++
		if cfirst == nil {
			cfirst = cloneBytes(kbuf)
		}
		clast = append(clast[:0], kbuf...)
		vbuf = appendChangeRecord(vbuf[:0], recInsert, int64(id), k, val, nil, nil)
		return cdf.set(kbuf, vbuf)
	}, func(k []byte) error {
		return &DuplicateKeyError{Table: tw.id, Key: cloneBytes(k)}
	})
	if ferr := sc.finishSST(rows, first, last); err == nil {
		err = ferr
	}
	if cdf != nil {
		if ferr := sc.finishSST(cdf, cfirst, clast); err == nil {
			err = ferr
		}
	}
	if err != nil {
		return err
	}
	ids := make([]IndexID, 0, len(st.idx))
	for id := range st.idx {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		w, err := db.newSST()
		if err != nil {
			return err
		}
		first, last = nil, last[:0]
		err = db.mergeRuns(ctx, st.idx[id], func(k, v []byte) error {
			kbuf = indexKey(kbuf[:0], p.rows, id, k)
			if first == nil {
				first = cloneBytes(kbuf)
			}
			last = append(last[:0], kbuf...)
			return w.set(kbuf, v)
		}, func(k []byte) error {
			// Only a unique entry (its columns alone) can repeat.
			return &DuplicateKeyError{Table: tw.id, Index: id, Key: cloneBytes(k)}
		})
		if ferr := sc.finishSST(w, first, last); err == nil {
			err = ferr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// batchEntry is one write of the commit's batch.
type batchEntry struct {
	kind       pebble.InternalKeyKind
	key, value []byte
}

// addBatch writes the commit's batch (everything but the staged rows) as
// SSTables that do not overlap the staged ones: a new file starts at
// every staged file's range. It handles sets and deletes; a commit with
// staged rows writes no range deletion.
func (sc *stagedCommit) addBatch(b *pebble.Batch) error {
	var ents []batchEntry
	r := b.Reader()
	for {
		kind, k, v, ok, err := r.Next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch kind {
		case pebble.InternalKeyKindSet, pebble.InternalKeyKindDelete:
		default:
			return fmt.Errorf("storage: a commit with staged inserts cannot write a %s", kind)
		}
		ents = append(ents, batchEntry{kind: kind, key: k, value: v})
	}
	// The last write of a key wins (stable sort, then keep the last).
	slices.SortStableFunc(ents, func(a, b batchEntry) int { return bytes.Compare(a.key, b.key) })
	staged := slices.Clone(sc.ssts)
	slices.SortFunc(staged, func(a, b *sstSpan) int { return bytes.Compare(a.first, b.first) })
	var w *sstWriter
	var first, last []byte
	next := 0 // the next staged span not yet passed
	flush := func() error {
		if w == nil {
			return nil
		}
		err := sc.finishSST(w, first, last)
		w, first = nil, nil
		return err
	}
	for i, e := range ents {
		if i+1 < len(ents) && bytes.Equal(ents[i+1].key, e.key) {
			continue
		}
		for next < len(staged) && bytes.Compare(staged[next].first, e.key) <= 0 {
			if bytes.Compare(e.key, staged[next].last) <= 0 {
				return fmt.Errorf("storage: commit key %x falls among staged rows", e.key)
			}
			if err := flush(); err != nil {
				return err
			}
			next++
		}
		if w == nil {
			var err error
			if w, err = sc.db.newSST(); err != nil {
				return err
			}
			first = e.key
		}
		last = e.key
		var err error
		if e.kind == pebble.InternalKeyKindSet {
			err = w.set(e.key, e.value)
		} else {
			w.n++
			err = w.w.Delete(e.key)
		}
		if err != nil {
			_ = flush()
			return err
		}
	}
	return flush()
}

// ingest makes every SSTable of the commit visible at one sequence number
// (called under visMu).
func (sc *stagedCommit) ingest() error {
	paths := make([]string, len(sc.ssts))
	for i, s := range sc.ssts {
		paths[i] = s.path
	}
	return sc.db.pdb.Ingest(context.Background(), paths)
}

// endStages removes the run files of a transaction that ends.
func (t *Txn) endStages() {
	for _, tw := range t.tables {
		if tw.stage == nil {
			continue
		}
		removeRuns(t.db, tw.stage)
		tw.stage = nil
	}
}

// initStage sets the stage directory up and deletes what a crash left in
// it (start-up).
func (db *DB) initStage(fs vfs.FS, dir string, popts *pebble.Options, threshold int) error {
	s := &db.stage
	s.fs, s.popts = fs, popts.Clone()
	s.popts.EnsureDefaults()
	s.dir = fs.PathJoin(dir, stageDirName)
	switch {
	case threshold == 0:
		s.threshold = DefaultStageRows
	case threshold > 0:
		s.threshold = threshold
	}
	names, err := fs.List(s.dir)
	if err != nil {
		return nil // no directory: nothing staged
	}
	for _, n := range names {
		if err := fs.Remove(fs.PathJoin(s.dir, n)); err != nil {
			return fmt.Errorf("storage: delete staged file: %w", err)
		}
	}
	if len(names) > 0 {
		db.log.Info("deleted the staged files of transactions a crash interrupted", "files", len(names))
	}
	return nil
}

// prepare writes the commit's batch as SSTables beside the staged ones
// and syncs the log, so that the commits applied before this one are
// durable before it is (an ingest does not go through the log). Called
// under commitMu once the batch is final.
func (sc *stagedCommit) prepare(b *pebble.Batch) error {
	if err := sc.addBatch(b); err != nil {
		return err
	}
	return sc.db.pdb.LogData(nil, pebble.Sync)
}

// markStaged records a committed staged table as wiped for the conflict
// rules: a concurrent transaction that writes its rows, or read them
// serializably, fails, as its staged keys are not kept as conflict keys.
func markStaged(plans []*tablePlan, seq uint64) {
	for _, p := range plans {
		if p.tw.stage != nil {
			p.st.wipeSeq = seq
		}
	}
}
