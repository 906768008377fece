package session_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// COPY FROM STDIN and COPY TO STDOUT (R-T2) over a real server with pgx
// (pgconn's CopyFrom and CopyTo, the simple query protocol, as psql and
// libpq use it), and through the extended protocol with raw messages. The
// expectations were checked against PostgreSQL 15 given the same
// statements and data.

func copyFrom(t *testing.T, c *pgx.Conn, sql, data string) (int64, error) {
	t.Helper()
	tag, err := c.PgConn().CopyFrom(context.Background(), strings.NewReader(data), sql)
	return tag.RowsAffected(), err
}

func copyTo(t *testing.T, c *pgx.Conn, sql string) string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := c.PgConn().CopyTo(context.Background(), &buf, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return buf.String()
}

func mustExec(t *testing.T, c *pgx.Conn, sqls ...string) {
	t.Helper()
	for _, sql := range sqls {
		if _, err := c.Exec(context.Background(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
}

func TestCopyFromText(t *testing.T) {
	c := connect(t, startServer(t), pgx.QueryExecModeSimpleProtocol)
	mustExec(t, c, `CREATE TABLE t (a INT PRIMARY KEY, b TEXT NOT NULL, c INT DEFAULT 7, d TEXT)`)
	// Escapes, NULL, a final line without newline; c takes its default.
	n, err := copyFrom(t, c, `COPY t (a, b, d) FROM STDIN`, "1\tx\\ty\t\\N\n2\tb\\\\s\\n\t\\x41\\102\n3\t\t")
	if err != nil || n != 3 {
		t.Fatalf("COPY: %d rows, %v", n, err)
	}
	want := "1\tx\\ty\t7\t\\N\n2\tb\\\\s\\n\t7\tAB\n3\t\t7\t\n"
	if got := copyTo(t, c, `COPY (SELECT * FROM t ORDER BY a) TO STDOUT`); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	// The old end-of-data line \. ends the data; what follows is ignored.
	n, err = copyFrom(t, c, `COPY t FROM STDIN`, "4\tz\t1\tw\n\\.\nthis is not data\n")
	if err != nil || n != 1 {
		t.Fatalf("COPY with \\.: %d rows, %v", n, err)
	}
	// NULL AS '' in the old syntax.
	n, err = copyFrom(t, c, `COPY t (a, b, d) FROM STDIN WITH NULL AS ''`, "5\tv\t\n")
	if err != nil || n != 1 {
		t.Fatalf("COPY NULL AS '': %d rows, %v", n, err)
	}
	var isNull bool
	if err := c.QueryRow(context.Background(), `SELECT d IS NULL FROM t WHERE a = 5`).Scan(&isNull); err != nil || !isNull {
		t.Fatalf("d IS NULL: %v, %v", isNull, err)
	}
	// WHERE sees the row with its defaults and runs before the
	// constraints: the NULL b of a skipped row is no error. The tag counts
	// the rows inserted.
	n, err = copyFrom(t, c, `COPY t (a, b) FROM STDIN WHERE a % 2 = 0 AND c = 7`, "10\tten\n11\t\\N\n12\ttwelve\n")
	if err != nil || n != 2 {
		t.Fatalf("COPY … WHERE: %d rows, %v", n, err)
	}
	if got := copyTo(t, c, `COPY (SELECT a FROM t WHERE a >= 10 ORDER BY a) TO STDOUT`); got != "10\n12\n" {
		t.Fatalf("after COPY … WHERE: %q", got)
	}
	if _, err := copyFrom(t, c, `COPY t (a, b) FROM STDIN WHERE a > (SELECT 1)`, ""); pgCode(err) != "0A000" {
		t.Fatalf("subquery in WHERE: %v", err)
	}
}

func TestCopyFromCSV(t *testing.T) {
	c := connect(t, startServer(t), pgx.QueryExecModeSimpleProtocol)
	mustExec(t, c, `CREATE TABLE t (a INT PRIMARY KEY, b TEXT, c TEXT)`)
	for _, tc := range []struct {
		sql, data, want string
	}{
		// psycopg2's copy_expert input.
		{`COPY t FROM STDIN WITH (FORMAT csv)`, "1,plain,\"with, comma\"\n2,,\"\"\n",
			"1,plain,\"with, comma\"\n2,,\"\"\n"},
		// The old syntax with HEADER, DELIMITER and NULL; a quoted newline.
		{`COPY t FROM STDIN WITH CSV HEADER DELIMITER ';' NULL 'NULL'`, "a;b;c\n3;NULL;\"multi\nline\"\n",
			"3,,\"multi\nline\"\n"},
		// QUOTE and ESCAPE.
		{`COPY t FROM STDIN (FORMAT csv, QUOTE '''', ESCAPE '\')`, "4,'it\\'s','a\\\\b'\n",
			"4,it's,a\\b\n"},
		// HEADER MATCH, FORCE_NOT_NULL and FORCE_NULL.
		{`COPY t (a, c, b) FROM STDIN (FORMAT csv, HEADER match, FORCE_NOT_NULL (c), FORCE_NULL (b))`, "a,c,b\n5,,\"\"\n",
			"5,,\"\"\n"},
	} {
		mustExec(t, c, `DELETE FROM t`)
		if _, err := copyFrom(t, c, tc.sql, tc.data); err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		if got := copyTo(t, c, `COPY (SELECT * FROM t ORDER BY a) TO STDOUT (FORMAT csv)`); got != tc.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.sql, got, tc.want)
		}
	}
}

// Errors fail the whole COPY with PostgreSQL's SQLSTATE and CONTEXT line
// (Where); nothing of it is kept.
func TestCopyFromErrors(t *testing.T) {
	c := connect(t, startServer(t), pgx.QueryExecModeSimpleProtocol)
	mustExec(t, c, `CREATE TABLE t (a INT PRIMARY KEY, b TEXT NOT NULL, c INT DEFAULT 7, d VARCHAR(3))`,
		`INSERT INTO t VALUES (100, 'kept', 1, 'x')`)
	for _, tc := range []struct {
		sql, data, code, where string
	}{
		{`COPY t FROM STDIN`, "1\tx\n", "22P04", `COPY t, line 1: "1	x"`},                                                                                       // missing data for column "c"
		{`COPY t (a, b) FROM STDIN`, "1\tx\n2\ty\tz\n", "22P04", `COPY t, line 2: "2	y	z"`},                                                                     // extra data
		{`COPY t (a, b) FROM STDIN`, "1\tx\nzz\ty\n", "22P02", `COPY t, line 2, column a: "zz"`},                                                                // invalid input syntax
		{`COPY t (a, b) FROM STDIN`, "1\tx\n2\t\\N\n", "23502", `COPY t, line 2: "2	\N"`},                                                                       // NOT NULL
		{`COPY t (a, b) FROM STDIN`, "1\tx\n1\ty\n", "23505", `COPY t, line 2`},                                                                                 // duplicate key
		{`COPY t (a, b) FROM STDIN`, "1\tx\n100\ty\n", "23505", `COPY t, line 2`},                                                                               // duplicate of a committed row
		{`COPY t (a, b) FROM STDIN`, "1\tx\n2\ty\xff\n", "22021", `COPY t, line 2`},                                                                             // invalid UTF-8
		{`COPY t (a, b, d) FROM STDIN`, "1\tx\tabcd\n", "22001", `COPY t, line 1, column d: "abcd"`},                                                            // too long
		{`COPY t (a, b) FROM STDIN (FORMAT csv)`, "1,x\n2,\"y\n", "22P04", "COPY t, line 3: \"2,\"y\n\""},                                                       // unterminated quote
		{`COPY t (a, b) FROM STDIN`, "1\tx\r\n2\ty\n", "22P04", `COPY t, line 2`},                                                                               // literal newline
		{`COPY t (a, b) FROM STDIN (FORMAT csv, HEADER match)`, "a,c\n1,x\n", "22P04", `COPY t, line 1: "a,c"`},                                                 // header mismatch
		{`COPY t (a, b) FROM STDIN`, "1\tx\n" + strings.Repeat("9", 120) + "\ty\n", "22003", `COPY t, line 2, column a: "` + strings.Repeat("9", 100) + `..."`}, // value cut at 100 bytes
	} {
		_, err := copyFrom(t, c, tc.sql, tc.data)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			t.Fatalf("%s %q: got %v, want SQLSTATE %s", tc.sql, tc.data, err, tc.code)
		}
		if pe.Code != tc.code || pe.Where != tc.where {
			t.Errorf("%s %q: got %s %q (%s), want %s %q", tc.sql, tc.data, pe.Code, pe.Where, pe.Message, tc.code, tc.where)
		}
		if got := copyTo(t, c, `COPY t TO STDOUT`); got != "100\tkept\t1\tx\n" {
			t.Fatalf("after the failed %s: table holds %q", tc.sql, got)
		}
	}
	// Statement-level errors.
	mustExec(t, c, `CREATE VIEW v AS SELECT * FROM t`, `CREATE MATERIALIZED VIEW mv AS SELECT a, b FROM t`)
	for _, tc := range []struct{ sql, code string }{
		{`COPY v FROM STDIN`, "42809"},
		{`COPY mv FROM STDIN`, "42809"},
		{`COPY v TO STDOUT`, "42809"},
		{`COPY nope FROM STDIN`, "42P01"},
		{`COPY t (zz) FROM STDIN`, "42703"},
		{`COPY t (a, a) FROM STDIN`, "42701"},
		{`COPY t FROM '/etc/passwd'`, "42501"},
		{`COPY t TO '/tmp/out'`, "42501"},
		{`COPY t FROM PROGRAM 'cat'`, "42501"},
		{`COPY t FROM STDIN (FORMAT xml)`, "22023"},
		{`COPY t FROM STDIN (DELIMITER ',', DELIMITER ';')`, "42601"},
		{`COPY t FROM STDIN (FORMAT csv, FORCE_NULL (zz))`, "42703"},
		{`COPY t (a) FROM STDIN (FORMAT csv, FORCE_NOT_NULL (b))`, "42P10"},
		{`COPY t TO STDOUT (HEADER match)`, "0A000"},
		{`COPY t FROM STDIN (FORMAT binary)`, "22P04"}, // no signature
	} {
		_, err := c.PgConn().CopyFrom(context.Background(), strings.NewReader(""), tc.sql)
		if pgCode(err) != tc.code {
			t.Errorf("%s: got %v, want %s", tc.sql, err, tc.code)
		}
	}
}

