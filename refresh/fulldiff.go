package refresh

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/cespare/xxhash/v2"
	"github.com/mvserver/mvserver/storage"
)

// A full recompute of a view that already holds rows writes only the
// difference (so the view's change feed holds the real change): the new
// rows are collected, encoded, in one buffer and sorted by the view's key
// order (content hash first), then merged with one ordered scan of the
// stored rows. Per new row it keeps the encoded value and 24 bytes; the
// stored rows are streamed, one hash at a time.

// newRowSet is a full recompute's rows in the order of the view's keys.
type newRowSet struct {
	data []byte
	ents []newRowEnt
	// pending are mergeInto's insertions, made after its deletions.
	pending []pendingInsert
}

type newRowEnt struct {
	h   uint64
	off uint64
	n   uint32
}

// heldBytes is what s holds per row besides the value: its entry, and
// the sort's copy of it.
const heldBytes = 2 * 24

func (s *newRowSet) add(value []byte) {
	s.ents = append(s.ents, newRowEnt{h: xxhash.Sum64(value), off: uint64(len(s.data)), n: uint32(len(value))})
	s.data = append(s.data, value...)
}

func (s *newRowSet) value(e newRowEnt) []byte { return s.data[e.off : e.off+uint64(e.n)] }

func (s *newRowSet) cmp(a, b newRowEnt) int {
	if a.h != b.h {
		if a.h < b.h {
			return -1
		}
		return 1
	}
	return bytes.Compare(s.value(a), s.value(b))
}

