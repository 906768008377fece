package copyfmt

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mvserver/mvserver/pgerror"
)

// decodeAll renders every record of input as [f1|f2|…] (NULL for NULL), one
// per line, prefixed by its line number, and a failure as
// "error CODE: message @line N[: "text"]", the way PostgreSQL's CONTEXT
// shows it.
func decodeAll(t *testing.T, r io.Reader, opts Options, header string) string {
	t.Helper()
	d := NewDecoder(r, opts)
	var sb strings.Builder
	var err error
	switch header {
	case "skip":
		err = d.SkipLine()
	case "fields":
		err = d.Next()
		if err == nil {
			sb.WriteString("header ")
			writeRecord(&sb, d)
		}
	}
	for err == nil {
		if err = d.Next(); err == nil {
			fmt.Fprintf(&sb, "%d ", d.Line())
			writeRecord(&sb, d)
		}
	}
	if errors.Is(err, io.EOF) {
		return sb.String()
	}
	var pe *pgerror.Error
	if !errors.As(err, &pe) {
		fmt.Fprintf(&sb, "error %v", err)
		return sb.String()
	}
	fmt.Fprintf(&sb, "error %s: %s @line %d", pe.Code, pe.Message, d.Line())
	if text, ok := d.LineText(); ok {
		fmt.Fprintf(&sb, ": %q", text)
	}
	return sb.String()
}

func writeRecord(sb *strings.Builder, d *Decoder) {
	sb.WriteByte('[')
	for i := 0; i < d.NumFields(); i++ {
		if i > 0 {
			sb.WriteByte('|')
		}
		v, null := d.Field(i)
		if null {
			sb.WriteString("NULL")
		} else {
			fmt.Fprintf(sb, "%q", v)
		}
	}
	sb.WriteString("]\n")
}

