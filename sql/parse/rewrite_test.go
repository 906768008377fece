package parse

import (
	"slices"
	"strings"
	"testing"
)

// rewriteCorpus holds statements every rewrite matches in, and near
// misses.
var rewriteCorpus = []string{
	"select `a b` from `t` where `x``y` = 1",
	"select INTERVAL 1 HOUR, interval 5 minutes, INTERVAL -2 DAYS, interval '3' day, INTERVAL '1 2' DAY TO HOUR",
	"select current_timestamp(), current_date ( ), CURRENT_TIME(), localtimestamp(), current_user(), session_user(), current_schema()",
	"select * from a LEFT SEMI JOIN b on a.x = b.x left anti join c using (x) left join d on true",
	"SELECT * FROM event_log(TABLE(cat.sch.mv)), f(1, TABLE(`My MV`)); TABLE t",
	"SELECT k FROM t QUALIFY row_number() OVER (PARTITION BY k ORDER BY ts DESC) = 1",
	"select k from t window w as (order by k) qualify rank() over w < 2",
	"select array(1, 2), ARRAY[1], array(select 1), x.array(1, 2)",
	"select s RLIKE '^a' from t where s not rlike 'b' or (s) regexp 'c' and rlike(s, 'd') and not x",
	"INSERT INTO t (a, b) VALUES (1, 'x'), (-2, DATE '2025-01-01')",
}

// TestRewriteStarts: a rewrite matches only at one of its start words, so
// applyRewrites may skip every other token (candidates).
func TestRewriteStarts(t *testing.T) {
	for _, q := range rewriteCorpus {
		checkRewriteStarts(t, q)
	}
	// Every rewrite matches somewhere in the corpus: the check above is
	// not vacuous.
	for _, rw := range rewrites {
		matched := false
		for _, q := range rewriteCorpus {
			sig := significant(lex(q))
			for i := range sig {
				if rw.apply(q, sig, i, &builder{}) > 0 {
					matched = true
				}
			}
		}
		if !matched {
			t.Errorf("%s: no statement of the corpus matches", rw.name)
		}
	}
}

// checkRewriteStarts tries every rewrite at every token of q.
func checkRewriteStarts(t *testing.T, q string) {
	t.Helper()
	sig := significant(lex(q))
	for i, tok := range sig {
		for k := range rewrites {
			rw := &rewrites[k]
			if rw.apply(q, sig, i, &builder{}) == 0 {
				continue
			}
			word := strings.ToLower(tok.text(q))
			if tok.kind == tokBacktick {
				word = "`"
			}
			if !slices.Contains(rw.starts, word) || !slices.Contains(candidates(q, tok), rw) {
				t.Errorf("%q: %s matches at %q, which is not among its start words %q", q, rw.name, tok.text(q), rw.starts)
			}
		}
	}
}

func significant(toks []token) []token {
	var sig []token
	for _, t := range toks {
		if t.kind != tokSpace {
			sig = append(sig, t)
		}
	}
	return sig
}

// TestApplyRewritesAllocs: a statement no rewrite touches costs no
// allocation per token (1000 rows of an INSERT are most of a bulk load's
// parse).
func TestApplyRewritesAllocs(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("INSERT INTO orders VALUES ")
	for i := range 1000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString("(1, DATE '2025-03-01', 12.50, 'left', NULL)")
	}
	q := sb.String()
	toks := lex(q)
	allocs := testing.AllocsPerRun(5, func() {
		if out, m := applyRewrites(q, toks); out != q || m != nil {
			t.Fatalf("rewritten: %v", m)
		}
	})
	if allocs > 5 {
		t.Fatalf("%v allocations", allocs)
	}
}

// TestManyQualify: each QUALIFY leaves an insertion pending until its
// condition ends; the pass once scanned every pending one at every token,
// so 100 000 of them took hours. Now it is one pass.
func TestManyQualify(t *testing.T) {
	q := "SELECT " + strings.Repeat("(SELECT a FROM t QUALIFY a = 1), ", 100_000) + "1"
	st, err := ParseOne(q)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(st.AST.GetSelectStmt().TargetList); got != 100_001 {
		t.Fatalf("%d columns", got)
	}
	if !strings.Contains(st.SQL[len(st.SQL)-200:], "AS (PARTITION BY a = 1)), 1") {
		t.Fatalf("%s", st.SQL[len(st.SQL)-200:])
	}
}