// sort orders the rows by hash, equal values together. Hashes are
// uniform: many rows are first distributed by their top bits into about
// one bucket per 8 rows (two passes over the entries), then each small
// bucket is sorted. ctx is checked every cancelEvery buckets (a set of
// millions of rows sorts for a second or more: a cancelled refresh stops
// there too).
func (s *newRowSet) sort(ctx context.Context) error {
	n := len(s.ents)
	if n < 1<<12 {
		slices.SortFunc(s.ents, s.cmp)
		return nil
	}
	nb := min(bits.Len(uint(n/8)), 20)
	shift := 64 - nb
	start := make([]int, 1<<nb+1)
	for _, e := range s.ents {
		start[e.h>>shift+1]++
	}
	for b := 1; b < len(start); b++ {
		start[b] += start[b-1]
	}
	out := make([]newRowEnt, n)
	next := slices.Clone(start[:len(start)-1])
	for _, e := range s.ents {
		b := e.h >> shift
		out[next[b]] = e
		next[b]++
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for b := 0; b+1 < len(start); b++ {
		if b%cancelEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if seg := out[start[b]:start[b+1]]; len(seg) > 1 {
			slices.SortFunc(seg, s.cmp)
		}
	}
	s.ents = out
	return nil
}

// cancelEvery is how many rows the write loops of a full recompute take
// between checks of the context: a chunk or difference holds up to
// millions of rows, and without the checks a cancelled REFRESH … FULL
// went on writing them for seconds.
const cancelEvery = 1 << 12

// insertFresh inserts every row of s, in key order, into a view known to
// be empty (or to hold only earlier chunks of the same computation).
func (s *newRowSet) insertFresh(ctx context.Context, w *viewWriter, st *Stats) error {
	if err := s.sort(ctx); err != nil {
		return err
	}
	for k, e := range s.ents {
		if k%cancelEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := w.insertFresh(s.value(e)); err != nil {
			return err
		}
	}
	st.RowsWritten += int64(len(s.ents))
	return nil
}

// mergeInto writes the difference between the view's stored rows and s:
// the stored copies of a value beyond its new count are deleted, the new
// copies beyond its stored count are inserted under copy numbers free
// after the deletions (a reused number is known to the transaction, so
// its insert needs no lookup). Every deletion comes before any insertion:
// a row whose content changed moves to another hash, possibly an earlier
// one, and a unique index on the view must not see the new row while the
// old one is still there.
func (s *newRowSet) mergeInto(ctx context.Context, w *viewWriter, st *Stats) error {
	if err := s.sort(ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.pending = s.pending[:0]
	it := w.txn.Scan(w.info.ID, nil, nil)
	defer it.Close()
	var olds []storage.Row // the stored rows of one hash
	var spans [][3]int
	var buf []byte
	haveOld := it.Next()
	i := 0
	for round := 0; haveOld || i < len(s.ents); round++ {
		if round%cancelEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		// The next hash to settle: the smaller of the two sides'.
		var h uint64
		switch {
		case !haveOld:
			h = s.ents[i].h
		case i == len(s.ents):
			h = oldHash(it.Row().Key)
		default:
			h = min(oldHash(it.Row().Key), s.ents[i].h)
		}
		// The stored rows of h, copied into one reused buffer (the
		// iterator's row is valid until Next).
		olds, spans, buf = olds[:0], spans[:0], buf[:0]
		for haveOld && oldHash(it.Row().Key) == h {
			r := it.Row()
			spans = append(spans, [3]int{len(buf), len(r.Key), len(r.Value)})
			buf = append(append(buf, r.Key...), r.Value...)
			olds = append(olds, storage.Row{RowID: r.RowID, CommitVersion: r.CommitVersion})
			haveOld = it.Next()
		}
		for k, sp := range spans {
			olds[k].Key = buf[sp[0] : sp[0]+sp[1] : sp[0]+sp[1]]
			olds[k].Value = buf[sp[0]+sp[1] : sp[0]+sp[1]+sp[2] : sp[0]+sp[1]+sp[2]]
		}
		j := i
		for j < len(s.ents) && s.ents[j].h == h {
			j++
		}
		if err := s.settle(w, st, h, olds, s.ents[i:j]); err != nil {
			return err
		}
		i = j
	}
	if err := it.Err(); err != nil {
		return err
	}
	for k, p := range s.pending {
		if k%cancelEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := w.insertCopy(p.h, p.seq, s.value(p.ent)); err != nil {
			return err
		}
	}
	st.RowsWritten += int64(len(s.pending))
	return nil
}

// pendingInsert is an insertion mergeInto makes after all deletions.
type pendingInsert struct {
	h   uint64
	seq uint32
	ent newRowEnt
}

// oldHash is the content hash a stored view key starts with.
func oldHash(key []byte) uint64 {
	if len(key) < 8 {
		var b [8]byte
		copy(b[:], key)
		return binary.BigEndian.Uint64(b[:])
	}
	return binary.BigEndian.Uint64(key)
}

// settle makes the rows of hash h the new ones (ents, equal values
// adjacent) given the stored ones (olds).
func (s *newRowSet) settle(w *viewWriter, st *Stats, h uint64, olds []storage.Row, ents []newRowEnt) error {
	// The usual cases: one row on each side, or one side only.
	if len(olds) == 1 && len(ents) == 1 && bytes.Equal(olds[0].Value, s.value(ents[0])) {
		return nil
	}
	if len(olds) == 0 {
		for k, e := range ents {
			s.pending = append(s.pending, pendingInsert{h, uint32(k), e})
		}
		return nil
	}
	kept := make([]bool, len(olds))
	var added []newRowEnt
	for a := 0; a < len(ents); {
		v := s.value(ents[a])
		b := a + 1
		for b < len(ents) && bytes.Equal(s.value(ents[b]), v) {
			b++
		}
		want := b - a
		for k := range olds {
			if want > 0 && !kept[k] && bytes.Equal(olds[k].Value, v) {
				kept[k] = true
				want--
			}
		}
		added = append(added, ents[b-want:b]...)
		a = b
	}
	used := map[uint32]bool{}
	for k, r := range olds {
		if kept[k] {
			if len(r.Key) == viewKeyLen {
				used[binary.BigEndian.Uint32(r.Key[8:])] = true
			}
			continue
		}
		if err := w.deleteRow(r); err != nil {
			return err
		}
		st.RowsDeleted++
	}
	seq := uint32(0)
	for _, e := range added {
		for used[seq] {
			seq++
		}
		used[seq] = true
		s.pending = append(s.pending, pendingInsert{h, seq, e})
	}
	return nil
}

// insertCopy writes copy seq of a row whose content hash is h.
func (w *viewWriter) insertCopy(h uint64, seq uint32, value []byte) error {
	w.key = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(w.key[:0], h), seq)
	return w.insert(w.key, value)
}
