package logictest

import (
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestParse(t *testing.T) {
	text := `# a comment

statement ok
CREATE TABLE t (a INT)

statement count 2
INSERT INTO t
VALUES (1), (2)

statement error pgcode 42P01 relation "x" does not exist
SELECT * FROM x

statement error syntax error
SELEC 1

query IT rowsort colnames
SELECT a, 'x' FROM t
----
a  ?column?
1  x

query error pgcode 22012
SELECT 1 / 0

query I
SELECT 1
  + 1

protocol extended

connection other

user alice

halt
`
	f, err := Parse("test.slt", text)
	if err != nil {
		t.Fatal(err)
	}
	type summary struct {
		kind     recordKind
		line     int
		sql      string
		errCode  string
		errRe    string
		count    int64
		types    string
		sort     sortMode
		colnames bool
		expected []string
		arg      string
	}
	var got []summary
	for _, r := range f.records {
		s := summary{kind: r.kind, line: r.line, sql: r.sql, errCode: r.errCode, count: r.count, types: r.types, sort: r.sort, colnames: r.colnames, expected: r.expected, arg: r.arg}
		if r.errRe != nil {
			s.errRe = r.errRe.String()
		}
		got = append(got, s)
	}
	want := []summary{
		{kind: kindStatement, line: 3, sql: "CREATE TABLE t (a INT)", count: -1},
		{kind: kindStatement, line: 6, sql: "INSERT INTO t\nVALUES (1), (2)", count: 2},
		{kind: kindStatement, line: 10, sql: "SELECT * FROM x", errCode: "42P01", errRe: `relation "x" does not exist`, count: -1},
		{kind: kindStatement, line: 13, sql: "SELEC 1", errRe: "syntax error", count: -1},
		{kind: kindQuery, line: 16, sql: "SELECT a, 'x' FROM t", count: -1, types: "IT", sort: rowSort, colnames: true, expected: []string{"a  ?column?", "1  x"}},
		{kind: kindQuery, line: 22, sql: "SELECT 1 / 0", errCode: "22012", count: -1},
		{kind: kindQuery, line: 25, sql: "SELECT 1\n  + 1", count: -1, types: "I"},
		{kind: kindProtocol, line: 29, count: -1, arg: "extended"},
		{kind: kindConnection, line: 31, count: -1, arg: "other"},
		{kind: kindUser, line: 33, count: -1, arg: "alice"},
		{kind: kindHalt, line: 35, count: -1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"statement maybe\nSELECT 1\n", `x.slt:1: unknown statement form "maybe"`},
		{"statement ok\n", "x.slt:1: statement without SQL"},
		{"query IX\nSELECT 1\n", `x.slt:1: unknown column type 'X'`},
		{"query I sideways\nSELECT 1\n", `x.slt:1: unknown query option "sideways"`},
		{"statement error pgcode 123\nSELECT 1\n", "x.slt:1: pgcode needs a five-character SQLSTATE"},
		{"statement error (\nSELECT 1\n", "x.slt:1: bad error regexp"},
		{"protocol binary\n", "x.slt:1: protocol needs simple, extended or default"},
		{"user\n", "x.slt:1: user needs a role name"},
		{"\n\nSELECT 1\n", `x.slt:3: unknown directive "SELECT"`},
	} {
		_, err := Parse("x.slt", tc.text)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error starting %q", tc.text, err, tc.want)
		}
	}
}

func fields(names ...string) []pgconn.FieldDescription {
	var fs []pgconn.FieldDescription
	for _, n := range names {
		fs = append(fs, pgconn.FieldDescription{Name: n})
	}
	return fs
}

