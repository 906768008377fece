package storage

import (
	"bytes"
	"slices"
)

// tailChunk is how many writes one chunk of a writeSet's tail holds. The
// tail grows by whole chunks: a million-row load never copies a growing
// array of writes (nor makes the collector rescan the copies), as a
// doubling slice would.
var tailChunk = 4096

// firstTailChunk is the size of a tail's first chunk.
const firstTailChunk = 32

// sortedTail is a writeSet's sorted tail: writes in strictly ascending key
// order, in chunks. Every chunk but the last holds its final writes;
// appends go to the last one (or a new one when it is full).
type sortedTail struct {
	chunks [][]rowWrite
	starts []int // starts[c]: the index of chunks[c][0] in the whole tail
	n      int
}

// newSortedTail returns a tail of ws (strictly ascending; the tail owns it).
func newSortedTail(ws []rowWrite) sortedTail {
	if len(ws) == 0 {
		return sortedTail{}
	}
	return sortedTail{chunks: [][]rowWrite{ws}, starts: []int{0}, n: len(ws)}
}

func (t *sortedTail) len() int { return t.n }

// at returns write i.
func (t *sortedTail) at(i int) *rowWrite {
	c, found := slices.BinarySearch(t.starts, i)
	if !found {
		c--
	}
	return &t.chunks[c][i-t.starts[c]]
}

// lastKey is the key of the last write (the tail must not be empty).
func (t *sortedTail) lastKey() []byte {
	c := t.chunks[len(t.chunks)-1]
	return c[len(c)-1].key
}

// append adds w, whose key is above every key in the tail.
func (t *sortedTail) append(w rowWrite) {
	last := len(t.chunks) - 1
	if last < 0 || len(t.chunks[last]) == cap(t.chunks[last]) {
		// A small transaction (a refresh's checkpoint and run record,
		// a one-row INSERT) does not allocate and clear a whole chunk:
		// chunks start small and double up to tailChunk.
		size := firstTailChunk
		if last >= 0 {
			size = 2 * cap(t.chunks[last])
		}
		t.chunks = append(t.chunks, make([]rowWrite, 0, min(max(size, firstTailChunk), tailChunk)))
		t.starts = append(t.starts, t.n)
		last++
	}
	t.chunks[last] = append(t.chunks[last], w)
	t.n++
}

// search finds key: its index, and whether it is there (else the index
// it would be inserted at).
func (t *sortedTail) search(key []byte) (int, bool) {
	// The first chunk whose last key is at least key holds it, if any.
	c, _ := slices.BinarySearchFunc(t.chunks, key, func(ch []rowWrite, k []byte) int {
		return bytes.Compare(ch[len(ch)-1].key, k)
	})
	if c == len(t.chunks) {
		return t.n, false
	}
	i, found := slices.BinarySearchFunc(t.chunks[c], key, func(w rowWrite, k []byte) int { return bytes.Compare(w.key, k) })
	return t.starts[c] + i, found
}

// frozen returns a copy that later appends to t do not reach: it shares
// the chunks, capped at their present lengths.
func (t *sortedTail) frozen() sortedTail {
	chunks := make([][]rowWrite, len(t.chunks))
	for i, ch := range t.chunks {
		chunks[i] = ch[:len(ch):len(ch)]
	}
	return sortedTail{chunks: chunks, starts: slices.Clone(t.starts), n: t.n}
}
