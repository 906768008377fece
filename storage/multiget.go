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

	// owner, when set, keeps the snapshot iterator of the rows between
	// calls (its aux, closed with it; auxRows is the rows id it reads): an
	// index scan fetching batch after batch, probe after probe, opens one
	// and moves its bounds (Pebble then keeps the blocks it is in when
	// the keys move forward) instead of opening one per batch. nil: each
	// call opens its own.
	owner   *Iterator
	auxRows TableID
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
	if err := t.snapGetSorted(mg, rowsID); err != nil {
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

// snapGetSorted reads the snapshot's value of each of mg's keys, rows of
// rows id rows, in key order (mg.order), into mg.vbuf and mg.vspan: one
// iterator for them all (mg's kept one, or a single key: a point read).
// Prefetched answers are taken as they are.
func (t *Txn) snapGetSorted(mg *multiGet, rows TableID) error {
	put := func(j int, v []byte, ok bool) {
		if !ok {
			mg.vspan[j] = [2]int{-1, -1}
			return
		}
		start := len(mg.vbuf)
		mg.vbuf = append(mg.vbuf, v...)
		mg.vspan[j] = [2]int{start, len(mg.vbuf)}
	}
	if len(mg.order) == 1 && mg.owner == nil {
		v, ok, err := t.snapGet(mg.pkey(0))
		if err != nil {
			return err
		}
		put(0, v, ok)
		return nil
	}
	it, err := t.sortedIter(mg, rows)
	if err != nil {
		return err
	}
	closeIt := func() error {
		if mg.owner != nil {
			return nil // the owner closes it
		}
		return it.Close()
	}
	for _, j := range mg.order {
		k := mg.pkey(j)
		if f, ok := t.fetched[string(k)]; ok {
			put(j, f.value, f.ok)
			continue
		}
		if !it.SeekPrefixGE(k) || !bytes.Equal(it.Key(), k) {
			if err := it.Error(); err != nil {
				closeIt()
				return err
			}
			put(j, nil, false)
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			closeIt()
			return err
		}
		put(j, v, true)
	}
	return closeIt()
}

// sortedIter returns the iterator snapGetSorted reads mg's sorted keys
// with, bounded by the first and last of them: mg's owner's kept one,
// given the new bounds (opened at the first use, again when the rows id
// changed), or a new one.
func (t *Txn) sortedIter(mg *multiGet, rows TableID) (engineIter, error) {
	lower, upper := mg.pkey(mg.order[0]), PrefixEnd(mg.pkey(mg.order[len(mg.order)-1]))
	if mg.owner == nil {
		return t.snap.newIter(lower, upper)
	}
	if mg.owner.aux != nil && mg.auxRows == rows {
		mg.owner.aux.SetBounds(lower, upper)
		return mg.owner.aux, nil
	}
	if mg.owner.aux != nil {
		err := mg.owner.aux.Close()
		mg.owner.aux = nil
		if err != nil {
			return nil, err
		}
	}
	it, err := t.snap.newIter(lower, upper)
	if err != nil {
		return nil, err
	}
	mg.owner.aux, mg.auxRows = it, rows
	return it, nil
}
