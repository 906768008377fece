package parse

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/mvserver/mvserver/pgerror"
)

// fastAccepts are statements the fast path must take (and build as
// pg_query does).
var fastAccepts = []string{
	"INSERT INTO t VALUES (1)",
	"insert into t values (0), (-0), (2147483647), (-2147483647), (2147483648), (-2147483648), (99999999999999999999999), (007), (-007)",
	"INSERT INTO s.t (a, b) VALUES (1, -1), (3000000000, -2147483649)",
	"INSERT INTO orders VALUES (-1000,DATE '2025-03-01',17,3),(-999,DATE '2025-12-31',4,1)",
	"INSERT INTO t VALUES (123.45, -123.45, .5, -.5, 5., -5., 1e10, 1E-3, 2.5e+7, -1.e5, 0.0, 00.10)",
	"INSERT INTO t VALUES ('', 'a', 'it''s', '''', 'a\\b', 'two\nlines', 'ünï', 'x''''y')",
	"INSERT INTO t VALUES (NULL, null, TRUE, false, True)",
	"INSERT INTO t VALUES (DATE '2025-03-01', TIMESTAMPTZ '2025-01-01 00:00:01+00', timestamp '2025-01-01', INT '5', bigint '7', text 'x', uuid '00000000-0000-0000-0000-000000000000')",
	"INSERT INTO t VALUES ('2025-03-01'::date, '1'::int, '2' :: bigint, 'x'::text, '3'::numeric, '4'::decimal, 't'::boolean, '1.5'::real, '1'::int2, '1'::int4, '1'::int8, 'a'::timestamptz, 'b'::timestamp, 'c'::smallint, 'd'::integer, 'e'::uuid)",
	"INSERT INTO t VALUES (numeric '1.5', decimal '2', boolean 'true', real '1', smallint '3', integer '4', int2 '5', int4 '6', int8 '7', DATE'2025-01-01')",
	`INSERT INTO "My Table" ("a b", "C", """q""") VALUES (1, 2, 3)`,
	`INSERT INTO "s"."t" VALUES (1)`,
	"INSERT INTO Mixed.CaseName (ColA, colB) VALUES (1, 2)",
	"INSERT INTO name (value, type, year, data) VALUES (1, 2, 3, 4)",
	"INSERT INTO t_1$x (c_2) VALUES (1)",
	"INSERT INTO tëst (çol) VALUES ('ü')",
	"INSERT\tINTO\nt\r\nVALUES\f(1)",
	"INSERT INTO t VALUES(1),(2) ",
	"INSERT /* c */ INTO -- line\n t /* nested /* c */ */ VALUES ( - 1 , 'x' -- c\r, 2 )",
	"INSERT INTO t VALUES (1, 'x'), (2), (3, 4, 5)",
	"INSERT INTO t VALUES (- 5), (-/* c */5)",
	"INSERT INTO inſert VALUES (1)",        // a name, not INSERT
	"INSERT INTO t VALUES (1) -- c\r, (2)", // the comment ends at \r
}

