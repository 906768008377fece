package logictest

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

type recordKind uint8

const (
	kindStatement recordKind = iota
	kindQuery
	kindProtocol
	kindConnection
	kindUser
	kindHalt
)

type sortMode uint8

const (
	noSort sortMode = iota
	rowSort
	valueSort
)

// record is one statement, query or directive of a file.
type record struct {
	kind recordKind
	line int // 1-based line of the header
	sql  string

	// expectations
	expectErr bool
	errCode   string         // SQLSTATE the error must carry ("" = any)
	errRe     *regexp.Regexp // must match the error message (nil = any)
	count     int64          // statement count N; -1 when not checked
	types     string
	sort      sortMode
	colnames  bool
	expected  []string

	// where the record sits in File.lines (0-based), for -rewrite
	header  int // header line
	sqlEnd  int // first line after the SQL (the ---- line, a blank line or EOF)
	resEnd  int // first line after the expected results
	options []string

	arg string // directive argument

	// onlyIf and skipIf name the engine (Config.Engine) the record runs
	// only on, or not on: mvserver's own statements and documented
	// differences are onlyif mvserver.
	onlyIf, skipIf string
}

// File is a parsed logic-test file.
type File struct {
	Path    string
	lines   []string
	records []*record
}

// ParseFile reads and parses a logic-test file.
func ParseFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, string(b))
}

// Parse parses the text of a logic-test file; path is used in messages.
func Parse(path, text string) (*File, error) {
	text = strings.TrimSuffix(text, "\n")
	f := &File{Path: path, lines: strings.Split(text, "\n")}
	if text == "" {
		f.lines = nil
	}
	lines := f.lines
	blank := func(i int) bool { return strings.TrimSpace(lines[i]) == "" }
	errf := func(i int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", path, i+1, fmt.Sprintf(format, args...))
	}
	// sqlUntil collects SQL lines from i until a blank line, EOF or (for
	// queries) the ---- separator.
	sqlUntil := func(i int, sep bool) (string, int) {
		start := i
		for i < len(lines) && !blank(i) && !(sep && strings.TrimSpace(lines[i]) == "----") {
			i++
		}
		return strings.Join(lines[start:i], "\n"), i
	}
	var onlyIf, skipIf string // conditions of the next record
	for i := 0; i < len(lines); {
		if blank(i) || strings.HasPrefix(strings.TrimSpace(lines[i]), "#") {
			i++
			continue
		}
		fields := strings.Fields(lines[i])
		if fields[0] == "onlyif" || fields[0] == "skipif" {
			if len(fields) != 2 {
				return nil, errf(i, "%s needs an engine name", fields[0])
			}
			if fields[0] == "onlyif" {
				onlyIf = fields[1]
			} else {
				skipIf = fields[1]
			}
			i++
			continue
		}
		r := &record{line: i + 1, header: i, count: -1, onlyIf: onlyIf, skipIf: skipIf}
		onlyIf, skipIf = "", ""
		switch fields[0] {
		case "statement":
			r.kind = kindStatement
			if len(fields) < 2 {
				return nil, errf(i, "statement needs ok, count N or error")
			}
			switch fields[1] {
			case "ok":
			case "count":
				if len(fields) != 3 {
					return nil, errf(i, "statement count needs a number")
				}
				n, err := strconv.ParseInt(fields[2], 10, 64)
				if err != nil {
					return nil, errf(i, "statement count: %v", err)
				}
				r.count = n
			case "error":
				if err := parseErrorSpec(r, lines[i]); err != nil {
					return nil, errf(i, "%v", err)
				}
			default:
				return nil, errf(i, "unknown statement form %q", fields[1])
			}
			r.sql, r.sqlEnd = sqlUntil(i+1, false)
			r.resEnd = r.sqlEnd
		case "query":
			r.kind = kindQuery
			if len(fields) < 2 {
				return nil, errf(i, "query needs the column types or error")
			}
			if fields[1] == "error" {
				if err := parseErrorSpec(r, lines[i]); err != nil {
					return nil, errf(i, "%v", err)
				}
				r.sql, r.sqlEnd = sqlUntil(i+1, false)
				r.resEnd = r.sqlEnd
				break
			}
			r.types = fields[1]
			for _, c := range r.types {
				if !strings.ContainsRune("ITRB_", c) {
					return nil, errf(i, "unknown column type %q (want I, T, R, B or _)", c)
				}
			}
			r.options = fields[2:]
			for _, o := range r.options {
				switch o {
				case "nosort":
					r.sort = noSort
				case "rowsort":
					r.sort = rowSort
				case "valuesort":
					r.sort = valueSort
				case "colnames":
					r.colnames = true
				default:
					return nil, errf(i, "unknown query option %q", o)
				}
			}
			r.sql, r.sqlEnd = sqlUntil(i+1, true)
			r.resEnd = r.sqlEnd
			if r.sqlEnd < len(lines) && strings.TrimSpace(lines[r.sqlEnd]) == "----" {
				j := r.sqlEnd + 1
				for j < len(lines) && !blank(j) {
					r.expected = append(r.expected, lines[j])
					j++
				}
				r.resEnd = j
			}
		case "protocol":
			r.kind = kindProtocol
			if len(fields) != 2 || (fields[1] != "simple" && fields[1] != "extended" && fields[1] != "default") {
				return nil, errf(i, "protocol needs simple, extended or default")
			}
			r.arg = fields[1]
			r.sqlEnd, r.resEnd = i+1, i+1
		case "connection":
			r.kind = kindConnection
			if len(fields) != 2 {
				return nil, errf(i, "connection needs a name")
			}
			r.arg = fields[1]
			r.sqlEnd, r.resEnd = i+1, i+1
		case "user":
			r.kind = kindUser
			if len(fields) != 2 {
				return nil, errf(i, "user needs a role name")
			}
			r.arg = fields[1]
			r.sqlEnd, r.resEnd = i+1, i+1
		case "halt":
			r.kind = kindHalt
			r.sqlEnd, r.resEnd = i+1, i+1
		default:
			return nil, errf(i, "unknown directive %q", fields[0])
		}
		if (r.kind == kindStatement || r.kind == kindQuery) && strings.TrimSpace(r.sql) == "" {
			return nil, errf(i, "%s without SQL", fields[0])
		}
		f.records = append(f.records, r)
		i = r.resEnd
	}
	return f, nil
}

// parseErrorSpec reads "… error [pgcode XXXXX] [regexp]" from a header.
func parseErrorSpec(r *record, header string) error {
	r.expectErr = true
	rest := header[strings.Index(header, "error")+len("error"):]
	rest = strings.TrimSpace(rest)
	if strings.HasPrefix(rest, "pgcode ") || rest == "pgcode" {
		fs := strings.Fields(rest)
		if len(fs) < 2 || len(fs[1]) != 5 {
			return fmt.Errorf("pgcode needs a five-character SQLSTATE")
		}
		r.errCode = fs[1]
		rest = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(rest, "pgcode")), fs[1]))
	}
	if rest != "" {
		re, err := regexp.Compile(rest)
		if err != nil {
			return fmt.Errorf("bad error regexp: %v", err)
		}
		r.errRe = re
	}
	return nil
}

// Records is how many statements and queries of the file run on engine
// (see onlyif and skipif).
func (f *File) Records(engine string) int {
	n := 0
	for _, r := range f.records {
		if (r.kind == kindStatement || r.kind == kindQuery) && (r.onlyIf == "" || r.onlyIf == engine) && r.skipIf != engine {
			n++
		}
	}
	return n
}
