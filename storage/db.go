package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Options configure Open.
type Options struct {
	Dir       string           // data directory
	InMemory  bool             // tests: use Pebble's in-memory vfs, Dir ignored
	Clock     func() time.Time // commit timestamps; nil = time.Now
	Logger    *slog.Logger     // optional
	CacheSize int64            // block cache bytes; 0 = 256 MiB
	// Compression and size (bytes before compression) of the blocks
	// Pebble writes (block_format.go); zero values = DefaultCompression,
	// DefaultBlockSize. Other engines ignore them.
	Compression Compression
	BlockSize   int
	// FS is the filesystem under Dir (nil = the operating system's); tests
	// wrap it to inject faults.
	FS vfs.FS
	// DiskReserve is the free space every commit must leave on the data
	// directory's disk (faults.go); 0 = DefaultDiskReserve, negative = none.
	DiskReserve int64
	// HistoryLimit bounds the memory of the write history serializable
	// transactions are validated against (writehistory.go); 0 =
	// DefaultHistoryLimit.
	HistoryLimit int64
	// StageRows is how many inserts into one table a transaction that
	// allows staging holds before it writes them to disk (stage.go); 0 =
	// DefaultStageRows, negative = never.
	StageRows int
	// Store selects the engine (engines.go): "" is Pebble in Dir;
	// "tikv://pd1:2379[,pd2:2379…]" a TiKV cluster by its PD endpoints.
	// Engines other than Pebble need the tikv build tag.
	Store string
}

const (
	defaultCacheSize = 256 << 20
	memTableSize     = 64 << 20
)

// DB is one open data directory. It is safe for concurrent use; a Txn is not
// (one goroutine at a time).
type DB struct {
	eng engine // the ordered store (engine.go)
	// sharedStore: eng.shared(); node and rowIDBase are this open's node
	// number and row-id range on it (shared.go).
	sharedStore     bool
	node, rowIDBase int64
	leases          leases        // lease.go
	liveness        *nodeLiveness // this open's node lease on a shared store (shared_nodes.go)
	// pdb is the Pebble instance under eng, for the speedups only Pebble
	// has (engine.go); nil on another engine.
	pdb   *pebble.DB
	lock  *pebble.Lock // nil in memory
	clock func() time.Time
	log   *slog.Logger

	// visMu makes a Begin's snapshot and its logical sequence one atomic
	// observation: Begin holds it shared, a commit holds it exclusively
	// around ApplyNoSyncWait and seq++ (invariant 5 in doc.go).
	visMu sync.RWMutex
	seq   uint64 // commits applied so far (logical commit sequence)
	// noDurableWait lets a Begin read commits whose sync is pending, as
	// before durable.go: set only by BenchmarkReadDuringSync, to measure
	// what the wait costs. Never set it elsewhere.
	noDurableWait bool
	closed        atomic.Bool

	// snapMu guards curSnap: the snapshot of sequence seq that Begins
	// share while no commit moves it (snapshot.go).
	snapMu  sync.Mutex
	curSnap *sharedSnap

	// activeMu guards active: begin seq → number of open transactions that
	// began at it. The oldest bounds the conflict bookkeeping. serActive
	// counts the serializable ones alike; its oldest bounds the write
	// history.
	activeMu  sync.Mutex
	active    map[uint64]int
	serActive map[uint64]int

	// commitMu serializes validation, version assignment and apply.
	commitMu  sync.Mutex
	conflicts conflictTracker // guarded by commitMu
	history   writeHistory    // guarded by commitMu (writehistory.go)
	deleted   deletedKeys     // written under commitMu (deleted.go)
	locks     lockTable       // the open transactions' row locks (row_locks.go)

	tablesMu sync.RWMutex
	tables   map[TableID]*tableState

	// Rewrites (generation.go): anyRewritten is set once some table's
	// rows live under another id than its own; rowsIDMu guards nextRowsID.
	anyRewritten atomic.Bool
	rowsIDMu     sync.Mutex
	nextRowsID   TableID

	subs   subscribers
	notify notifier

	stage stageState // staged inserts (stage.go)

	guard diskGuard
	dur   durability // which applied commits are durable (durable.go)
	// readOnly is set when the store opened read-only for want of space
	// to replay its log (startup.go); every commit fails with it.
	readOnly *DiskFullError
}