// fastRejects are statements the fast path must leave to pg_query: other
// forms, or ones pg_query reads differently from how they look.
var fastRejects = []string{
	"INSERT INTO t DEFAULT VALUES",
	"INSERT INTO t VALUES (DEFAULT)",
	"INSERT INTO t VALUES (1) RETURNING *",
	"INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING",
	"INSERT INTO t SELECT 1",
	"INSERT INTO t (SELECT 1)",
	"INSERT INTO t AS x VALUES (1)",
	"INSERT INTO t OVERRIDING SYSTEM VALUE VALUES (1)",
	"INSERT INTO t VALUES (1 + 2)",
	"INSERT INTO t VALUES (+1)",
	"INSERT INTO t VALUES (- -1)",
	"INSERT INTO t VALUES (-'1')",
	"INSERT INTO t VALUES (-1::int)",
	"INSERT INTO t VALUES (1::int)",
	"INSERT INTO t VALUES ('a'::date::text)",
	"INSERT INTO t VALUES ('a'::varchar(3))",
	"INSERT INTO t VALUES ('a'::date[])",
	"INSERT INTO t VALUES ('a'::timestamp with time zone)",
	"INSERT INTO t VALUES (DATE '2025-01-01'::text)",
	"INSERT INTO t VALUES (INTERVAL '1 day')",
	"INSERT INTO t VALUES (pg_catalog.date '2025-01-01')",
	"INSERT INTO t VALUES ('a' 'b')",
	"INSERT INTO t VALUES ('a'\n'b')",
	"INSERT INTO t VALUES (E'a\\nb')",
	"INSERT INTO t VALUES (e'a')",
	"INSERT INTO t VALUES (N'a')",
	"INSERT INTO t VALUES (X'1F')",
	"INSERT INTO t VALUES (B'101')",
	"INSERT INTO t VALUES (U&'\\0041')",
	"INSERT INTO t VALUES ($$a$$)",
	"INSERT INTO t VALUES ($1)",
	"INSERT INTO t VALUES (1_000)",
	"INSERT INTO t VALUES (0x1F)",
	"INSERT INTO t VALUES (1.2.3)",
	"INSERT INTO t VALUES (1e)",
	"INSERT INTO t VALUES (1abc)",
	"INSERT INTO t VALUES (now())",
	"INSERT INTO t VALUES (current_date)",
	"INSERT INTO t VALUES (ARRAY[1])",
	"INSERT INTO t VALUES ()",
	"INSERT INTO t VALUES (1),",
	"INSERT INTO t VALUES (1",
	"INSERT INTO t VALUES ('abc",
	"INSERT INTO t VALUES ('abc''",
	"INSERT INTO t VALUES",
	"INSERT INTO c.s.t VALUES (1)",
	"INSERT INTO select VALUES (1)",
	"INSERT INTO values VALUES (1)",
	"INSERT INTO t (int) VALUES (1)",
	"INSERT INTO t (a.b) VALUES (1)",
	"INSERT INTO t (a[1]) VALUES (1)",
	`INSERT INTO "" VALUES (1)`,
	`INSERT INTO "t VALUES (1)`,
	"INSERT INTO `t` VALUES (1)",
	"INSERT INTO " + strings.Repeat("x", 64) + " VALUES (1)",
	"inſert INTO t VALUES (1)",
	"INSERT INTO t VALUES (1)\x00",
	"INSERT INTO t VALUES (1\v)",
	"WITH x AS (SELECT 1) INSERT INTO t VALUES (1)",
	"SELECT 1",
}

// TestInsertFastPath compares the fast path's trees with pg_query's.
func TestInsertFastPath(t *testing.T) {
	for _, q := range fastAccepts {
		if n := checkInsertFast(t, q); n != 1 {
			t.Errorf("%q: the fast path did not take it", q)
		}
	}
	for _, q := range fastRejects {
		if n := checkInsertFast(t, q); n != 0 {
			t.Errorf("%q: the fast path took it", q)
		}
	}
}

// TestInsertFastPathGenerated: seeded random INSERTs of the fast path's
// forms, spelt in varied case and spacing, and random one-byte edits of
// them; most edits fall back, and wherever the fast path accepts, it
// agrees with pg_query.
func TestInsertFastPathGenerated(t *testing.T) {
	const seed = 9
	rng := rand.New(rand.NewPCG(seed, seed))
	accepted, edited := 0, 0
	for i := range 3000 {
		q := genInsert(rng)
		if n := checkInsertFast(t, q); n != 1 {
			t.Fatalf("seed %d, statement %d: %q: the fast path did not take it", seed, i, q)
		}
		accepted++
		e := editOnce(rng, q)
		edited += checkInsertFast(t, e)
	}
	t.Logf("%d generated, %d edits the fast path also took", accepted, edited)
}

// TestInsertFastPathParse: Parse gives the same statements (text, SQL,
// tree) and the same errors (code, message, position) with the fast path
// as without it.
func TestInsertFastPathParse(t *testing.T) {
	for _, q := range append(append([]string{
		"INSERT INTO t VALUES (1); INSERT INTO t VALUES (2) ; -- x\n SELECT 1;INSERT INTO t VALUES ('a;b')",
		"  /* lead */ INSERT INTO t VALUES (1) /* trail",
		"INSERT INTO t VALUES (1) -- c\r; SELECT 2",
	}, fastAccepts...), fastRejects...) {
		checkParseSame(t, q)
	}
}

