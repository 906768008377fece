package logictest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Protocol is how statements are sent to the server.
type Protocol uint8

const (
	// Simple sends each statement in one Query message.
	Simple Protocol = iota
	// Extended sends Parse/Bind/Describe/Execute/Sync with the unnamed
	// statement and text result formats.
	Extended
)

func (p Protocol) String() string {
	if p == Extended {
		return "extended"
	}
	return "simple"
}

// statementTimeout bounds each statement so a hang fails the file instead
// of the whole test binary.
const statementTimeout = 20 * time.Second

// maxFailures stops a file after this many mismatches: later ones are
// usually consequences.
const maxFailures = 20

// Config says how to run a file.
type Config struct {
	// Connect opens a new connection to the server under test.
	Connect func(ctx context.Context) (*pgconn.PgConn, error)
	// ConnectAs opens a new connection as the given user (the user
	// directive); nil where a run has no other users.
	ConnectAs func(ctx context.Context, user string) (*pgconn.PgConn, error)
	// Protocol is the run's protocol (the protocol directive overrides it).
	Protocol Protocol
	// Rewrite makes Run return the file with the results it got in place
	// of the expected ones, instead of reporting mismatches in results.
	Rewrite bool
	// Oracle (with Rewrite) also rewrites outcomes: a record that failed
	// becomes `statement/query error pgcode XXXXX <message>`, one that
	// succeeded loses its expected error. For taking the expectations from
	// a real PostgreSQL (oracle_test.go).
	Oracle bool
	// Engine names the server under test for onlyif/skipif: "" is
	// mvserver; the PostgreSQL differential suite runs with "postgresql".
	Engine string
}

// result is what one statement returned.
type result struct {
	cols []pgconn.FieldDescription
	rows [][][]byte
	tag  pgconn.CommandTag
	err  error
}

type runner struct {
	t       testing.TB
	f       *File
	cfg     Config
	conns   map[string]*pgconn.PgConn
	cur     string
	proto   Protocol
	fails   int
	outputs map[*record]queryOutput
}

// queryOutput is a query's result as rewrite writes it.
type queryOutput struct {
	types string
	lines []string
	// header replaces the record's header (Oracle rewrites); noResult
	// drops its result block.
	header   string
	noResult bool
}

// Run runs the file against the server Connect reaches. Mismatches are
// reported with t.Errorf as file:line, the SQL, expected and got. With
// cfg.Rewrite, it returns the file's new text.
func (f *File) Run(t testing.TB, cfg Config) string {
	t.Helper()
	r := &runner{t: t, f: f, cfg: cfg, conns: map[string]*pgconn.PgConn{}, cur: "default", proto: cfg.Protocol, outputs: map[*record]queryOutput{}}
	defer func() {
		for _, c := range r.conns {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			c.Close(ctx)
			cancel()
		}
	}()
	for _, rec := range f.records {
		if !r.step(rec) {
			break
		}
		if r.fails >= maxFailures {
			t.Errorf("%s: stopped after %d failures", f.Path, r.fails)
			break
		}
	}
	if !cfg.Rewrite {
		return ""
	}
	return r.rewritten()
}

// step runs one record; it returns false when the file must stop.
func (r *runner) step(rec *record) bool {
	r.t.Helper()
	engine := r.cfg.Engine
	if engine == "" {
		engine = "mvserver"
	}
	if rec.onlyIf != "" && rec.onlyIf != engine || rec.skipIf == engine {
		return true
	}
	switch rec.kind {
	case kindHalt:
		return false
	case kindProtocol:
		switch rec.arg {
		case "simple":
			r.proto = Simple
		case "extended":
			r.proto = Extended
		default:
			r.proto = r.cfg.Protocol
		}
		return true
	case kindConnection:
		r.cur = rec.arg
		return true
	case kindUser:
		r.cur = userConn(rec.arg)
		return true
	}
	conn, err := r.conn()
	if err != nil {
		r.t.Errorf("%s:%d: connect %q: %v", r.f.Path, rec.line, r.cur, err)
		return false
	}
	res := r.exec(conn, rec.sql)
	var pgErr *pgconn.PgError
	if res.err != nil && !errors.As(res.err, &pgErr) {
		r.failf(rec, "statement failed without a server error (connection lost?): %v", res.err)
		return false
	}
	if r.cfg.Rewrite && r.cfg.Oracle {
		r.oracleOutcome(rec, res, pgErr)
		return true
	}
	if rec.expectErr {
		r.checkError(rec, res, pgErr)
		return true
	}
	if pgErr != nil {
		r.failf(rec, "unexpected error: %s", describeErr(pgErr))
		return true
	}
	switch rec.kind {
	case kindStatement:
		if rec.count >= 0 && res.tag.RowsAffected() != rec.count {
			r.failf(rec, "expected %d rows affected, got %d (%s)", rec.count, res.tag.RowsAffected(), res.tag.String())
		}
	case kindQuery:
		r.checkQuery(rec, res)
	}
	return true
}

