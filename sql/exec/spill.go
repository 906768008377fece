package exec

import (
	"bufio"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"io"
	"os"
	"syscall"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// Spilling past the memory budget (R-X3). A sort writes sorted runs
// (sort.go); hash aggregation, hash joins and DISTINCT partition rows by a
// hash of their key into spillFanout files and then process one file at a
// time, each with the whole budget:
//
//   - Hash aggregation and DISTINCT are hybrid: the groups (distinct rows)
//     already in memory when the budget runs out stay there and keep
//     taking their rows; the rows of keys not yet seen go to the files. A
//     key is thus wholly in memory or wholly in one file, and rows keep
//     their input order within it (what array_agg without ORDER BY sees).
//   - A hash join whose build side does not fit becomes a grace hash join:
//     both sides are partitioned by the join key and each pair of files is
//     joined in turn, outer, semi and anti semantics holding per pair since
//     matching rows share a pair; rows with a NULL key go to files of their
//     own that only yield unmatched rows.
//
// A file whose rows still do not fit is partitioned again with the next
// level's hash seed. Past maxSpillLevel levels (a single key, or a budget
// the rest of the statement already holds) the operator fails with 53200.
//
// Files are created in Memory.TempDir (<data-dir>/tmp, emptied at start-up)
// and unlinked at once, so closing them (the operator's Close, on success,
// error or cancel alike) frees their space and a crash leaves nothing. The
// write buffers (spillBufSize each) are not charged to the budget.

// spillFanout is how many files one partitioning level writes.
const spillFanout = 32

// maxSpillLevel is how many times rows may be partitioned again.
const maxSpillLevel = 8

// spillSeeds are the hash seeds of the partitioning levels: a different
// seed per level splits a file whose keys all fell together before.
var spillSeeds = func() (s [maxSpillLevel + 1]maphash.Seed) {
	for i := range s {
		s[i] = maphash.MakeSeed()
	}
	return s
}()

// canSpill reports whether operators may spill to files.
func (c *Ctx) canSpill() bool { return c.Mem != nil && c.Mem.TempDir != "" && c.Mem.Limit > 0 }

// spillBufSize is a spill file's buffer: small under a small budget, since
// a partitioning level keeps spillFanout of them.
func (c *Ctx) spillBufSize() int {
	n := int64(64 << 10)
	if c.Mem != nil && c.Mem.Limit > 0 {
		n = min(n, max(4<<10, c.Mem.Limit/(4*spillFanout)))
	}
	return int(n)
}

// isOutOfMemory reports whether err is the budget's 53200.
func isOutOfMemory(err error) bool { return pgerror.Code(err) == pgerror.OutOfMemory }

// spillError is the error of a failed temporary file write or read.
func spillError(err error) error {
	code := pgerror.IOError
	if errors.Is(err, syscall.ENOSPC) {
		code = pgerror.DiskFull
	}
	return pgerror.Wrap(err, code, "could not write a temporary file: "+err.Error())
}

// spillFile holds rows of one width in an unlinked temporary file:
// records of uvarint(length) then the row in the row-value encoding (ids
// 1…width). It is written, then finished, then read (rewind reads again).
type spillFile struct {
	f       *os.File
	w       *bufio.Writer
	r       *bufio.Reader
	bufSize int
	width   int
	rows    int64
	buf     []byte
	ids     []uint32
	dec     *types.RowDecoder
}

func newSpillFile(dir, pattern string, width, bufSize int) (*spillFile, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, spillError(err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, spillError(err)
	}
	ids := make([]uint32, width)
	for i := range ids {
		ids[i] = uint32(i + 1)
	}
	return &spillFile{f: f, w: bufio.NewWriterSize(f, bufSize), bufSize: bufSize, width: width, ids: ids}, nil
}

// write appends a row of the file's width.
func (s *spillFile) write(r Row) error {
	enc := types.AppendRowValue(s.buf[:0], s.ids, r)
	var hdr [binary.MaxVarintLen64]byte
	if _, err := s.w.Write(hdr[:binary.PutUvarint(hdr[:], uint64(len(enc)))]); err != nil {
		return spillError(err)
	}
	if _, err := s.w.Write(enc); err != nil {
		return spillError(err)
	}
	s.buf = enc
	s.rows++
	return nil
}

// finish ends writing and rewinds the file for reading.
func (s *spillFile) finish() error {
	if s.w != nil {
		if err := s.w.Flush(); err != nil {
			return spillError(err)
		}
		s.w = nil
	}
	return s.rewind()
}

// rewind reads the file again from its first row.
func (s *spillFile) rewind() error {
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return spillError(err)
	}
	if s.r == nil {
		s.r = bufio.NewReaderSize(s.f, s.bufSize)
	} else {
		s.r.Reset(s.f)
	}
	if s.dec == nil {
		s.dec = types.NewRowDecoder(s.ids)
	}
	return nil
}

