package storage

import "fmt"

// The engine interface: the ordered key-value store a DB keeps its key
// layout (doc.go) in. Everything above it — table versions, row ids, the
// change feed, indexes, generations, the write-set and read-set rules —
// is the DB's, in this process, and the same on every engine. An engine
// offers only
//
//   - get: a key's latest committed value;
//   - newIter: bounded ordered iteration over the latest state;
//   - snapshot: a consistent read view at the version of the last commit
//     applied (get and newIter on it, until closed);
//   - newBatch and commit: an atomic batch of sets, deletes and range
//     deletions, visible all at once at the next version, durable when
//     its wait returns;
//   - write: the same atomicity for writes outside the commit pipeline
//     (a rewrite's chunks, start-up repairs), durable when sync.
//
// Conflict detection is layered: the DB's commit validates first
// committer wins (invariant 5) and the read set (invariant 11) under
// commitMu against the commits of this process, then hands the engine one
// batch. An engine that several processes share (TiKV) also fails a
// commit whose keys another process wrote since the batch's snapshot with
// errEngineConflict, which the commit reports as ErrSerialization; the
// design of that case is in doc.go (Several processes on TiKV). Pebble,
// owned by one process (its directory lock), never does.
//
// Pebble stays the default and its speedups stay behind the interface,
// reached through DB.pdb, which is nil on any other engine: staged
// inserts ingested as SSTables (stage.go), the WAL's fsync batching
// (ApplyNoSyncWait + SyncWait), iterator limits and step statistics for
// insert probes (probe.go), disk usage estimates (size.go) and WAL
// latency (walstats.go).
// errEngineConflict: another process committed a key of the batch since
// the batch's transaction began (or its conflictSince snapshot).
var errEngineConflict = fmt.Errorf("%w: a key was written by another process on the same store", ErrSerialization)

type engine interface {
	engineReader
	snapshot() engineSnapshot
	newBatch(sizeHint int) engineBatch
	// commit applies b atomically; the caller holds visMu exclusively, so
	// a snapshot taken after it returns sees all of b. b.wait then returns
	// once b is durable.
	commit(b engineBatch) error
	// write applies b atomically outside the commit pipeline; sync: b and
	// everything written before it are durable when write returns.
	write(b engineBatch, sync bool) error
	// shared: other processes may write the store (TiKV through PD, or a
	// named mock cluster). The DB then takes a snapshot per transaction,
	// reads table states from it at commit and hands out row ids from its
	// own node's range (shared.go). Pebble, owned by one process, is not.
	shared() bool
	close() error
}

// engineReader reads keys and ordered ranges.
type engineReader interface {
	// get appends key's value to buf[:0]; false when there is none.
	get(key, buf []byte) ([]byte, bool, error)
	// has reports whether key has a value.
	has(key []byte) (bool, error)
	// newIter iterates over the keys in [lower, upper) (nil: unbounded).
	newIter(lower, upper []byte) (engineIter, error)
}

// engineSnapshot is a read view at one version. Reads of it are
// repeatable until close.
type engineSnapshot interface {
	engineReader
	close() error
}

// engineIter is a bounded ordered iterator, Pebble's method set (so a
// *pebble.Iterator is one with no wrapper on the scan path). Key and
// value are valid until the iterator moves.
type engineIter interface {
	First() bool
	Last() bool
	Next() bool
	// NextPrefix is Next for the DB's whole-key prefixes; an engine that
	// keeps older versions of a key skips them at once.
	NextPrefix() bool
	Prev() bool
	SeekGE(key []byte) bool
	SeekLT(key []byte) bool
	// SeekPrefixGE positions at key itself, if present (the DB's prefixes
	// are whole keys); Pebble skips files by their bloom filters.
	SeekPrefixGE(key []byte) bool
	// SetBounds moves the iterator to [lower, upper), unpositioned.
	SetBounds(lower, upper []byte)
	Valid() bool
	Key() []byte
	ValueAndErr() ([]byte, error)
	Error() error
	Close() error
}

// engineBatch is an atomic group of writes. Later writes of a key win.
type engineBatch interface {
	set(key, value []byte) error
	del(key []byte) error
	// delRange deletes every key in [start, end).
	delRange(start, end []byte) error
	// delDead deletes every key in [start, end) of a dead key space: one
	// that no snapshot taken after this batch's commit reads and nothing
	// writes again (generation.go's delKeySpace: a rewrite's key space
	// once the table has left it). An engine may delete it after the
	// commit, in parts (TiKV: engine_tikv_dead.go), so that the commit
	// stays small however big the key space is.
	delDead(start, end []byte) error
	// setDeferred reserves a set of a key and value of these lengths,
	// which the caller fills before finishDeferred (no other write
	// between).
	setDeferred(keyLen, valueLen int) (key, value []byte)
	finishDeferred() error
	// conflictSince makes the batch fail with errEngineConflict when
	// another process wrote one of its keys after snapshot s was taken
	// (first committer wins across processes). A no-op on an engine that
	// is not shared.
	conflictSince(s engineSnapshot)
	// size is the batch's encoded size in bytes.
	size() int
	empty() bool
	reset()
	// wait returns once a committed batch is durable (its error: the
	// log's).
	wait() error
	close()
}
