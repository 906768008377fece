package copyfmt

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mvserver/mvserver/pgerror"
)

// eolType is the line terminator of the input. PostgreSQL takes it from the
// first line and then insists on it: a lone CR or LF in later lines is an
// error, not data.
type eolType uint8

const (
	eolUnknown eolType = iota
	eolNL
	eolCR
	eolCRNL
)

const (
	initialReadSize = 64 << 10
	// maxEmptyReads bounds the reads that return neither data nor an error
	// (as bufio does): a broken reader must not spin the decoder forever.
	maxEmptyReads = 100
)

// errNoProgress is returned when the reader keeps returning nothing.
var errNoProgress = errors.New("copyfmt: reader returned no data and no error")

// field is one value of the current record: out[start:end], or NULL.
type field struct {
	start, end int
	null       bool
}

// Decoder reads records from COPY text or CSV data. Call Next until it
// returns io.EOF; after Next returns nil, NumFields and Field describe the
// record. Line and LineText say where the decoder is, for error context.
//
// The decoder reads r in large chunks; a record is valid until the next
// call of Next or SkipLine.
type Decoder struct {
	// Grow, when set, is called before the decoder's buffers grow, with
	// the bytes they grow by (a line is held as read and with its escapes
	// decoded, each in a buffer as large as the longest line so far); its
	// error ends the decoding, and Next returns it. A buffer that grows is
	// charged whole while its bytes are copied, then the old one is given
	// back (a negative n). The session charges the statement's memory
	// budget with it, so a line too large for the budget fails as it
	// arrives (R-X3).
	Grow func(n int64) error
	// charged is what Grow was given for buf and out.
	bufCharged, outCharged int64

	r    io.Reader
	opts Options

	buf        []byte
	start      int // the current line starts at buf[start]
	pos, end   int // unread input is buf[pos:end]
	eof        bool
	readErr    error
	emptyReads int

	eol      eolType
	finished bool  // no records remain (end of input or the \. marker)
	err      error // a decoding error: sticky
	lineNo   int64
	line     []byte // the current logical line, without its terminator
	lineOK   bool   // line holds the whole current line (see LineText)

	out    []byte // de-escaped field values of the current record
	fields []field
}

// NewDecoder returns a Decoder reading r with opts.
func NewDecoder(r io.Reader, opts Options) *Decoder {
	return &Decoder{r: r, opts: opts, buf: make([]byte, initialReadSize)}
}

// Line is the number of the current line, counted as PostgreSQL counts it
// (from 1, the header included; in CSV a newline inside quotes counts too).
func (d *Decoder) Line() int64 { return d.lineNo }

// LineText returns the current line without its terminator, and whether it
// is known whole: false while the line is still being read (an error about
// line endings, the end marker or invalid UTF-8), when PostgreSQL reports
// the line number alone.
func (d *Decoder) LineText() ([]byte, bool) {
	if !d.lineOK {
		return nil, false
	}
	return d.line, true
}

// NumFields is the number of fields of the current record.
func (d *Decoder) NumFields() int { return len(d.fields) }

// Field returns field i of the current record and whether it is NULL, with
// the FORCE_NOT_NULL and FORCE_NULL options applied. The value is valid
// until the next call of Next or SkipLine.
func (d *Decoder) Field(i int) ([]byte, bool) {
	f := d.fields[i]
	if d.opts.CSV {
		if f.null && flag(d.opts.ForceNotNull, i) {
			return []byte(d.opts.Null), false
		}
		if !f.null && flag(d.opts.ForceNull, i) && string(d.out[f.start:f.end]) == d.opts.Null {
			return nil, true
		}
	}
	if f.null {
		return nil, true
	}
	return d.out[f.start:f.end:f.end], false
}

// Next reads the next record. It returns io.EOF when the data ends (at the
// end of the input or at the `\.` marker, after which the rest of the input
// is read and ignored), an error wrapping the reader's error when reading
// fails, or a *pgerror.Error for malformed data. After an error every call
// returns it again.
func (d *Decoder) Next() error {
	last, err := d.nextLine()
	if err != nil {
		return err
	}
	if last && len(d.line) == 0 {
		return io.EOF
	}
	if d.opts.CSV {
		err = d.splitCSV()
	} else {
		err = d.splitText()
	}
	if err != nil {
		d.err = err
	}
	return err
}

// SkipLine reads the next line without splitting it into fields (a HEADER
// line that is not matched). It returns io.EOF when there is none.
func (d *Decoder) SkipLine() error {
	last, err := d.nextLine()
	if err != nil {
		return err
	}
	if last {
		// PostgreSQL ends the COPY when the header is the last line, even
		// without a terminator.
		return io.EOF
	}
	return nil
}

