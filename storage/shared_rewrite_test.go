//go:build tikv

package storage

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// fillOld gives tA rows k000…k019 with the value "old".
func fillOld(t *testing.T, db *DB) {
	t.Helper()
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error {
		for i := range 20 {
			mustInsert(t, tx, tA, fmt.Sprintf("k%03d", i), "old")
		}
		return nil
	})
}

func rowsOn(t *testing.T, db *DB) int {
	t.Helper()
	tx := db.Begin()
	defer tx.Rollback()
	return len(scanAll(t, tx, tA.ID, nil, nil))
}

// TestSharedStoreRewrite: on a shared store a rewrite switches to its new
// content and its marker goes; another process opening the store while
// the rewrite is under way leaves it alone, as its process is alive.
func TestSharedStoreRewrite(t *testing.T) {
	smallRewriteBatches(t)
	a := openShared(t, t.Name())
	fillOld(t, a)
	tx := a.Begin()
	rewriteTo(t, tx, tA, 50)
	b := openShared(t, t.Name())
	if n := shadowKeys(t, b); n != 1 {
		t.Fatalf("after another open, %d shadow keys, want the live rewrite's 1", n)
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("switch: %v", err)
	}
	for name, db := range map[string]*DB{"A": a, "B": b} {
		if n := rowsOn(t, db); n != 50 {
			t.Errorf("%s reads %d rows after the switch, want 50", name, n)
		}
	}
	if n := shadowKeys(t, a); n != 0 {
		t.Errorf("%d shadow keys after the switch, want 0", n)
	}
	// A second rewrite on B, of A's table: B's own process.
	tx = b.Begin()
	rewriteTo(t, tx, tA, 7)
	if err := tx.Commit(); err != nil {
		t.Fatalf("second switch: %v", err)
	}
	if n := rowsOn(t, a); n != 7 {
		t.Errorf("A reads %d rows after B's switch, want 7", n)
	}
}

// TestSharedStoreRewriteOfDeadProcess: a process that opens the store
// after the writer of a rewrite lost its node lease (dead, or paused past
// it) reclaims the rewrite's key space; the writer's switch, if it comes
// back, fails with a serialization error and the table keeps its content.
func TestSharedStoreRewriteOfDeadProcess(t *testing.T) {
	smallRewriteBatches(t)
	a := openShared(t, t.Name())
	fillOld(t, a)
	tx := a.Begin()
	r := rewriteTo(t, tx, tA, 50)
	// B's clock is past A's lease: A looks dead to it.
	late := func() time.Time { return time.Now().Add(2 * nodeLeaseTTL) }
	b := openSharedClock(t, t.Name(), late)
	if n := shadowKeys(t, b); n != 0 {
		t.Fatalf("%d shadow keys after B's start-up, want the dead rewrite's reclaimed", n)
	}
	if n := keySpaceLen(t, b, prefixRows, r.rows); n != 0 {
		t.Fatalf("the dead rewrite's key space holds %d rows after B's start-up", n)
	}
	err := tx.Commit()
	if !errors.Is(err, ErrSerialization) {
		t.Fatalf("the reclaimed rewrite's switch: %v, want a serialization error", err)
	}
	for name, db := range map[string]*DB{"A": a, "B": b} {
		if n := rowsOn(t, db); n != 20 {
			t.Errorf("%s reads %d rows, want the 20 from before the rewrite", name, n)
		}
	}
}
