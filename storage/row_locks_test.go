package storage

import (
	"errors"
	"testing"
)

// lockDB is a DB whose table tA holds rows a and b.
func lockDB(t *testing.T) *DB {
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

// An exclusive lock counts as a write: the locker commits first, the
// concurrent writer of the row fails; the other way round, the locker
// fails.
func TestRowLockFirstCommitterWins(t *testing.T) {
	for _, s := range []LockStrength{LockUpdate, LockNoKeyUpdate} {
		db := lockDB(t)
		locker, writer := db.Begin(), db.Begin()
		mustLock(t, locker, "a", s, LockAlongside)
		if err := writer.Update(tA, k("a"), k("a"), k("x")); err != nil {
			t.Fatal(err)
		}
		if err := locker.Commit(); err != nil {
			t.Fatalf("locker's commit: %v", err)
		}
		if err := writer.Commit(); !errors.Is(err, ErrSerialization) {
			t.Fatalf("strength %d: writer's commit after the locker's: %v, want ErrSerialization", s, err)
		}

		locker, writer = db.Begin(), db.Begin()
		mustLock(t, locker, "b", s, LockAlongside)
		if err := writer.Update(tA, k("b"), k("b"), k("x")); err != nil {
			t.Fatal(err)
		}
		if err := writer.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := locker.Commit(); !errors.Is(err, ErrSerialization) {
			t.Fatalf("strength %d: locker's commit after the writer's: %v, want ErrSerialization", s, err)
		}
	}
}

// A shared lock fails its commit after a concurrent write of the row,
// and does not fail a writer that commits after it.
func TestRowLockShared(t *testing.T) {
	db := lockDB(t)
	locker, writer := db.Begin(), db.Begin()
	mustLock(t, locker, "a", LockShare, LockAlongside)
	if err := writer.Update(tA, k("a"), k("a"), k("x")); err != nil {
		t.Fatal(err)
	}
	if err := locker.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := writer.Commit(); err != nil {
		t.Fatalf("writer after a shared lock's commit: %v", err)
	}
	locker, writer = db.Begin(), db.Begin()
	mustLock(t, locker, "a", LockKeyShare, LockAlongside)
	if err := writer.Update(tA, k("a"), k("a"), k("y")); err != nil {
		t.Fatal(err)
	}
	if err := writer.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := locker.Commit(); !errors.Is(err, ErrSerialization) {
		t.Fatalf("shared locker after the writer: %v, want ErrSerialization", err)
	}
}

// Locking a row a transaction committed after this one began fails at
// once.
func TestRowLockAfterConcurrentWrite(t *testing.T) {
	db := lockDB(t)
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
	db := lockDB(t)
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
