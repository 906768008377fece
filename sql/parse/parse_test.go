package parse

import (
	"testing"

	"github.com/mvserver/mvserver/pgerror"
)

func TestSplitAndParse(t *testing.T) {
	stmts, err := Parse("select 1; ; select 'a;b' -- c;\n ; /* ; */ select 2;")
	if err != nil {
		t.Fatal(err)
	}
	if len(stmts) != 3 {
		t.Fatalf("got %d statements", len(stmts))
	}
	if stmts[1].Text != "select 'a;b'" {
		t.Fatalf("text %q", stmts[1].Text)
	}
	if none, err := Parse("  -- only a comment\n"); err != nil || len(none) != 0 {
		t.Fatalf("empty: %v %v", none, err)
	}
}

func TestSyntaxErrorPosition(t *testing.T) {
	q := "select 1;\nselect * fromm t"
	_, err := Parse(q)
	pe := pgerror.Convert(err)
	if pe.Code != pgerror.SyntaxError {
		t.Fatalf("code %s", pe.Code)
	}
	if got := q[pe.Position-1:]; got != "fromm t" {
		t.Fatalf("position %d points at %q (%s)", pe.Position, got, pe.Message)
	}
}

func TestRewritePositions(t *testing.T) {
	// The rewrite of `b` and INTERVAL 1 HOUR must not move positions after it.
	q := "select `b`, now() - INTERVAL 1 HOUR, current_timestamp() from from"
	_, err := Parse(q)
	pe := pgerror.Convert(err)
	if pe.Position == 0 || q[pe.Position-1:] != "from" {
		t.Fatalf("position %d (%s)", pe.Position, pe.Message)
	}
}

func TestRewrites(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"select `a b` from `t`", `select "a b" from "t"`},
		{"select INTERVAL 1 HOUR", "select INTERVAL '1 hour'"},
		{"select interval 5 minutes", "select interval '5 minutes'"},
		{"select INTERVAL -2 DAYS", "select INTERVAL '-2 days'"},
		{"select current_timestamp(), current_date ( )", "select current_timestamp, current_date"},
		{"select 'INTERVAL 1 HOUR'", "select 'INTERVAL 1 HOUR'"},
		{`select "current_timestamp"()`, `select "current_timestamp"()`},
	} {
		got, _ := applyRewrites(c.in, lex(c.in))
		if got != c.out {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.out)
		}
	}
}

func TestExtensions(t *testing.T) {
	st, err := ParseOne("ALTER TABLE s.t SET TBLPROPERTIES (delta.enableChangeDataFeed = true, 'k' = 'v')")
	if err != nil {
		t.Fatal(err)
	}
	a := st.Ext.(*AlterTblProperties)
	if a.Name.String() != "s.t" || len(a.Set) != 2 || a.Set[0].Key != "delta.enableChangeDataFeed" || a.Set[0].Value != "true" {
		t.Fatalf("%+v", a)
	}
	st, err = ParseOne("CREATE TABLE t (a INT, b STRING) USING DELTA PARTITIONED BY (b) TBLPROPERTIES ('x'='1')")
	if err != nil {
		t.Fatal(err)
	}
	if st.AST == nil || st.CreateExtras == nil || st.CreateExtras.PartitionedBy[0] != "b" || st.CreateExtras.Properties[0].Value != "1" {
		t.Fatalf("%+v", st.CreateExtras)
	}
	st, err = ParseOne("describe history `my t`")
	if err != nil {
		t.Fatal(err)
	}
	if st.Ext.(*DescribeHistory).Name.Parts[0] != "my t" {
		t.Fatal("name")
	}
	if _, err := ParseOne("SHOW TBLPROPERTIES t ("); pgerror.Code(err) != pgerror.SyntaxError {
		t.Fatalf("want syntax error, got %v", err)
	}
}
