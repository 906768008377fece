package storage

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// cancelAfter is a context whose Err is nil for its first n calls and
// context.Canceled after: it ends in the middle of a commit.
type cancelAfter struct {
	context.Context
	n int
}

func (c *cancelAfter) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// A commit checks its context while it builds its batch (a large
// transaction's takes seconds), not only before: one canceled part of the
// way through writes nothing, and the table keeps its rows and version.
func TestCommitContextStopsWhileEncoding(t *testing.T) {
	db := openMem(t)
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error {
		mustInsert(t, tx, tA, "old", "1")
		return nil
	})
	before := db.Begin()
	version, err := before.TableVersion(tA.ID)
	before.Rollback()
	if err != nil {
		t.Fatal(err)
	}

	tx := db.Begin()
	if err := tx.Truncate(tA); err != nil {
		t.Fatal(err)
	}
	for i := range 3 * commitCheckEvery {
		mustInsert(t, tx, tA, fmt.Sprintf("k%06d", i), "v")
	}
	// One check passes; the next, commitCheckEvery writes later, stops it.
	ctx := &cancelAfter{Context: context.Background(), n: 1}
	if err := tx.CommitContext(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("CommitContext: %v, want context.Canceled", err)
	}
	if ctx.n != -1 {
		t.Fatalf("the context was asked %d times, want 2 (once while planning, then the stop)", 1-ctx.n)
	}

	after := db.Begin()
	defer after.Rollback()
	if n, err := after.RowCount(tA.ID); err != nil || n != 1 {
		t.Fatalf("rows after the canceled commit: %d, %v; want the 1 from before", n, err)
	}
	if _, ok, err := after.Get(tA.ID, k("old")); err != nil || !ok {
		t.Fatalf("the old row: %v, %v", ok, err)
	}
	if v, err := after.TableVersion(tA.ID); err != nil || v != version {
		t.Fatalf("version %d, %v; want %d", v, err, version)
	}

	// A small commit asks once, just before the commit point.
	tx = db.Begin()
	mustInsert(t, tx, tA, "new", "1")
	if err := tx.CommitContext(&cancelAfter{Context: context.Background(), n: 1}); err != nil {
		t.Fatal(err)
	}
}

// Planning a commit (the pass over its writes before the batch is
// built) looks at the context too: before, only encoding did, so a
// canceled commit of millions of writes first planned all of them.
func TestCommitContextStopsWhilePlanning(t *testing.T) {
	db := openMem(t)
	createTable(t, db, tA)
	tx := db.Begin()
	defer tx.Rollback()
	for i := range 2 * commitCheckEvery {
		mustInsert(t, tx, tA, fmt.Sprintf("k%06d", i), "v")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tx.commitCtx, tx.commitN = ctx, 0
	if _, _, _, err := tx.plan(); !errors.Is(err, context.Canceled) {
		t.Fatalf("plan with a canceled context: %v, want context.Canceled", err)
	}
	tx.commitCtx = nil
}
