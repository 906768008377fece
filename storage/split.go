package storage

import (
	"bytes"
	"encoding/binary"
)

// SplitKeys returns up to n-1 ascending keys that cut tbl's rows, as the
// transaction's snapshot holds them, into n key ranges: [nil, k1), [k1,
// k2), …, [kn-1, nil), which scans read with each row in exactly one of
// them. The keys are interpolated between the first and the last row key
// (after their common prefix), so ranges hold about equal rows when keys
// are spread evenly (an integer key) and fewer ranges come back for a
// small key span. A parallel scan's split; it reads only the first and
// last keys and changes nothing.
func (t *Txn) SplitKeys(tbl TableID, n int) ([][]byte, error) {
	if n < 2 {
		return nil, nil
	}
	if err := t.alive(); err != nil {
		return nil, err
	}
	rows, err := t.rowsOf(tbl)
	if err != nil {
		return nil, err
	}
	lower, upper := rowSpan(rows, nil, nil)
	pit, err := t.snap.newIter(lower, upper)
	if err != nil {
		return nil, err
	}
	defer pit.Close()
	if !pit.First() {
		return nil, pit.Error()
	}
	first := bytes.Clone(pit.Key()[tablePrefixLen:])
	if !pit.Last() {
		return nil, pit.Error()
	}
	last := pit.Key()[tablePrefixLen:]
	p := 0
	for p < len(first) && p < len(last) && first[p] == last[p] {
		p++
	}
	word := func(k []byte) uint64 {
		var b [8]byte
		copy(b[:], k[min(p, len(k)):])
		return binary.BigEndian.Uint64(b[:])
	}
	a, z := word(first), word(last)
	if z <= a {
		return nil, nil
	}
	var keys [][]byte
	span := z - a
	for i := 1; i < n; i++ {
		// a + span×i/n without overflow.
		v := a + span/uint64(n)*uint64(i) + span%uint64(n)*uint64(i)/uint64(n)
		k := binary.BigEndian.AppendUint64(append([]byte(nil), first[:p]...), v)
		if bytes.Compare(k, first) <= 0 || (len(keys) > 0 && bytes.Compare(k, keys[len(keys)-1]) <= 0) {
			continue
		}
		keys = append(keys, k)
	}
	return keys, nil
}
