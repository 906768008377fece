package storage

import (
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// logWatchFS is the filesystem Pebble gets: it reports a failed write or
// sync of a write-ahead log file (*.log) to the DB the moment the
// operating system returns it, on Pebble's flushing goroutine, before
// any commit waiting for that sync hears of it.
//
// Pebble's log writer keeps such a failure and hands it to a later
// record's write, which then panics inside Pebble's commit, holding (or
// wrongly releasing) its locks: a later commit could end the process or
// leave Close waiting forever. So no batch may reach Pebble once the log
// has failed. The DB's failure flag is set here first, and every commit
// reads it under commitMu before it applies (commit.go): a commit that
// applies after another's log write failed would have to follow, under
// commitMu, the apply during which Pebble took the failure up, and so it
// sees the flag.
//
// It is used as a pointer: Pebble compares filesystems (a staged file is
// linked, not copied, when its filesystem is Pebble's).
type logWatchFS struct {
	vfs.FS
	failed func(error)
}

func (fs *logWatchFS) watch(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return logWatchFile{File: f, failed: fs.failed}, nil
}

func (fs *logWatchFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	return fs.watch(name, f, err)
}

func (fs *logWatchFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	return fs.watch(newname, f, err)
}

func (fs *logWatchFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, category, opts...)
	return fs.watch(name, f, err)
}

// logWatchFile is one log file: its write and sync errors are reported.
type logWatchFile struct {
	vfs.File
	failed func(error)
}

func (f logWatchFile) note(err error) error {
	if err != nil {
		f.failed(err)
	}
	return err
}

func (f logWatchFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	return n, f.note(err)
}

func (f logWatchFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	return n, f.note(err)
}

func (f logWatchFile) Sync() error     { return f.note(f.File.Sync()) }
func (f logWatchFile) SyncData() error { return f.note(f.File.SyncData()) }

func (f logWatchFile) SyncTo(length int64) (bool, error) {
	full, err := f.File.SyncTo(length)
	return full, f.note(err)
}
