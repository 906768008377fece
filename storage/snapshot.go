package storage

// Shared read snapshots. A transaction reads a Pebble snapshot of the state
// at its Begin. Transactions that begin at the same commit sequence see the
// same state (invariant 4: the snapshot is taken under visMu, which every
// commit holds exclusively while its batch becomes visible and the sequence
// moves), so they share one snapshot, counted by reference. Between commits
// — every statement of a read-only workload — Begin then creates no Pebble
// snapshot and the transaction's end closes none: closing one takes
// Pebble's DB mutex and, when it was the earliest, looks for compactions
// to schedule, which cost a point read about 4% of its CPU.
//
// The DB holds a reference on the latest shared snapshot until a newer
// one replaces it; a commit takes that newer one right after its sync when
// no later commit applied meanwhile (durable.go), so an idle server pins
// no state older than its last commit (and compactions may drop what that
// commit overwrote). Every shared snapshot shows a durable state.

// sharedSnap is one Pebble snapshot and the sequence it shows.
type sharedSnap struct {
	snap engineSnapshot
	seq  uint64
	refs int // guarded by DB.snapMu
}

// acquireSnap returns the snapshot of sequence seq with a reference for
// the caller, creating it when the current one is older. The caller holds
// visMu (shared), so seq is the state Pebble shows and no snapshot newer
// than seq exists.
func (db *DB) acquireSnap(seq uint64) *sharedSnap {
	db.snapMu.Lock()
	// On a shared store other processes commit without moving seq: each
	// Begin takes its own snapshot (shared.go).
	if s := db.curSnap; s != nil && s.seq == seq && !db.sharedStore {
		s.refs++
		db.snapMu.Unlock()
		return s
	}
	old := db.dropCurrentLocked()
	s := &sharedSnap{snap: db.eng.snapshot(), seq: seq, refs: 2} // the DB's and the caller's
	db.curSnap = s
	db.snapMu.Unlock()
	db.closeSnap(old)
	return s
}

// releaseSnap drops a transaction's reference.
func (db *DB) releaseSnap(s *sharedSnap) {
	db.snapMu.Lock()
	s.refs--
	last := s.refs == 0
	db.snapMu.Unlock()
	if last {
		db.closeSnap(s)
	}
}

// dropCurrentLocked drops the DB's reference on the current snapshot and
// returns it when that was the last one (for closeSnap, outside snapMu).
func (db *DB) dropCurrentLocked() *sharedSnap {
	s := db.curSnap
	if s == nil {
		return nil
	}
	db.curSnap = nil
	if s.refs--; s.refs > 0 {
		return nil
	}
	return s
}

// closeSnap closes a snapshot nobody references (nil: nothing). After
// Close the Pebble DB is gone and takes its snapshots with it.
func (db *DB) closeSnap(s *sharedSnap) {
	if s != nil && !db.closed.Load() {
		_ = s.snap.close()
	}
}
