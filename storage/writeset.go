package storage

import (
	"bytes"
	"iter"

	"github.com/RaduBerinde/btreemap"
)

// writeSet holds a transaction's buffered writes of one key space (a
// table's rows, an index's entries, the meta keys) by key. Writes arrive
// mostly in ascending key order (COPY, INSERT … SELECT, a key range of an
// UPDATE), so the set is a sorted tail plus a B-tree: a write whose key is
// above every key so far is appended to the tail, with no tree descent
// and no node shifting; every other write goes to the tree.
//
// Invariants:
//
//  1. tail is strictly ascending; every tree key is at most the last tail
//     key (when the tail is not empty).
//  2. A key in both holds its current write in the tree (the tail entry is
//     stale); shadowed counts such keys.
//  3. Entries are held by value and a change replaces the entry, so a clone
//     (an open Iterator) sees the writes as they were when it was made. The
//     tree is copy-on-write; the tail is changed in place only while no
//     clone is open (appends never touch the part a clone sees), else the
//     change goes to the tree.
type writeSet struct {
	tree     *btreemap.BTreeMap[[]byte, rowWrite]
	tail     sortedTail
	shadowed int
	clones   int // open clones sharing tail's backing array
}

func newWriteSet() *writeSet {
	return &writeSet{tree: btreemap.New[[]byte, rowWrite](16, bytes.Compare)}
}

// newWriteSetSorted returns a set of ws, which must be strictly ascending
// by key; the set owns the slice.
func newWriteSetSorted(ws []rowWrite) *writeSet {
	s := newWriteSet()
	s.tail = newSortedTail(ws)
	return s
}

// Len is the number of keys written.
func (s *writeSet) Len() int { return s.tree.Len() + s.tail.len() - s.shadowed }

// tailIndex finds key in the tail: its index, and whether it is there.
func (s *writeSet) tailIndex(key []byte) (int, bool) {
	n := s.tail.len()
	if n == 0 || bytes.Compare(key, s.tail.lastKey()) > 0 {
		return n, false
	}
	return s.tail.search(key)
}

// Get returns the write at key.
func (s *writeSet) Get(key []byte) (rowWrite, bool) {
	if s.tree.Len() > 0 {
		if _, w, ok := s.tree.Get(key); ok {
			return w, true
		}
	}
	if i, ok := s.tailIndex(key); ok {
		return *s.tail.at(i), true
	}
	return rowWrite{}, false
}

// Put stores w at w.key, replacing what was there.
func (s *writeSet) Put(w rowWrite) {
	n := s.tail.len()
	if n == 0 {
		if k, _, ok := s.tree.Max(); !ok || bytes.Compare(w.key, k) > 0 {
			s.tail.append(w)
			return
		}
		s.tree.ReplaceOrInsert(w.key, w)
		return
	}
	i, inTail := s.tailIndex(w.key)
	if i == n {
		s.tail.append(w)
		return
	}
	if inTail && s.clones == 0 && (s.shadowed == 0 || !s.tree.Has(w.key)) {
		*s.tail.at(i) = w
		return
	}
	if _, _, replaced := s.tree.ReplaceOrInsert(w.key, w); !replaced && inTail {
		s.shadowed++
	}
}

// clone returns a copy that later changes to s do not affect (O(1)). The
// caller calls s.unclone once it no longer uses the copy.
func (s *writeSet) clone() *writeSet {
	s.clones++
	return &writeSet{tree: s.tree.Clone(), tail: s.tail.frozen(), shadowed: s.shadowed}
}

func (s *writeSet) unclone() { s.clones-- }

// Ascend yields the writes with start <= key < end in key order (nil
// start or end: unbounded).
func (s *writeSet) Ascend(start, end []byte) iter.Seq[rowWrite] {
	return func(yield func(rowWrite) bool) {
		i := 0
		if start != nil {
			i, _ = s.tailIndex(start)
		}
		below := func(key []byte) bool { return end == nil || bytes.Compare(key, end) < 0 }
		if s.tree.Len() > 0 {
			lo := btreemap.Min[[]byte]()
			if start != nil {
				lo = btreemap.GE(start)
			}
			hi := btreemap.Max[[]byte]()
			if end != nil {
				hi = btreemap.LT(end)
			}
			for k, w := range s.tree.Ascend(lo, hi) {
				for ; i < s.tail.len(); i++ {
					tw := s.tail.at(i)
					c := bytes.Compare(tw.key, k)
					if c > 0 {
						break
					}
					if c < 0 && !yield(*tw) {
						return
					}
				}
				if !yield(w) {
					return
				}
			}
		}
		for ; i < s.tail.len() && below(s.tail.at(i).key); i++ {
			if !yield(*s.tail.at(i)) {
				return
			}
		}
	}
}

// All yields every write in key order.
func (s *writeSet) All() iter.Seq[rowWrite] { return s.Ascend(nil, nil) }
