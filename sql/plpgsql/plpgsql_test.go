package plpgsql

import (
	"context"
	"reflect"
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
		`DO $$BEGIN WHILE true LOOP NULL; END LOOP; END$$`:                                                  pgerror.FeatureNotSupported,
		`DO $$BEGIN EXECUTE 'SELECT 1'; END$$`:                                                              pgerror.FeatureNotSupported,
		`DO $$BEGIN INSERT INTO t VALUES (1); EXCEPTION WHEN others THEN NULL; END$$`:                       pgerror.FeatureNotSupported,
		`DO $$BEGIN CREATE TABLE a (x int); CREATE TABLE b (x int); EXCEPTION WHEN others THEN NULL; END$$`: pgerror.FeatureNotSupported,
		`DO $$BEGIN PERFORM 1; EXCEPTION WHEN no_such_thing THEN NULL; END$$`:                               pgerror.UndefinedObject,
		`DO LANGUAGE plperl $$1$$`:                                                                          pgerror.UndefinedObject,
		`DO $$BEGIN SELECT 1 END$$`:                                                                         pgerror.SyntaxError,
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
