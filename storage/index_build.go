package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Building an index (CREATE INDEX, R-T10) from a table's rows.
//
// BuildIndex reads the rows once, computes every entry into a few large
// arena blocks (one allocation per block, not two per row), sorts compact
// references to them by the columns' first 16 bytes and the row's place
// in the scan (most comparisons end there, without touching the arena),
// and hands the write set the entries as its sorted tail. The entries stay in the write set, so the building
// transaction reads its index and checks later writes against it as
// before; its commit writes a big fresh index as an SSTable of its own
// (index_ingest.go) rather than through the batch.

// arenaBlock is the size of the blocks entries are written into.
const arenaBlock = 1 << 20

// entryArena holds the built entries' bytes: the key columns, then the
// row key, of each entry in turn.
type entryArena struct {
	blocks [][]byte
}

// add appends cols and rowKey and returns where they are.
func (a *entryArena) add(cols, rowKey []byte) (blk, off uint32) {
	n := len(cols) + len(rowKey)
	last := len(a.blocks) - 1
	if last < 0 || len(a.blocks[last])+n > cap(a.blocks[last]) {
		a.blocks = append(a.blocks, make([]byte, 0, max(arenaBlock, n)))
		last++
	}
	b := a.blocks[last]
	off = uint32(len(b))
	a.blocks[last] = append(append(b, cols...), rowKey...)
	return uint32(last), off
}

// builtEntry refers to one entry while the build sorts them. It holds no
// pointer, so the sort moves it without write barriers.
//
// The sort key is the key columns, then ord, the row's place in the
// scan: the scan yields rows in row-key order, so for equal columns ord
// orders entries as their row keys do, and as the encoding of a complete
// key is never a proper prefix of another's (IndexKeyFunc), ordering by
// columns then row key is ordering by entry key, unique or not. The
// build checks the result is strictly ascending all the same.
type builtEntry struct {
	pfx  uint64 // the key columns' first 8 bytes, big-endian, zero-padded
	pfx2 uint64 // their next 8
	blk  uint32 // the arena block and offset of the key columns and row key
	off  uint32
	n    uint32 // length of the key columns and row key
	cols uint32 // length of the key columns
	ord  uint32 // the row's place in the scan
	uniq bool   // the entry key is the columns alone; else all of kv
}

// kv is the key columns and row key of e.
func (a *entryArena) kv(e *builtEntry) []byte {
	return a.blocks[e.blk][e.off : e.off+e.n : e.off+e.n]
}

// key is e's key within its index.
func (a *entryArena) key(e *builtEntry) []byte {
	kv := a.kv(e)
	if e.uniq {
		return kv[:e.cols:e.cols]
	}
	return kv
}

// keyPrefix is k's first 16 bytes as two big-endian numbers, zero-padded.
func keyPrefix(k []byte) (uint64, uint64) {
	if len(k) >= 16 {
		return binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:])
	}
	var b [16]byte
	copy(b[:], k)
	return binary.BigEndian.Uint64(b[:]), binary.BigEndian.Uint64(b[8:])
}

// compare orders x and y by key columns, then scan order. Columns of up
// to 16 bytes compare by their prefixes alone (equal prefixes and lengths
// are equal columns).
func (a *entryArena) compare(x, y *builtEntry) int {
	switch {
	case x.pfx < y.pfx:
		return -1
	case x.pfx > y.pfx:
		return 1
	case x.pfx2 < y.pfx2:
		return -1
	case x.pfx2 > y.pfx2:
		return 1
	}
	if x.cols > 16 || y.cols > 16 || x.cols != y.cols {
		xc, yc := a.kv(x)[:x.cols], a.kv(y)[:y.cols]
		if c := bytes.Compare(xc, yc); c != 0 {
			return c
		}
	}
	switch {
	case x.ord < y.ord:
		return -1
	case x.ord > y.ord:
		return 1
	}
	return 0
}

// BuildIndex creates index idx of tbl from the table's rows as this
// transaction sees them (CREATE INDEX). A unique index whose rows repeat a
// key fails with a *DuplicateKeyError naming the index. The commit fails
// with ErrSerialization if a concurrent commit wrote the table's rows or
// changed its indexes. Later row writes of the transaction must list idx
// in their TableInfo.
func (t *Txn) BuildIndex(tbl TableInfo, idx IndexInfo) error {
	if err := t.alive(); err != nil {
		return err
	}
	tw := t.table(tbl)
	if err := t.loadIndexSet(tw); err != nil {
		return err
	}
	if slices.Contains(tw.indexSet, idx.ID) {
		return fmt.Errorf("storage: table %d already has index %d", tbl.ID, idx.ID)
	}
	var ents []builtEntry
	if ps, ok, err := t.snapState(tbl.ID); err != nil {
		return err
	} else if ok {
		ents = make([]builtEntry, 0, min(max(ps.rowCount, 0)+int64(tw.rows.Len()), 1<<26))
	}
	var arena entryArena
	var scratch []byte
	it := t.Scan(tbl.ID, nil, nil)
	defer it.Close()
	for it.Next() {
		r := it.Row()
		k, uniq, err := idx.Key(scratch[:0], r.Value)
		if err != nil {
			return err
		}
		scratch = k
		e := builtEntry{n: uint32(len(k) + len(r.Key)), cols: uint32(len(k)), ord: uint32(len(ents)), uniq: uniq && idx.Unique}
		e.blk, e.off = arena.add(k, r.Key)
		e.pfx, e.pfx2 = keyPrefix(k)
		ents = append(ents, e)
	}
	if err := it.Err(); err != nil {
		return err
	}
	if uint64(len(ents)) > math.MaxUint32 {
		return fmt.Errorf("storage: table %d has too many rows (%d) to index in one transaction", tbl.ID, len(ents))
	}
	slices.SortFunc(ents, func(x, y builtEntry) int { return arena.compare(&x, &y) })
	ws := make([]rowWrite, len(ents))
	for i := range ents {
		e := &ents[i]
		key := arena.key(e)
		if i > 0 {
			switch c := bytes.Compare(ws[i-1].key, key); {
			case c == 0:
				// Only unique entries can repeat: the others end with
				// their row key.
				return &DuplicateKeyError{Table: tbl.ID, Index: idx.ID, Key: cloneBytes(key)}
			case c > 0:
				return fmt.Errorf("storage: index %d of table %d: entry keys out of order after the sort (a key encoding that is a prefix of another)", idx.ID, tbl.ID)
			}
		}
		ws[i] = rowWrite{key: key, value: arena.kv(e)[e.cols:], uniq: e.uniq}
	}
	ix := &indexWrites{entries: newWriteSetSorted(ws), fresh: true}
	if tw.idx == nil {
		tw.idx = make(map[IndexID]*indexWrites)
	}
	tw.idx[idx.ID] = ix
	tw.indexSet = append(tw.indexSet, idx.ID)
	tw.indexChanged, tw.indexBuilt = true, true
	return nil
}