// nextLine reads one line into d.line and checks its encoding. last means
// the data ends after it.
func (d *Decoder) nextLine() (last bool, err error) {
	if d.err != nil {
		return false, d.err
	}
	if d.finished {
		return false, io.EOF
	}
	d.lineOK = false
	d.fields = d.fields[:0]
	d.lineNo++
	last, err = d.readLine()
	if err == nil && last {
		d.finished = true
		// Whatever follows the end marker up to the end of the copy
		// data is ignored, as PostgreSQL does; a reader error (the
		// client's CopyFail) still fails the COPY.
		if _, derr := io.Copy(io.Discard, d.r); derr != nil {
			err = derr
		}
	}
	if err == nil {
		err = checkUTF8(d.line, d.buf[d.start:d.end])
	}
	if err != nil {
		d.err = err
		return false, err
	}
	d.lineOK = true
	return last, nil
}

// fill reads more input into buf, keeping the current line. It reports
// whether bytes were added.
func (d *Decoder) fill() bool {
	if d.eof || d.readErr != nil {
		return false
	}
	if d.start > 0 {
		n := copy(d.buf, d.buf[d.start:d.end])
		d.pos -= d.start
		d.end = n
		d.start = 0
	}
	if d.end == len(d.buf) {
		// One line fills the buffer: grow it (memory follows the longest
		// line, invariant 1).
		if d.Grow != nil {
			if err := d.Grow(int64(2 * len(d.buf))); err != nil {
				d.readErr = err
				return false
			}
		}
		nb := make([]byte, 2*len(d.buf))
		copy(nb, d.buf[:d.end])
		d.buf = nb
		if d.Grow != nil {
			_ = d.Grow(-d.bufCharged)
			d.bufCharged = int64(len(d.buf))
		}
	}
	for {
		n, err := d.r.Read(d.buf[d.end:])
		d.end += n
		if err == io.EOF {
			d.eof = true
			return n > 0
		}
		if err != nil {
			d.readErr = err
			return n > 0
		}
		if n > 0 {
			d.emptyReads = 0
			return true
		}
		d.emptyReads++
		if d.emptyReads >= maxEmptyReads {
			d.readErr = errNoProgress
			return false
		}
	}
}

// ensure makes n unread bytes available; false at the end of the input.
func (d *Decoder) ensure(n int) bool {
	for d.end-d.pos < n {
		if !d.fill() {
			return false
		}
	}
	return true
}

// peek returns the next byte without consuming it, or 0 at the end of the
// input (PostgreSQL's input buffer is padded with a NUL for the same use).
func (d *Decoder) peek() byte {
	if d.ensure(1) {
		return d.buf[d.pos]
	}
	return 0
}

// readLine is PostgreSQL's CopyReadLineText: it finds the end of the
// logical line starting at pos (a CSV quoted field may span lines; in text
// a backslash escapes a line break) and sets d.line. last reports the end
// of the data: the input ended, or the line ended at the `\.` marker.
func (d *Decoder) readLine() (last bool, err error) {
	d.start = d.pos
	csv := d.opts.CSV
	quote, esc := d.opts.Quote, d.opts.Escape
	if esc == quote {
		// Then the quote character simply toggles; PostgreSQL disables
		// the escape here by making it NUL, and so do we.
		esc = 0
	}
	inQuote, lastWasEsc, first := false, false, true
	for {
		if d.pos >= d.end && !d.fill() {
			if d.readErr != nil {
				return false, d.readErr
			}
			d.line = d.buf[d.start:d.end]
			return true, nil
		}
		c := d.buf[d.pos]
		d.pos++

		if csv {
			// An escape counts only inside quotes and before a quote;
			// with quote == escape the character simply toggles.
			if inQuote && c == esc {
				lastWasEsc = !lastWasEsc
			}
			if c == quote && !lastWasEsc {
				inQuote = !inQuote
			}
			if c != esc {
				lastWasEsc = false
			}
			// PostgreSQL counts the line breaks inside quoted fields (by
			// the terminator's last byte, or CR while it is unknown).
			nl := byte('\r')
			if d.eol == eolNL {
				nl = '\n'
			}
			if inQuote && c == nl {
				d.lineNo++
			}
		}

		if c == '\r' && (!csv || !inQuote) {
			end := d.pos - 1
			switch d.eol {
			case eolUnknown, eolCRNL:
				next := d.peek()
				if d.readErr != nil {
					return false, d.readErr
				}
				if next == '\n' {
					d.pos++
					d.eol = eolCRNL
				} else {
					if d.eol == eolCRNL {
						return false, crError(csv)
					}
					d.eol = eolCR
				}
			case eolNL:
				return false, crError(csv)
			}
			d.line = d.buf[d.start:end]
			return false, nil
		}
		if c == '\n' && (!csv || !inQuote) {
			if d.eol == eolCR || d.eol == eolCRNL {
				return false, nlError(csv)
			}
			d.eol = eolNL
			d.line = d.buf[d.start : d.pos-1]
			return false, nil
		}

		// In CSV `\.` is the end marker only alone on a line: it is valid
		// data elsewhere. In text it ends the data wherever it appears.
		if c == '\\' && (!csv || first) {
			bs := d.pos - 1 - d.start // offset: fill may move the line
			if !d.ensure(1) {
				if d.readErr != nil {
					return false, d.readErr
				}
				// A backslash just before the end is data.
				d.line = d.buf[d.start:d.end]
				return true, nil
			}
			if d.buf[d.pos] == '.' {
				d.pos++
				end, err := d.endMarker(csv)
				if err != nil {
					return false, err
				}
				if end {
					d.line = d.buf[d.start : d.start+bs]
					return true, nil
				}
				// CSV: `\.` followed by more is data; go on after the
				// backslash.
				d.pos = d.start + bs + 1
			} else if !csv {
				// In text a backslash escapes the next byte, a line
				// break included, so `\\.` is not the marker.
				d.pos++
			}
		}
		first = false
	}
}

