package storage

import (
	"bytes"
	"fmt"
	"slices"
)

// Multi-get. An index scan finds its rows' keys in the entries, in index
// order, and a point Get per row builds a fresh iterator over every
// memtable and level: an index nested-loop join paid that once per inner
// row. getRows reads a batch of keys instead: the transaction's own writes
// answer first (as Get), the rest are read from the snapshot with one
// iterator in key order, so each level's iterator moves forward and a
// sstable block is read once for all the keys it holds.

// multiGet is getRows's reusable scratch and the memory of the rows it
// returns (valid until its next use).
type multiGet struct {
	kbuf  []byte   // snapshot keys, concatenated
	koff  []int    // end of each snapshot key in kbuf
	which []int    // position in keys of each snapshot key
	order []int    // the snapshot keys' indexes, sorted by key
	vbuf  []byte   // the rows' stored values, concatenated
	vspan [][2]int // each snapshot key's value in vbuf; {-1, -1}: absent
}

func (mg *multiGet) pkey(j int) []byte {
	start := 0
	if j > 0 {
		start = mg.koff[j-1]
	}
	return mg.kbuf[start:mg.koff[j]]
}

// getRows sets rows[i] (found[i]) to the row of tbl at keys[i] as this
// transaction sees it, what Get would answer. The rows' Key is keys[i];
// their values live in mg until its next use.
func (t *Txn) getRows(mg *multiGet, tbl TableID, keys [][]byte, rows []Row, found []bool) error {
	if err := t.alive(); err != nil {
		return err
	}
	tw := t.tables[tbl]
	if tw != nil {
		if err := tw.unreadable(); err != nil {
			return err
		}
	}
	rowsID, err := t.rowsOf(tbl)
	if err != nil {
		return err
	}
	mg.kbuf, mg.koff, mg.which = mg.kbuf[:0], mg.koff[:0], mg.which[:0]
	for i, k := range keys {
		found[i] = false
		if tw != nil {
			if w, ok := tw.rows.Get(k); ok {
				if !w.del {
					rows[i] = Row{Key: w.key, Value: w.value, RowID: w.rowID, CommitVersion: -1}
					found[i] = true
				}
				continue
			}
			if tw.truncated {
				continue
			}
		}
		if t.reads != nil {
			t.reads.add(tbl, rowKey(nil, tbl, k), nil)
		}
		mg.kbuf = rowKey(mg.kbuf, rowsID, k)
		mg.koff = append(mg.koff, len(mg.kbuf))
		mg.which = append(mg.which, i)
	}
	n := len(mg.which)
	if n == 0 {
		return nil
	}
	mg.order = mg.order[:0]
	for j := range n {
		mg.order = append(mg.order, j)
	}
	slices.SortFunc(mg.order, func(a, b int) int { return bytes.Compare(mg.pkey(a), mg.pkey(b)) })
	mg.vbuf, mg.vspan = mg.vbuf[:0], slices.Grow(mg.vspan[:0], n)[:n]
	if err := t.snapGetSorted(mg); err != nil {
		return err
	}
	for j := range n {
		sp := mg.vspan[j]
		if sp[0] < 0 {
			continue
		}
		i := mg.which[j]
		rowID, ver, val, err := parseRowValue(mg.vbuf[sp[0]:sp[1]:sp[1]])
		if err != nil {
			return fmt.Errorf("%w (table %d key %x)", err, tbl, keys[i])
		}
		rows[i] = Row{Key: keys[i], Value: val, RowID: rowID, CommitVersion: ver}
		found[i] = true
	}
	return nil
}

// snapGetSorted reads the snapshot's value of each of mg's keys, in key
// order (mg.order), into mg.vbuf and mg.vspan: one iterator for them all
// (a single key: a point read). Prefetched answers are taken as they are.
func (t *Txn) snapGetSorted(mg *multiGet) error {
	put := func(j int, v []byte, ok bool) {
		if !ok {
			mg.vspan[j] = [2]int{-1, -1}
			return
		}
		start := len(mg.vbuf)
		mg.vbuf = append(mg.vbuf, v...)
		mg.vspan[j] = [2]int{start, len(mg.vbuf)}
	}
	if len(mg.order) == 1 {
		v, ok, err := t.snapGet(mg.pkey(0))
		if err != nil {
			return err
		}
		put(0, v, ok)
		return nil
	}
	first, last := mg.pkey(mg.order[0]), mg.pkey(mg.order[len(mg.order)-1])
	it, err := t.snap.newIter(first, PrefixEnd(last))
	if err != nil {
		return err
	}
	for _, j := range mg.order {
		k := mg.pkey(j)
		if f, ok := t.fetched[string(k)]; ok {
			put(j, f.value, f.ok)
			continue
		}
		if !it.SeekPrefixGE(k) || !bytes.Equal(it.Key(), k) {
			if err := it.Error(); err != nil {
				it.Close()
				return err
			}
			put(j, nil, false)
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return err
		}
		put(j, v, true)
	}
	return it.Close()
}
