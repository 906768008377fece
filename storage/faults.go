package storage

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Storage faults (R-X2). Two kinds are told apart:
//
//   - A full disk is refused before Pebble sees the write: every commit
//     first checks that the data directory's disk keeps DiskReserve bytes
//     free after it, and fails with ErrDiskFull when it would not. Nothing
//     is written, reads go on, and commits succeed again once space is
//     freed. The reserve also leaves Pebble room for its flushes and
//     compactions, which cannot be refused.
//   - A failed write or sync of the write-ahead log leaves the log in an
//     unknown state: the commit that hit it (whose outcome is unknown: it
//     may or may not be there after a restart) and every later one fail
//     with a *WriteFailedError, while reads go on. Only a restart, which
//     replays the log from disk, makes the server writable again: after a
//     failed fsync the operating system may have dropped the pages it
//     could not write, so continuing would risk acknowledging commits
//     that are not durable.

// ErrDiskFull: a commit was refused because the data directory's disk is
// (nearly) full. The error is a *DiskFullError.
var ErrDiskFull = errors.New("storage: disk full")

// ErrWriteFailed: the write-ahead log could not be written or synced; no
// commit is accepted until the server restarts. The error is a
// *WriteFailedError.
var ErrWriteFailed = errors.New("storage: write-ahead log write failed")

// DiskFullError is ErrDiskFull with the numbers.
type DiskFullError struct {
	Free, Reserve uint64
	Cause         error // the write's own error (ENOSPC), if it got one
	// Need is set when the store opened read-only (startup.go): the free
	// space replaying its write-ahead log needed. Only a restart with
	// that much free makes it writable.
	Need uint64
}

func (e *DiskFullError) Error() string {
	if e.Need != 0 && e.Cause == nil {
		return fmt.Sprintf("storage: disk full: opened read-only with %d bytes free, %d needed to replay the write-ahead log; restart with space freed to write", e.Free, e.Need)
	}
	if e.Cause != nil {
		return fmt.Sprintf("storage: disk full: %v", e.Cause)
	}
	return fmt.Sprintf("storage: disk full: %d bytes free, reserve %d", e.Free, e.Reserve)
}

// Is makes errors.Is(err, ErrDiskFull) true.
func (e *DiskFullError) Is(target error) bool { return target == ErrDiskFull }

// WriteFailedError is ErrWriteFailed with the I/O error that caused it.
type WriteFailedError struct {
	Cause error
	// First is true for the commit that hit the failure: its outcome is
	// unknown. Later commits were not attempted.
	First bool
}

func (e *WriteFailedError) Error() string {
	return fmt.Sprintf("storage: write-ahead log write failed: %v", e.Cause)
}

// Is makes errors.Is(err, ErrWriteFailed) true.
func (e *WriteFailedError) Is(target error) bool { return target == ErrWriteFailed }

// Unwrap returns the I/O error.
func (e *WriteFailedError) Unwrap() error { return e.Cause }

// DefaultDiskReserve is the free space commits leave on the data
// directory's disk when Options.DiskReserve is 0.
const DefaultDiskReserve = 256 << 20

// diskGuard caches the free space of the data directory's disk (a statfs
// costs about a microsecond; a commit's fsync a thousand times more). A
// reading serves for diskCheckInterval while the commits since it could
// not have eaten a tenth of what was free; near the reserve every commit
// reads again.
type diskGuard struct {
	fs      vfs.FS
	dir     string
	reserve uint64

	mu      sync.Mutex
	free    uint64
	read    time.Time
	written uint64 // bytes committed since the reading
	known   bool

	failed atomic.Pointer[WriteFailedError]
	// stuck: a Pebble commit panicked (its log write failed) and the
	// panic was recovered. Pebble panics holding its commit pipeline's
	// lock, which nothing releases, so Close must not call Pebble's
	// Close (it waits for that lock forever).
	stuck atomic.Bool
}

const diskCheckInterval = 50 * time.Millisecond

// check reports whether a commit of size bytes keeps the reserve free.
func (g *diskGuard) check(size int) error {
	if g.fs == nil || g.reserve == 0 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	need := uint64(size)
	if !g.known || time.Since(g.read) > diskCheckInterval || (g.written+need)*10 > g.free || g.free < 2*g.reserve {
		u, err := g.fs.GetDiskUsage(g.dir)
		if err != nil {
			// Without a reading the commit is let through: Pebble's own
			// write will tell.
			return nil
		}
		g.free, g.read, g.written, g.known = u.AvailBytes, time.Now(), 0, true
	}
	free := g.free - min(g.free, g.written)
	if free < g.reserve+need {
		// Read again next time: space may be freed at any moment.
		g.known = false
		return &DiskFullError{Free: free, Reserve: g.reserve}
	}
	g.written += need
	return nil
}

// writable fails fast once the log has failed.
func (db *DB) writable(size int) error {
	if db.readOnly != nil {
		return db.readOnly
	}
	if err := db.logFailure(); err != nil {
		return err
	}
	return db.guard.check(size)
}

// logFailed records a failure of the log's write or sync and returns the
// commit's error. ENOSPC from the log is a full disk all the same, but the
// log is as broken as after any other failed write.
// The commit's batch reached Pebble, so its outcome is unknown (First).
func (db *DB) logFailed(err error) error {
	db.noteLogFailure(err)
	f := &WriteFailedError{Cause: err, First: true}
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%w (%w)", f, &DiskFullError{Cause: err})
	}
	return f
}

// noteLogFailure records the first failure of the log's write or sync
// (from a commit, or from the log file itself: log_watch.go) and wakes
// the Begins waiting for a sync that will not come.
func (db *DB) noteLogFailure(err error) {
	if db.guard.failed.CompareAndSwap(nil, &WriteFailedError{Cause: err}) {
		db.log.Error("the write-ahead log failed: no more commits are accepted until the server restarts", "err", err)
	}
	db.markLogFailed()
}

// logFailure is the error of a commit refused because the log failed
// before it: nothing of it was written, and the log (not the disk's
// space) is what it waits on, so it is not a DiskFullError even after an
// ENOSPC.
func (db *DB) logFailure() error {
	if f := db.guard.failed.Load(); f != nil {
		return &WriteFailedError{Cause: f.Cause}
	}
	return nil
}

// WriteFailure returns the log failure that stopped commits, or nil.
func (db *DB) WriteFailure() error {
	if f := db.guard.failed.Load(); f != nil {
		return f
	}
	return nil
}

// fatalPanic is what pebbleLogger.Fatalf panics with: Pebble calls it when
// its commit pipeline cannot go on (a log write failed).
type fatalPanic struct{ msg string }

// applyBatch hands b to Pebble, turning the panic of a fatal Pebble error
// on this goroutine into an error (applyPanic).
func (db *DB) applyBatch(b *pebble.Batch) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = db.applyPanic(r)
		}
	}()
	return db.pdb.ApplyNoSyncWait(b, pebble.Sync)
}

// applyPanic is the error of an apply that panicked inside Pebble: its
// Fatalf, or its commit pipeline's panic with the log write's own error
// (a full disk: ENOSPC). Either way the log has failed, and Pebble's
// pipeline is stuck (its lock held). Other panics go on.
func (db *DB) applyPanic(r any) error {
	var cause error
	switch v := r.(type) {
	case fatalPanic:
		cause = errors.New(v.msg)
	case error:
		cause = v
	default:
		panic(r)
	}
	db.guard.stuck.Store(true)
	return db.logFailed(cause)
}