// A failed COPY inside BEGIN aborts the transaction like any error; outside
// it, the rows before the bad one are not kept either.
func TestCopyAtomic(t *testing.T) {
	c := connect(t, startServer(t), pgx.QueryExecModeSimpleProtocol)
	ctx := context.Background()
	mustExec(t, c, `CREATE TABLE t (a INT PRIMARY KEY)`)
	var data strings.Builder
	for i := 1; i <= 5000; i++ {
		data.WriteString(strconv.Itoa(i) + "\n")
	}
	if _, err := copyFrom(t, c, `COPY t FROM STDIN`, data.String()+"oops\n"); pgCode(err) != "22P02" {
		t.Fatalf("got %v, want 22P02", err)
	}
	var n int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("count %d, %v; want 0", n, err)
	}
	mustExec(t, c, `BEGIN`, `INSERT INTO t VALUES (-1)`)
	if _, err := copyFrom(t, c, `COPY t FROM STDIN`, data.String()+"-1\n"); pgCode(err) != "23505" {
		t.Fatalf("got %v, want 23505", err)
	}
	if _, err := c.Exec(ctx, `SELECT 1`); pgCode(err) != "25P02" {
		t.Fatalf("after the failed COPY: %v, want 25P02", err)
	}
	mustExec(t, c, `ROLLBACK`)
	if err := c.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("count %d, %v; want 0", n, err)
	}
	// And a good COPY inside BEGIN commits with the transaction.
	mustExec(t, c, `BEGIN`)
	if _, err := copyFrom(t, c, `COPY t FROM STDIN`, data.String()); err != nil {
		t.Fatal(err)
	}
	mustExec(t, c, `COMMIT`)
	if err := c.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 5000 {
		t.Fatalf("count %d, %v; want 5000", n, err)
	}
}

