package parse

import (
	"fmt"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

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
		{"select * from a LEFT SEMI JOIN b on a.x = b.x", "select * from a           JOIN b on a.x = b.x"},
		{"select * from a left  anti join b using (x)", "select * from a            join b using (x)"},
		{`select * from a left "semi" join b on true`, `select * from a left "semi" join b on true`},
		{"select s RLIKE '^a' from t where s not rlike 'b' or (s) regexp 'c'", "select s ~ '^a' from t where s !~ 'b' or (s) ~ 'c'"},
		{"select rlike(s, 'a'), regexp(s, 'b') from t where rlike(s, 'c')", "select rlike(s, 'a'), regexp(s, 'b') from t where rlike(s, 'c')"},
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

func TestCreateMaterializedView(t *testing.T) {
	q := `CREATE OR REFRESH MATERIALIZED VIEW cat.sch.mv (id BIGINT NOT NULL COMMENT 'key', total,
		CONSTRAINT pos EXPECT (total > 0) ON VIOLATION DROP ROW)
		COMMENT 'daily' TBLPROPERTIES ('pipelines.notifications' = 'failure')
		SCHEDULE CRON '0 */15 * * * ?' AT TIME ZONE 'America/Los_Angeles'
		REFRESH POLICY INCREMENTAL STRICT
		AS SELECT id, sum(amount) AS total FROM t WHERE ts > current_timestamp() - INTERVAL 1 HOUR GROUP BY id`
	st, err := ParseOne(q)
	if err != nil {
		t.Fatal(err)
	}
	c := st.Ext.(*CreateMaterializedView)
	if c.Mode != CreateOrRefresh || c.Name.String() != "cat.sch.mv" || len(c.Columns) != 2 || !c.Columns[0].NotNull || c.Columns[0].Type != "BIGINT" {
		t.Fatalf("%+v", c)
	}
	if len(c.Expectations) != 1 || c.Expectations[0].Expr != "total > 0" || c.Expectations[0].Action != "DROP ROW" {
		t.Fatalf("%+v", c.Expectations)
	}
	if c.Clauses.Schedule == nil || c.Clauses.Schedule.Cron != "0 */15 * * * ?" || c.Clauses.Policy != PolicyIncrementalStrict {
		t.Fatalf("%+v", c.Clauses)
	}
	if c.Query.AST.GetSelectStmt() == nil {
		t.Fatal("query not parsed")
	}
	// A syntax error inside the query points into the client's text.
	bad := "CREATE MATERIALIZED VIEW m AS SELECT a FROM t WHERE"
	_, err = ParseOne(bad)
	if pe := pgerror.Convert(err); pe.Code != pgerror.SyntaxError || pe.Position != int32(len(bad)+1) {
		t.Fatalf("%v at %d", err, pe.Position)
	}
}

func TestDatasetClauseErrors(t *testing.T) {
	for _, c := range []struct{ sql, code string }{
		{"CREATE MATERIALIZED VIEW m COMMENT 'a' COMMENT 'b' AS SELECT 1", pgerror.SyntaxError},
		{"CREATE MATERIALIZED VIEW m SCHEDULE EVERY 73 HOURS AS SELECT 1", pgerror.InvalidParameterValue},
		{"CREATE MATERIALIZED VIEW m SCHEDULE EVERY 0 DAYS AS SELECT 1", pgerror.InvalidParameterValue},
		{"CREATE MATERIALIZED VIEW m SCHEDULE EVERY 9 WEEKS AS SELECT 1", pgerror.InvalidParameterValue},
		{"CREATE MATERIALIZED VIEW m SCHEDULE EVERY 5 MINUTES AS SELECT 1", pgerror.SyntaxError},
		{"CREATE MATERIALIZED VIEW m SCHEDULE CRON '0 0 * * *' AS SELECT 1", pgerror.InvalidParameterValue},
		{"CREATE MATERIALIZED VIEW m SCHEDULE CRON '0 0 12 L * ?' AS SELECT 1", pgerror.FeatureNotSupported},
		{"CREATE MATERIALIZED VIEW m SCHEDULE CRON '0 0 12 * * 2#1' AS SELECT 1", pgerror.FeatureNotSupported},
		{"CREATE MATERIALIZED VIEW m SCHEDULE CRON '0 0 12 ? * MON' AT TIME ZONE 'Mars/Base' AS SELECT 1", pgerror.InvalidParameterValue},
		{"CREATE MATERIALIZED VIEW m SCHEDULE EVERY 1 HOUR TRIGGER ON UPDATE AS SELECT 1", pgerror.InvalidObjectDefinition},
		{"CREATE MATERIALIZED VIEW m AS INSERT INTO t VALUES (1)", pgerror.SyntaxError},
	} {
		_, err := ParseOne(c.sql)
		if got := pgerror.Code(err); got != c.code {
			t.Errorf("%s: got %s (%v), want %s", c.sql, got, err, c.code)
		}
	}
	for _, ok := range []string{
		"CREATE MATERIALIZED LAKE VIEW IF NOT EXISTS s.m TBLPROPERTIES (delta.enableChangeDataFeed = true) AS SELECT 1",
		"CREATE MATERIALIZED VIEW m SCHEDULE REFRESH EVERY 72 HOURS AS SELECT 1",
		"CREATE MATERIALIZED VIEW m SCHEDULE CRON '0 0 12 ? * MON-FRI,SUN 2027' AS SELECT 1",
		"CREATE MATERIALIZED VIEW m TRIGGER ON UPDATE AT MOST EVERY INTERVAL 5 MINUTES AS SELECT 1",
		"REFRESH MATERIALIZED LAKE VIEW s.m FULL",
		"REFRESH STREAMING TABLE s.st RESET CHECKPOINTS",
		"DROP MATERIALIZED VIEW IF EXISTS m CASCADE",
		"ALTER MATERIALIZED VIEW m ALTER SCHEDULE CRON '0 */5 * * * ?'",
		"ALTER STREAMING TABLE sales ADD TRIGGER ON UPDATE",
		"ALTER MATERIALIZED VIEW m DROP TRIGGER ON UPDATE",
		"ALTER MATERIALIZED VIEW m SET REFRESH POLICY FULL",
		"ALTER MATERIALIZED VIEW m ENABLE INCREMENTAL",
		"ALTER MATERIALIZED VIEW s.m OWNER TO alice",
		"ALTER STREAMING TABLE st OWNER TO \"Bob\"",
		"EXPLAIN CREATE MATERIALIZED VIEW m AS SELECT 1",
		"EXPLAIN REFRESH MATERIALIZED VIEW m",
	} {
		if _, err := ParseOne(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

func TestSemiAntiJoin(t *testing.T) {
	joinTypes := func(q string) []pg_query.JoinType {
		st, err := ParseOne(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var out []pg_query.JoinType
		var walk func(n *pg_query.Node)
		walk = func(n *pg_query.Node) {
			if j := n.GetJoinExpr(); j != nil {
				walk(j.Larg)
				out = append(out, j.Jointype)
				walk(j.Rarg)
			}
		}
		for _, f := range st.AST.GetSelectStmt().FromClause {
			walk(f)
		}
		return out
	}
	semi, anti, inner, left := pg_query.JoinType_JOIN_SEMI, pg_query.JoinType_JOIN_ANTI, pg_query.JoinType_JOIN_INNER, pg_query.JoinType_JOIN_LEFT
	for _, c := range []struct {
		q    string
		want []pg_query.JoinType
	}{
		{"select * from a left semi join b on a.x = b.x", []pg_query.JoinType{semi}},
		{"select * from a LEFT ANTI JOIN b USING (x)", []pg_query.JoinType{anti}},
		{"select * from a left semi join b on a.x = b.x join c on c.y = a.y left join d on true", []pg_query.JoinType{semi, inner, left}},
		{"select * from a join b on true left anti join (select x from c join d on true) s on s.x = a.x", []pg_query.JoinType{inner, anti}},
		{"select * from a left anti join (b left semi join c on b.x = c.x) on a.x = b.x", []pg_query.JoinType{anti, semi}},
	} {
		got := joinTypes(c.q)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: got %v want %v", c.q, got, c.want)
		}
	}
	// Positions after the rewrite still point into the client's text.
	q := "select * from a left semi join b on a.x = b.x wher"
	_, err := Parse(q)
	if pe := pgerror.Convert(err); pe.Position == 0 || q[pe.Position-1:] != "wher" {
		t.Fatalf("position %d (%s)", pe.Position, pe.Message)
	}
}

func TestDeparseSemiAntiJoin(t *testing.T) {
	for _, q := range []string{
		"select * from a left semi join b on a.x = b.x",
		"select * from a left anti join b using (x) where a.y > 1",
		"select * from a left semi join b on a.x = b.x join c on c.y = a.y left anti join d on d.z = a.z",
		"select * from a join (b left anti join c on b.x = c.x) on a.x = b.x",
		"select * from (a left semi join b on a.x = b.x) as j(p, q) where exists (select 1 from c left anti join d on true)",
	} {
		st, err := ParseOne(q)
		if err != nil {
			t.Fatal(err)
		}
		text, err := Deparse(st.AST)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		again, err := ParseOne(text)
		if err != nil {
			t.Fatalf("%s: deparsed to %s: %v", q, text, err)
		}
		// The same tree (join types included) both ways.
		want, _ := Deparse(st.AST)
		got, _ := Deparse(again.AST)
		if want != got || !strings.Contains(text, "SEMI") && !strings.Contains(text, "ANTI") {
			t.Errorf("%s:\n deparsed %s\n reparsed %s", q, want, got)
		}
		if a, b := allJoinTypes(st.AST), allJoinTypes(again.AST); fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s: join types %v, after deparse (%s) %v", q, a, text, b)
		}
	}
}

// allJoinTypes lists the type of every join in the tree, in tree order.
func allJoinTypes(n *pg_query.Node) []pg_query.JoinType {
	var out []pg_query.JoinType
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if j, ok := m.Interface().(*pg_query.JoinExpr); ok {
			out = append(out, j.Jointype)
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for k := 0; k < l.Len(); k++ {
					walk(l.Get(k).Message())
				}
			case fd.Message() != nil && !fd.IsMap():
				walk(v.Message())
			}
			return true
		})
	}
	walk(n.ProtoReflect())
	return out
}

