package plpgsql

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
)

func doStmt(t *testing.T, sql string) *pg_query.DoStmt {
	t.Helper()
	tree, err := pg_query.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	return tree.Stmts[0].Stmt.GetDoStmt()
}

func TestParseErrors(t *testing.T) {
	for sql, code := range map[string]string{
		`DO $$BEGIN CASE WHEN true THEN NULL; END CASE; END$$`: pgerror.FeatureNotSupported,
		`DO $$BEGIN EXIT; END$$`:                               pgerror.SyntaxError,
		`DO $$BEGIN CONTINUE; END$$`:                           pgerror.SyntaxError,
		`DO $$<<b>> BEGIN LOOP CONTINUE b; END LOOP; END$$`:    pgerror.SyntaxError,
		`DO $$BEGIN EXECUTE format('INSERT INTO t VALUES (%s)', 1); EXCEPTION WHEN others THEN NULL; END$$`: pgerror.FeatureNotSupported,
		`DO $$BEGIN INSERT INTO t VALUES (1); EXCEPTION WHEN others THEN NULL; END$$`:                       pgerror.FeatureNotSupported,
		`DO $$BEGIN CREATE TABLE a (x int); CREATE TABLE b (x int); EXCEPTION WHEN others THEN NULL; END$$`: pgerror.FeatureNotSupported,
		`DO $$BEGIN PERFORM 1; EXCEPTION WHEN no_such_thing THEN NULL; END$$`:                               pgerror.UndefinedObject,
		`DO LANGUAGE plperl $$1$$`:  pgerror.UndefinedObject,
		`DO $$BEGIN SELECT 1 END$$`: pgerror.SyntaxError,
	} {
		_, err := Parse(doStmt(t, sql))
		if pe, ok := err.(*pgerror.Error); !ok || pe.Code != code {
			t.Errorf("%s: got %v, want SQLSTATE %s", sql, err, code)
		}
	}
}

// fakeRunner answers each statement from a table and records what ran.
type fakeRunner struct {
	ran     []string
	params  [][]*string
	answers map[string]*Result
	notices []string
}

func (f *fakeRunner) Run(_ context.Context, sql string, params []*string) (*Result, error) {
	f.ran, f.params = append(f.ran, sql), append(f.params, params)
	if r, ok := f.answers[sql]; ok {
		return r, nil
	}
	return &Result{Affected: 1}, nil
}

func (f *fakeRunner) Notice(n *pgerror.Error) {
	f.notices = append(f.notices, n.Severity+" "+n.Message)
}

func str(s string) *string { return &s }

// TestRunBindsVariables: variables reach the SQL as text parameters cast
// to their declared types, record fields with their columns' types.
func TestRunBindsVariables(t *testing.T) {
	blk, err := Parse(doStmt(t, `DO $$
DECLARE n int := 2; r record;
BEGIN
  FOR r IN SELECT i, v FROM t LOOP
    INSERT INTO u VALUES (r.i + n, r.v);
  END LOOP;
  RAISE NOTICE 'n is %', n;
END $$`))
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRunner{answers: map[string]*Result{
		"SELECT (2)::int":    {Cols: []Column{{"int4", "integer"}}, Rows: [][]*string{{str("2")}}},
		"SELECT i, v FROM t": {Cols: []Column{{"i", "integer"}, {"v", "text"}}, Rows: [][]*string{{str("1"), str("a")}, {str("5"), nil}}},
		"SELECT $1::int":     {Cols: []Column{{"int4", "integer"}}, Rows: [][]*string{{str("2")}}},
	}}
	if err := Run(context.Background(), blk, f); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"SELECT (2)::int",
		"SELECT i, v FROM t",
		"INSERT INTO u VALUES ($1::int + $2::int, $3::text)",
		"INSERT INTO u VALUES ($1::int + $2::int, $3::text)",
		"SELECT $1::int",
	}
	if !reflect.DeepEqual(f.ran, want) {
		t.Fatalf("ran\n%s\nwant\n%s", strings.Join(f.ran, "\n"), strings.Join(want, "\n"))
	}
	if p := f.params[3]; *p[0] != "5" || *p[1] != "2" || p[2] != nil {
		t.Errorf("second row's parameters: %v", p)
	}
	if !reflect.DeepEqual(f.notices, []string{"NOTICE n is 2"}) {
		t.Errorf("notices %v", f.notices)
	}
}