// pgbench -i sends one CopyData per row and the old \. line last.
func TestCopyPgbenchEndMarker(t *testing.T) {
	c := connect(t, startServer(t), pgx.QueryExecModeSimpleProtocol)
	mustExec(t, c, `CREATE TABLE pgbench_accounts (aid INT NOT NULL, bid INT, abalance INT, filler CHAR(84))`,
		`BEGIN`, `TRUNCATE pgbench_accounts`)
	var lines []string
	for i := 1; i <= 1000; i++ {
		lines = append(lines, strconv.Itoa(i)+"\t1\t0\t\n")
	}
	lines = append(lines, "\\.\n")
	tag, err := c.PgConn().CopyFrom(context.Background(), &lineReader{lines: lines}, `copy pgbench_accounts from stdin with (freeze on)`)
	if err != nil || tag.String() != "COPY 1000" {
		t.Fatalf("tag %q, %v", tag, err)
	}
	mustExec(t, c, `COMMIT`)
	var n, l int
	if err := c.QueryRow(context.Background(), `SELECT count(*), max(length(filler)) FROM pgbench_accounts`).Scan(&n, &l); err != nil || n != 1000 || l != 0 {
		t.Fatalf("count %d, max length %d, %v", n, l, err)
	}
}

// lineReader returns one line per Read: pgconn sends each as a CopyData.
type lineReader struct{ lines []string }

