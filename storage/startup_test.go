package storage

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// fullDiskFS is the operating system's filesystem, reporting avail bytes
// free when avail is set, and failing every write of an sstable with
// ENOSPC while sstFull is set: a disk that fills under a flush.
type fullDiskFS struct {
	*errorfs.FS
	avail   atomic.Uint64
	sstFull atomic.Bool
}

func newFullDiskFS() *fullDiskFS {
	f := &fullDiskFS{}
	f.FS = errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if !f.sstFull.Load() || !strings.HasSuffix(op.Path, ".sst") {
			return nil
		}
		switch op.Kind {
		case errorfs.OpCreate, errorfs.OpFileWrite, errorfs.OpFileWriteAt, errorfs.OpFileSync, errorfs.OpFileSyncData:
			return syscall.ENOSPC
		}
		return nil
	}))
	return f
}

func (f *fullDiskFS) GetDiskUsage(path string) (vfs.DiskUsage, error) {
	u, err := f.FS.GetDiskUsage(path)
	if a := f.avail.Load(); a != 0 && err == nil {
		u.AvailBytes = a
	}
	return u, err
}

// storeWithLog leaves dir holding n acknowledged rows of tA that live only
// in the write-ahead log (Close does not flush), so the next Open replays
// and flushes them.
func storeWithLog(t *testing.T, dir string, n int) {
	t.Helper()
	db, err := Open(Options{Dir: dir, DiskReserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	createTable(t, db, tA)
	for i := 0; i < n; i++ {
		update(t, db, func(tx *Txn) error {
			mustInsert(t, tx, tA, fmt.Sprintf("k%04d", i), strings.Repeat("v", 100))
			return nil
		})
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// Without room to replay its write-ahead log, an existing store opens
// read-only: reads see every acknowledged commit, commits fail with a
// DiskFullError saying a restart is needed, Close is clean; a later open
// with room is writable and has lost nothing. (Before, Open waited for
// the flush of the replayed log for ever.)
func TestOpenReadOnlyWithoutRoomToReplay(t *testing.T) {
	dir := t.TempDir()
	storeWithLog(t, dir, 50)
	fs := newFullDiskFS()
	fs.avail.Store(1 << 20)
	fs.sstFull.Store(true)
	db, err := Open(Options{Dir: dir, FS: fs, DiskReserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	var df *DiskFullError
	if err := db.ReadOnly(); !errors.As(err, &df) || df.Need == 0 || df.Free != 1<<20 {
		t.Fatalf("ReadOnly() = %v, want a DiskFullError with the space needed", err)
	}
	tx := db.Begin()
	if got := scanAll(t, tx, tA.ID, nil, nil); len(got) != 50 {
		t.Fatalf("read-only store reads %d rows, want 50", len(got))
	}
	_, err = tx.Insert(tA, k("new"), k("x"))
	if err == nil {
		err = tx.Commit()
	} else {
		tx.Rollback()
	}
	if !errors.As(err, &df) || df.Need == 0 || !errors.Is(err, ErrDiskFull) {
		t.Fatalf("commit on a read-only store: %v, want a DiskFullError with Need", err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close of the read-only store: %v", err)
	}

	db, err = Open(Options{Dir: dir, DiskReserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.ReadOnly() != nil {
		t.Fatal("read-only with room")
	}
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "new", "x"); return nil })
	if got := scanAll(t, db.Begin(), tA.ID, nil, nil); len(got) != 51 {
		t.Fatalf("after a writable open: %d rows, want 51", len(got))
	}
}

// A new store on a disk without room fails at once, saying so.
func TestOpenNewStoreWithoutRoom(t *testing.T) {
	fs := newFullDiskFS()
	fs.avail.Store(1 << 20)
	_, err := Open(Options{Dir: t.TempDir(), FS: fs})
	if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "creating a data directory needs") {
		t.Fatalf("Open of a new store on a full disk: %v", err)
	}
}

// A disk that fills while the log is replayed (the free space measured
// enough, then the flush hit ENOSPC) fails Open at once with an error
// saying so, instead of waiting for ever; once space is back, Pebble's
// abandoned open finishes and lets the directory go.
func TestOpenFailsFastWhenDiskFillsDuringReplay(t *testing.T) {
	dir := t.TempDir()
	storeWithLog(t, dir, 50)
	fs := newFullDiskFS()
	fs.sstFull.Store(true)
	_, err := Open(Options{Dir: dir, FS: fs, DiskReserve: -1})
	var sf *StartupDiskFullError
	if !errors.As(err, &sf) || !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "free space on that disk and start again") {
		t.Fatalf("Open on a disk that fills during replay: %v", err)
	}
	fs.sstFull.Store(false)
	deadline := time.Now().Add(30 * time.Second)
	for {
		db, err := Open(Options{Dir: dir, DiskReserve: -1})
		if err == nil {
			defer db.Close()
			if got := scanAll(t, db.Begin(), tA.ID, nil, nil); len(got) != 50 {
				t.Fatalf("after space came back: %d rows, want 50", len(got))
			}
			return
		}
		if !errors.Is(err, ErrLocked) || time.Now().After(deadline) {
			t.Fatalf("reopen once space came back: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Close after a failed write of the log is clean: Pebble's close repeats
// the log's error, which is no failure of the stop (SIGTERM then exits
// 0). Before, Close returned it and the server exited 1.
func TestCloseAfterLogFailure(t *testing.T) {
	dir := t.TempDir()
	var fail atomic.Bool
	fs := errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if fail.Load() && strings.HasSuffix(op.Path, ".log") && (op.Kind == errorfs.OpFileWrite || op.Kind == errorfs.OpFileSync || op.Kind == errorfs.OpFileSyncData) {
			return syscall.ENOSPC
		}
		return nil
	}))
	db, err := Open(Options{Dir: dir, FS: fs, DiskReserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	createTable(t, db, tA)
	update(t, db, func(tx *Txn) error { mustInsert(t, tx, tA, "a", "1"); return nil })
	fail.Store(true)
	tx := db.Begin()
	mustInsert(t, tx, tA, "b", "2")
	if err := tx.Commit(); !errors.Is(err, ErrWriteFailed) {
		t.Fatalf("commit with the log failing: %v", err)
	}
	fail.Store(false)
	if err := db.Close(); err != nil {
		t.Fatalf("Close after the log failed: %v", err)
	}
	db, err = Open(Options{Dir: dir, DiskReserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, ok := get(t, db.Begin(), tA.ID, "a"); !ok {
		t.Fatal("the acknowledged row is gone")
	}
}