// TestKeywords: every word of keywords is one of PostgreSQL's reserved,
// column-name or type/function-name keywords, by pg_query's scanner.
func TestKeywords(t *testing.T) {
	for w := range keywords {
		r, err := pg_query.Scan(w)
		if err != nil || len(r.Tokens) != 1 {
			t.Fatalf("%s: %v %v", w, r, err)
		}
		switch r.Tokens[0].KeywordKind {
		case pg_query.KeywordKind_RESERVED_KEYWORD, pg_query.KeywordKind_COL_NAME_KEYWORD, pg_query.KeywordKind_TYPE_FUNC_NAME_KEYWORD:
		default:
			t.Errorf("%s: %v", w, r.Tokens[0].KeywordKind)
		}
	}
	if len(keywords) != 164 {
		t.Errorf("%d keywords; PostgreSQL 17 has 164 that are not unreserved", len(keywords))
	}
}

// FuzzInsertFastPath: whenever the fast path takes a statement, its tree
// is pg_query's, and Parse answers as it does without the fast path. Run
// with go test ./sql/parse -run XXX -fuzz FuzzInsertFastPath.
func FuzzInsertFastPath(f *testing.F) {
	for _, s := range fastAccepts {
		f.Add(s)
	}
	for _, s := range fastRejects[:20] {
		f.Add(s)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		f.Add(genInsert(rng))
	}
	f.Fuzz(func(t *testing.T, q string) {
		checkInsertFast(t, q)
		checkParseSame(t, q)
	})
}

// checkInsertFast splits q as Parse does and, for every statement the
// fast path takes, compares its tree with pg_query.Parse's of the same
// text. It returns how many statements the fast path took.
func checkInsertFast(t testing.TB, q string) int {
	t.Helper()
	if !utf8.ValidString(q) {
		return 0
	}
	toks := lex(q)
	n, start := 0, 0
	for i := 0; i <= len(toks); i++ {
		if i < len(toks) && toks[i].kind != tokSemi {
			continue
		}
		base, local := trim(toks[start:i])
		start = i + 1
		if local == nil {
			continue
		}
		text := q[base : base+local[len(local)-1].end]
		fast := insertFast(text, significant(local))
		if fast == nil {
			continue
		}
		n++
		tree, err := pg_query.Parse(text)
		if err != nil {
			t.Fatalf("%q: the fast path took it, pg_query: %v", text, err)
		}
		if len(tree.Stmts) != 1 || !proto.Equal(fast, tree.Stmts[0].Stmt) {
			t.Fatalf("%q:\nfast:     %s\npg_query: %s", text, protojson.Format(fast), protojson.Format(tree))
		}
	}
	return n
}

// checkParseSame compares Parse with and without the fast path.
func checkParseSame(t testing.TB, q string) {
	t.Helper()
	with, err1 := parse(q, true)
	without, err2 := parse(q, false)
	if (err1 == nil) != (err2 == nil) {
		t.Fatalf("%q: error %v with the fast path, %v without", q, err1, err2)
	}
	if err1 != nil {
		e1, e2 := pgerror.Convert(err1), pgerror.Convert(err2)
		if e1.Code != e2.Code || e1.Message != e2.Message || e1.Position != e2.Position {
			t.Fatalf("%q: error %+v with the fast path, %+v without", q, e1, e2)
		}
		return
	}
	if len(with) != len(without) {
		t.Fatalf("%q: %d statements with the fast path, %d without", q, len(with), len(without))
	}
	for i := range with {
		a, b := with[i], without[i]
		if a.Text != b.Text || a.SQL != b.SQL || a.offset != b.offset || (a.m == nil) != (b.m == nil) ||
			!reflect.DeepEqual(a.Ext, b.Ext) || !reflect.DeepEqual(a.CreateExtras, b.CreateExtras) {
			t.Fatalf("%q: statement %d differs: %+v / %+v", q, i, a, b)
		}
		if !proto.Equal(a.AST, b.AST) {
			t.Fatalf("%q: statement %d: tree differs:\n%s\n%s", q, i, protojson.Format(a.AST), protojson.Format(b.AST))
		}
	}
}

