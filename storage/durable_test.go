package storage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

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

// openLogFailing opens a DB on a fresh directory whose log writes and
// syncs fail while the returned flag is set.
func openLogFailing(t *testing.T) (*DB, *atomic.Bool) {
	t.Helper()
	return openLogFailingIn(t, t.TempDir())
}

func openLogFailingIn(t *testing.T, dir string) (*DB, *atomic.Bool) {
	t.Helper()
	fail := new(atomic.Bool)
	db, err := Open(Options{Dir: dir, FS: logFailFS(fail), DiskReserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	return db, fail
}

// A commit whose write-ahead log write failed is never visible: before,
// its batch was in Pebble's memtable and every later Begin read its rows
// although the commit had failed (and a restart may lose them).
func TestFailedCommitInvisible(t *testing.T) {
	db, fail := openLogFailing(t)
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

// applyInFlight applies a batch with a value of n bytes the way a commit
// does before it waits for its sync, and does not wait: a commit in flight.
func applyInFlight(t *testing.T, db *DB, key string, n int) error {
	t.Helper()
	b := db.pdb.NewBatch()
	if err := b.Set([]byte(key), bytes.Repeat([]byte("v"), n), nil); err != nil {
		t.Fatal(err)
	}
	return db.applyBatch(b)
}

// A commit after another's log write failed in the background (its sync
// not yet waited for) is refused before it reaches Pebble: Pebble hands
// its log writer's failure to a later record's write, which panics
// inside its commit pipeline (log_watch.go). Before, the commit went on
// into Pebble.
func TestCommitRefusedAfterBackgroundLogFailure(t *testing.T) {
	db, fail := openLogFailing(t)
	defer db.Close()
	createTable(t, db, tA)
	fail.Store(true)
	if err := applyInFlight(t, db, "in-flight", 40<<10); err != nil {
		t.Fatalf("the in-flight apply: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for db.WriteFailure() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the log file's failed write was not noted within 10s")
		}
		time.Sleep(time.Millisecond)
	}
	tx := db.Begin()
	mustInsert(t, tx, tA, "after", strings.Repeat("v", 40<<10))
	err := tx.Commit()
	var wf *WriteFailedError
	if !errors.As(err, &wf) || wf.First {
		t.Fatalf("a commit after the log failed: %v (%#v), want a WriteFailedError saying nothing was written", err, wf)
	}
	if db.guard.stuck.Load() {
		t.Fatal("the refused commit reached Pebble")
	}
}

// Close returns after a log write failed inside Pebble's commit. Pebble's
// log writer takes up its flusher's failure when a 32 KB block fills, and
// the next record's write then panics holding the commit pipeline's lock;
// Pebble's own Close waited for that lock forever (a SIGTERM after a full
// disk hung the server). Batches of two blocks each, applied as commits
// in flight and past every check of the DB, make that happen in order.
//
// It runs in a child process: the stuck Pebble's goroutines outlive
// Close until the process exits, as the server's do. The child exits
// without its test's cleanups, so it works in the parent's directory.
func TestCloseAfterLogFailureInsideCommit(t *testing.T) {
	dir := os.Getenv("STORAGE_STUCK_CHILD")
	if dir == "" {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestCloseAfterLogFailureInsideCommit$", "-test.v")
		cmd.Env = append(os.Environ(), "STORAGE_STUCK_CHILD="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "closed after the stuck commit") {
			t.Fatalf("the child process: %v\n%s", err, out)
		}
		return
	}
	db, fail := openLogFailingIn(t, dir)
	fail.Store(true)
	var errs []error
	// Three fit Pebble's first memtable (256 KB): rotating it after the
	// failure would be a fatal error inside Pebble, which no recover
	// catches (the commit path's check under commitMu prevents it).
	for i := 0; i < 3 && !db.guard.stuck.Load(); i++ {
		errs = append(errs, applyInFlight(t, db, fmt.Sprintf("k%d", i), 40<<10))
		time.Sleep(50 * time.Millisecond) // the flusher's write fails meanwhile
	}
	if !db.guard.stuck.Load() {
		t.Fatalf("no apply panicked inside Pebble (errors %v): the test no longer reaches the stuck pipeline", errs)
	}
	if err := errs[len(errs)-1]; !errors.Is(err, ErrWriteFailed) {
		t.Fatalf("the apply that panicked returned %v, want ErrWriteFailed", err)
	}
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close after the log failed: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Close after the log failed inside a commit did not return in 20s")
	}
	fmt.Println("closed after the stuck commit")
	os.Exit(0) // before the leak check of TestMain
}
