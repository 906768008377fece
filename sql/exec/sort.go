package exec

import (
	"cmp"
	"container/heap"
	"slices"

	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// sortOp sorts its input (stably: equal keys keep their input order).
// Within the memory budget it sorts in memory; past it, it writes sorted
// runs to temporary files and merges them (an external merge sort). Under
// a LIMIT it keeps only the first limit rows seen so far (top-N), so
// ORDER BY … LIMIT n holds O(n) rows whatever the input size.
type sortOp struct {
	c    *Ctx
	node *plan.Sort
	in   Operator
	keys []plan.SortKey
	fns  []evalFn
	// topN > 0 keeps only the first topN rows (set by a LIMIT above).
	topN int64
	// cut, under a LIMIT, is the scan's test against the cutoff
	// (topcut.go); nil: none.
	cut *topCut

	mem    memAccount
	out    Operator
	sorted bool
	runs   []*sortRun
	// spills counts the runs written to files.
	spills int
	seq    int64 // input rows so far
}

// keyed is a row with its evaluated sort keys and its place in the input
// (which orders equal keys: the sort is stable).
type keyed struct {
	keys []types.Datum
	row  Row
	seq  int64
}

// maxSortRuns is how many spilled runs a sort merges at once; more are
// first merged into one run.
const maxSortRuns = 64

func newSort(c *Ctx, s *plan.Sort, in Operator) (Operator, error) {
	fns := make([]evalFn, len(s.Keys))
	for i, k := range s.Keys {
		f, err := compile(k.E, c)
		if err != nil {
			in.Close()
			return nil, err
		}
		fns[i] = f
	}
	return &sortOp{c: c, node: s, in: in, keys: s.Keys, fns: fns, mem: c.account("sort")}, nil
}

func (s *sortOp) sortRows(all []keyed) {
	slices.SortFunc(all, func(a, b keyed) int {
		if c := compareKeys(s.keys, a.keys, b.keys); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
}

func (s *sortOp) Next() ([]Row, error) {
	if !s.sorted {
		s.sorted = true
		if err := s.load(); err != nil {
			return nil, err
		}
	}
	return s.out.Next()
}

// load reads the whole input and prepares s.out.
func (s *sortOp) load() error {
	var all []keyed
	// cutoff, under a LIMIT, is the key of the last row kept by the last
	// compaction: rows from then on must sort before it to matter.
	var cutoff []types.Datum
	// The keys are evaluated into scratch and copied out only for a row
	// that is kept: under a LIMIT past its first compactions almost none
	// is, and a key slice per input row was most of what the top-N
	// allocated (and so most of its garbage collection; issue 21).
	// Kept keys are cut from blocks of a batch's worth.
	nk := len(s.fns)
	scratch := make([]types.Datum, nk)
	var block []types.Datum
	// Under a LIMIT the kept rows are copied too (into blocks, as the
	// keys), and the input reuses its batches (scan_reuse.go): a scan then
	// allocates no batch per thousand rows for the few rows kept.
	copyRows := s.topN > 0 && !s.c.RowAtATime && reuseInput(s.in)
	if s.topN > 0 && s.node != nil {
		s.cut = newTopCut(s.c, s.node, s.in)
	}
	var rowBlock []types.Datum
	err := Drain(s.in, func(b []Row) error {
		var size int64
		for _, r := range b {
			for i, f := range s.fns {
				d, err := f(r)
				if err != nil {
					return err
				}
				scratch[i] = d
			}
			if cutoff != nil && compareKeys(s.keys, scratch, cutoff) >= 0 {
				// Not before the last of the first topN so far (an equal
				// key comes later): it can never be output.
				s.seq++
				continue
			}
			if len(block) < nk {
				block = make([]types.Datum, nk*BatchSize)
			}
			k := block[:nk:nk]
			block = block[nk:]
			copy(k, scratch)
			if copyRows {
				w := len(r)
				if len(rowBlock) < w {
					rowBlock = make([]types.Datum, w*BatchSize)
				}
				c := rowBlock[:w:w]
				rowBlock = rowBlock[w:]
				copy(c, r)
				r = c
			}
			all = append(all, keyed{k, r, s.seq})
			s.seq++
			size += rowBytes(r) + rowBytes(k)
		}
		compact := func() {
			// Keep the first topN: what follows can only push rows out.
			s.sortRows(all)
			clear(all[s.topN:])
			all = all[:s.topN]
			// The kept keys move to one block of their own, so that the
			// blocks they were cut from (mostly dropped rows') are freed.
			kept := make([]types.Datum, len(all)*nk)
			for i := range all {
				k := kept[i*nk : (i+1)*nk : (i+1)*nk]
				copy(k, all[i].keys)
				all[i].keys = k
			}
			block = nil
			if copyRows {
				// The same for the kept rows.
				w := 0
				for i := range all {
					w += len(all[i].row)
				}
				kept := make([]types.Datum, w)
				for i := range all {
					n := len(all[i].row)
					r := kept[:n:n]
					kept = kept[n:]
					copy(r, all[i].row)
					all[i].row = r
				}
				rowBlock = nil
			}
			cutoff = all[s.topN-1].keys
			if s.cut != nil {
				s.cut.set(cutoff[0])
			}
			s.mem.release()
			size = 0
			for _, k := range all {
				size += rowBytes(k.row) + rowBytes(k.keys)
			}
		}
		if s.topN > 0 && int64(len(all)) >= 2*s.topN+BatchSize {
			compact()
		}
		err := s.mem.grow(size)
		if err != nil && s.topN > 0 && int64(len(all)) > s.topN {
			compact()
			err = s.mem.grow(size)
		}
		if err != nil {
			if s.c.Mem == nil || s.c.Mem.TempDir == "" {
				return err
			}
			if err := s.spill(all); err != nil {
				return err
			}
			clear(all)
			all = all[:0]
			s.mem.release()
		}
		return s.c.Context.Err()
	})
	if err != nil {
		return err
	}
	s.sortRows(all)
	if s.topN > 0 && int64(len(all)) > s.topN {
		all = all[:s.topN]
	}
	if len(s.runs) == 0 {
		rows := make([]Row, len(all))
		for i, k := range all {
			rows[i] = k.row
		}
		s.out = &sliceOp{rows: rows}
		return nil
	}
	readers := make([]runReader, 0, len(s.runs)+1)
	for _, r := range s.runs {
		if err := r.rewind(); err != nil {
			return err
		}
		readers = append(readers, r)
	}
	// The rows still in memory came last, so they merge last among equals.
	readers = append(readers, &memRun{rows: all})
	m, err := newRunMerge(s, readers)
	if err != nil {
		return err
	}
	s.out = m
	return nil
}

// spill writes all (sorted) to a new run file.
func (s *sortOp) spill(all []keyed) error {
	s.sortRows(all)
	r := newSortRun(s.c)
	s.runs = append(s.runs, r)
	s.spills++
	for i := range all {
		if err := r.write(&all[i]); err != nil {
			return err
		}
	}
	if err := r.finish(); err != nil {
		return err
	}
	if len(s.runs) < maxSortRuns {
		return nil
	}
	// Too many runs to merge at once: merge them into one.
	readers := make([]runReader, len(s.runs))
	for i, r := range s.runs {
		if err := r.rewind(); err != nil {
			return err
		}
		readers[i] = r
	}
	merged := newSortRun(s.c)
	m, err := newRunMerge(s, readers)
	if err != nil {
		merged.close()
		return err
	}
	for {
		k, ok, err := m.next()
		if err != nil {
			merged.close()
			return err
		}
		if !ok {
			break
		}
		if err := merged.write(&k); err != nil {
			merged.close()
			return err
		}
	}
	if err := merged.finish(); err != nil {
		merged.close()
		return err
	}
	for _, r := range s.runs {
		r.close()
	}
	s.runs = []*sortRun{merged}
	return s.c.Context.Err()
}

func (s *sortOp) Close() {
	s.in.Close()
	for _, r := range s.runs {
		r.close()
	}
	s.runs = nil
	s.mem.release()
}

// runReader yields a sorted run's rows in order.
type runReader interface {
	next() (keyed, bool, error)
}

type memRun struct {
	rows []keyed
	i    int
}

func (m *memRun) next() (keyed, bool, error) {
	if m.i >= len(m.rows) {
		return keyed{}, false, nil
	}
	k := m.rows[m.i]
	m.rows[m.i] = keyed{}
	m.i++
	return k, true, nil
}

// sortRun is a spilled run: the sort keys then the row of each record in
// a spill file (spill.go), created with the first record.
type sortRun struct {
	dir  string
	f    *spillFile
	vals []types.Datum
	nk   int // keys per record
}

func newSortRun(c *Ctx) *sortRun { return &sortRun{dir: c.Mem.TempDir} }

func (r *sortRun) write(k *keyed) error {
	if r.f == nil {
		r.nk = len(k.keys)
		f, err := newSpillFile(r.dir, "sort-*.run", r.nk+len(k.row), 64<<10)
		if err != nil {
			return err
		}
		r.f, r.vals = f, make([]types.Datum, f.width)
	}
	copy(r.vals, k.keys)
	copy(r.vals[r.nk:], k.row)
	return r.f.write(r.vals)
}

func (r *sortRun) finish() error {
	if r.f == nil {
		return nil
	}
	return r.f.finish()
}

func (r *sortRun) rewind() error {
	if r.f == nil {
		return nil
	}
	return r.f.rewind()
}

func (r *sortRun) next() (keyed, bool, error) {
	if r.f == nil {
		return keyed{}, false, nil
	}
	vals := make([]types.Datum, r.f.width)
	ok, err := r.f.readInto(vals)
	if !ok || err != nil {
		return keyed{}, false, err
	}
	return keyed{keys: vals[:r.nk:r.nk], row: vals[r.nk:]}, true, nil
}

func (r *sortRun) close() {
	r.f.close()
	r.f = nil
}

// runMerge merges sorted runs; among equal keys the earlier run wins, so
// the merge is as stable as the in-memory sort.
type runMerge struct {
	s     *sortOp
	runs  []runReader
	heads []keyed
	h     []int // heap of run indexes with a head
}

func newRunMerge(s *sortOp, runs []runReader) (*runMerge, error) {
	m := &runMerge{s: s, runs: runs, heads: make([]keyed, len(runs))}
	for i, r := range runs {
		k, ok, err := r.next()
		if err != nil {
			return nil, err
		}
		if ok {
			m.heads[i] = k
			m.h = append(m.h, i)
		}
	}
	heap.Init(m)
	return m, nil
}

func (m *runMerge) Len() int { return len(m.h) }
func (m *runMerge) Less(i, j int) bool {
	a, b := m.h[i], m.h[j]
	if c := compareKeys(m.s.keys, m.heads[a].keys, m.heads[b].keys); c != 0 {
		return c < 0
	}
	return a < b
}
func (m *runMerge) Swap(i, j int) { m.h[i], m.h[j] = m.h[j], m.h[i] }
func (m *runMerge) Push(x any)    { m.h = append(m.h, x.(int)) }
func (m *runMerge) Pop() any {
	x := m.h[len(m.h)-1]
	m.h = m.h[:len(m.h)-1]
	return x
}

// next returns the smallest head and advances its run.
func (m *runMerge) next() (keyed, bool, error) {
	if len(m.h) == 0 {
		return keyed{}, false, nil
	}
	i := m.h[0]
	out := m.heads[i]
	k, ok, err := m.runs[i].next()
	if err != nil {
		return keyed{}, false, err
	}
	if ok {
		m.heads[i] = k
		heap.Fix(m, 0)
	} else {
		heap.Pop(m)
	}
	return out, true, nil
}

// Next implements Operator over the merge.
func (m *runMerge) Next() ([]Row, error) {
	var out []Row
	for len(out) < BatchSize {
		k, ok, err := m.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		out = append(out, k.row)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, m.s.c.Context.Err()
}

func (m *runMerge) Close() {}
