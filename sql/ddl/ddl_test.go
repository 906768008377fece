package ddl

import (
	"testing"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/storage"
)

// run applies each statement to one catalog clone, as the session does,
// and returns the clone and the last error.
func run(t *testing.T, stmts ...string) (*catalog.Catalog, error) {
	t.Helper()
	db, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	m, err := catalog.Open(db, "d")
	if err != nil {
		t.Fatal(err)
	}
	txn := db.Begin()
	defer txn.Rollback()
	c, err := m.Snapshot(txn)
	if err != nil {
		t.Fatal(err)
	}
	e := &Env{Cat: c.Clone(), SearchPath: []string{"public"}}
	for _, s := range stmts {
		st, err := parse.ParseOne(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		a, ok := Statement(st.AST)
		if !ok {
			t.Fatalf("%s: not a ddl statement", s)
		}
		if _, err := a(e); err != nil {
			return e.Cat, err
		}
	}
	return e.Cat, nil
}

// ADD VALUE gives a new label a sort order between its neighbours and
// leaves the others' alone: stored values keep comparing in declaration
// order.
func TestAddValueSortsBetweenNeighbours(t *testing.T) {
	c, err := run(t, "CREATE TYPE m AS ENUM ('a', 'c')", "ALTER TYPE m ADD VALUE 'b' BEFORE 'c'",
		"ALTER TYPE m ADD VALUE 'z'", "ALTER TYPE m ADD VALUE '0' BEFORE 'a'", "ALTER TYPE m ADD VALUE 'bb' AFTER 'b'")
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := c.Schema("public")
	e, ok := c.LookupEnum(pub.ID, "m")
	if !ok {
		t.Fatal("no enum m")
	}
	want := []struct {
		l string
		s float64
	}{{"0", 0}, {"a", 1}, {"b", 1.5}, {"bb", 1.75}, {"c", 2}, {"z", 3}}
	if len(e.Labels) != len(want) {
		t.Fatalf("labels %v", e.Labels)
	}
	for i, w := range want {
		if e.Labels[i].Label != w.l || e.Labels[i].Sort != w.s {
			t.Fatalf("label %d = %+v, want %s at %v (all: %v)", i, e.Labels[i], w.l, w.s, e.Labels)
		}
	}
	if _, ok := e.Def().Label("bb"); !ok {
		t.Fatal("the definition columns carry lacks the new label")
	}
}

func TestEnumErrors(t *testing.T) {
	for _, tc := range []struct {
		stmts []string
		code  string
	}{
		{[]string{"CREATE TYPE m AS ENUM ('a')", "CREATE TYPE m AS ENUM ('b')"}, pgerror.DuplicateObject},
		{[]string{"CREATE TYPE m AS ENUM ('a', 'a')"}, pgerror.UniqueViolation},
		{[]string{"CREATE TYPE m AS ENUM ('a')", "ALTER TYPE m ADD VALUE 'a'"}, pgerror.DuplicateObject},
		{[]string{"CREATE TYPE m AS ENUM ('a')", "ALTER TYPE m ADD VALUE 'b' AFTER 'x'"}, pgerror.InvalidParameterValue},
		{[]string{"CREATE TYPE m AS ENUM ('a')", "ALTER TYPE m RENAME VALUE 'a' TO 'b'"}, pgerror.FeatureNotSupported},
		{[]string{"ALTER TYPE nope ADD VALUE 'a'"}, pgerror.UndefinedObject},
		{[]string{"DROP TYPE nope"}, pgerror.UndefinedObject},
		{[]string{"DROP TYPE int4"}, pgerror.DependentObjectsStillExist},
	} {
		_, err := run(t, tc.stmts...)
		if pgerror.Code(err) != tc.code {
			t.Errorf("%v: got %v, want %s", tc.stmts, err, tc.code)
		}
	}
}

// CREATE OR REPLACE keeps the function's OID and counts its version
// (R-Q7); the return type may not change.
func TestReplaceFunctionKeepsIDAndCountsVersion(t *testing.T) {
	c, err := run(t, "CREATE FUNCTION f(x int) RETURNS int AS 'SELECT x + 1' LANGUAGE sql",
		"CREATE OR REPLACE FUNCTION f(x int) RETURNS int AS 'SELECT x + 2' LANGUAGE sql",
		"CREATE FUNCTION f(x text) RETURNS text RETURN x || 'a'")
	if err != nil {
		t.Fatal(err)
	}
	fs := c.Functions()
	if len(fs) != 2 {
		t.Fatalf("functions %v", fs)
	}
	if fs[0].Version != 1 || fs[0].Body != "SELECT x + 2" || fs[1].Version != 0 || fs[1].Body != "SELECT x || 'a'" {
		t.Fatalf("got %+v and %+v", fs[0], fs[1])
	}
	_, err = run(t, "CREATE FUNCTION f(x int) RETURNS int AS 'SELECT x' LANGUAGE sql",
		"CREATE OR REPLACE FUNCTION f(x int) RETURNS bigint AS 'SELECT x::bigint' LANGUAGE sql")
	if pgerror.Code(err) != pgerror.InvalidFunctionDefinition {
		t.Fatalf("changed return type: %v", err)
	}
}
