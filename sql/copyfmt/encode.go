package copyfmt

// Encoder appends rows in COPY text or CSV format, as PostgreSQL's
// CopyAttributeOutText and CopyAttributeOutCSV write them. A row is built
// field by field: AppendField or AppendNull for each column in order, then
// AppendEnd.
type Encoder struct {
	opts  Options
	ncols int
}

// NewEncoder returns an Encoder for rows of ncols columns.
func NewEncoder(opts Options, ncols int) *Encoder {
	return &Encoder{opts: opts, ncols: ncols}
}

// AppendHeader appends the HEADER line: the column names, escaped or quoted
// like values.
func (e *Encoder) AppendHeader(dst []byte, names []string) []byte {
	for i, n := range names {
		if i > 0 {
			dst = append(dst, e.opts.Delimiter)
		}
		if e.opts.CSV {
			dst = e.appendCSV(dst, []byte(n), false)
		} else {
			dst = e.appendText(dst, []byte(n))
		}
	}
	return append(dst, '\n')
}

// AppendField appends the non-NULL value v of column i (0-based).
func (e *Encoder) AppendField(dst []byte, i int, v []byte) []byte {
	if i > 0 {
		dst = append(dst, e.opts.Delimiter)
	}
	if e.opts.CSV {
		return e.appendCSV(dst, v, e.opts.ForceQuoteAll || flag(e.opts.ForceQuote, i))
	}
	return e.appendText(dst, v)
}

// AppendNull appends a NULL in column i: the null string, never quoted.
func (e *Encoder) AppendNull(dst []byte, i int) []byte {
	if i > 0 {
		dst = append(dst, e.opts.Delimiter)
	}
	return append(dst, e.opts.Null...)
}

// AppendEnd ends the row. PostgreSQL writes "\n" whatever the input's
// line endings were.
func (e *Encoder) AppendEnd(dst []byte) []byte { return append(dst, '\n') }

// appendText escapes backslash, the delimiter and the control characters
// that have a C-like escape; other control characters are written as they
// are (the delimiter among them is backslashed).
func (e *Encoder) appendText(dst, v []byte) []byte {
	delim := e.opts.Delimiter
	start := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		var esc byte
		switch {
		case c < 0x20:
			switch c {
			case '\b':
				esc = 'b'
			case '\f':
				esc = 'f'
			case '\n':
				esc = 'n'
			case '\r':
				esc = 'r'
			case '\t':
				esc = 't'
			case '\v':
				esc = 'v'
			default:
				if c != delim {
					continue
				}
				// A control-character delimiter: backslash it as is.
				dst = append(dst, v[start:i]...)
				dst = append(dst, '\\')
				start = i
				continue
			}
			dst = append(dst, v[start:i]...)
			dst = append(dst, '\\', esc)
			start = i + 1
		case c == '\\' || c == delim:
			dst = append(dst, v[start:i]...)
			dst = append(dst, '\\')
			start = i // the character itself follows
		}
	}
	return append(dst, v[start:]...)
}

// appendCSV quotes v when it must be (it contains the delimiter, the quote,
// CR or LF; it equals the null string; it is `\.` alone in a one-column
// row, which would read as the end marker) or when force is set; inside
// quotes the quote and escape characters are preceded by the escape.
func (e *Encoder) appendCSV(dst, v []byte, force bool) []byte {
	quote, esc, delim := e.opts.Quote, e.opts.Escape, e.opts.Delimiter
	use := force || string(v) == e.opts.Null
	if !use {
		if e.ncols == 1 && string(v) == `\.` {
			use = true
		} else {
			for _, c := range v {
				if c == delim || c == quote || c == '\n' || c == '\r' {
					use = true
					break
				}
			}
		}
	}
	if !use {
		return append(dst, v...)
	}
	dst = append(dst, quote)
	start := 0
	for i, c := range v {
		if c == quote || c == esc {
			dst = append(dst, v[start:i]...)
			dst = append(dst, esc)
			start = i
		}
	}
	dst = append(dst, v[start:]...)
	return append(dst, quote)
}
