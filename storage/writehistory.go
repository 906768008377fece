package storage

import (
	"bytes"

	"github.com/RaduBerinde/btreemap"
)

// The write history: the keys (rows and index entries) that recent
// commits wrote, by the sequence of the last commit that wrote each, for
// validating serializable transactions' reads (serializable.go). Unlike
// the first-committer-wins bookkeeping (conflictTracker, a hash map) it is
// ordered, so a read range is checked by walking the written keys inside
// it.
//
// Invariants (doc.go, invariant 11):
//
//  1. Every commit with a sequence above the Begin of an open serializable
//     transaction is in the history, or is accounted for in its tables'
//     states: coarseSeq (its keys for the table were not kept), wipeSeq or
//     dropSeq (Truncate, DropTable, whose rows are not listed).
//  2. The history holds no commit at or below the oldest open serializable
//     transaction's Begin once a later commit pruned it; with none open it
//     is emptied by the next commit.
//  3. Its size stays under DB's historyLimit bytes: past it the oldest
//     commits leave it and their tables' coarseSeq rises to their
//     sequence, so a serializable transaction that read those tables fails
//     instead of the history keeping everything.
type writeHistory struct {
	last  *btreemap.BTreeMap[[]byte, uint64] // key → seq of the last commit that wrote it
	queue []histCommit
	head  int
	bytes int64 // estimated memory of the queued commits' keys
	limit int64
}

type histCommit struct {
	seq    uint64
	keys   [][]byte      // slices of one buffer
	tables []*tableState // tables whose keys are in keys
	bytes  int64
}

// histKeyOverhead estimates a history key's memory besides its bytes: its
// slice header in the commit, its tree item and node share.
const histKeyOverhead = 80

// maxHistoryTableKeys bounds the keys of one table one commit adds (a
// bulk load): past it the commit counts as a write of the whole table
// (coarseSeq), instead of holding commitMu while it lists them all.
var maxHistoryTableKeys = 16384

// DefaultHistoryLimit bounds the write history's memory when Options
// gives none.
const DefaultHistoryLimit = 64 << 20

func (h *writeHistory) init(limit int64) {
	h.last = btreemap.New[[]byte, uint64](32, bytes.Compare)
	h.limit = limit
}

// record adds the keys a commit at seq wrote. Called under commitMu.
func (h *writeHistory) record(seq uint64, plans []*tablePlan) {
	c := histCommit{seq: seq}
	var buf []byte
	var ends []int
	for _, p := range plans {
		tw := p.tw
		if tw.truncated {
			continue // every row: wipeSeq or dropSeq says so
		}
		n := tw.rows.Len()
		for _, ix := range tw.idx {
			n += ix.entries.Len()
		}
		if n == 0 {
			continue
		}
		if n > maxHistoryTableKeys || int64(n)*histKeyOverhead > h.limit/4 {
			// Too many to keep: the table as a whole.
			p.st.coarseSeq = seq
			continue
		}
		from := len(ends)
		for w := range tw.rows.All() {
			if w.del && !w.origExists {
				continue // inserted and deleted again: nothing on disk changed
			}
			buf = rowKey(buf, tw.id, w.key)
			ends = append(ends, len(buf))
		}
		for id, ix := range tw.idx {
			if ix.fresh {
				continue // an index no older snapshot can read
			}
			for w := range ix.entries.All() {
				if w.del && !w.origExists {
					continue
				}
				buf = indexKey(buf, tw.id, id, w.key)
				ends = append(ends, len(buf))
			}
		}
		if len(ends) > from {
			c.tables = append(c.tables, p.st)
		}
	}
	if len(ends) == 0 {
		return
	}
	c.keys = make([][]byte, len(ends))
	start := 0
	for i, end := range ends {
		k := buf[start:end:end]
		c.keys[i] = k
		h.last.ReplaceOrInsert(k, seq)
		start = end
	}
	c.bytes = int64(len(buf)) + int64(len(ends))*histKeyOverhead
	h.queue = append(h.queue, c)
	h.bytes += c.bytes
	for h.bytes > h.limit && h.head < len(h.queue) {
		h.dropOldest(true)
	}
	h.compact()
}

// prune drops the commits no open serializable transaction can conflict
// with: seq <= oldestBegin.
func (h *writeHistory) prune(oldestBegin uint64) {
	for h.head < len(h.queue) && h.queue[h.head].seq <= oldestBegin {
		h.dropOldest(false)
	}
	h.compact()
}

// dropOldest removes the oldest commit; coarsen: an open transaction may
// still need it, so its tables remember it was written (coarseSeq).
func (h *writeHistory) dropOldest(coarsen bool) {
	c := h.queue[h.head]
	for _, k := range c.keys {
		if _, seq, ok := h.last.Get(k); ok && seq == c.seq {
			h.last.Delete(k)
		}
	}
	if coarsen {
		for _, st := range c.tables {
			st.coarseSeq = max(st.coarseSeq, c.seq)
		}
	}
	h.bytes -= c.bytes
	h.queue[h.head] = histCommit{}
	h.head++
}

func (h *writeHistory) compact() { h.queue, h.head = compactFIFO(h.queue, h.head) }

// writtenAfter reports whether a commit after seq wrote a key in [lo, hi)
// (hi nil: the key lo).
func (h *writeHistory) writtenAfter(lo, hi []byte, seq uint64) bool {
	if h.last.Len() == 0 {
		return false
	}
	if hi == nil {
		_, s, ok := h.last.Get(lo)
		return ok && s > seq
	}
	for _, s := range h.last.Ascend(btreemap.GE(lo), btreemap.LT(hi)) {
		if s > seq {
			return true
		}
	}
	return false
}

// len is the number of keys the history holds (tests).
func (h *writeHistory) len() int { return h.last.Len() }