func (r *runner) conn() (*pgconn.PgConn, error) {
	if c, ok := r.conns[r.cur]; ok {
		return c, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), statementTimeout)
	defer cancel()
	var c *pgconn.PgConn
	var err error
	if user, ok := strings.CutPrefix(r.cur, userPrefix); ok {
		if r.cfg.ConnectAs == nil {
			return nil, errors.New("this run cannot connect as another user (Config.ConnectAs)")
		}
		c, err = r.cfg.ConnectAs(ctx, user)
	} else {
		c, err = r.cfg.Connect(ctx)
	}
	if err != nil {
		return nil, err
	}
	r.conns[r.cur] = c
	return c, nil
}

// userPrefix marks the connection of a user directive: "user NAME" runs
// on connection "user NAME", which no connection directive can name.
const userPrefix = "user "

func userConn(name string) string { return userPrefix + name }

// exec sends sql in the current protocol and reads the whole response.
func (r *runner) exec(conn *pgconn.PgConn, sql string) result {
	ctx, cancel := context.WithTimeout(context.Background(), statementTimeout)
	defer cancel()
	if r.proto == Extended {
		return readResult(conn.ExecParams(ctx, sql, nil, nil, nil, nil))
	}
	mrr := conn.Exec(ctx, sql)
	var last result
	var firstErr error
	for mrr.NextResult() {
		res := readResult(mrr.ResultReader())
		if res.err != nil && firstErr == nil {
			firstErr = res.err
		}
		last = res
	}
	if err := mrr.Close(); err != nil && firstErr == nil {
		firstErr = err
	}
	last.err = firstErr
	return last
}

func readResult(rr *pgconn.ResultReader) result {
	var res result
	for rr.NextRow() {
		vals := rr.Values()
		row := make([][]byte, len(vals))
		for i, v := range vals {
			if v != nil {
				row[i] = append([]byte{}, v...)
			}
		}
		res.rows = append(res.rows, row)
	}
	res.cols = append(res.cols, rr.FieldDescriptions()...)
	res.tag, res.err = rr.Close()
	return res
}

func (r *runner) checkError(rec *record, res result, pgErr *pgconn.PgError) {
	r.t.Helper()
	want := "an error"
	if rec.errCode != "" {
		want = "error " + rec.errCode
	}
	if rec.errRe != nil {
		want += fmt.Sprintf(" matching %q", rec.errRe.String())
	}
	switch {
	case pgErr == nil:
		got := "success"
		if rec.kind == kindQuery || len(res.cols) > 0 {
			got = fmt.Sprintf("success with %d rows", len(res.rows))
		}
		r.failf(rec, "expected %s, got %s", want, got)
	case rec.errCode != "" && pgErr.Code != rec.errCode,
		rec.errRe != nil && !rec.errRe.MatchString(pgErr.Message):
		r.failf(rec, "expected %s, got %s", want, describeErr(pgErr))
	}
}

func describeErr(e *pgconn.PgError) string {
	s := fmt.Sprintf("%s %s: %s", e.Severity, e.Code, e.Message)
	if e.Position != 0 {
		s += fmt.Sprintf(" (position %d)", e.Position)
	}
	return s
}

// typeClass is the letter a column of the given type OID must carry.
func typeClass(oid uint32) byte {
	switch oid {
	case 20, 21, 23, 26: // int8, int2, int4, oid
		return 'I'
	case 700, 701, 1700: // float4, float8, numeric
		return 'R'
	case 16: // bool
		return 'B'
	}
	return 'T'
}

func (r *runner) checkQuery(rec *record, res result) {
	r.t.Helper()
	// The column types: one letter per column, each of the right class.
	types := []byte(rec.types)
	typesOK := len(types) == len(res.cols)
	gotTypes := make([]byte, len(res.cols))
	for i, c := range res.cols {
		gotTypes[i] = typeClass(c.DataTypeOID)
		if typesOK && types[i] == '_' {
			gotTypes[i] = '_'
		}
		if typesOK && types[i] != '_' && types[i] != gotTypes[i] {
			typesOK = false
		}
	}
	if !typesOK && !r.cfg.Rewrite {
		r.failf(rec, "expected column types %s, got %s (%s)", rec.types, gotTypes, typeNames(res.cols))
		return
	}
	lines := formatResult(rec, res, gotTypes)
	if r.cfg.Rewrite {
		r.outputs[rec] = queryOutput{types: string(gotTypes), lines: lines}
		return
	}
	if !sameLines(rec, rec.expected, lines) {
		var b strings.Builder
		b.WriteString("expected:\n")
		for _, l := range rec.expected {
			b.WriteString("    " + l + "\n")
		}
		b.WriteString("got:\n")
		for _, l := range lines {
			b.WriteString("    " + l + "\n")
		}
		r.failf(rec, "%s", strings.TrimSuffix(b.String(), "\n"))
	}
}

func typeNames(cols []pgconn.FieldDescription) string {
	var s []string
	for _, c := range cols {
		s = append(s, fmt.Sprintf("%s oid %d", c.Name, c.DataTypeOID))
	}
	return strings.Join(s, ", ")
}