// Open opens (creating if needed) the data directory. A directory locked by
// another process fails at once with an error wrapping ErrLocked. With
// Options.Store naming another engine (engines.go) it opens that instead.
func Open(opts Options) (*DB, error) {
	if opts.Store != "" {
		return openStore(opts)
	}
	db := newDB(&opts)
	po := &pebble.Options{
		CacheSize:          opts.CacheSize,
		MemTableSize:       memTableSize,
		FormatMajorVersion: pebble.FormatNewest,
		Logger:             pebbleLogger{db.log},
	}
	if po.CacheSize <= 0 {
		po.CacheSize = defaultCacheSize
	}
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	if err := applyBlockFormat(po, opts.Compression, opts.BlockSize); err != nil {
		return nil, err
	}
	dir := opts.Dir
	if opts.InMemory {
		po.FS = vfs.NewMem()
		dir = ""
	} else {
		po.FS = opts.FS
		if po.FS == nil {
			po.FS = vfs.Default
		}
		if dir == "" {
			return nil, errors.New("storage: Options.Dir is empty")
		}
		// Take Pebble's LOCK ourselves first so a second server fails at once
		// with a clear error (fcntl F_SETLK never waits).
		if err := db.lockDataDir(dir, po.FS); err != nil {
			return nil, err
		}
		po.Lock = db.lock
	}
	if !opts.InMemory {
		if err := db.checkReplaySpace(po, dir); err != nil {
			_ = db.lock.Close()
			return nil, err
		}
	}
	if !opts.InMemory {
		po.FS = &logWatchFS{FS: po.FS, failed: db.noteLogFailure}
	}
	pdb, err := db.openPebble(dir, po, db.lock)
	if err != nil {
		var ab abandonedOpen
		if errors.As(err, &ab) {
			return nil, ab.StartupDiskFullError // the lock is released once Pebble's Open ends
		}
		if db.lock != nil {
			_ = db.lock.Close()
		}
		return nil, fmt.Errorf("storage: open %s: %w", dir, err)
	}
	db.pdb = pdb
	db.eng = &pebbleEngine{db: db, p: pdb}
	if err := db.initStage(po.FS, dir, po, opts.StageRows); err != nil {
		_ = pdb.Close()
		if db.lock != nil {
			_ = db.lock.Close()
		}
		return nil, err
	}
	if !opts.InMemory && opts.DiskReserve >= 0 {
		db.guard.fs, db.guard.dir, db.guard.reserve = po.FS, dir, uint64(opts.DiskReserve)
		if opts.DiskReserve == 0 {
			db.guard.reserve = DefaultDiskReserve
		}
	}
	if err := db.load(); err != nil {
		_ = pdb.Close()
		if db.lock != nil {
			_ = db.lock.Close()
		}
		return nil, err
	}
	return db, nil
}

// newDB is a DB with its in-memory state set up and no engine yet.
func newDB(opts *Options) *DB {
	db := &DB{
		clock:     opts.Clock,
		log:       opts.Logger,
		active:    make(map[uint64]int),
		serActive: make(map[uint64]int),
		tables:    make(map[TableID]*tableState),
	}
	if db.clock == nil {
		db.clock = time.Now
	}
	if db.log == nil {
		db.log = slog.New(slog.DiscardHandler)
	}
	db.conflicts.init()
	db.dur.init()
	if opts.HistoryLimit <= 0 {
		opts.HistoryLimit = DefaultHistoryLimit
	}
	db.history.init(opts.HistoryLimit)
	db.notify.init()
	return db
}

// isLockHeld tells a held lock (EAGAIN/EACCES from fcntl, or Pebble's
// in-process check) from other failures such as a read-only directory, where
// creating the LOCK file fails with an *os.PathError.
func isLockHeld(err error) bool {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return false
	}
	return errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) ||
		strings.Contains(err.Error(), "lock held by current process")
}

