// Package logictest runs the SQL logic tests in the repository's testdata/
// directory (and its subdirectories): files named *.slt in the sqllogictest
// family format that CockroachDB uses, run over a real socket with pgx's
// pgconn against a fresh in-memory mvserver.
//
// Every file runs twice, each time on its own fresh server: once sending
// every statement through the simple query protocol (one Query message) and
// once through the extended protocol (Parse/Bind/Describe/Execute/Sync with
// the unnamed statement and text results). Both runs must produce the
// expected results, so they agree with each other. Running a file twice on
// one server would double its side effects; running it on two servers
// keeps each run self-contained.
//
// Run the tests with `go test ./logictest`; regenerate the expected results
// in place with `go test ./logictest -rewrite` (the simple-protocol run
// writes them, the extended run then checks the rewritten file). Narrow the
// files with `-run 'TestLogic/select'`.
//
// Expectations can also be taken from a real PostgreSQL: TestOracleRewrite
// (build tag oraclerewrite, oracle_test.go) runs the files named by
// -oracle-files against PGORACLE_DSN and writes its results and errors,
// code and message, into them (a record asserting only a code PostgreSQL
// also gives is kept so). Review the diff. Such files say so in their
// header and belong in clienttest's TestLogicOnPostgres, which checks them
// against PostgreSQL in CI.
//
// # File format
//
// A file is a sequence of records separated by blank lines. A line starting
// with # outside a record is a comment. The records:
//
//	statement ok
//	<sql>
//
// runs one SQL statement and expects it to succeed.
//
//	statement count N
//	<sql>
//
// expects success with N rows affected (the command tag's count).
//
//	statement error pgcode 42P01 [regexp]
//	<sql>
//
// expects the statement to fail with SQLSTATE 42P01; the optional regular
// expression must match the error message. `statement error <regexp>`
// (without pgcode) checks the message only; tests should assert the code.
//
//	query <types> [rowsort|valuesort|nosort] [colnames]
//	<sql>
//	----
//	<expected rows>
//
// runs a query and compares its rows. <types> has one letter per result
// column and the runner checks the column's type against it: I integer
// (smallint, integer, bigint), R real/double/numeric, B boolean, T any
// other type (text, varchar, date, timestamp, interval, bytea, …), and _
// any type whose value is not compared (printed as _): use it for values
// that depend on the current time, such as a commit timestamp.
// `query error pgcode XXXXX [regexp]` expects the query to fail, as for
// statements.
//
// Results are compared as the server's text format (the wire's text
// representation, identical in both protocols): NULL prints as NULL, the
// empty string as (empty), booleans as t and f, as psql shows them.
//
// Each result row is one line; values are separated by whitespace, aligned
// with spaces when the file is rewritten. Comparison splits each expected
// and actual line into whitespace-separated fields, so alignment does not
// matter, and a value containing spaces (a timestamp) simply spans several
// fields. The price is that 'a b','c' and 'a','b c' print alike, and that
// leading, trailing or repeated spaces inside a value are invisible: when
// such whitespace matters, select length(v) or '[' || v || ']'.
//
// Sort modes: nosort (the default) compares rows in the order the server
// sent them; rowsort sorts the rows of both sides as strings before
// comparing; valuesort puts every value on its own line and sorts the
// values. colnames adds a first line with the result's column names.
//
// Rule: every query that can return more than one row has an ORDER BY that
// fixes the order completely, or uses rowsort (or valuesort). The runner
// does not check this; reviewers do.
//
// Directives, each a record of its own:
//
//	protocol simple|extended|default
//
// sends the following statements through the given protocol in both runs
// (default: the run's own protocol again).
//
//	connection <name>
//
// sends the following statements on the named connection, opened at first
// use; the first connection is called default. Use it to show what another
// session sees (snapshot isolation).
//
//	user <name>
//
// sends the following statements as the role name (which the file
// created) on a connection of its own, opened at first use; `user` again
// switches to another role's, `connection <name>` back to the file's
// user, logictest, which is no role and so a superuser. Use it for
// privileges: what each role may see and do.
//
//	halt
//
// stops the file there.
//
//	onlyif ENGINE
//	skipif ENGINE
//
// on the line right before a record run it only on, or not on, that engine:
// mvserver, or postgresql when the PostgreSQL differential suite
// (clienttest's TestLogicOnPostgres) runs the file. Records of mvserver's
// own statements, and the documented differences, are onlyif mvserver.
//
// Each record holds exactly one SQL statement: the extended protocol
// cannot carry several in one message.
//
// testdata/known_failures.txt holds records in this format that mvserver
// does not pass yet, each with a comment saying what it does and what it
// should do; it is not run.
//
// Imports: app, catalog (to start a server) and pgx's pgconn.
package logictest