// formatValue prints one text-format value as the files hold it.
func formatValue(v []byte) string {
	switch {
	case v == nil:
		return "NULL"
	case len(v) == 0:
		return "(empty)"
	}
	return string(v)
}

// formatResult renders a query's result as the lines of its expected block.
func formatResult(rec *record, res result, types []byte) []string {
	var rows [][]string
	for _, row := range res.rows {
		vals := make([]string, len(row))
		for i, v := range row {
			if i < len(types) && types[i] == '_' {
				vals[i] = "_"
			} else {
				vals[i] = formatValue(v)
			}
		}
		rows = append(rows, vals)
	}
	var out []string
	if rec.sort == valueSort {
		var vals []string
		for _, row := range rows {
			vals = append(vals, row...)
		}
		sort.Strings(vals)
		if rec.colnames {
			out = append(out, colNames(res)...)
		}
		for _, v := range vals {
			out = append(out, strings.Split(v, "\n")...)
		}
		return out
	}
	if rec.sort == rowSort {
		sort.Slice(rows, func(i, j int) bool { return strings.Join(rows[i], "\t") < strings.Join(rows[j], "\t") })
	}
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 2, 2, ' ', 0)
	if rec.colnames {
		fmt.Fprintln(tw, strings.Join(colNames(res), "\t"))
	}
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	s := strings.TrimSuffix(buf.String(), "\n")
	if s == "" {
		return nil
	}
	for _, l := range strings.Split(s, "\n") {
		out = append(out, strings.TrimRight(l, " "))
	}
	return out
}

func colNames(res result) []string {
	var names []string
	for _, c := range res.cols {
		names = append(names, c.Name)
	}
	return names
}

// sameLines compares expected and got field by field; under rowsort and
// valuesort the order of lines does not matter (colnames stays first).
func sameLines(rec *record, expected, got []string) bool {
	norm := func(ls []string) []string {
		out := make([]string, len(ls))
		for i, l := range ls {
			out[i] = strings.Join(strings.Fields(l), " ")
		}
		if rec.sort != noSort {
			body := out
			if rec.colnames && len(body) > 0 {
				body = body[1:]
			}
			sort.Strings(body)
		}
		return out
	}
	e, g := norm(expected), norm(got)
	if len(e) != len(g) {
		return false
	}
	for i := range e {
		if e[i] != g[i] {
			return false
		}
	}
	return true
}

func (r *runner) failf(rec *record, format string, args ...any) {
	r.t.Helper()
	r.fails++
	r.t.Errorf("%s:%d: (%s protocol, connection %s)\n%s\n%s", r.f.Path, rec.line, r.proto, r.cur, indent(rec.sql), fmt.Sprintf(format, args...))
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// rewritten is the file with each query's results replaced by what the
// run got; records the run did not reach are kept as they were.
func (r *runner) rewritten() string {
	var out []string
	lines := r.f.lines
	next := 0
	for _, rec := range r.f.records {
		o, ok := r.outputs[rec]
		if !ok {
			continue
		}
		out = append(out, lines[next:rec.header]...)
		header := lines[rec.header]
		if o.header != "" {
			header = o.header
		} else if o.types != rec.types {
			header = strings.Join(append([]string{"query", o.types}, rec.options...), " ")
		}
		out = append(out, header)
		out = append(out, lines[rec.header+1:rec.sqlEnd]...)
		if !o.noResult {
			out = append(out, "----")
			out = append(out, o.lines...)
		}
		next = rec.resEnd
	}
	out = append(out, lines[next:]...)
	return strings.Join(out, "\n") + "\n"
}

// oracleOutcome records what a record got, errors included, for an
// Oracle rewrite.
func (r *runner) oracleOutcome(rec *record, res result, pgErr *pgconn.PgError) {
	kind := "statement"
	if rec.kind == kindQuery {
		kind = "query"
	}
	if pgErr != nil && rec.expectErr && rec.errCode == pgErr.Code && rec.errRe == nil {
		return // a record asserting the code alone stays so
	}
	if pgErr != nil {
		r.outputs[rec] = queryOutput{header: fmt.Sprintf("%s error pgcode %s %s", kind, pgErr.Code, regexp.QuoteMeta(pgErr.Message)), noResult: true}
		return
	}
	if rec.kind == kindStatement {
		h := "statement ok"
		if rec.count >= 0 {
			h = fmt.Sprintf("statement count %d", res.tag.RowsAffected())
		}
		r.outputs[rec] = queryOutput{header: h, noResult: true}
		return
	}
	gotTypes := make([]byte, len(res.cols))
	for i, c := range res.cols {
		gotTypes[i] = typeClass(c.DataTypeOID)
		if len(rec.types) == len(res.cols) && rec.types[i] == '_' {
			gotTypes[i] = '_'
		}
	}
	r.outputs[rec] = queryOutput{types: string(gotTypes), lines: formatResult(rec, res, gotTypes),
		header: strings.Join(append([]string{"query", string(gotTypes)}, rec.options...), " ")}
}