// load checks the layout version and reads every table's state.
func (db *DB) load() error {
	v, found, err := db.eng.get(globalFormatKey, nil)
	switch {
	case err != nil:
		return fmt.Errorf("storage: read format: %w", err)
	case !found:
		b := db.eng.newBatch(0)
		_ = b.set(globalFormatKey, []byte(formatVersion))
		err := db.eng.write(b, true)
		b.close()
		if err != nil {
			return fmt.Errorf("storage: write format: %w", err)
		}
	default:
		got := string(v)
		if got != formatVersion {
			return fmt.Errorf("storage: data directory has layout version %q, this build reads %q", got, formatVersion)
		}
	}
	start, end := []byte{prefixState}, []byte{prefixState + 1}
	it, err := db.eng.newIter(start, end)
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if len(k) != tablePrefixLen {
			_ = it.Close()
			return fmt.Errorf("storage: corrupt state key %x", k)
		}
		tbl := TableID(uint32(k[1])<<24 | uint32(k[2])<<16 | uint32(k[3])<<8 | uint32(k[4]))
		v, err := it.ValueAndErr()
		if err != nil {
			_ = it.Close()
			return err
		}
		ps, err := decodeState(v)
		if err != nil {
			_ = it.Close()
			return err
		}
		st := newTableState(tbl)
		st.version.Store(ps.version)
		st.nextRowID.Store(db.firstRowID(ps.nextRowID))
		st.lastTS = ps.lastTS
		st.vacuumedBelow = ps.vacuumedBelow
		st.rowCount = ps.rowCount
		st.indexes = ps.indexes
		if ps.rowsID != 0 && ps.rowsID != tbl {
			st.rowsID.Store(uint32(ps.rowsID))
			st.rewritten.Store(true)
			db.anyRewritten.Store(true)
		}
		db.tables[tbl] = st
	}
	if err := it.Close(); err != nil {
		return err
	}
	return db.loadRewrites()
}

// Close closes the DB. Every Txn must have ended; commits in flight finish
// first.
func (db *DB) Close() error {
	db.dropNodeLease()
	db.commitMu.Lock()
	db.visMu.Lock()
	if db.closed.Load() {
		db.visMu.Unlock()
		db.commitMu.Unlock()
		return nil
	}
	// No Begin runs (visMu): drop the DB's reference on the shared
	// snapshot, closing it unless an open transaction still reads it.
	db.snapMu.Lock()
	last := db.dropCurrentLocked()
	db.snapMu.Unlock()
	db.closeSnap(last)
	db.closed.Store(true)
	db.visMu.Unlock()
	db.commitMu.Unlock()
	if db.guard.stuck.Load() {
		// A commit's log write failed inside Pebble, which panicked
		// holding its commit pipeline's lock (faults.go): Pebble's Close
		// would wait for it forever. Nothing is left to write: every
		// acknowledged commit is in the log, which the next start
		// replays, as after a crash. The directory stays locked until
		// the process exits: Pebble's background work may still run.
		db.log.Warn("storage left unclosed after the write-ahead log failed inside a commit; the next start replays the log")
		return nil
	}
	err := db.eng.close()
	if err != nil && db.guard.failed.Load() != nil {
		// The log failed earlier (faults.go) and Pebble's close reports
		// that failure again. Nothing more is lost by it: every
		// acknowledged commit is in the log, which the next start
		// replays. The stop is otherwise clean (Pebble closes the rest
		// after the log's error), so it is not an error of Close.
		db.log.Warn("storage closed after an earlier write-ahead log failure", "err", err)
		err = nil
	}
	if db.lock != nil {
		err = errors.Join(err, db.lock.Close())
	}
	return err
}

// table returns the in-memory state of tbl, creating an empty one (no
// versions, row ids from 1) for a table storage has not seen.
func (db *DB) table(tbl TableID) *tableState {
	db.tablesMu.RLock()
	st := db.tables[tbl]
	db.tablesMu.RUnlock()
	if st != nil {
		return st
	}
	db.tablesMu.Lock()
	defer db.tablesMu.Unlock()
	if st = db.tables[tbl]; st == nil {
		st = newTableState(tbl)
		st.nextRowID.Store(db.firstRowID(1))
		db.tables[tbl] = st
	}
	return st
}

// oldestActive returns the smallest begin seq of an open transaction and
// of an open serializable one, each fallback when there is none.
func (db *DB) oldestActive(fallback uint64) (all, serializable uint64) {
	db.activeMu.Lock()
	defer db.activeMu.Unlock()
	all, serializable = fallback, fallback
	for s := range db.active {
		all = min(all, s)
	}
	for s := range db.serActive {
		serializable = min(serializable, s)
	}
	return all, serializable
}

// pebbleLogger sends Pebble's log lines to slog.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Log(context.Background(), slog.LevelDebug, fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "component", "pebble", "fatal", true)
	panic(fatalPanic{"pebble: " + msg})
}
