package storage

import (
	"errors"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// logFailFS fails every write and sync of the write-ahead log while fail
// is set.
func logFailFS(fail *atomic.Bool) vfs.FS {
	return errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if fail.Load() && strings.HasSuffix(op.Path, ".log") && (op.Kind == errorfs.OpFileWrite || op.Kind == errorfs.OpFileSync || op.Kind == errorfs.OpFileSyncData) {
			return syscall.EIO
		}
		return nil
	}))
}

// A commit whose write-ahead log write failed is never visible: before,
// its batch was in Pebble's memtable and every later Begin read its rows
// although the commit had failed (and a restart may lose them).
func TestFailedCommitInvisible(t *testing.T) {
	var fail atomic.Bool
	db, err := Open(Options{Dir: t.TempDir(), FS: logFailFS(&fail), DiskReserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "a", "1"); return nil })

	reader := db.Begin() // open across the failure: its snapshot stays
	fail.Store(true)
	tx := db.Begin()
	mustInsert(t, tx, tA, "b", "2")
	if err := tx.Commit(); !errors.Is(err, ErrWriteFailed) {
		t.Fatalf("commit with the log failing: %v", err)
	}
	for i, rd := range []*Txn{reader, db.Begin(), db.Begin()} {
		if _, ok := get(t, rd, tA.ID, "b"); ok {
			t.Fatalf("reader %d sees the row of the commit whose log write failed", i)
		}
		if _, ok := get(t, rd, tA.ID, "a"); !ok {
			t.Fatalf("reader %d lost the acknowledged row", i)
		}
		rd.Rollback()
	}
	// Every acknowledged commit before the failure stays visible, also
	// when no Begin ran between them.
	if _, ok := db.Begin().StateSeq(); ok {
		t.Fatal("StateSeq is ok after the log failed")
	}
}

// Acknowledged commits of a burst with no Begin between them are all
// visible to the next Begin (the snapshot taken after the last sync).
func TestBeginSeesAcknowledgedCommits(t *testing.T) {
	db, err := Open(Options{Dir: t.TempDir(), DiskReserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	createTable(t, db, tA)
	for _, k := range []string{"a", "b", "c"} {
		update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, k, "1"); return nil })
	}
	tx := db.Begin()
	defer tx.Rollback()
	for _, k := range []string{"a", "b", "c"} {
		if _, ok := get(t, tx, tA.ID, k); !ok {
			t.Fatalf("acknowledged row %s missing", k)
		}
	}
}