func TestRewriteTableArg(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"SELECT * FROM event_log(TABLE(cat.sch.mv))", "SELECT * FROM event_log('cat.sch.mv')"},
		{"SELECT * FROM event_log(TABLE(`My MV`))", `SELECT * FROM event_log('"My MV"')`},
		{"SELECT * FROM f(1, TABLE(x))", "SELECT * FROM f(1, 'x')"},
		{"TABLE t", "TABLE t"},
	} {
		got, _ := applyRewrites(c.in, lex(c.in))
		if got != c.out {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.out)
		}
	}
}

func TestCheckAndVacuum(t *testing.T) {
	st, err := ParseOne("CHECK MATERIALIZED VIEW s.mv")
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := st.Ext.(*CheckDataset); !ok || c.Name.String() != "s.mv" {
		t.Fatalf("%#v", st.Ext)
	}
	if st, err = ParseOne("check materialized lake view `m v`"); err != nil || st.Ext.(*CheckDataset).Name.Parts[0] != "m v" {
		t.Fatalf("%v %#v", err, st)
	}
	for _, c := range []struct {
		sql    string
		name   string
		retain float64
	}{
		{"VACUUM t", "t", -1},
		{"vacuum s.t RETAIN 0 HOURS", "s.t", 0},
		{"VACUUM t RETAIN 1 HOUR", "t", 1},
		{"VACUUM t RETAIN 1.5 HOURS", "t", 1.5},
		{`VACUUM "full"`, "full", -1},
	} {
		st, err := ParseOne(c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		v, ok := st.Ext.(*Vacuum)
		if !ok || v.Name.String() != c.name || v.RetainHours != c.retain {
			t.Fatalf("%s: %#v", c.sql, st.Ext)
		}
	}
	// PostgreSQL's own VACUUM forms go to pg_query.
	for _, q := range []string{"VACUUM", "VACUUM FULL t", "VACUUM (VERBOSE) t", "VACUUM ANALYZE t"} {
		st, err := ParseOne(q)
		if err != nil || st.Ext != nil || st.AST.GetVacuumStmt() == nil {
			t.Fatalf("%s: %v %#v", q, err, st)
		}
	}
	for _, q := range []string{"VACUUM t RETAIN", "VACUUM t RETAIN 5 DAYS", "VACUUM t RETAIN -1 HOURS", "CHECK MATERIALIZED VIEW", "CHECK STREAMING TABLE s", "CHECK MATERIALIZED VIEW m FULL"} {
		if _, err := ParseOne(q); pgerror.Code(err) != pgerror.SyntaxError {
			t.Errorf("%s: want a syntax error, got %v", q, err)
		}
	}
}

func TestRewriteQualify(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"SELECT k FROM t QUALIFY row_number() OVER (PARTITION BY k ORDER BY ts DESC) = 1",
			"SELECT k FROM t WINDOW mvserver_qualify AS (PARTITION BY row_number() OVER (PARTITION BY k ORDER BY ts DESC) = 1)"},
		{"select k from t qualify rn = 1 order by k limit 3",
			"select k from t WINDOW mvserver_qualify AS (PARTITION BY rn = 1 )order by k limit 3"},
		{"select k from t window w as (order by k) qualify rank() over w < 2",
			"select k from t window w as (order by k) , mvserver_qualify AS (PARTITION BY rank() over w < 2)"},
		{"select k from t qualify rank() over w < 2 window w as (order by k)",
			"select k from t WINDOW mvserver_qualify AS (PARTITION BY rank() over w < 2 ) , w as (order by k)"},
		{"select * from (select k from t qualify k > INTERVAL 1 HOUR) s",
			"select * from (select k from t WINDOW mvserver_qualify AS (PARTITION BY k > INTERVAL '1 hour')) s"},
		// qualify as a name is left alone
		{"select qualify from t", "select qualify from t"},
		{"select a qualify from t", "select a qualify from t"},
		{"select * from t qualify where qualify.x = 1", "select * from t qualify where qualify.x = 1"},
		{"select 'qualify x'", "select 'qualify x'"},
	} {
		got, _ := applyRewrites(c.in, lex(c.in))
		if got != c.out {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.out)
		}
	}
}