// readInto decodes the next row into out (of the file's width); false at
// the end.
func (s *spillFile) readInto(out []types.Datum) (bool, error) {
	n, err := binary.ReadUvarint(s.r)
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, spillError(err)
	}
	if cap(s.buf) < int(n) {
		s.buf = make([]byte, n)
	}
	b := s.buf[:n]
	if _, err := io.ReadFull(s.r, b); err != nil {
		return false, spillError(err)
	}
	return true, s.dec.Decode(b, out)
}

// readBatch returns up to BatchSize rows, nil at the end. The rows are cut
// from one block, as a scan's are.
func (s *spillFile) readBatch() ([]Row, error) {
	var out []Row
	var arena []types.Datum
	for len(out) < BatchSize {
		if len(arena) < s.width {
			arena = make([]types.Datum, min(BatchSize, 64+2*len(out))*s.width)
		}
		row := arena[:s.width:s.width]
		ok, err := s.readInto(row)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		arena = arena[s.width:]
		out = append(out, row)
	}
	return out, nil
}

func (s *spillFile) close() {
	if s != nil && s.f != nil {
		s.f.Close()
		s.f = nil
	}
}

// spillFileOp reads a finished spill file as an operator; closing it
// closes the file.
type spillFileOp struct {
	c *Ctx
	f *spillFile
}

func (o *spillFileOp) Next() ([]Row, error) {
	if o.f == nil {
		return nil, nil
	}
	if err := o.c.Context.Err(); err != nil {
		return nil, err
	}
	b, err := o.f.readBatch()
	if err != nil || len(b) == 0 {
		return nil, err
	}
	return b, nil
}

func (o *spillFileOp) Close() {
	o.f.close()
	o.f = nil
}

// spillParts is one partitioning level: rows go to one of spillFanout
// files by the hash of their key with the level's seed. Files are created
// when their first row comes.
type spillParts struct {
	c       *Ctx
	pattern string
	level   int
	width   int
	files   [spillFanout]*spillFile
}

// newSpillParts starts partitioning level (0 for an operator's input, one
// more than the file's for a file partitioned again) of rows of width;
// past maxSpillLevel it returns 53200 for what.
func newSpillParts(c *Ctx, what, pattern string, level, width int) (*spillParts, error) {
	if level > maxSpillLevel {
		return nil, c.Mem.exceeded(what)
	}
	return &spillParts{c: c, pattern: pattern, level: level, width: width}, nil
}

// part returns the file index of a key.
func (p *spillParts) part(key []byte) int {
	return int(maphash.Bytes(spillSeeds[p.level], key) % spillFanout)
}

// add writes r to the file of key.
func (p *spillParts) add(key []byte, r Row) error {
	return p.addTo(p.part(key), r)
}

// addTo writes r to file i.
func (p *spillParts) addTo(i int, r Row) error {
	f := p.files[i]
	if f == nil {
		var err error
		if f, err = newSpillFile(p.c.Mem.TempDir, p.pattern, p.width, p.c.spillBufSize()); err != nil {
			return err
		}
		p.files[i] = f
	}
	return f.write(r)
}

// finish ends writing every file and rewinds them for reading.
func (p *spillParts) finish() error {
	for _, f := range p.files {
		if f != nil {
			if err := f.finish(); err != nil {
				return err
			}
		}
	}
	return nil
}

// take hands file i over to the caller (nil when it got no rows).
func (p *spillParts) take(i int) *spillFile {
	f := p.files[i]
	p.files[i] = nil
	return f
}

// close closes the files not taken.
func (p *spillParts) close() {
	if p == nil {
		return
	}
	for i, f := range p.files {
		f.close()
		p.files[i] = nil
	}
}

// spillTask is a spilled file waiting to be processed, with the level it
// was partitioned at.
type spillTask struct {
	f     *spillFile
	level int
}

// takeTasks appends p's files as tasks (in file order) and clears p.
func (p *spillParts) takeTasks(tasks []spillTask) []spillTask {
	for i := range p.files {
		if f := p.take(i); f != nil {
			tasks = append(tasks, spillTask{f: f, level: p.level})
		}
	}
	return tasks
}

// closeTasks closes the files of tasks not yet processed.
func closeTasks(tasks []spillTask) {
	for _, t := range tasks {
		t.f.close()
	}
}
