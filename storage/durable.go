package storage

import "sync"

// Visible only once durable (invariant 4a in doc.go). A commit's batch is
// in Pebble's memtable, readable by any snapshot taken after it, before
// the write-ahead log sync that makes it durable completes: commits in
// flight apply with ApplyNoSyncWait to share one fsync. So a Begin never
// takes a snapshot that shows a commit whose sync is pending: it waits,
// holding visMu shared (no further commit applies meanwhile, so the wait
// is at most one fsync), until every applied commit is durable. The
// shared snapshot a Begin takes therefore always shows a durable state,
// and the DB keeps its reference on it until a newer one replaces it; a
// commit whose sync succeeds takes that newer one when no later commit
// has applied meanwhile, so the next Begin need not.
//
// Once the log failed, the pending commits never become durable (their
// outcome is unknown until a restart replays the log) and a batch Pebble
// gave up on may be in the memtable: from then on no snapshot is taken,
// and every Begin reads the last durable one. A commit acknowledged in
// the same fsync group as the failure but after that snapshot was taken
// is then not seen until the restart (it is on disk).

// durability tracks which applied commits are durable.
type durability struct {
	mu     sync.Mutex
	cond   sync.Cond // signalled when seq moves or the log fails
	seq    uint64    // every commit up to seq is durable
	failed bool
}

func (d *durability) init() { d.cond.L = &d.mu }

// markDurable records that the commit of sequence seq (and so, the log
// being written in order, every earlier one) is durable.
func (db *DB) markDurable(seq uint64) {
	d := &db.dur
	d.mu.Lock()
	if seq > d.seq {
		d.seq = seq
		d.cond.Broadcast()
	}
	d.mu.Unlock()
}

// markLogFailed wakes the Begins waiting for a sync that will not come.
func (db *DB) markLogFailed() {
	d := &db.dur
	d.mu.Lock()
	d.failed = true
	d.cond.Broadcast()
	d.mu.Unlock()
}

// awaitDurable waits until every commit up to seq is durable; false when
// the log failed first. The caller holds visMu shared.
func (db *DB) awaitDurable(seq uint64) bool {
	d := &db.dur
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.seq < seq && !d.failed {
		d.cond.Wait()
	}
	return !d.failed
}

// beginSnap is Begin's snapshot (with a reference) and the sequence it
// shows; nil when there is none to read (the log failed before any was
// taken).
func (db *DB) beginSnap() *sharedSnap {
	seq := db.seq
	if db.noDurableWait {
		return db.acquireSnap(seq)
	}
	if db.awaitDurable(seq) {
		return db.acquireSnap(seq)
	}
	db.snapMu.Lock()
	defer db.snapMu.Unlock()
	s := db.curSnap
	if s != nil {
		s.refs++
	}
	return s
}

// snapAfterSync takes the shared snapshot of seq right after its commit's
// sync, when no later commit applied meanwhile: the next Begin then shares
// it instead of creating it, and it replaces the older one the DB held.
func (db *DB) snapAfterSync(seq uint64) {
	if !db.visMu.TryRLock() {
		return // a commit is applying: its own sync will do it
	}
	defer db.visMu.RUnlock()
	if db.closed.Load() || db.seq != seq {
		return
	}
	d := &db.dur
	d.mu.Lock()
	ok := d.seq >= seq && !d.failed
	d.mu.Unlock()
	if ok {
		db.releaseSnap(db.acquireSnap(seq))
	}
}