// endMarker checks what follows `\.`: a line terminator of the input's
// style ends the data. In text anything else is an error; in CSV (end=false)
// the `\.` was data.
func (d *Decoder) endMarker(csv bool) (end bool, err error) {
	next := func() byte {
		c := d.peek()
		if d.end > d.pos {
			d.pos++
		}
		return c
	}
	if d.eol == eolCRNL {
		c := next()
		if d.readErr != nil {
			return false, d.readErr
		}
		if c == '\n' {
			if !csv {
				return false, markerStyleError()
			}
			return false, nil
		}
		if c != '\r' {
			if !csv {
				return false, markerCorruptError()
			}
			return false, nil
		}
	}
	c := next()
	if d.readErr != nil {
		return false, d.readErr
	}
	if c != '\r' && c != '\n' {
		if !csv {
			return false, markerCorruptError()
		}
		return false, nil
	}
	if (d.eol == eolNL && c != '\n') || (d.eol == eolCRNL && c != '\n') || (d.eol == eolCR && c != '\r') {
		return false, markerStyleError()
	}
	return true, nil
}

// reserveOut makes out large enough for the current line's decoded
// fields, which are never longer than the line, growing it through Grow.
func (d *Decoder) reserveOut() error {
	if cap(d.out) >= len(d.line) {
		return nil
	}
	n := max(len(d.line), 2*cap(d.out))
	if d.Grow != nil {
		if err := d.Grow(int64(n) - d.outCharged); err != nil {
			return err
		}
		d.outCharged = int64(n)
	}
	d.out = make([]byte, 0, n)
	return nil
}

// splitText is PostgreSQL's CopyReadAttributesText: fields split at the
// delimiter, backslash escapes decoded, a field whose raw text is the null
// string is NULL.
func (d *Decoder) splitText() error {
	line := d.line
	delim := d.opts.Delimiter
	null := d.opts.Null
	if err := d.reserveOut(); err != nil {
		return err
	}
	d.out = d.out[:0]
	d.fields = d.fields[:0]
	i := 0
	for {
		rawStart, outStart := i, len(d.out)
		rawEnd := i
		foundDelim, nonASCII := false, false
		for {
			j := i
			for j < len(line) && line[j] != delim && line[j] != '\\' {
				j++
			}
			d.out = append(d.out, line[i:j]...)
			i = j
			rawEnd = i
			if i >= len(line) {
				break
			}
			c := line[i]
			i++
			if c == delim {
				foundDelim = true
				break
			}
			// A backslash.
			if i >= len(line) {
				break // a trailing backslash is dropped
			}
			c = line[i]
			i++
			switch c {
			case '0', '1', '2', '3', '4', '5', '6', '7':
				val := int(c - '0')
				for k := 0; k < 2 && i < len(line) && line[i] >= '0' && line[i] <= '7'; k++ {
					val = val<<3 + int(line[i]-'0')
					i++
				}
				c = byte(val)
				if c == 0 || c >= utf8.RuneSelf {
					nonASCII = true
				}
			case 'x':
				if i < len(line) && isHex(line[i]) {
					val := unhex(line[i])
					i++
					if i < len(line) && isHex(line[i]) {
						val = val<<4 | unhex(line[i])
						i++
					}
					c = val
					if c == 0 || c >= utf8.RuneSelf {
						nonASCII = true
					}
				}
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'v':
				c = '\v'
			}
			d.out = append(d.out, c)
		}
		f := field{start: outStart, end: len(d.out)}
		if string(line[rawStart:rawEnd]) == null {
			// The raw text decides: `\N` is NULL before any unescaping.
			f.null = true
		} else if nonASCII {
			// Octal and hex escapes can make bytes that are not UTF-8.
			if err := checkUTF8(d.out[outStart:], d.out[outStart:]); err != nil {
				return err
			}
		}
		d.fields = append(d.fields, f)
		if !foundDelim {
			return nil
		}
	}
}

