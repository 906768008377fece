package copyfmt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mvserver/mvserver/pgerror"
)

// PostgreSQL 15's output for
//
//	COPY (SELECT 1::int AS a, 'ab'::text AS b, NULL::int AS c) TO STDOUT (FORMAT binary)
const pgBinaryRow = "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x03\x00\x00\x00\x04\x00\x00\x00\x01\x00\x00\x00\x02ab\xff\xff\xff\xff" +
	"\xff\xff"

func TestBinaryEncode(t *testing.T) {
	b := AppendBinaryHeader(nil)
	b = AppendBinaryRowStart(b, 3)
	b = AppendBinaryField(b, []byte{0, 0, 0, 1})
	b = AppendBinaryField(b, []byte("ab"))
	b = AppendBinaryNull(b)
	b = AppendBinaryTrailer(b)
	if string(b) != pgBinaryRow {
		t.Fatalf("got %q\nwant %q", b, pgBinaryRow)
	}
}

func decodeBinary(r io.Reader, n int) string {
	d := NewBinaryDecoder(r)
	var sb strings.Builder
	err := d.ReadHeader()
	for err == nil {
		if err = d.Next(n); err == nil {
			fmt.Fprintf(&sb, "%d [", d.Line())
			for i := 0; i < d.NumFields(); i++ {
				v, null := d.Field(i)
				if null {
					sb.WriteString("NULL ")
				} else {
					fmt.Fprintf(&sb, "%q ", v)
				}
			}
			sb.WriteString("]\n")
		}
	}
	if errors.Is(err, io.EOF) {
		return sb.String()
	}
	var pe *pgerror.Error
	if errors.As(err, &pe) {
		fmt.Fprintf(&sb, "error %s: %s @line %d column %d", pe.Code, pe.Message, d.Line(), d.Column())
	} else {
		fmt.Fprintf(&sb, "error %v", err)
	}
	return sb.String()
}

// The errors are PostgreSQL's for the same input (COPY … FROM STDIN
// (FORMAT binary)), with its line and column context.
func TestBinaryDecode(t *testing.T) {
	head := "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	for _, tc := range []struct {
		name, input string
		n           int
		want        string
	}{
		{"row", pgBinaryRow, 3, "1 [\"\\x00\\x00\\x00\\x01\" \"ab\" NULL ]\n"},
		{"no marker", strings.TrimSuffix(pgBinaryRow, "\xff\xff"), 3, "1 [\"\\x00\\x00\\x00\\x01\" \"ab\" NULL ]\n"},
		{"header extension", "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x03xyz\xff\xff", 1, ""},
		{"empty", "", 1, "error 22P04: COPY file signature not recognized @line 0 column -1"},
		{"text", "1\tx\n", 2, "error 22P04: COPY file signature not recognized @line 0 column -1"},
		{"no flags", head[:13], 1, "error 22P04: invalid COPY file header (missing flags) @line 0 column -1"},
		{"oids", head[:11] + "\x00\x01\x00\x00\x00\x00\x00\x00", 1, "error 22P04: invalid COPY file header (WITH OIDS) @line 0 column -1"},
		{"critical flag", head[:11] + "\x00\x02\x00\x00\x00\x00\x00\x00", 1, "error 22P04: unrecognized critical flags in COPY file header @line 0 column -1"},
		{"short extension", head[:15] + "\x00\x00\x00\x05ab", 1, "error 22P04: invalid COPY file header (wrong length) @line 0 column -1"},
		{"field count", head + "\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00", 1, "error 22P04: row field count is 2, expected 1 @line 1 column -1"},
		{"cut in a field", head + "\x00\x01\x00\x00\x00\x04\x00\x00", 1, "error 22P04: unexpected EOF in COPY data @line 1 column 0"},
		{"cut in a length", head + "\x00\x02\xff\xff\xff\xff\x00\x00", 2, "error 22P04: unexpected EOF in COPY data @line 1 column 1"},
		{"negative size", head + "\x00\x01\xff\xff\xff\xfe", 1, "error 22P04: invalid field size @line 1 column 0"},
		{"data after the marker", head + "\xff\xffx", 1, "error 22P04: received copy data after EOF marker @line 1 column -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := decodeBinary(strings.NewReader(tc.input), tc.n); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if got := decodeBinary(iotest.OneByteReader(strings.NewReader(tc.input)), tc.n); got != tc.want {
				t.Errorf("byte by byte: got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func FuzzCopyBinary(f *testing.F) {
	f.Add([]byte(pgBinaryRow), 3)
	f.Add([]byte(pgBinaryRow[:30]), 3)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < 0 || n > 1600 {
			return
		}
		d := NewBinaryDecoder(bytes.NewReader(data))
		err := d.ReadHeader()
		for rows := 0; err == nil; rows++ {
			if rows > len(data) {
				t.Fatal("more rows than input bytes")
			}
			err = d.Next(n)
		}
	})
}