func TestFormatRaise(t *testing.T) {
	got, err := formatRaise("a % b %% c %", []*string{str("1"), nil})
	if err != nil || got != "a 1 b % c <NULL>" {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := formatRaise("%", nil); err == nil {
		t.Error("too few parameters: no error")
	}
	if _, err := formatRaise("x", []*string{str("1")}); err == nil {
		t.Error("too many parameters: no error")
	}
}

// TestLoops: LOOP with EXIT WHEN, WHILE, CONTINUE, an EXIT of an outer
// labelled loop and of a labelled block, in the order PostgreSQL runs
// them (the fake runner answers the conditions from a counter).
func TestLoops(t *testing.T) {
	blk, err := Parse(doStmt(t, `DO $$
DECLARE i int := 0;
BEGIN
  <<outer>>
  LOOP
    i := i + 1;
    CONTINUE WHEN i = 2;
    RAISE NOTICE 'loop %', i;
    WHILE true LOOP
      EXIT outer WHEN i >= 3;
      EXIT;
    END LOOP;
  END LOOP;
  <<blk>>
  BEGIN
    RAISE NOTICE 'in block';
    EXIT blk;
    RAISE NOTICE 'not reached';
  END;
  FOR j IN 1..5 LOOP
    EXIT WHEN j > 2;
    RAISE NOTICE 'for %', j;
  END LOOP;
END $$`))
	if err != nil {
		t.Fatal(err)
	}
	r := &loopRunner{}
	if err := Run(context.Background(), blk, r); err != nil {
		t.Fatal(err)
	}
	want := []string{"NOTICE loop 1", "NOTICE loop 3", "NOTICE in block", "NOTICE for 1", "NOTICE for 2"}
	if !reflect.DeepEqual(r.notices, want) {
		t.Fatalf("notices %v, want %v", r.notices, want)
	}
}

// loopRunner evaluates the expressions TestLoops uses: an integer, true,
// or "a op b" over integers and parameters, cast or not.
type loopRunner struct{ fakeRunner }

var loopExpr = regexp.MustCompile(`^SELECT \((.*)\)::(\w+)$`)

func (l *loopRunner) Run(_ context.Context, sql string, params []*string) (*Result, error) {
	expr, typ := strings.TrimPrefix(sql, "SELECT "), "integer"
	if m := loopExpr.FindStringSubmatch(sql); m != nil {
		expr, typ = m[1], m[2]
	}
	expr = regexp.MustCompile(`\$(\d)(::[\w.]+)?`).ReplaceAllStringFunc(expr, func(p string) string {
		return *params[p[1]-'1']
	})
	f := strings.Fields(expr)
	var v string
	switch {
	case len(f) == 1:
		v = f[0]
	case len(f) == 3:
		a, _ := strconv.Atoi(f[0])
		b, _ := strconv.Atoi(f[2])
		res := map[string]bool{"=": a == b, ">=": a >= b, ">": a > b}
		if f[1] == "+" {
			v = strconv.Itoa(a + b)
		} else if res[f[1]] {
			v = "t"
		} else {
			v = "f"
		}
	default:
		return nil, fmt.Errorf("loopRunner: unexpected %q", sql)
	}
	if v == "true" {
		v = "t"
	}
	return &Result{Cols: []Column{{"x", typ}}, Rows: [][]*string{{str(v)}}}, nil
}

// TestExecute: EXECUTE runs the text its expression gives, with USING
// values as typed parameters, and INTO takes its row.
func TestExecute(t *testing.T) {
	blk, err := Parse(doStmt(t, `DO $$
DECLARE n int;
BEGIN
  EXECUTE format('SELECT count(*) FROM %I WHERE k = $1', 'tab') INTO n USING 7;
  EXECUTE 'CREATE TABLE x (a int)';
  RAISE NOTICE 'n %', n;
END $$`))
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRunner{answers: map[string]*Result{
		"SELECT (format('SELECT count(*) FROM %I WHERE k = $1', 'tab'))::text": {Cols: []Column{{"format", "text"}}, Rows: [][]*string{{str("SELECT count(*) FROM tab WHERE k = $1")}}},
		"SELECT 7": {Cols: []Column{{"?column?", "integer"}}, Rows: [][]*string{{str("7")}}},
		"SELECT count(*) FROM tab WHERE k = $1::int": {Cols: []Column{{"count", "bigint"}}, Rows: [][]*string{{str("3")}}},
		"SELECT ('CREATE TABLE x (a int)')::text":    {Cols: []Column{{"text", "text"}}, Rows: [][]*string{{str("CREATE TABLE x (a int)")}}},
		"SELECT $1::int": {Cols: []Column{{"int4", "integer"}}, Rows: [][]*string{{str("3")}}},
	}}
	if err := Run(context.Background(), blk, f); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.notices, []string{"NOTICE n 3"}) {
		t.Fatalf("ran %v\nnotices %v", f.ran, f.notices)
	}
	if p := f.params[2]; len(p) != 1 || *p[0] != "7" {
		t.Errorf("USING parameters %v", p)
	}
}
