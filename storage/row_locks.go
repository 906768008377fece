package storage

import (
	"errors"
	"fmt"
	"sync"
)

// Row locks: SELECT … FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE.
// Transactions here never wait for one another: of two that write a row,
// the second to commit fails (first committer wins). A row lock fits that
// model:
//
//  1. Locking a row that a transaction committed after this one began
//     wrote fails at once with ErrSerialization (PostgreSQL's REPEATABLE
//     READ: "could not serialize access due to concurrent update"); so
//     does the commit of a transaction whose locked row was written by
//     one that committed in between.
//  2. An exclusive lock (UPDATE, NO KEY UPDATE) counts as a write of the
//     row by the locking transaction: once it commits, a concurrent
//     transaction that wrote or exclusively locked the row fails its
//     commit. Shared locks (SHARE, KEY SHARE) only check (1).
//  3. The locks open transactions hold are kept in the DB (locks below)
//     until they end, so that NOWAIT fails (ErrLockNotAvailable) and SKIP
//     LOCKED skips a row another open transaction holds a conflicting
//     lock on, in PostgreSQL's conflict table of the four strengths. A
//     lock without either takes the row alongside and (2) decides at
//     commit. A row another open transaction has only written (UPDATE,
//     DELETE, not yet committed) is not known until that commit.
//  4. The lock table is this process's: on a shared store (TiKV) another
//     process's locks are neither seen by NOWAIT / SKIP LOCKED nor
//     written as conflicts.

// LockStrength is a row lock's strength, weakest first.
type LockStrength uint8

const (
	LockKeyShare LockStrength = iota + 1
	LockShare
	LockNoKeyUpdate
	LockUpdate
)

// exclusive reports whether the lock counts as a write (2).
func (s LockStrength) exclusive() bool { return s >= LockNoKeyUpdate }

// conflicts is PostgreSQL's table of conflicting row-lock modes.
func (s LockStrength) conflicts(o LockStrength) bool {
	switch {
	case s == LockUpdate || o == LockUpdate:
		return true
	case s == LockNoKeyUpdate || o == LockNoKeyUpdate:
		return s != LockKeyShare && o != LockKeyShare
	}
	return false // SHARE and KEY SHARE share
}

// LockWait is what LockRow does about a lock another open transaction
// holds.
type LockWait uint8

const (
	// LockAlongside takes the lock too; the first to commit wins (3).
	LockAlongside LockWait = iota
	// LockNoWait fails with ErrLockNotAvailable.
	LockNoWait
	// LockSkip leaves the row unlocked and reports it skipped.
	LockSkip
)

// ErrLockNotAvailable: NOWAIT found the row locked by another open
// transaction (55P03).
var ErrLockNotAvailable = errors.New("storage: could not obtain lock on row")

// heldLock is one open transaction's lock on a row.
type heldLock struct {
	txn      *Txn
	strength LockStrength
}

// rowLock is a lock a transaction took, for its commit and its end.
type rowLock struct {
	tbl      TableID
	key      []byte
	pkey     string
	strength LockStrength
}

// lockTable holds the row locks of the open transactions (3).
type lockTable struct {
	mu   sync.Mutex
	held map[string][]heldLock
}

// LockRow locks row key (its storage key) of table tbl with strength s.
// It reports false when it skipped the row (LockSkip).
func (t *Txn) LockRow(tbl TableID, key []byte, s LockStrength, w LockWait) (bool, error) {
	if err := t.alive(); err != nil {
		return false, err
	}
	pkey := string(rowKey(nil, tbl, key))
	db := t.db
	db.commitMu.Lock()
	written := db.conflicts.last[pkey] > t.beginSeq
	db.commitMu.Unlock()
	if written {
		return false, serializationError("row %x of table %d was written by a concurrent transaction", key, tbl)
	}
	lt := &db.locks
	lt.mu.Lock()
	defer lt.mu.Unlock()
	for _, h := range lt.held[pkey] {
		if h.txn == t {
			if h.strength >= s {
				return true, nil // held already, as strong
			}
			continue
		}
		if !h.strength.conflicts(s) {
			continue
		}
		switch w {
		case LockNoWait:
			return false, fmt.Errorf("%w %x of table %d", ErrLockNotAvailable, key, tbl)
		case LockSkip:
			return false, nil
		}
	}
	if lt.held == nil {
		lt.held = make(map[string][]heldLock)
	}
	lt.held[pkey] = append(lt.held[pkey], heldLock{txn: t, strength: s})
	t.locks = append(t.locks, rowLock{tbl: tbl, key: append([]byte(nil), key...), pkey: pkey, strength: s})
	return true, nil
}

// exclusiveLocks reports whether the txn holds a lock its commit writes
// as a conflict (2).
func (t *Txn) exclusiveLocks() bool {
	for _, l := range t.locks {
		if l.strength.exclusive() {
			return true
		}
	}
	return false
}

// lockConflictKeys appends the keys of the exclusive locks to keys: the
// commit checks them and records them as written (1, 2).
func (t *Txn) lockConflictKeys(keys []conflictKey) []conflictKey {
	for _, l := range t.locks {
		if l.strength.exclusive() {
			keys = append(keys, conflictKey{tbl: l.tbl, key: l.key})
		}
	}
	return keys
}

// validateSharedLocks fails the commit when a row it holds a shared lock
// on was written by a transaction that committed after it began (1).
// Called under commitMu.
func (db *DB) validateSharedLocks(t *Txn) error {
	for _, l := range t.locks {
		if !l.strength.exclusive() && db.conflicts.last[l.pkey] > t.beginSeq {
			return serializationError("row %x of table %d, locked by this transaction, was written by a concurrent transaction", l.key, l.tbl)
		}
	}
	return nil
}

// releaseLocks drops the txn's locks from the lock table (at its end).
func (t *Txn) releaseLocks() {
	if len(t.locks) == 0 {
		return
	}
	lt := &t.db.locks
	lt.mu.Lock()
	for _, l := range t.locks {
		hs := lt.held[l.pkey]
		kept := hs[:0]
		for _, h := range hs {
			if h.txn != t {
				kept = append(kept, h)
			}
		}
		if len(kept) == 0 {
			delete(lt.held, l.pkey)
		} else {
			lt.held[l.pkey] = kept
		}
	}
	lt.mu.Unlock()
	t.locks = nil
}
