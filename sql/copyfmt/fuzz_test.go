package copyfmt

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// The decoders never panic and never loop (invariant 2), and what they read
// survives a trip through the encoder (invariant 3). Seeds are in
// testdata/fuzz/; run with go test -fuzz FuzzCopyText ./sql/copyfmt.

func FuzzCopyText(f *testing.F) {
	for _, s := range []string{
		"1\tx\n2\t\\N\n", "a\\tb\\x41\\101\\\\\n\\.\n", "1\tx\r\n2\ty\r\n\\.\r\n", "x\\\ny", "\\.", "a\\",
		"1\tx\ry\r", "\\303\\251\t\\377\n",
	} {
		f.Add([]byte(s), byte('\t'), `\N`)
	}
	f.Add([]byte("a|b\\|c|\n"), byte('|'), "")
	f.Fuzz(func(t *testing.T, data []byte, delim byte, null string) {
		opts := TextOptions()
		opts.Delimiter, opts.Null = delim, null
		if !validText(opts) {
			return
		}
		checkDecoder(t, data, opts, null == `\N`)
	})
}

func FuzzCopyCSV(f *testing.F) {
	for _, s := range []string{
		"1,x\n2,\n", `a"b"c,"a""b",""` + "\n", "\"x\ny\",\\.,z\n\\.\n", "1,\"y\n", "\\.", "a,b\r\nc,d\r\n",
		"'a\\'b',x\n",
	} {
		f.Add([]byte(s), byte(','), "", byte('"'), byte('"'))
	}
	f.Add([]byte(`'a\'b';NULL;''`+"\n"), byte(';'), "NULL", byte('\''), byte('\\'))
	f.Fuzz(func(t *testing.T, data []byte, delim byte, null string, quote, esc byte) {
		opts := CSVOptions()
		opts.Delimiter, opts.Null, opts.Quote, opts.Escape = delim, null, quote, esc
		if !validCSV(opts) {
			return
		}
		// PostgreSQL accepts a line break as the quote or escape
		// character; such data does not survive a round trip there
		// either.
		checkDecoder(t, data, opts, !strings.ContainsAny(string([]byte{quote, esc}), "\r\n"))
	})
}

// validText and validCSV apply PostgreSQL's option checks (the session's
// job in the server): one-byte ASCII characters, no line breaks, a text
// delimiter that cannot be confused with an escape, a null string without
// the delimiter (or the quote). SQL strings cannot hold NUL. SQL strings cannot hold NUL.
func validText(o Options) bool {
	return validCommon(o) && !strings.ContainsRune(`\.abcdefghijklmnopqrstuvwxyz0123456789`, rune(o.Delimiter))
}

func validCSV(o Options) bool {
	return validCommon(o) && o.Quote > 0 && o.Quote < 0x80 && o.Escape > 0 && o.Escape < 0x80 && o.Quote != o.Delimiter &&
		!strings.ContainsRune(o.Null, rune(o.Quote))
}

func validCommon(o Options) bool {
	return o.Delimiter > 0 && o.Delimiter < 0x80 && o.Delimiter != '\r' && o.Delimiter != '\n' &&
		!strings.ContainsAny(o.Null, "\r\n\x00") && !strings.ContainsRune(o.Null, rune(o.Delimiter))
}

type record struct {
	vals  [][]byte
	nulls []bool
}

func readAll(data []byte, opts Options, r io.Reader) ([]record, error) {
	d := NewDecoder(r, opts)
	var out []record
	for n := 0; ; n++ {
		if n > len(data)+1 {
			return nil, errors.New("more records than input bytes: the decoder does not advance")
		}
		err := d.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		var rec record
		for i := 0; i < d.NumFields(); i++ {
			v, null := d.Field(i)
			rec.vals = append(rec.vals, bytes.Clone(v))
			rec.nulls = append(rec.nulls, null)
		}
		out = append(out, rec)
	}
}

func checkDecoder(t *testing.T, data []byte, opts Options, roundTrip bool) {
	recs, err := readAll(data, opts, bytes.NewReader(data))
	// Chunking must not matter.
	recs1, err1 := readAll(data, opts, iotest.OneByteReader(bytes.NewReader(data)))
	if (err == nil) != (err1 == nil) || len(recs) != len(recs1) {
		t.Fatalf("whole: %d records, %v; byte by byte: %d records, %v", len(recs), err, len(recs1), err1)
	}
	if err != nil || !roundTrip {
		return
	}
	var enc []byte
	for _, r := range recs {
		e := NewEncoder(opts, len(r.vals))
		for i, v := range r.vals {
			if r.nulls[i] {
				enc = e.AppendNull(enc, i)
			} else {
				enc = e.AppendField(enc, i, v)
			}
		}
		enc = e.AppendEnd(enc)
	}
	if opts.CSV && (bytes.HasPrefix(enc, []byte("\\.\n")) || bytes.Contains(enc, []byte("\n\\.\n"))) {
		// A CSV row written as the line `\.` (a NULL written `\.`, a
		// delimiter '.' after a backslash) reads back as the end marker,
		// in PostgreSQL too: it quotes only a lone `\.` value.
		return
	}
	if opts.CSV && (bytes.HasPrefix(enc, []byte("\\.\n")) || bytes.Contains(enc, []byte("\n\\.\n"))) {
		// A CSV row written as the line `\.` (a NULL written `\.`, a
		// delimiter '.' after a backslash) reads back as the end marker,
		// in PostgreSQL too: it quotes only a lone `\.` value.
		return
	}
	again, err := readAll(enc, opts, bytes.NewReader(enc))
	if err != nil {
		t.Fatalf("re-encoded %q does not decode: %v", enc, err)
	}
	if len(again) != len(recs) {
		t.Fatalf("re-encoded %q: %d records, want %d", enc, len(again), len(recs))
	}
	for i := range recs {
		a, b := recs[i], again[i]
		if len(a.vals) != len(b.vals) {
			t.Fatalf("record %d of %q: %d fields, want %d", i, enc, len(b.vals), len(a.vals))
		}
		for j := range a.vals {
			if a.nulls[j] != b.nulls[j] || !bytes.Equal(a.vals[j], b.vals[j]) {
				t.Fatalf("record %d field %d of %q: got %q (null %v), want %q (null %v)", i, j, enc, b.vals[j], b.nulls[j], a.vals[j], a.nulls[j])
			}
		}
	}
}
