package copyfmt

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"

	"github.com/mvserver/mvserver/pgerror"
)

// COPY's binary format (FORMAT binary; pgx's CopyFrom uses it): an
// 11-byte signature, a flags word and a header extension, then per row a
// 16-bit field count and each field as a 32-bit length (-1 for NULL)
// followed by the value in its type's binary form, and a count of -1 at the
// end.

var binarySignature = []byte("PGCOPY\n\xff\r\n\x00")

// AppendBinaryHeader appends the signature, no flags and an empty header
// extension.
func AppendBinaryHeader(dst []byte) []byte {
	dst = append(dst, binarySignature...)
	return append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
}

// AppendBinaryRowStart starts a row of n fields.
func AppendBinaryRowStart(dst []byte, n int) []byte {
	return binary.BigEndian.AppendUint16(dst, uint16(n))
}

// AppendBinaryField appends one field: the length of v, then v.
func AppendBinaryField(dst, v []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(v)))
	return append(dst, v...)
}

// AppendBinaryNull appends a NULL field.
func AppendBinaryNull(dst []byte) []byte {
	return binary.BigEndian.AppendUint32(dst, 0xffffffff)
}

// AppendBinaryTrailer appends the end-of-data marker.
func AppendBinaryTrailer(dst []byte) []byte {
	return append(dst, 0xff, 0xff)
}

// BinaryDecoder reads COPY binary data, as PostgreSQL's
// ReceiveCopyBinaryHeader and NextCopyFrom do. Field values are read as
// they arrive, so memory follows the data actually sent, not the lengths
// it announces.
type BinaryDecoder struct {
	// Grow, when set, is called before the row's buffer grows, with the
	// bytes it grows by; its error ends the decoding (Decoder.Grow).
	Grow func(n int64) error

	r      *bufio.Reader
	row    int64
	col    int    // field being read when an error happened, -1 if none
	buf    []byte // the current row's field values
	fields []field
	done   bool
	err    error
}

// NewBinaryDecoder returns a decoder of r; call ReadHeader first.
func NewBinaryDecoder(r io.Reader) *BinaryDecoder {
	return &BinaryDecoder{r: bufio.NewReaderSize(r, initialReadSize), col: -1}
}

// Line is the number of the current row (0 while the header is read), as
// PostgreSQL's error context counts it.
func (d *BinaryDecoder) Line() int64 { return d.row }

// Column is the index of the field being read when Next failed, -1 when
// the failure was not in a field.
func (d *BinaryDecoder) Column() int { return d.col }

// NumFields is the number of fields of the current row.
func (d *BinaryDecoder) NumFields() int { return len(d.fields) }

// Field returns field i of the current row and whether it is NULL; the
// value is valid until the next call of Next.
func (d *BinaryDecoder) Field(i int) ([]byte, bool) {
	f := d.fields[i]
	if f.null {
		return nil, true
	}
	return d.buf[f.start:f.end:f.end], false
}

func badBinary(msg string) error { return pgerror.New(pgerror.BadCopyFileFormat, "%s", msg) }

// readFull reads len(b) bytes; short means the input ended first. A
// reader error other than io.EOF is returned as it is.
func (d *BinaryDecoder) readFull(b []byte) (short bool, err error) {
	_, err = io.ReadFull(d.r, b)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true, nil
	}
	return false, err
}

// ReadHeader reads and checks the header.
func (d *BinaryDecoder) ReadHeader() error {
	var sig [11]byte
	if short, err := d.readFull(sig[:]); err != nil {
		return err
	} else if short || !bytes.Equal(sig[:], binarySignature) {
		return badBinary("COPY file signature not recognized")
	}
	var w [4]byte
	if short, err := d.readFull(w[:]); err != nil {
		return err
	} else if short {
		return badBinary("invalid COPY file header (missing flags)")
	}
	flags := binary.BigEndian.Uint32(w[:])
	if flags&(1<<16) != 0 {
		return badBinary("invalid COPY file header (WITH OIDS)")
	}
	if flags>>16 != 0 {
		return badBinary("unrecognized critical flags in COPY file header")
	}
	if short, err := d.readFull(w[:]); err != nil {
		return err
	} else if short || int32(binary.BigEndian.Uint32(w[:])) < 0 {
		return badBinary("invalid COPY file header (missing length)")
	}
	ext := int64(binary.BigEndian.Uint32(w[:]))
	if n, err := io.CopyN(io.Discard, d.r, ext); err != nil {
		if n < ext && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
			return badBinary("invalid COPY file header (wrong length)")
		}
		return err
	}
	return nil
}

// Next reads the next row, which must have n fields. It returns io.EOF at
// the end marker (which must end the data) or at the end of the input.
func (d *BinaryDecoder) Next(n int) error {
	if d.err != nil {
		return d.err
	}
	if d.done {
		return io.EOF
	}
	err := d.next(n)
	if err != nil {
		d.err = err
	}
	return err
}

func (d *BinaryDecoder) next(n int) error {
	d.row++
	d.col = -1
	d.fields = d.fields[:0]
	d.buf = d.buf[:0]
	var w [4]byte
	if short, err := d.readFull(w[:2]); err != nil {
		return err
	} else if short {
		d.done = true
		return io.EOF
	}
	count := int16(binary.BigEndian.Uint16(w[:2]))
	if count == -1 {
		// The marker must end the data: the client's CopyDone (or its
		// CopyFail) comes next.
		d.done = true
		if _, err := d.r.ReadByte(); err == nil {
			return badBinary("received copy data after EOF marker")
		} else if !errors.Is(err, io.EOF) {
			return err
		}
		return io.EOF
	}
	if int(count) != n {
		return pgerror.New(pgerror.BadCopyFileFormat, "row field count is %d, expected %d", count, n)
	}
	for i := 0; i < n; i++ {
		d.col = i
		if short, err := d.readFull(w[:]); err != nil {
			return err
		} else if short {
			return badBinary("unexpected EOF in COPY data")
		}
		size := int32(binary.BigEndian.Uint32(w[:]))
		if size == -1 {
			d.fields = append(d.fields, field{null: true})
			continue
		}
		if size < 0 {
			return badBinary("invalid field size")
		}
		start := len(d.buf)
		if err := d.readValue(int(size)); err != nil {
			return err
		}
		d.fields = append(d.fields, field{start: start, end: len(d.buf)})
	}
	d.col = -1
	return nil
}

// readValue appends the next size bytes to buf. It grows buf by what
// arrives, a bounded chunk at a time, never by the announced size alone.
func (d *BinaryDecoder) readValue(size int) error {
	for size > 0 {
		chunk := min(size, initialReadSize)
		n := len(d.buf)
		if n+chunk > cap(d.buf) {
			// Doubled, and charged before it is allocated.
			want := max(2*cap(d.buf), n+chunk)
			if d.Grow != nil {
				if err := d.Grow(int64(want - cap(d.buf))); err != nil {
					return err
				}
			}
			nb := make([]byte, n, want)
			copy(nb, d.buf)
			d.buf = nb
		}
		d.buf = d.buf[:n+chunk]
		m, err := io.ReadFull(d.r, d.buf[n:])
		d.buf = d.buf[:n+m]
		if m < chunk {
			if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				return err
			}
			return badBinary("unexpected EOF in COPY data")
		}
		size -= chunk
	}
	return nil
}