func TestFormatResult(t *testing.T) {
	res := result{
		cols: fields("n", "s", "ts"),
		rows: [][][]byte{
			{[]byte("10"), []byte(""), []byte("2024-01-01 00:00:00")},
			{[]byte("9"), nil, []byte("x")},
		},
	}
	for _, tc := range []struct {
		sort     sortMode
		colnames bool
		types    string
		want     []string
	}{
		{noSort, false, "ITT", []string{"10  (empty)  2024-01-01 00:00:00", "9   NULL     x"}},
		{rowSort, false, "ITT", []string{"10  (empty)  2024-01-01 00:00:00", "9   NULL     x"}},
		{noSort, true, "IT_", []string{"n   s        ts", "10  (empty)  _", "9   NULL     _"}},
		// valuesort orders values as byte strings.
		{valueSort, false, "ITT", []string{"(empty)", "10", "2024-01-01 00:00:00", "9", "NULL", "x"}},
	} {
		rec := &record{sort: tc.sort, colnames: tc.colnames}
		got := formatResult(rec, res, []byte(tc.types))
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("sort %d colnames %v: got %q, want %q", tc.sort, tc.colnames, got, tc.want)
		}
	}
}

func TestSameLines(t *testing.T) {
	got := []string{"1  a b", "2  c"}
	for _, tc := range []struct {
		sort     sortMode
		expected []string
		same     bool
	}{
		{noSort, []string{"1 a   b", "2\tc"}, true}, // whitespace is not significant
		{noSort, []string{"2  c", "1  a b"}, false},
		{rowSort, []string{"2  c", "1  a b"}, true},
		{noSort, []string{"1  a b"}, false},
		{noSort, []string{"1  a b", "2  d"}, false},
	} {
		rec := &record{sort: tc.sort}
		if s := sameLines(rec, tc.expected, got); s != tc.same {
			t.Errorf("sameLines(%d, %q, %q) = %v", tc.sort, tc.expected, got, s)
		}
	}
	// colnames stays first under rowsort.
	rec := &record{sort: rowSort, colnames: true}
	if sameLines(rec, []string{"1", "a", "b"}, []string{"a", "1", "b"}) {
		t.Error("rowsort must not move the column-name line")
	}
}

func TestTypeClass(t *testing.T) {
	for oid, want := range map[uint32]byte{20: 'I', 21: 'I', 23: 'I', 700: 'R', 701: 'R', 1700: 'R', 16: 'B', 25: 'T', 1043: 'T', 1082: 'T', 1114: 'T', 1184: 'T', 1186: 'T', 17: 'T'} {
		if got := typeClass(oid); got != want {
			t.Errorf("typeClass(%d) = %c, want %c", oid, got, want)
		}
	}
}

func TestRewritten(t *testing.T) {
	text := `statement ok
CREATE TABLE t (a INT)

# no results yet
query T rowsort
SELECT a FROM t
----
old

query I
SELECT 1

query error pgcode 22012
SELECT 1 / 0
`
	f, err := Parse("x.slt", text)
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{f: f, outputs: map[*record]queryOutput{
		f.records[1]: {types: "I", lines: []string{"1", "2"}},
		f.records[2]: {types: "I", lines: []string{"1"}},
	}}
	want := `statement ok
CREATE TABLE t (a INT)

# no results yet
query I rowsort
SELECT a FROM t
----
1
2

query I
SELECT 1
----
1

query error pgcode 22012
SELECT 1 / 0
`
	if got := r.rewritten(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestOracleOutcome: an Oracle rewrite writes errors (code and message)
// into headers, turns a record that now succeeds into a plain one, and
// keeps a record that asserts only the code PostgreSQL gave.
func TestOracleOutcome(t *testing.T) {
	text := `query I
SELECT 1 / 0

query error pgcode 22012
SELECT 1 / 0

query error pgcode 42601
SELECT 1

statement error
CREATE TABLE t (a INT)
`
	f, err := Parse("x.slt", text)
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{f: f, outputs: map[*record]queryOutput{}}
	divZero := &pgconn.PgError{Code: "22012", Message: "division by zero"}
	r.oracleOutcome(f.records[0], result{}, divZero)
	r.oracleOutcome(f.records[1], result{}, divZero)
	r.oracleOutcome(f.records[2], result{cols: []pgconn.FieldDescription{{Name: "?column?", DataTypeOID: 23}}, rows: [][][]byte{{[]byte("1")}}}, nil)
	r.oracleOutcome(f.records[3], result{}, nil)
	want := `query error pgcode 22012 division by zero
SELECT 1 / 0

query error pgcode 22012
SELECT 1 / 0

query I
SELECT 1
----
1

statement ok
CREATE TABLE t (a INT)
`
	if got := r.rewritten(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