// genInsert writes a random INSERT of the fast path's forms.
func genInsert(rng *rand.Rand) string {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	casing := func(s string) string {
		switch rng.IntN(3) {
		case 0:
			return strings.ToUpper(s)
		case 1:
			return strings.ToLower(s)
		}
		b := []byte(s)
		for i := range b {
			if rng.IntN(2) == 0 {
				b[i] = strings.ToUpper(string(b[i]))[0]
			}
		}
		return string(b)
	}
	space := func(required bool) string {
		s := pick("", "", " ", " ", "  ", "\t", "\n", "\r\n", " /* c */ ", "/**/", " -- c\n", "--\r", "/* a /* b */ c */")
		if required && s == "" || required && s == "/**/" && rng.IntN(2) == 0 {
			return " "
		}
		return s
	}
	name := func() string {
		return pick("t", "orders", "T1", `"Quoted Name"`, `"a""b"`, "name", "value", "ünï", "_x$", "x"+strings.Repeat("y", 62), "data", "key")
	}
	literal := func() string {
		switch rng.IntN(12) {
		case 0:
			return fmt.Sprint(rng.Int64N(1 << 40))
		case 1:
			return "-" + space(false) + fmt.Sprint(rng.Int32())
		case 2:
			return fmt.Sprintf("%d.%02d", rng.IntN(100000), rng.IntN(100))
		case 3:
			return pick("-", "") + pick(".5", "5.", "1e3", "1.5E-7", "0", "2147483648", "2147483647", "0007")
		case 4:
			return pick("''", "'x'", "'it''s'", "'a\\b'", "'line\nbreak'", "'ünï'", "'--not a comment'", "'/* no */'", "';'")
		case 5:
			return casing("null")
		case 6:
			return casing(pick("true", "false"))
		case 7:
			return casing("date") + space(false) + fmt.Sprintf("'2025-%02d-%02d'", 1+rng.IntN(12), 1+rng.IntN(28))
		case 8:
			return casing("timestamptz") + space(true) + fmt.Sprintf("'2025-01-01 00:00:%02d+00'", rng.IntN(60))
		case 9:
			return pick("'1'", "'2025-01-01'", "'x'") + space(false) + "::" + space(false) + casing(pick("int", "bigint", "date", "text", "numeric", "timestamptz", "timestamp", "boolean", "real", "int8"))
		case 10:
			return casing(pick("int", "bigint", "numeric", "timestamp", "text", "uuid", "int4", "smallint")) + space(true) + "'1'"
		}
		return fmt.Sprint(rng.IntN(10))
	}
	var sb strings.Builder
	sb.WriteString(casing("insert") + space(true) + casing("into") + space(true))
	if rng.IntN(4) == 0 {
		sb.WriteString(name() + space(false) + "." + space(false))
	}
	sb.WriteString(name())
	if rng.IntN(2) == 0 {
		sb.WriteString(space(false) + "(")
		for c := range 1 + rng.IntN(4) {
			if c > 0 {
				sb.WriteString(space(false) + "," + space(false))
			}
			sb.WriteString(name())
		}
		sb.WriteString(")")
	}
	sb.WriteString(space(true) + casing("values") + space(false))
	rows, width := 1+rng.IntN(5), 1+rng.IntN(5)
	for r := range rows {
		if r > 0 {
			sb.WriteString(space(false) + "," + space(false))
		}
		sb.WriteString("(" + space(false))
		for c := range width {
			if c > 0 {
				sb.WriteString(space(false) + "," + space(false))
			}
			sb.WriteString(literal())
		}
		sb.WriteString(space(false) + ")")
	}
	return sb.String()
}

// editOnce deletes, inserts or replaces one byte of q.
func editOnce(rng *rand.Rand, q string) string {
	i := rng.IntN(len(q))
	edits := []string{"'", `"`, "-", ":", ".", ",", "(", ")", "e", "_", " ", "0", "x", ";", "$", `\`, "/", "*", "\r", "\n", "A", "ſ", "E'", "::"}
	c := edits[rng.IntN(len(edits))]
	switch rng.IntN(3) {
	case 0:
		return q[:i] + q[i+1:]
	case 1:
		return q[:i] + c + q[i:]
	}
	return q[:i] + c + q[i+1:]
}

// BenchmarkParseInsert parses mvbench's 1000-row INSERT into orders, with
// and without the fast path.
func BenchmarkParseInsert(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("INSERT INTO orders VALUES ")
	for i := range 1000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "(%d,DATE '2025-%02d-%02d',%d,%d)", -1000+i, 1+i%12, 1+i%28, i*7%10000, 1+i%5)
	}
	q := sb.String()
	for _, fast := range []bool{true, false} {
		b.Run(fmt.Sprintf("fast=%v", fast), func(b *testing.B) {
			b.SetBytes(int64(len(q)))
			for b.Loop() {
				if _, err := parse(q, fast); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