// The expectations come from PostgreSQL 15 given the same input (the rows it
// stored, or its error, SQLSTATE and CONTEXT line).
func TestDecode(t *testing.T) {
	csv := CSVOptions()
	textNullEmpty := TextOptions()
	textNullEmpty.Null = ""
	csvForce := CSVOptions()
	csvForce.ForceNotNull = []bool{false, true, true}
	csvForce.ForceNull = []bool{false, false, true}
	csvForceNull := CSVOptions()
	csvForceNull.ForceNull = []bool{false, true, true}
	csvQuoteEsc := CSVOptions()
	csvQuoteEsc.Quote, csvQuoteEsc.Escape = '\'', '\\'
	csvEsc := CSVOptions()
	csvEsc.Escape = '\\'
	pipe := TextOptions()
	pipe.Delimiter = '|'
	for _, tc := range []struct {
		name  string
		opts  Options
		input string
		want  string
	}{
		{"text", TextOptions(), "1\tx\n2\t\\N\n", "1 [\"1\"|\"x\"]\n2 [\"2\"|NULL]\n"},
		{"text last line without newline", TextOptions(), "1\tx\n2\ty", "1 [\"1\"|\"x\"]\n2 [\"2\"|\"y\"]\n"},
		{"text empty line is one empty field", TextOptions(), "\n", "1 [\"\"]\n"},
		{"no input", TextOptions(), "", ""},
		{"text escapes", TextOptions(), `2` + "\t" + `y\x41\102\q\\\b` + "\n", "1 [\"2\"|\"yABq\\\\\\b\"]\n"},
		{"text bad hex and octal escapes", TextOptions(), `\x\xZ\x4\8` + "\n", "1 [\"xxZ\\x048\"]\n"},
		{"text null is matched before unescaping", textNullEmpty, "1\t\\N\n1\t\n", "1 [\"1\"|\"N\"]\n2 [\"1\"|NULL]\n"},
		{"text escaped delimiter", pipe, `a\|b|c` + "\n", "1 [\"a|b\"|\"c\"]\n"},
		{"text backslash escapes the line break", TextOptions(), "1\tx\\\n2\ty\n", "1 [\"1\"|\"x\\n2\"|\"y\"]\n"},
		{"text trailing backslash at the end is dropped", TextOptions(), "a\\", "1 [\"a\"]\n"},
		{"end marker", TextOptions(), "1\tx\n\\.\ngarbage\n", "1 [\"1\"|\"x\"]\n"},
		{"end marker mid-line in text", TextOptions(), "1\tx\\.\n2\ty\n", "1 [\"1\"|\"x\"]\n"},
		{"escaped backslash then dot is data", TextOptions(), "a\\\\.\n", "1 [\"a\\\\.\"]\n"},
		{"end marker without newline", TextOptions(), "1\tx\n\\.", "1 [\"1\"|\"x\"]\nerror 22P04: end-of-copy marker corrupt @line 2"},
		{"end marker followed by data", TextOptions(), "1\tx\n\\.x\n", "1 [\"1\"|\"x\"]\nerror 22P04: end-of-copy marker corrupt @line 2"},
		{"end marker newline style", TextOptions(), "1\tx\r\n\\.\n", "1 [\"1\"|\"x\"]\nerror 22P04: end-of-copy marker does not match previous newline style @line 2"},
		{"end marker CRLF", TextOptions(), "1\tx\r\n\\.\r\nzz", "1 [\"1\"|\"x\"]\n"},
		{"end marker CR", TextOptions(), "1\tx\r\\.\rzz", "1 [\"1\"|\"x\"]\n"},
		{"CR line ends", TextOptions(), "1\tx\ry\r", "1 [\"1\"|\"x\"]\n2 [\"y\"]\n"},
		{"CRLF line ends", TextOptions(), "1\tx\r\ny\r\n", "1 [\"1\"|\"x\"]\n2 [\"y\"]\n"},
		{"literal CR", TextOptions(), "1\tx\ny\r", "1 [\"1\"|\"x\"]\nerror 22P04: literal carriage return found in data @line 2"},
		{"literal newline", TextOptions(), "1\tx\r\n2\ty\n", "1 [\"1\"|\"x\"]\nerror 22P04: literal newline found in data @line 2"},
		{"invalid UTF-8", TextOptions(), "1\tx\n2\ty\n3\tz\xff\n", "1 [\"1\"|\"x\"]\n2 [\"2\"|\"y\"]\nerror 22021: invalid byte sequence for encoding \"UTF8\": 0xff @line 3"},
		{"truncated UTF-8 shows the following bytes", TextOptions(), "\xe2\x28\xa1\n", "error 22021: invalid byte sequence for encoding \"UTF8\": 0xe2 0x28 0xa1 @line 1"},
		{"NUL byte", TextOptions(), "a\x00b\n", "error 22021: invalid byte sequence for encoding \"UTF8\": 0x00 @line 1"},
		{"escaped NUL", TextOptions(), "1\tx\n2\ty\\000\n", "1 [\"1\"|\"x\"]\nerror 22021: invalid byte sequence for encoding \"UTF8\": 0x00 @line 2: \"2\\ty\\\\000\""},
		{"escaped invalid UTF-8", TextOptions(), "2\ty\\377\n", "error 22021: invalid byte sequence for encoding \"UTF8\": 0xff @line 1: \"2\\ty\\\\377\""},
		{"escaped valid UTF-8", TextOptions(), "\\303\\251\n", "1 [\"é\"]\n"},

		{"csv", csv, "1,x\n2,\n", "1 [\"1\"|\"x\"]\n2 [\"2\"|NULL]\n"},
		{"csv quotes", csv, `a"b"c,"a""b",""` + "\n,,\n\"x\ny\",\\.,z\n",
			"1 [\"abc\"|\"a\\\"b\"|\"\"]\n2 [NULL|NULL|NULL]\n4 [\"x\\ny\"|\"\\\\.\"|\"z\"]\n"},
		{"csv empty line is NULL", csv, "\n", "1 [NULL]\n"},
		{"csv end marker", csv, "1,x\n\\.\nzz\n", "1 [\"1\"|\"x\"]\n"},
		{"csv end marker without newline is data", csv, "1,x\n\\.", "1 [\"1\"|\"x\"]\n2 [\"\\\\.\"]\n"},
		{"csv \\. with more is data", csv, "1,x\n\\.x\n", "1 [\"1\"|\"x\"]\n2 [\"\\\\.x\"]\n"},
		{"csv quoted \\. is data", csv, "1,x\n\"\\.\n\"\n", "1 [\"1\"|\"x\"]\n3 [\"\\\\.\\n\"]\n"},
		{"csv \\. mid-line is data", csv, "1,x\n2,\\.\n", "1 [\"1\"|\"x\"]\n2 [\"2\"|\"\\\\.\"]\n"},
		{"csv unquoted CR", csv, "1,x\ny\r", "1 [\"1\"|\"x\"]\nerror 22P04: unquoted carriage return found in data @line 2"},
		{"csv unquoted newline", csv, "1,x\r\ny\n", "1 [\"1\"|\"x\"]\nerror 22P04: unquoted newline found in data @line 2"},
		{"csv unterminated quote", csv, "1,x\n2,\"y\n", "1 [\"1\"|\"x\"]\nerror 22P04: unterminated CSV quoted field @line 3: \"2,\\\"y\\n\""},
		{"csv force_not_null and force_null", csvForce, `a,,""` + "\n", "1 [\"a\"|\"\"|NULL]\n"},
		{"csv force_null", csvForceNull, `a,,""` + "\n", "1 [\"a\"|NULL|NULL]\n"},
		{"csv quote and escape", csvQuoteEsc, `'a\'b',x,'\\'` + "\n", "1 [\"a'b\"|\"x\"|\"\\\\\"]\n"},
		{"csv escape only inside quotes", csvEsc, `x\"y,"p\"q\"",z` + "\n", "1 [\"x\\\\y,p\\\\q\\\"\"|\"z\"]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := decodeAll(t, strings.NewReader(tc.input), tc.opts, "")
			if got != tc.want {
				t.Errorf("input %q\ngot\n%s\nwant\n%s", tc.input, got, tc.want)
			}
			// Chunk boundaries never change the outcome: one byte per
			// read exercises every refill path.
			if got1 := decodeAll(t, iotest.OneByteReader(strings.NewReader(tc.input)), tc.opts, ""); got1 != got {
				t.Errorf("input %q read a byte at a time:\n%s\nwhole:\n%s", tc.input, got1, got)
			}
		})
	}
}