// splitCSV is PostgreSQL's CopyReadAttributesCSV: fields split at the
// delimiter outside quotes; inside quotes the escape character escapes a
// quote or itself; an unquoted field equal to the null string is NULL.
func (d *Decoder) splitCSV() error {
	line := d.line
	delim, quote, esc := d.opts.Delimiter, d.opts.Quote, d.opts.Escape
	if err := d.reserveOut(); err != nil {
		return err
	}
	null := d.opts.Null
	d.out = d.out[:0]
	d.fields = d.fields[:0]
	i := 0
	for {
		rawStart, outStart := i, len(d.out)
		rawEnd := i
		foundDelim, sawQuote := false, false
	field:
		for {
			// Outside quotes.
			for {
				j := i
				for j < len(line) && line[j] != delim && line[j] != quote {
					j++
				}
				d.out = append(d.out, line[i:j]...)
				i = j
				rawEnd = i
				if i >= len(line) {
					break field
				}
				c := line[i]
				i++
				if c == delim {
					foundDelim = true
					break field
				}
				sawQuote = true
				break
			}
			// Inside quotes.
			for {
				rawEnd = i
				if i >= len(line) {
					return pgerror.New(pgerror.BadCopyFileFormat, "unterminated CSV quoted field")
				}
				c := line[i]
				i++
				if c == esc && i < len(line) && (line[i] == esc || line[i] == quote) {
					d.out = append(d.out, line[i])
					i++
					continue
				}
				if c == quote {
					break
				}
				d.out = append(d.out, c)
			}
		}
		f := field{start: outStart, end: len(d.out)}
		if !sawQuote && string(line[rawStart:rawEnd]) == null {
			f.null = true
		}
		d.fields = append(d.fields, f)
		if !foundDelim {
			return nil
		}
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// checkUTF8 checks that b is valid UTF-8 without NUL bytes, as PostgreSQL
// requires of all text. rest is b followed by whatever input comes after
// it, which PostgreSQL's message shows when a sequence is cut short.
func checkUTF8(b, rest []byte) error {
	if utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 {
		return nil
	}
	for i := 0; i < len(b); {
		c := b[i]
		if c == 0 {
			return invalidByteSequence(rest[i:])
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return invalidByteSequence(rest[i:])
		}
		i += size
	}
	return nil
}

// invalidByteSequence is PostgreSQL's report_invalid_encoding: the bytes of
// the offending character as its first byte announces it (at most 8).
func invalidByteSequence(b []byte) error {
	n := 1
	switch c := b[0]; {
	case c&0xe0 == 0xc0:
		n = 2
	case c&0xf0 == 0xe0:
		n = 3
	case c&0xf8 == 0xf0:
		n = 4
	}
	n = min(n, len(b), 8)
	var sb strings.Builder
	for j := 0; j < n; j++ {
		if j > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString("0x")
		if b[j] < 0x10 {
			sb.WriteByte('0')
		}
		sb.WriteString(strconv.FormatUint(uint64(b[j]), 16))
	}
	return pgerror.New(pgerror.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\": %s", sb.String())
}

func crError(csv bool) error {
	if csv {
		return pgerror.New(pgerror.BadCopyFileFormat, "unquoted carriage return found in data").
			WithHint("Use quoted CSV field to represent carriage return.")
	}
	return pgerror.New(pgerror.BadCopyFileFormat, "literal carriage return found in data").
		WithHint(`Use "\r" to represent carriage return.`)
}

func nlError(csv bool) error {
	if csv {
		return pgerror.New(pgerror.BadCopyFileFormat, "unquoted newline found in data").
			WithHint("Use quoted CSV field to represent newline.")
	}
	return pgerror.New(pgerror.BadCopyFileFormat, "literal newline found in data").
		WithHint(`Use "\n" to represent newline.`)
}

func markerCorruptError() error {
	return pgerror.New(pgerror.BadCopyFileFormat, "end-of-copy marker corrupt")
}

func markerStyleError() error {
	return pgerror.New(pgerror.BadCopyFileFormat, "end-of-copy marker does not match previous newline style")
}