// Errors inside a QUALIFY condition point into the text the client sent,
// and a deparsed query spells QUALIFY again and parses to the same tree.
func TestQualifyPositionsAndDeparse(t *testing.T) {
	q := "select k from t qualify row_number() over (order by k) = 1 +"
	_, err := Parse(q)
	pe := pgerror.Convert(err)
	if pe.Code != pgerror.SyntaxError || pe.Position != int32(len(q)+1) {
		t.Fatalf("%v at %d", err, pe.Position)
	}
	for _, c := range []struct{ in, out string }{
		{"select k from t qualify row_number() over (partition by k order by ts desc) = 1 order by k",
			"SELECT k FROM t QUALIFY row_number() OVER (PARTITION BY k ORDER BY ts DESC) = 1 ORDER BY k"},
		{"select k from t window w as (order by k) qualify rank() over w < 2",
			"SELECT k FROM t WINDOW w AS (ORDER BY k) QUALIFY rank() OVER w < 2"},
		{"select k from t qualify rank() over w < 2 window w as (order by k)",
			"SELECT k FROM t WINDOW w AS (ORDER BY k) QUALIFY rank() OVER w < 2"},
	} {
		st, err := ParseOne(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		got, err := Deparse(st.AST)
		if err != nil || got != c.out {
			t.Fatalf("%s:\n got %s (%v)\nwant %s", c.in, got, err, c.out)
		}
		again, err := ParseOne(got)
		if err != nil {
			t.Fatal(err)
		}
		if back, _ := Deparse(again.AST); back != got {
			t.Fatalf("not stable: %s", back)
		}
	}
}