func TestDecodeHeader(t *testing.T) {
	tsv := CSVOptions()
	tsv.Delimiter = '\t'
	if got, want := decodeAll(t, strings.NewReader("a\tb"), TextOptions(), "skip"), ""; got != want {
		t.Errorf("header only: %q, want %q", got, want)
	}
	if got, want := decodeAll(t, strings.NewReader("a\tb\n1\t2\n"), TextOptions(), "skip"), "2 [\"1\"|\"2\"]\n"; got != want {
		t.Errorf("header skipped: %q, want %q", got, want)
	}
	if got, want := decodeAll(t, strings.NewReader("a\t\n1\t2\n"), tsv, "fields"), "header [\"a\"|NULL]\n2 [\"1\"|\"2\"]\n"; got != want {
		t.Errorf("header fields: %q, want %q", got, want)
	}
}

// A reader error (the client's CopyFail, a dead socket) ends decoding with
// that error, also when it comes after the end marker.
func TestDecodeReaderError(t *testing.T) {
	fail := errors.New("boom")
	d := NewDecoder(io.MultiReader(strings.NewReader("1\n2"), iotest.ErrReader(fail)), TextOptions())
	if err := d.Next(); err != nil {
		t.Fatal(err)
	}
	if err := d.Next(); !errors.Is(err, fail) {
		t.Fatalf("got %v, want %v", err, fail)
	}
	if err := d.Next(); !errors.Is(err, fail) {
		t.Fatalf("sticky: got %v", err)
	}
	d = NewDecoder(io.MultiReader(strings.NewReader("1\n\\.\nmore"), iotest.ErrReader(fail)), TextOptions())
	if err := d.Next(); err != nil {
		t.Fatal(err)
	}
	if err := d.Next(); !errors.Is(err, fail) {
		t.Fatalf("after the marker: got %v, want %v", err, fail)
	}
}

// A line longer than the read buffer grows it; the values survive refills.
func TestDecodeLongLine(t *testing.T) {
	long := strings.Repeat("x", 3*initialReadSize+7)
	in := "1\t" + long + "\n2\t" + long[:10] + "\n"
	d := NewDecoder(iotest.HalfReader(strings.NewReader(in)), TextOptions())
	for _, want := range []string{long, long[:10]} {
		if err := d.Next(); err != nil {
			t.Fatal(err)
		}
		if v, _ := d.Field(1); string(v) != want {
			t.Fatalf("got %d bytes, want %d", len(v), len(want))
		}
	}
	if err := d.Next(); err != io.EOF {
		t.Fatalf("got %v, want EOF", err)
	}
}

// Decode(Encode(row)) == row (invariant 3).
func TestRoundTrip(t *testing.T) {
	csvSemi := CSVOptions()
	csvSemi.Delimiter, csvSemi.Null, csvSemi.Quote, csvSemi.Escape = ';', "NULL", '\'', '\\'
	for _, opts := range []Options{TextOptions(), CSVOptions(), csvSemi} {
		for _, ncols := range []int{1, 3} {
			e := NewEncoder(opts, ncols)
			var data []byte
			var rows [][][]byte
			for i := 0; i+ncols <= len(oracleValues); i += ncols {
				row := oracleValues[i : i+ncols]
				for c, v := range row {
					if v == nil {
						data = e.AppendNull(data, c)
					} else {
						data = e.AppendField(data, c, v)
					}
				}
				data = e.AppendEnd(data)
				rows = append(rows, row)
			}
			d := NewDecoder(strings.NewReader(string(data)), opts)
			for _, row := range rows {
				if err := d.Next(); err != nil {
					t.Fatalf("%+v: %v", opts, err)
				}
				if d.NumFields() != ncols {
					t.Fatalf("%+v: %d fields, want %d", opts, d.NumFields(), ncols)
				}
				for c, want := range row {
					got, null := d.Field(c)
					if null != (want == nil) || string(got) != string(want) {
						t.Fatalf("%+v: got %q (null %v), want %q", opts, got, null, want)
					}
				}
			}
			if err := d.Next(); err != io.EOF {
				t.Fatalf("%+v: got %v, want EOF", opts, err)
			}
		}
	}
}
