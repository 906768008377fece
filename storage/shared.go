package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Several processes on one store (engine.shared: TiKV, or a named mock
// cluster). The first slice of doc.go's "Several processes on TiKV":
//
//   - Each Begin takes its own engine snapshot (snapshot.go): commits of
//     other processes do not move this process's sequence, so a shared
//     snapshot of one sequence would hide them. A catalog change another
//     process committed is in the next transaction's snapshot.
//   - A commit's batch conflicts with every write another process
//     committed after the transaction's snapshot (engineBatch.
//     conflictSince; TiKV's transaction begins at the snapshot's
//     timestamp): first committer wins across processes for row, index,
//     meta and state keys. Two processes that write one table
//     concurrently conflict on its state key, which both write — coarser
//     than in one process (where writers of different keys of a table do
//     not conflict), and correct.
//   - Table versions: under commitMu the commit reads each table's state
//     from its snapshot (syncStates) and takes the next version after the
//     one it finds, so a version another process committed is never
//     taken again; a commit after the snapshot conflicts (above).
//   - Row ids: each open of the DB takes a node number from a counter key
//     (by a transaction that conflicts with a concurrent open's), and
//     hands out the row ids of its own range [node<<rowIDNodeShift, …):
//     ids never repeat across processes or opens, without coordination
//     per insert (they are stable, not dense, R-T6). Rows ids of rewrites
//     (generation.go) are taken from their counter key the same way.
//
//   - Rewrites (generation.go) on a shared store: a snapshot reads every
//     table's rows id from its state (another process's switch sets no
//     flag here); a rewrite's version follows the snapshot's state; its
//     shadow marker names the node writing it, and is deleted after the
//     switch commits, not in it (the switch's transaction is older than
//     the marker). A start-up reclaims only the shadows of nodes that no
//     longer hold their lease, fencing a paused writer off through the
//     table's state key (shared_nodes.go).
//
//   - The SQL layer follows other processes by reading the store: Txn.
//     StateSeq is never ok here, so the catalog reads its generation per
//     snapshot; app/shared.go follows schedules, triggers and refresh-
//     runner leases, app/shared_notify.go relays NOTIFY.
//
// Not built yet: commit notifications of other processes' commits
// (subscribe.go sees this process's; app polls table versions instead),
// and the finer conflict rules of the design.

// rowIDNodeShift: a node's row ids are node<<rowIDNodeShift + 1, … (2^40
// ids per table per open; 2^23 opens).
const rowIDNodeShift = 40

// globalNodeKey holds the last node number handed to an open.
var globalNodeKey = []byte{prefixGlobal, 'n', 'o', 'd', 'e'}

// sharedRetries bounds the retries of a short transaction of the DB's own
// (a node number, a rows id, a lease) that lost to another process's.
const sharedRetries = 20

// allocNode takes this open's node number on a shared store and sets the
// row-id base.
func (db *DB) allocNode() error {
	n, err := db.incrementGlobal(globalNodeKey, 1, 1)
	if err != nil {
		return fmt.Errorf("storage: allocate a node number: %w", err)
	}
	db.node = n
	db.rowIDBase = n << rowIDNodeShift
	return nil
}

// incrementGlobal adds delta to the uint64 counter at key (absent: from
// floor-1) in a transaction of its own and returns the new value.
func (db *DB) incrementGlobal(key []byte, delta, floor int64) (int64, error) {
	var next int64
	err := db.retryShared(func(snap engineSnapshot, b engineBatch) (bool, error) {
		v, ok, err := snap.get(key, nil)
		if err != nil {
			return false, err
		}
		cur := floor - 1
		if ok {
			if len(v) != 8 {
				return false, fmt.Errorf("storage: corrupt counter %x", key)
			}
			cur = max(cur, int64(binary.BigEndian.Uint64(v)))
		}
		next = cur + delta
		return true, b.set(key, binary.BigEndian.AppendUint64(nil, uint64(next)))
	})
	return next, err
}

// retryShared runs a short transaction of the DB's own: try reads what it
// needs from snap and puts its writes in b (false: nothing to write), and
// the batch is written durably, conflicting with another process's write
// after snap (conflictSince); on such a conflict it is tried again.
func (db *DB) retryShared(try func(snap engineSnapshot, b engineBatch) (bool, error)) error {
	for range sharedRetries {
		if err := db.writable(64); err != nil {
			return err
		}
		snap := db.eng.snapshot()
		b := db.eng.newBatch(0)
		write, err := try(snap, b)
		if err == nil && write {
			b.conflictSince(snap)
			err = db.eng.write(b, true)
		}
		b.close()
		_ = snap.close()
		if !errors.Is(err, errEngineConflict) {
			return err
		}
	}
	return serializationError("too many concurrent writers of the same keys")
}

// firstRowID is where a table state's row ids start in this open: its
// persisted high-water mark, or this node's range on a shared store.
func (db *DB) firstRowID(persisted int64) int64 {
	if db.sharedStore {
		return db.rowIDBase + 1
	}
	return persisted
}

// syncStates brings the states of the commit's tables up to what its
// snapshot shows (a shared store; the caller holds commitMu): versions,
// timestamps, row counts, indexes and key spaces other processes
// committed. Row ids stay this node's.
func (t *Txn) syncStates(plans []*tablePlan) error {
	for _, p := range plans {
		st := p.st
		ps, ok, err := t.snapState(p.tw.id)
		if err != nil {
			return err
		}
		if !ok || ps.version <= st.version.Load() {
			continue
		}
		st.version.Store(ps.version)
		st.lastTS = ps.lastTS
		st.vacuumedBelow = ps.vacuumedBelow
		st.rowCount = ps.rowCount
		st.indexes = ps.indexes
		rows := ps.rowsID
		if rows == 0 {
			rows = p.tw.id
		}
		if rows != p.tw.id {
			st.rewritten.Store(true)
			t.db.anyRewritten.Store(true)
		}
		st.rowsID.Store(uint32(rows))
	}
	return nil
}

// Shared reports whether other processes may commit to this store (TiKV,
// a named mock cluster): the SQL layer then follows their commits by
// reading the store (app/shared.go); on Pebble it need not.
func (db *DB) Shared() bool { return db.sharedStore }

// Node is this open's node number on a shared store (0 on Pebble): unique
// among the opens of the store, it names this process as a lease holder.
func (db *DB) Node() int64 { return db.node }