func (r *lineReader) Read(p []byte) (int, error) {
	if len(r.lines) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.lines[0])
	r.lines[0] = r.lines[0][n:]
	if r.lines[0] == "" {
		r.lines = r.lines[1:]
	}
	return n, nil
}

func TestCopyTo(t *testing.T) {
	c := connect(t, startServer(t), pgx.QueryExecModeSimpleProtocol)
	mustExec(t, c, `SET TimeZone = 'UTC'`,
		`CREATE TABLE t (k INT PRIMARY KEY, b BOOLEAN, n NUMERIC(10,2), s TEXT, ts TIMESTAMPTZ, f DOUBLE PRECISION)`,
		`INSERT INTO t VALUES (1, true, 1.5, 'tab	here', '2024-03-05 10:11:12+02', 0.1), (2, NULL, NULL, NULL, NULL, NULL),
			(3, false, -0.25, 'q"u,o', '2000-01-01 00:00:00+00', 1e300), (4, true, 0, '', NULL, 'NaN')`,
		`CREATE VIEW v AS SELECT k, s FROM t WHERE k < 3`,
		`CREATE MATERIALIZED VIEW mv AS SELECT b, count(*) AS c FROM t GROUP BY b`)
	for _, tc := range []struct{ sql, want string }{
		{`COPY t TO STDOUT`,
			"1\tt\t1.50\ttab\\there\t2024-03-05 08:11:12+00\t0.1\n2\t\\N\t\\N\t\\N\t\\N\t\\N\n3\tf\t-0.25\tq\"u,o\t2000-01-01 00:00:00+00\t1e+300\n4\tt\t0.00\t\t\\N\tNaN\n"},
		{`COPY t (s, k) TO STDOUT (FORMAT csv, HEADER)`,
			"s,k\ntab\there,1\n,2\n\"q\"\"u,o\",3\n\"\",4\n"},
		{`COPY t (k, s) TO STDOUT WITH CSV HEADER FORCE QUOTE s DELIMITER ';' NULL 'NULL'`,
			"k;s\n1;\"tab\there\"\n2;NULL\n3;\"q\"\"u,o\"\n4;\"\"\n"},
		{`COPY t (k, s) TO STDOUT (FORMAT csv, FORCE_QUOTE *, QUOTE '''', ESCAPE '\')`,
			"'1','tab\there'\n'2',\n'3','q\"u,o'\n'4',''\n"},
		{`COPY (SELECT * FROM v ORDER BY k) TO STDOUT (HEADER, DELIMITER '|')`, "k|s\n1|tab\\there\n2|\\N\n"},
		{`COPY (SELECT k, k * 2 AS twice FROM t WHERE k > 2 ORDER BY k DESC) TO STDOUT`, "4\t8\n3\t6\n"},
		// A materialized view can be copied as it is (as PostgreSQL 18 allows).
		{`COPY (SELECT * FROM mv ORDER BY b) TO STDOUT`, "f\t1\nt\t2\n\\N\t1\n"},
	} {
		if got := copyTo(t, c, tc.sql); got != tc.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.sql, got, tc.want)
		}
	}
	if got := copyTo(t, c, `COPY mv TO STDOUT`); len(strings.Split(strings.TrimSpace(got), "\n")) != 3 {
		t.Errorf("COPY mv TO STDOUT: %q", got)
	}
	var buf bytes.Buffer
	_, err := c.PgConn().CopyTo(context.Background(), &buf, `COPY v TO STDOUT`)
	if pe := (*pgconn.PgError)(nil); !errors.As(err, &pe) || pe.Code != "42809" || pe.Hint != "Try the COPY (SELECT ...) TO variant." {
		t.Errorf("COPY v TO STDOUT: %v", err)
	}
	// What COPY TO writes, COPY FROM reads back.
	mustExec(t, c, `CREATE TABLE t2 (k INT PRIMARY KEY, b BOOLEAN, n NUMERIC(10,2), s TEXT, ts TIMESTAMPTZ, f DOUBLE PRECISION)`)
	for _, format := range []string{"text", "csv"} {
		mustExec(t, c, `DELETE FROM t2`)
		out := copyTo(t, c, `COPY t TO STDOUT (FORMAT `+format+`)`)
		if _, err := copyFrom(t, c, `COPY t2 FROM STDIN (FORMAT `+format+`)`, out); err != nil {
			t.Fatal(err)
		}
		if back := copyTo(t, c, `COPY t2 TO STDOUT (FORMAT `+format+`)`); back != out {
			t.Errorf("%s round trip:\ngot  %q\nwant %q", format, back, out)
		}
	}
}

