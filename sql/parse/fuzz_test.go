package parse

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mvserver/mvserver/pgerror"
)

// FuzzParse: no text makes the front end panic or hang, and every error
// position it reports lies inside the text (R-Q6), whatever the rewrites
// (QUALIFY's inserted parenthesis included) did to it. Run with
// go test ./sql/parse -run XXX -fuzz FuzzParse.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"SELECT k FROM t QUALIFY row_number() OVER (PARTITION BY k ORDER BY ts DESC) = 1",
		"select k from t window w as (order by k) qualify rank() over w < 2 order by 1",
		"select k from t qualify rank() over w < 2 window w as (order by k)",
		"select (select 1 from u qualify x) from t qualify y limit 1",
		"select `a` from t qualify",
		"select * from t qualify where x",
		"select a qualify from t",
		"SELECT id FROM ev QUALIFY id >",
		"select now() - INTERVAL 1 HOUR from a LEFT SEMI JOIN b on a.x = b.x qualify 1 = 1",
		// deep shapes (depth.go)
		"SELECT " + strings.Repeat("1+", 30_000) + "1",
		strings.Repeat("SELECT 1 UNION ALL ", 30_000) + "SELECT 1",
		"SELECT " + strings.Repeat("(SELECT ", 3_000) + "1" + strings.Repeat(")", 3_000),
		"SELECT a BETWEEN 1 AND b || a BETWEEN 1 AND b || a BETWEEN (SELECT 1) AND c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			check(t, q)
		}()
		select {
		case <-done:
		// A hang, not a slow parse: the 30 000-arm UNION ALL seed
		// parses in about a second, but several times slower under the
		// fuzzer's coverage instrumentation on a loaded machine.
		case <-time.After(60 * time.Second):
			panic(fmt.Sprintf("%q: still parsing after 60s", q))
		}
	})
}

// FuzzDeepChain: a statement made of one unit repeated n times (up to
// 200 000: 1+, (SELECT , NOT , UNION ALL SELECT 1 …) between a head and a
// tail never overflows the parser's stack (a crash fails the fuzzer), and
// whatever parses is no deeper than the estimate the depth check made on
// its tokens. Run with go test ./sql/parse -run XXX -fuzz FuzzDeepChain.
func FuzzDeepChain(f *testing.F) {
	for _, c := range []struct {
		head, unit string
		n          uint32
		tail       string
	}{
		{"SELECT ", "1+", 60_000, "1"},
		{"SELECT ", "'a'||", 60_000, "'a'"},
		{"SELECT 1", " UNION ALL SELECT 1", 60_000, ""},
		{"SELECT 1 FROM t", " JOIN t ON true", 60_000, ""},
		{"SELECT ", "(", 60_000, "1"},
		{"SELECT ", "(SELECT ", 60_000, "1"},
		{"SELECT ", "NOT ", 60_000, "true"},
		{"SELECT 1", "::int", 60_000, ""},
		{"SELECT ", "1+(", 3_000, "1" + strings.Repeat(")", 3_000)},
		{"SELECT ", "x BETWEEN 1 AND 2 || ", 5_000, "1"},
		{"SELECT ", "CASE WHEN true THEN ", 5_000, "1"},
		{"SELECT a", "[1]", 60_000, " FROM t"},
		{"SELECT ", "(a).b + ", 5_000, "1"},
	} {
		f.Add(c.head, c.unit, c.n, c.tail)
	}
	f.Fuzz(func(t *testing.T, head, unit string, n uint32, tail string) {
		n %= 200_001
		if len(unit)*int(n) > 4<<20 {
			n = uint32(4 << 20 / max(len(unit), 1))
		}
		q := head + strings.Repeat(unit, int(n)) + tail
		checkDepthBound(t, q)
	})
}

// check parses q and deparses what it can.
func check(t *testing.T, q string) {
	checkRewriteStarts(t, q)
	checkDepthBound(t, q)
	stmts, err := Parse(q)
	if err != nil {
		pe := pgerror.Convert(err)
		if pe.Position < 0 || int(pe.Position) > utf8.RuneCountInString(q)+1 {
			t.Errorf("%q: position %d outside the text (%s)", q, pe.Position, pe.Message)
		}
		return
	}
	for _, st := range stmts {
		if st.AST != nil {
			// pg_query's deparser does not take every tree; it must not
			// panic on any.
			_, _ = Deparse(st.AST)
		}
	}
}
