package storage

import (
	"encoding/binary"
	"sync/atomic"
	"time"
)

// tableState is the in-memory state of one table. version and nextRowID are
// atomics (read outside the commit mutex); the rest is guarded by
// DB.commitMu.
type tableState struct {
	id TableID
	// version is the latest committed version, -1 when the table has none.
	version atomic.Int64
	// nextRowID is the next row id to hand out (R-T6). Its value at commit is
	// persisted as the high-water mark, so a committed id is never reused.
	nextRowID atomic.Int64

	lastTS        time.Time // timestamp of the latest version
	vacuumedBelow int64     // change records of versions below it were vacuumed
	rowCount      int64     // rows at version (guarded by commitMu)

	// Sequences of the last commits that wrote rows, wiped all rows
	// (TRUNCATE, DROP), dropped the table or changed its indexes:
	// table-level conflicts.
	rowWriteSeq, wipeSeq, dropSeq, indexSeq uint64
	// switchSeq: the last commit that switched the table to a rewrite's
	// content (generation.go).
	switchSeq uint64
	// coarseSeq: the last commit that wrote rows or entries of the table
	// whose keys the write history does not hold (writehistory.go): a
	// serializable transaction begun before it that read the table fails.
	coarseSeq uint64

	indexes []IndexID // the secondary indexes at version (guarded by commitMu)

	// rowsID is the key-space id the latest version's rows and index
	// entries live under (generation.go): the table's own id until a
	// rewrite switches it. rewritten is set, before the switch's batch is
	// applied, once the table has ever lived elsewhere: until then every
	// snapshot reads the table under its own id without looking.
	rowsID    atomic.Uint32
	rewritten atomic.Bool
}

func newTableState(tbl TableID) *tableState {
	st := &tableState{id: tbl}
	st.rowsID.Store(uint32(tbl))
	st.version.Store(-1)
	st.nextRowID.Store(1)
	return st
}

// allocRowID hands out a row id (atomic; never blocks).
func (st *tableState) allocRowID() int64 { return st.nextRowID.Add(1) - 1 }

// persistedState is the value of a table's state key.
type persistedState struct {
	version       int64
	nextRowID     int64
	lastTS        time.Time
	vacuumedBelow int64
	rowCount      int64
	indexes       []IndexID
	// rowsID is where the rows and index entries live (generation.go);
	// 0 in a state that never had a rewrite: the table's own id.
	rowsID TableID
}

// stateFormat 2 added rowCount (format 1 states read as 0 rows), 3 the
// secondary indexes (earlier states have none), 4 the rows' key-space id
// (earlier states keep their rows under the table's id).
const stateFormat byte = 4

func encodeState(ps persistedState) []byte {
	b := make([]byte, 0, 32)
	b = append(b, stateFormat)
	b = binary.AppendVarint(b, ps.version)
	b = binary.AppendVarint(b, ps.nextRowID)
	b = binary.AppendVarint(b, ps.lastTS.UnixMicro())
	b = binary.AppendVarint(b, ps.vacuumedBelow)
	b = binary.AppendVarint(b, ps.rowCount)
	b = binary.AppendUvarint(b, uint64(len(ps.indexes)))
	for _, id := range ps.indexes {
		b = binary.AppendUvarint(b, uint64(id))
	}
	return binary.AppendUvarint(b, uint64(ps.rowsID))
}

func decodeState(v []byte) (persistedState, error) {
	d := decoder{b: v}
	var ps persistedState
	format := d.byte()
	if format < 1 || format > stateFormat {
		d.fail("table state")
	}
	ps.version = d.varint()
	ps.nextRowID = d.varint()
	ps.lastTS = time.UnixMicro(d.varint()).UTC()
	ps.vacuumedBelow = d.varint()
	if format >= 2 {
		ps.rowCount = d.varint()
	}
	if format >= 3 {
		n := d.uvarint()
		for i := uint64(0); i < n && d.err == nil; i++ {
			ps.indexes = append(ps.indexes, IndexID(d.uvarint()))
		}
	}
	if format >= 4 {
		ps.rowsID = TableID(d.uvarint())
	}
	return ps, d.err
}

// conflictTracker remembers, for every key written by a recent commit, the
// sequence of the last commit that wrote it (first committer wins). Commits
// sit in a FIFO; prune drops those no open transaction can conflict with
// (seq <= the oldest open transaction's begin seq), which bounds the map.
type conflictTracker struct {
	last  map[string]uint64
	queue []commitKeys
	head  int
}

type commitKeys struct {
	seq  uint64
	keys []string
}

func (c *conflictTracker) init() { c.last = make(map[string]uint64) }

func (c *conflictTracker) record(seq uint64, keys []string) {
	if len(keys) == 0 {
		return
	}
	for _, k := range keys {
		c.last[k] = seq
	}
	c.queue = append(c.queue, commitKeys{seq: seq, keys: keys})
}

func (c *conflictTracker) prune(oldestBegin uint64) {
	for c.head < len(c.queue) && c.queue[c.head].seq <= oldestBegin {
		ck := c.queue[c.head]
		for _, k := range ck.keys {
			if c.last[k] == ck.seq {
				delete(c.last, k)
			}
		}
		c.queue[c.head] = commitKeys{}
		c.head++
	}
	c.queue, c.head = compactFIFO(c.queue, c.head)
}

// compactFIFO reclaims the consumed front q[:head] of a FIFO slice: all
// of it once the queue is empty, else by moving the rest down once the
// front is most of it.
func compactFIFO[T any](q []T, head int) ([]T, int) {
	if head == len(q) {
		return q[:0], 0
	}
	if head > 1024 && head > len(q)/2 {
		n := copy(q, q[head:])
		clear(q[n:])
		return q[:n], 0
	}
	return q, head
}

func (c *conflictTracker) size() int { return len(c.last) }

// writtenSince reports whether a commit after seq wrote the Pebble key
// pkey (row), or replaced the rows of st whole (wiped: a truncate, a
// drop, a rewrite's switch), under one hold of commitMu.
func (db *DB) writtenSince(pkey []byte, st *tableState, seq uint64) (row, wiped bool) {
	db.commitMu.Lock()
	defer db.commitMu.Unlock()
	return db.conflicts.last[string(pkey)] > seq, st.wipeSeq > seq || st.dropSeq > seq || st.switchSeq > seq
}