// Rows loaded by COPY reach a materialized view through the change data
// feed: the next refresh is incremental and agrees with the query.
func TestCopyRefreshesIncrementally(t *testing.T) {
	c := connect(t, startServer(t), pgx.QueryExecModeSimpleProtocol)
	ctx := context.Background()
	mustExec(t, c, `CREATE TABLE sales (id INT PRIMARY KEY, region TEXT, amount NUMERIC(10,2))`,
		`INSERT INTO sales VALUES (1, 'north', 10.00)`,
		`CREATE MATERIALIZED VIEW by_region AS SELECT region, count(*) AS n, sum(amount) AS total FROM sales GROUP BY region`)
	if _, err := copyFrom(t, c, `COPY sales FROM STDIN (FORMAT csv)`, "2,north,5.50\n3,south,7.25\n4,east,1.00\n"); err != nil {
		t.Fatal(err)
	}
	var changes int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM table_changes('sales', 2) WHERE _change_type = 'insert'`).Scan(&changes); err != nil || changes != 3 {
		t.Fatalf("change feed: %d inserts, %v; want 3", changes, err)
	}
	mustExec(t, c, `REFRESH MATERIALIZED VIEW by_region`)
	var msg string
	if err := c.QueryRow(ctx, `SELECT message FROM event_log(TABLE(by_region)) WHERE event_type = 'planning_information' ORDER BY timestamp DESC LIMIT 1`).Scan(&msg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "GROUP_AGGREGATE") {
		t.Errorf("refresh after COPY: %q, want an incremental GROUP_AGGREGATE", msg)
	}
	got := copyTo(t, c, `COPY (SELECT * FROM by_region ORDER BY region) TO STDOUT`)
	want := copyTo(t, c, `COPY (SELECT region, count(*), sum(amount) FROM sales GROUP BY region ORDER BY region) TO STDOUT`)
	if got != want || got != "east\t1\t1.00\nnorth\t2\t15.50\nsouth\t1\t7.25\n" {
		t.Errorf("view %q, query %q", got, want)
	}
}

// COPY through the extended protocol, as libpq's PQexecParams sends it:
// Parse, Bind, Describe, Execute and Sync at once (the Sync arrives inside
// the copy data and is ignored), then the data, CopyDone and Sync.
func TestCopyExtendedProtocol(t *testing.T) {
	url := startServer(t)
	c := connect(t, url, pgx.QueryExecModeSimpleProtocol)
	mustExec(t, c, `CREATE TABLE t (a INT PRIMARY KEY, b TEXT)`)
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := net.Dial("tcp", cfg.Host+":"+strconv.Itoa(int(cfg.Port)))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	fe := pgproto3.NewFrontend(bufio.NewReader(nc), nc)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "tester", "database": cfg.Database}})
	fe.Flush()
	readCopyMessages(t, fe)

	fe.Send(&pgproto3.Parse{Query: "COPY t FROM STDIN"})
	fe.Send(&pgproto3.Bind{})
	fe.Send(&pgproto3.Describe{ObjectType: 'P'})
	fe.Send(&pgproto3.Execute{})
	fe.Send(&pgproto3.Sync{})
	fe.Send(&pgproto3.CopyData{Data: []byte("1\tone\n2\ttwo\n")})
	fe.Send(&pgproto3.CopyDone{})
	fe.Send(&pgproto3.Sync{})
	fe.Flush()
	if got, want := readCopyMessages(t, fe), "ParseComplete BindComplete NoData CopyInResponse CommandComplete(COPY 2) ReadyForQuery"; got != want {
		t.Fatalf("COPY FROM: %s\nwant %s", got, want)
	}

	// A bad row: the error, then the rest of the data is dropped and the
	// Sync after CopyDone ends the batch; nothing was inserted.
	fe.Send(&pgproto3.Parse{Query: "COPY t FROM STDIN"})
	fe.Send(&pgproto3.Bind{})
	fe.Send(&pgproto3.Execute{})
	fe.Send(&pgproto3.Sync{})
	fe.Send(&pgproto3.CopyData{Data: []byte("3\tthree\nx\ty\n")})
	fe.Send(&pgproto3.CopyData{Data: []byte("4\tfour\n")})
	fe.Send(&pgproto3.CopyDone{})
	fe.Send(&pgproto3.Sync{})
	fe.Flush()
	if got, want := readCopyMessages(t, fe), "ParseComplete BindComplete CopyInResponse Error(22P02) ReadyForQuery"; got != want {
		t.Fatalf("failed COPY FROM: %s\nwant %s", got, want)
	}

	fe.Send(&pgproto3.Parse{Query: "COPY (SELECT * FROM t ORDER BY a) TO STDOUT (FORMAT csv)"})
	fe.Send(&pgproto3.Bind{})
	fe.Send(&pgproto3.Describe{ObjectType: 'P'})
	fe.Send(&pgproto3.Execute{MaxRows: 1})
	fe.Send(&pgproto3.Sync{})
	fe.Flush()
	if got, want := readCopyMessages(t, fe), "ParseComplete BindComplete NoData CopyOutResponse CopyData(1,one\n) CopyData(2,two\n) CopyDone CommandComplete(COPY 2) ReadyForQuery"; got != want {
		t.Fatalf("COPY TO: %q\nwant %q", got, want)
	}
}

// readCopyMessages reads up to ReadyForQuery and names the messages.
func readCopyMessages(t *testing.T, fe *pgproto3.Frontend) string {
	t.Helper()
	var names []string
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatalf("after %v: %v", names, err)
		}
		switch m := msg.(type) {
		case *pgproto3.ReadyForQuery:
			return strings.Join(append(names, "ReadyForQuery"), " ")
		case *pgproto3.ParameterStatus, *pgproto3.BackendKeyData, *pgproto3.AuthenticationOk:
		case *pgproto3.CommandComplete:
			names = append(names, "CommandComplete("+string(m.CommandTag)+")")
		case *pgproto3.CopyData:
			names = append(names, "CopyData("+string(m.Data)+")")
		case *pgproto3.ErrorResponse:
			names = append(names, "Error("+m.Code+")")
		default:
			names = append(names, strings.TrimPrefix(fmt.Sprintf("%T", msg), "*pgproto3."))
		}
	}
}

// FORMAT binary: pgx's CopyFrom (COPY … FROM STDIN BINARY with each value
// in its type's binary form) and COPY TO in binary read back by COPY FROM.
func TestCopyBinary(t *testing.T) {
	c := connect(t, startServer(t), pgx.QueryExecModeCacheStatement)
	ctx := context.Background()
	mustExec(t, c, `SET TimeZone = 'UTC'`,
		`CREATE TABLE t (k INT PRIMARY KEY, b BOOLEAN, l BIGINT, f DOUBLE PRECISION, n NUMERIC(10,2), s TEXT, by BYTEA, d DATE, ts TIMESTAMPTZ)`)
	ts := time.Date(2024, 3, 5, 10, 11, 12, 123456000, time.UTC)
	rows := [][]any{
		{1, true, int64(-9223372036854775808), 2.25, "12.5", "héllo", []byte{0, 255}, time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC), ts},
		{2, nil, nil, nil, nil, nil, nil, nil, nil},
	}
	n, err := c.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"k", "b", "l", "f", "n", "s", "by", "d", "ts"}, pgx.CopyFromRows(rows))
	if err != nil || n != 2 {
		t.Fatalf("CopyFrom: %d, %v", n, err)
	}
	text := "1\tt\t-9223372036854775808\t2.25\t12.50\théllo\t\\\\x00ff\t1999-12-31\t2024-03-05 10:11:12.123456+00\n2\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\n"
	if got := copyTo(t, c, `COPY t TO STDOUT`); got != text {
		t.Fatalf("got  %q\nwant %q", got, text)
	}
	bin := copyTo(t, c, `COPY t TO STDOUT (FORMAT binary)`)
	if !strings.HasPrefix(bin, "PGCOPY\n\xff\r\n\x00") || !strings.HasSuffix(bin, "\xff\xff") {
		t.Fatalf("binary output %q", bin)
	}
	mustExec(t, c, `CREATE TABLE t2 (k INT PRIMARY KEY, b BOOLEAN, l BIGINT, f DOUBLE PRECISION, n NUMERIC(10,2), s TEXT, by BYTEA, d DATE, ts TIMESTAMPTZ)`)
	if _, err := copyFrom(t, c, `COPY t2 FROM STDIN WITH BINARY`, bin); err != nil {
		t.Fatal(err)
	}
	if got := copyTo(t, c, `COPY t2 TO STDOUT`); got != text {
		t.Fatalf("binary round trip: %q", got)
	}
	// A row with the wrong number of fields, a value of the wrong size:
	// PostgreSQL's codes and context (row and column, never the data).
	head := "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	for _, tc := range []struct{ data, code, where string }{
		{head + "\x00\x01\x00\x00\x00\x04\x00\x00\x00\x07", "22P04", "COPY t2, line 1"},
		{head + "\x00\x09\x00\x00\x00\x02\x00\x07" + strings.Repeat("\xff\xff\xff\xff", 8), "08P01", "COPY t2, line 1, column k"},
		{head + "\x00\x09\x00\x00\x00\x05\x00\x00\x00\x07\x00" + strings.Repeat("\xff\xff\xff\xff", 8), "22P03", "COPY t2, line 1, column k"},
		{"not binary", "22P04", ""},
	} {
		_, err := copyFrom(t, c, `COPY t2 FROM STDIN (FORMAT binary)`, tc.data)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != tc.code || pe.Where != tc.where {
			t.Errorf("%q: got %v (where %q), want %s %q", tc.data, err, whereOf(err), tc.code, tc.where)
		}
	}
}

func whereOf(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Where
	}
	return ""
}

// statement_timeout (and so a cancel request) stops a COPY FROM whose
// client keeps sending: the session checks its context between batches of
// lines. The failed COPY leaves nothing.
func TestCopyFromTimeout(t *testing.T) {
	c := connect(t, startServer(t), pgx.QueryExecModeSimpleProtocol)
	mustExec(t, c, `CREATE TABLE t (a INT, b TEXT)`, `SET statement_timeout = '200ms'`)
	_, err := c.PgConn().CopyFrom(context.Background(), endless{}, `COPY t FROM STDIN`)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" || !strings.HasPrefix(pe.Where, "COPY t, line ") {
		t.Fatalf("got %v (where %q), want 57014 with the COPY context", err, whereOf(err))
	}
	mustExec(t, c, `SET statement_timeout = 0`)
	var n int
	if err := c.QueryRow(context.Background(), `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("count %d, %v", n, err)
	}
}

// endless is COPY data that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	const line = "1\tsome text\n"
	n := 0
	for n+len(line) <= len(p) {
		n += copy(p[n:], line)
	}
	return n, nil
}
