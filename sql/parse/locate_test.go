package parse

import (
	"fmt"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// at reports the line and column a location points at in the statement's
// text, and the text from there (for readable failures).
func at(t *testing.T, st *Statement, loc int32) string {
	t.Helper()
	if loc < 0 {
		return "not found"
	}
	pos := st.TextPosition(loc)
	line, col, ok := LineColumn(st.Text, pos)
	if !ok {
		return "no position"
	}
	rest := []rune(st.Text)[pos-1:]
	if len(rest) > 12 {
		rest = rest[:12]
	}
	return fmt.Sprintf("%d:%d %s", line, col, string(rest))
}

func TestLocate(t *testing.T) {
	parse := func(q string) *Statement {
		t.Helper()
		st, err := ParseOne(q)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	byName := func(name string) func(*pg_query.RangeVar) bool {
		return func(rv *pg_query.RangeVar) bool { return rv.Relname == name }
	}
	for _, c := range []struct {
		q    string
		loc  func(st *Statement) int32
		want string
	}{
		// Functions: the first call in the text, on any line; a Databricks
		// spelling (backticks, current_timestamp()) rewritten before
		// pg_query still maps back to what the client wrote.
		{"SELECT a,\n  `b`, pg_backend_pid() + 1,\n  PG_BACKEND_PID() FROM t",
			func(st *Statement) int32 { return FuncLocation(st.AST, "pg_backend_pid") }, "2:8 pg_backend_p"},
		{"SELECT sum(x) FROM t WHERE ts > current_timestamp() - INTERVAL 1 HOUR",
			func(st *Statement) int32 { return FuncLocation(st.AST, "now") }, "1:33 current_time"},
		{"SELECT current_timestamp(), INTERVAL 1 HOUR,\n pg_backend_pid()",
			func(st *Statement) int32 { return FuncLocation(st.AST, "pg_backend_pid") }, "2:2 pg_backend_p"},
		{"SELECT * FROM t WHERE ts > now()",
			func(st *Statement) int32 { return FuncLocation(st.AST, "now") }, "1:28 now()"},
		{"SELECT count(*) FROM table_changes('t', 0)",
			func(st *Statement) int32 { return FuncLocation(st.AST, "table_changes") }, "1:22 table_change"},
		{"SELECT 1", func(st *Statement) int32 { return FuncLocation(st.AST, "sum") }, "not found"},
		// Relations: the reference itself, in a join, a subquery or a CTE.
		{"SELECT *\nFROM a\nJOIN s.b AS x ON a.k = x.k",
			func(st *Statement) int32 { return RelationLocation(st.AST, byName("b")) }, "3:6 s.b AS x ON "},
		{"WITH w AS (SELECT * FROM inner_t) SELECT * FROM w",
			func(st *Statement) int32 { return RelationLocation(st.AST, byName("inner_t")) }, "1:26 inner_t) SEL"},
		// WITH RECURSIVE: the WITH clause that defines the query.
		{"SELECT * FROM (\n  WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT n FROM r) s",
			func(st *Statement) int32 { return RecursiveWithLocation(st.AST, "r") }, "2:3 WITH RECURSI"},
		{"WITH w AS (SELECT 1) SELECT * FROM w",
			func(st *Statement) int32 { return RecursiveWithLocation(st.AST, "w") }, "not found"},
		// LIMIT: the keyword, not the count; OFFSET alone too.
		{"SELECT k FROM t ORDER BY k\n  LIMIT 10",
			func(st *Statement) int32 { return st.LimitLocation() }, "2:3 LIMIT 10"},
		{"SELECT k FROM (SELECT k FROM t OFFSET 2) s",
			func(st *Statement) int32 { return st.LimitLocation() }, "1:32 OFFSET 2) s"},
		{"SELECT 'limit' FROM t", func(st *Statement) int32 { return st.LimitLocation() }, "not found"},
		// Subqueries in expressions: a scalar one before an EXISTS.
		{"SELECT k FROM t WHERE EXISTS (SELECT 1 FROM u) AND v > (SELECT max(v) FROM u)",
			func(st *Statement) int32 { return SubLinkLocation(st.AST) }, "1:56 (SELECT max("},
		{"SELECT k FROM t WHERE k IN (SELECT k FROM u)",
			func(st *Statement) int32 { return SubLinkLocation(st.AST) }, "1:25 IN (SELECT k"},
		// Columns, qualified or not.
		{"SELECT t._row_commit_version, k FROM t",
			func(st *Statement) int32 { return ColumnLocation(st.AST, "_row_commit_version") }, "1:8 t._row_commi"},
		// Multi-byte characters count as one column.
		{"SELECT 'é',\n'ü', pg_backend_pid()",
			func(st *Statement) int32 { return FuncLocation(st.AST, "pg_backend_pid") }, "2:6 pg_backend_p"},
	} {
		st := parse(c.q)
		if got := at(t, st, c.loc(st)); got != c.want {
			t.Errorf("%q: got %q, want %q", c.q, got, c.want)
		}
	}
}

// TestLocateInSubStatement: the query of CREATE MATERIALIZED VIEW is a
// statement of its own; locations count from its first character, not
// from the start of the CREATE.
func TestLocateInSubStatement(t *testing.T) {
	st, err := ParseOne("CREATE MATERIALIZED VIEW m AS\nSELECT k,\n       pg_backend_pid() FROM t")
	if err != nil {
		t.Fatal(err)
	}
	q := st.Ext.(*CreateMaterializedView).Query
	loc := FuncLocation(q.AST, "pg_backend_pid")
	if got := at(t, q, loc); got != "2:8 pg_backend_p" {
		t.Fatalf("got %q", got)
	}
	// Position (for an error cursor) still counts in the whole string.
	if p := q.Position(loc); p != 48 {
		t.Fatalf("position %d", p)
	}
}

func TestLineColumn(t *testing.T) {
	for _, c := range []struct {
		text      string
		pos       int
		line, col int
		ok        bool
	}{
		{"abc", 1, 1, 1, true},
		{"abc", 3, 1, 3, true},
		{"a\nbc", 3, 2, 1, true},
		{"a\nbc", 4, 2, 2, true},
		{"a\n\nb", 4, 3, 1, true},
		{"abc", 0, 0, 0, false},
	} {
		line, col, ok := LineColumn(c.text, c.pos)
		if line != c.line || col != c.col || ok != c.ok {
			t.Errorf("%q at %d: %d:%d %v", c.text, c.pos, line, col, ok)
		}
	}
}
