package storage

import (
	"errors"
	"os"
	"testing"
	"time"
)

// leaseClock is a clock a test moves by hand.
type leaseClock struct{ now time.Time }

func (c *leaseClock) Now() time.Time { return c.now }

// checkLeases runs the lease rules on db (one process, or two on a shared
// store: a and b may be the same DB): acquire, renew with the same token,
// refusal while held, takeover after expiry with the next token, and a
// commit under the old token failing with ErrLeaseLost while one under the
// new token commits.
func checkLeases(t *testing.T, a, b *DB, clk *leaseClock) {
	t.Helper()
	createTable(t, a, tA)
	la, err := a.AcquireLease("refresh/v", "A", time.Second)
	if err != nil || la.Token != 1 || la.Holder != "A" {
		t.Fatalf("acquire: %+v %v", la, err)
	}
	clk.now = clk.now.Add(500 * time.Millisecond)
	if la, err = a.AcquireLease("refresh/v", "A", time.Second); err != nil || la.Token != 1 {
		t.Fatalf("renew: %+v %v", la, err)
	}
	_, err = b.AcquireLease("refresh/v", "B", time.Second)
	var held *LeaseHeldError
	if !errors.As(err, &held) || !errors.Is(err, ErrLeaseHeld) || held.Lease.Holder != "A" {
		t.Fatalf("B acquires a held lease: %v", err)
	}

	// A's transaction begins under its lease; A then pauses past it and B
	// takes the lease over.
	txA := a.Begin()
	mustInsert(t, txA, tA, "a", "from A")
	if err := txA.CheckLease(la); err != nil {
		t.Fatal(err)
	}
	clk.now = clk.now.Add(1500 * time.Millisecond)
	lb, err := b.AcquireLease("refresh/v", "B", time.Second)
	if err != nil || lb.Token != 2 || lb.Holder != "B" {
		t.Fatalf("takeover: %+v %v", lb, err)
	}
	if err := txA.Commit(); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("commit under the lost lease: %v, want ErrLeaseLost", err)
	}
	update(t, b, func(tx *Txn) error {
		mustInsert(t, tx, tA, "b", "from B")
		return tx.CheckLease(lb)
	})
	tx := a.Begin()
	got := scanAll(t, tx, tA.ID, nil, nil)
	tx.Rollback()
	if len(got) != 1 || got[0] != "b=from B" {
		t.Fatalf("rows %v: want only B's", got)
	}
	// A commit under an expired lease fails even with no new holder.
	clk.now = clk.now.Add(2 * time.Second)
	tx = b.Begin()
	mustInsert(t, tx, tA, "c", "late")
	_ = tx.CheckLease(lb)
	if err := tx.Commit(); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("commit under an expired lease: %v, want ErrLeaseLost", err)
	}
	if err := a.ReleaseLease(la); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("A releases B's lease: %v", err)
	}
	if err := b.ReleaseLease(lb); err != nil {
		t.Fatal(err)
	}
	if la, err = a.AcquireLease("refresh/v", "A", time.Second); err != nil || la.Token != 3 {
		t.Fatalf("acquire after release: %+v %v", la, err)
	}
}

func TestLease(t *testing.T) {
	clk := &leaseClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	db, err := Open(Options{InMemory: true, Clock: clk.Now, Store: os.Getenv(testStoreEnv)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkLeases(t, db, db, clk)
}
