package parse

import (
	"reflect"
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

func TestDoBlockOf(t *testing.T) {
	blk, err := DoBlockOf(doStmt(t, `DO 'BEGIN CREATE TYPE "public"."e" AS ENUM(''a''); EXCEPTION WHEN duplicate_object OR SQLSTATE ''42P07'' THEN null; WHEN others THEN PERFORM 1; END'`))
	if err != nil {
		t.Fatal(err)
	}
	want := &DoBlock{
		Body: []DoStatement{{SQL: `CREATE TYPE "public"."e" AS ENUM('a')`}},
		Handlers: []DoHandler{
			{Conditions: []string{"42710", "42P07"}},
			{Conditions: []string{"others"}, Body: []DoStatement{{SQL: "SELECT 1", Perform: true}}},
		},
	}
	if !reflect.DeepEqual(blk, want) {
		t.Fatalf("got %+v\nwant %+v", blk, want)
	}
	if !blk.Handlers[0].Catches("42P07") || blk.Handlers[0].Catches("23505") {
		t.Error("the first handler catches the wrong codes")
	}
	blk, err = DoBlockOf(doStmt(t, `DO LANGUAGE plpgsql $$BEGIN INSERT INTO t VALUES (1); UPDATE t SET a = 2; END$$`))
	if err != nil || len(blk.Body) != 2 || blk.Handlers != nil {
		t.Fatalf("two statements: %+v, %v", blk, err)
	}
	for sql, code := range map[string]string{
		`DO $$DECLARE x int; BEGIN x := 1; END$$`:                             pgerror.FeatureNotSupported,
		`DO $$BEGIN IF true THEN PERFORM 1; END IF; END$$`:                    pgerror.FeatureNotSupported,
		`DO $$BEGIN RAISE NOTICE 'x'; END$$`:                                  pgerror.FeatureNotSupported,
		`DO $$BEGIN PERFORM 1; EXCEPTION WHEN no_such_thing THEN NULL; END$$`: pgerror.UndefinedObject,
		`DO LANGUAGE plperl $$1$$`:                                            pgerror.UndefinedObject,
		`DO $$BEGIN SELECT 1 END$$`:                                           pgerror.SyntaxError,
	} {
		_, err := DoBlockOf(doStmt(t, sql))
		if pe, ok := err.(*pgerror.Error); !ok || pe.Code != code {
			t.Errorf("%s: got %v, want SQLSTATE %s", sql, err, code)
		}
	}
}
