package storage

import (
	"errors"
	"testing"
)

// abDB is a DB whose table tA holds rows a and b (value 1).
func abDB(t *testing.T) *DB {
	t.Helper()
	db := openMem(t)
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error {
		mustInsert(t, tx, tA, "a", "1")
		mustInsert(t, tx, tA, "b", "1")
		return nil
	})
	return db
}

func mustLock(t *testing.T, tx *Txn, key string, s LockStrength, w LockWait) bool {
	t.Helper()
	ok, err := tx.LockRow(tA.ID, k(key), s, w)
	if err != nil {
		t.Fatalf("lock %s: %v", key, err)
	}
	return ok
}

// lockRace has a transaction lock row key with strength s while another
// updates it; the writer commits first or second. It returns both
// commits' errors.
func lockRace(t *testing.T, db *DB, key string, s LockStrength, writerFirst bool) (lockerErr, writerErr error) {
	t.Helper()
	locker, writer := db.Begin(), db.Begin()
	mustLock(t, locker, key, s, LockAlongside)
	if err := writer.Update(tA, k(key), k(key), k("x")); err != nil {
		t.Fatal(err)
	}
	if writerFirst {
		writerErr = writer.Commit()
		return locker.Commit(), writerErr
	}
	lockerErr = locker.Commit()
	return lockerErr, writer.Commit()
}

// An exclusive lock counts as a write: of the locker and a concurrent
// writer of the row, the first to commit wins. A shared lock fails its
// own commit after a concurrent write, and fails no writer.
func TestRowLockFirstCommitterWins(t *testing.T) {
	for _, c := range []struct {
		s              LockStrength
		writerFirst    bool
		lockerOK, wrOK bool
	}{
		{LockUpdate, false, true, false},
		{LockUpdate, true, false, true},
		{LockNoKeyUpdate, false, true, false},
		{LockNoKeyUpdate, true, false, true},
		{LockShare, false, true, true},
		{LockShare, true, false, true},
		{LockKeyShare, false, true, true},
		{LockKeyShare, true, false, true},
	} {
		db := abDB(t)
		le, we := lockRace(t, db, "a", c.s, c.writerFirst)
		if (le == nil) != c.lockerOK || le != nil && !errors.Is(le, ErrSerialization) {
			t.Errorf("strength %d, writer first %v: locker's commit %v", c.s, c.writerFirst, le)
		}
		if (we == nil) != c.wrOK || we != nil && !errors.Is(we, ErrSerialization) {
			t.Errorf("strength %d, writer first %v: writer's commit %v", c.s, c.writerFirst, we)
		}
	}
}

// Locking a row a transaction committed after this one began fails at
// once.
func TestRowLockAfterConcurrentWrite(t *testing.T) {
	db := abDB(t)
	locker := db.Begin()
	defer locker.Rollback()
	update(t, db, func(tx *Txn) error { return tx.Update(tA, k("a"), k("a"), k("x")) })
	if _, err := locker.LockRow(tA.ID, k("a"), LockShare, LockAlongside); !errors.Is(err, ErrSerialization) {
		t.Fatalf("lock of a row written since: %v, want ErrSerialization", err)
	}
	mustLock(t, locker, "b", LockShare, LockAlongside)
}

// NOWAIT and SKIP LOCKED see the conflicting locks of open transactions,
// in PostgreSQL's conflict table, until the holder ends.
func TestRowLockNoWaitSkip(t *testing.T) {
	db := abDB(t)
	holder := db.Begin()
	mustLock(t, holder, "a", LockShare, LockAlongside)
	other := db.Begin()
	defer other.Rollback()
	if !mustLock(t, other, "a", LockKeyShare, LockNoWait) {
		t.Fatal("KEY SHARE under SHARE: skipped")
	}
	if _, err := other.LockRow(tA.ID, k("a"), LockUpdate, LockNoWait); !errors.Is(err, ErrLockNotAvailable) {
		t.Fatalf("UPDATE NOWAIT under SHARE: %v, want ErrLockNotAvailable", err)
	}
	if mustLock(t, other, "a", LockNoKeyUpdate, LockSkip) {
		t.Fatal("NO KEY UPDATE SKIP LOCKED under SHARE: locked")
	}
	if !mustLock(t, other, "b", LockUpdate, LockSkip) {
		t.Fatal("an unlocked row: skipped")
	}
	holder.Rollback()
	if !mustLock(t, other, "a", LockUpdate, LockNoWait) {
		t.Fatal("after the holder ended: skipped")
	}
	if err := other.Commit(); err != nil {
		t.Fatal(err)
	}
	if len(db.locks.held) != 0 {
		t.Fatalf("locks left after both ended: %v", db.locks.held)
	}
}
