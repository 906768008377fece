package storage

import (
	"sync"
	"sync/atomic"
)

// Recently deleted row keys. A key deleted and inserted again, over and
// over (a reload that deletes a batch and inserts it anew, mvbench's DML
// loop), piles up versions in the memtable, and every existence probe of
// it steps over all of them: a Pebble Get of a deleted key walks the
// key's versions as an iterator does. The DB remembers, for row keys whose
// last committed write was a delete, the commit's sequence number; an
// insert's probe of such a key in a snapshot at or after that number is
// answered "absent" without touching Pebble.
//
// Invariant: an entry key → seq means the last write to key a commit made
// visible deleted it, at seq. Commits keep it (under commitMu): before
// their batch is applied they drop the entries of the keys they set (a
// missing entry only costs a lookup), and once it is applied, before any
// snapshot can see it (under visMu), they add the keys they delete with
// the new seq, which no open snapshot has reached. A failed apply changes
// nothing. Dropped tables and TRUNCATE delete by ranges and record nothing;
// their keys' entries stay true (deleted).

// maxDeletedKeys bounds the map; a commit that would pass it starts it
// afresh (forgetting is always sound).
const maxDeletedKeys = 1 << 16

type deletedKeys struct {
	mu sync.RWMutex
	at map[string]uint64
	n  atomic.Int64 // len(at), read without mu
}

// absent reports whether key (a Pebble row key) is known to be deleted in
// a snapshot at seq.
func (d *deletedKeys) absent(key []byte, seq uint64) bool {
	if d.n.Load() == 0 {
		return false
	}
	d.mu.RLock()
	s, ok := d.at[string(key)]
	d.mu.RUnlock()
	return ok && s <= seq
}

// forgetSet drops the entries of the row keys plans set. Called under
// commitMu before the batch is applied.
func (d *deletedKeys) forgetSet(plans []*tablePlan) {
	if d.n.Load() == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var buf []byte
	for _, p := range plans {
		if !p.makesVersion {
			continue
		}
		for w := range p.tw.rows.All() {
			if !w.del {
				buf = rowKey(buf[:0], p.tw.id, w.key)
				delete(d.at, string(buf))
			}
		}
	}
	d.n.Store(int64(len(d.at)))
}

// noteDeleted records the row keys plans deleted (encodeRow's Delete) at
// seq. Called under commitMu and visMu once the batch is applied.
func (d *deletedKeys) noteDeleted(plans []*tablePlan, seq uint64) {
	dels := 0
	for _, p := range plans {
		if p.makesVersion && !p.tw.truncated {
			dels += p.dels
		}
	}
	if dels == 0 || dels > maxDeletedKeys {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.at == nil || len(d.at)+dels > maxDeletedKeys {
		d.at = make(map[string]uint64, dels)
	}
	var buf []byte
	for _, p := range plans {
		if !p.makesVersion || p.tw.truncated || p.dels == 0 {
			continue
		}
		for w := range p.tw.rows.All() {
			if w.del && w.origExists {
				buf = rowKey(buf[:0], p.tw.id, w.key)
				d.at[string(buf)] = seq
			}
		}
	}
	d.n.Store(int64(len(d.at)))
}

// forgetAll drops every entry (a rewrite switched a table's content).
// Called under commitMu before the batch is applied.
func (d *deletedKeys) forgetAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.at = nil
	d.n.Store(0)
}
