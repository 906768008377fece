package storage

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Engines other than Pebble, selected by Options.Store (the server's
// --store): "scheme://endpoint[,endpoint…]". Each registers an opener for
// its schemes from a file built only with its build tag, so the default
// build compiles none of their dependencies:
//
//	tikv://pd1:2379[,pd2:2379…]  TiKV through its PD endpoints (tag tikv)
//	tikvmock://                  an in-process mock TiKV cluster (tag tikv;
//	                             tests and benchmarks: in memory with
//	                             Options.InMemory, else a mock store in Dir)
//	tikvmock://NAME              a mock cluster shared by every DB of this
//	                             process that opens NAME (several "processes"
//	                             in one test)

// engineOpener opens an engine for the endpoints of a store URL.
type engineOpener func(endpoints []string, opts *Options) (engine, error)

// engineOpeners is filled by the engines' init functions.
var engineOpeners = map[string]engineOpener{}

// ErrNoEngine: Options.Store names an engine this build does not have.
var ErrNoEngine = errors.New("storage: no such storage engine in this build")

// openStore opens the engine opts.Store names and the DB on it. Staged
// inserts (stage.go) keep their runs in the data directory (in memory
// with Options.InMemory; never without a directory), and commit as new
// generations (stage_generation.go).
func openStore(opts Options) (*DB, error) {
	scheme, rest, ok := strings.Cut(opts.Store, "://")
	if !ok {
		return nil, fmt.Errorf("%w: --store %q is not scheme://endpoints (tikv://pd-host:2379)", ErrNoEngine, opts.Store)
	}
	open := engineOpeners[scheme]
	if open == nil {
		if scheme == "tikv" || scheme == "tikvmock" {
			return nil, fmt.Errorf("%w: %s (build with -tags tikv)", ErrNoEngine, scheme)
		}
		return nil, fmt.Errorf("%w: %s", ErrNoEngine, scheme)
	}
	var endpoints []string
	for _, e := range strings.Split(rest, ",") {
		if e = strings.TrimSpace(e); e != "" {
			endpoints = append(endpoints, e)
		}
	}
	db := newDB(&opts)
	if !opts.InMemory && opts.Dir != "" {
		if err := db.lockDataDir(opts.Dir, vfs.Default); err != nil {
			return nil, err
		}
	}
	eng, err := open(endpoints, &opts)
	if err != nil {
		db.unlockDataDir()
		return nil, fmt.Errorf("storage: open %s: %w", opts.Store, err)
	}
	db.eng = eng
	if err := db.initOtherStage(&opts); err != nil {
		_ = eng.close()
		db.unlockDataDir()
		return nil, err
	}
	if db.sharedStore = eng.shared(); db.sharedStore {
		if err := db.allocNode(); err != nil {
			_ = eng.close()
			db.unlockDataDir()
			return nil, err
		}
		if err := db.holdNodeLease(); err != nil {
			_ = eng.close()
			db.unlockDataDir()
			return nil, err
		}
	}
	if err := db.load(); err != nil {
		db.dropNodeLease()
		_ = eng.close()
		db.unlockDataDir()
		return nil, err
	}
	return db, nil
}

// lockDataDir creates the data directory and takes its lock (Pebble's
// LOCK file, through fs), so a second server on it fails at once saying
// it is in use. Every engine takes it: a server on another engine keeps
// its staged files (and the mock cluster's data) there too; a second
// one failed inside the mock's store with "resource temporarily
// unavailable", or, on a real cluster, shared the staged files.
func (db *DB) lockDataDir(dir string, fs vfs.FS) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("storage: create data directory: %w", err)
	}
	lock, err := pebble.LockDirectory(dir, fs)
	if err != nil {
		if isLockHeld(err) {
			return &lockedError{dir: dir, cause: err}
		}
		return fmt.Errorf("storage: lock data directory %s: %w", dir, err)
	}
	db.lock = lock
	return nil
}

func (db *DB) unlockDataDir() {
	if db.lock != nil {
		_ = db.lock.Close()
		db.lock = nil
	}
}

// initOtherStage sets staged inserts up on an engine other than Pebble.
func (db *DB) initOtherStage(opts *Options) error {
	po := &pebble.Options{}
	switch {
	case opts.InMemory:
		po.FS = vfs.NewMem()
		return db.initStage(po.FS, "", po, opts.StageRows)
	case opts.Dir != "":
		po.FS = vfs.Default
		if opts.FS != nil {
			po.FS = opts.FS
		}
		return db.initStage(po.FS, opts.Dir, po, opts.StageRows)
	}
	db.stage.threshold = -1
	return nil
}
