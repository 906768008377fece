package storage

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Opening on a full disk (R-X2). Pebble's Open replays the write-ahead log
// into memtables and flushes them to sstables before it returns, and a
// flush that fails for want of space is retried for ever: a restart on a
// full disk used to hang, not listening, until space was freed. So Open:
//
//  1. Measures first. Replaying writes about as much as the log files
//     hold, plus the sstables' overhead and a new log, manifest and
//     options file (replayNeed). With less free space, an existing store
//     opens read-only: Pebble replays the log into memory only, reads see
//     every acknowledged commit, and every commit fails with a
//     *DiskFullError whose Need is set, until a restart with room. A new
//     store fails at once: there is nothing to read.
//  2. Gives up if the disk fills anyway while the log is replayed
//     (something else wrote meanwhile): the first ENOSPC of a flush fails
//     Open with a *StartupDiskFullError instead of waiting. Pebble's own
//     Open cannot be stopped, so it is left retrying; should space come
//     back it finishes, and the store is closed and its lock released.
//     The caller is expected to exit.

// replaySlack is what replaying needs beyond the log's size: a new log,
// manifest and options file, and room for the flush's rounding.
const replaySlack = 16 << 20

// replayNeed is the free space opening dir needs: the log files' size and
// a quarter more (sstable blocks, indexes and filters), plus replaySlack.
func replayNeed(fs vfs.FS, dir string) (uint64, error) {
	names, err := fs.List(dir)
	if err != nil {
		return 0, err
	}
	var logs uint64
	for _, n := range names {
		if !strings.HasSuffix(n, ".log") {
			continue
		}
		if fi, err := fs.Stat(fs.PathJoin(dir, n)); err == nil {
			logs += uint64(fi.Size())
		}
	}
	return logs + logs/4 + replaySlack, nil
}

// StartupDiskFullError: the disk filled while Open replayed the
// write-ahead log. Nothing acknowledged is lost: the log is still there,
// and a start with room replays it. errors.Is(err, ErrDiskFull) holds.
type StartupDiskFullError struct {
	Dir   string
	Cause error
}

func (e *StartupDiskFullError) Error() string {
	return fmt.Sprintf("storage: the disk holding %s filled up while the write-ahead log was replayed at start-up (%v); "+
		"nothing acknowledged is lost: free space on that disk and start again", e.Dir, e.Cause)
}

// Is makes errors.Is(err, ErrDiskFull) true.
func (e *StartupDiskFullError) Is(target error) bool { return target == ErrDiskFull }

// Unwrap returns the flush's error.
func (e *StartupDiskFullError) Unwrap() error { return e.Cause }

// abandonedOpen is returned by openPebble when it gave up on Pebble's
// Open: the lock then belongs to the goroutine still waiting for it.
type abandonedOpen struct{ *StartupDiskFullError }

// openPebble opens the store (step 2 above), reporting Pebble's
// background errors to the log as its default listener would.
func (db *DB) openPebble(dir string, po *pebble.Options, lock *pebble.Lock) (*pebble.DB, error) {
	full := make(chan error, 1)
	var opening atomic.Bool
	opening.Store(true)
	po.EventListener = &pebble.EventListener{BackgroundError: func(err error) {
		db.log.Error("background error: "+err.Error(), "component", "pebble")
		if opening.Load() && errors.Is(err, syscall.ENOSPC) {
			select {
			case full <- err:
			default:
			}
		}
	}}
	type opened struct {
		pdb *pebble.DB
		err error
	}
	done := make(chan opened, 1)
	go func() {
		pdb, err := pebble.Open(dir, po)
		done <- opened{pdb, err}
	}()
	select {
	case r := <-done:
		opening.Store(false)
		return r.pdb, r.err
	case err := <-full:
		db.log.Error("the disk filled while the write-ahead log was replayed: giving up the start; free space and start again", "dir", dir, "err", err)
		go func() {
			r := <-done
			if r.pdb != nil {
				_ = r.pdb.Close()
			}
			if lock != nil {
				_ = lock.Close()
			}
		}()
		return nil, abandonedOpen{&StartupDiskFullError{Dir: dir, Cause: err}}
	}
}

// ReadOnly returns why the store opened read-only (a *DiskFullError with
// Need set), or nil.
func (db *DB) ReadOnly() error {
	if db.readOnly != nil {
		return db.readOnly
	}
	return nil
}

// checkReplaySpace is step 1: a store without room to replay its log opens
// read-only; a new store without room fails.
func (db *DB) checkReplaySpace(po *pebble.Options, dir string) error {
	u, err := po.FS.GetDiskUsage(dir)
	if err != nil {
		return nil // without a reading, Open goes ahead (step 2 still holds)
	}
	need, err := replayNeed(po.FS, dir)
	if err != nil || u.AvailBytes >= need {
		return nil
	}
	desc, err := pebble.Peek(dir, po.FS)
	if err != nil || !desc.Exists {
		return &DiskFullError{Free: u.AvailBytes, Need: need, Cause: fmt.Errorf(
			"the disk holding %s has %d MB free; creating a data directory needs %d MB: free space on that disk and start again",
			dir, u.AvailBytes>>20, need>>20)}
	}
	po.ReadOnly = true
	db.readOnly = &DiskFullError{Free: u.AvailBytes, Need: need}
	db.log.Warn("the data directory's disk has no room to replay the write-ahead log: serving reads only; every write fails until mvserver is restarted with space freed",
		"dir", dir, "free_bytes", u.AvailBytes, "needed_bytes", need)
	return nil
}
