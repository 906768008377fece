package parse

import (
	"fmt"
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
		case <-time.After(5 * time.Second):
			panic(fmt.Sprintf("%q: still parsing after 5s", q))
		}
	})
}

// check parses q and deparses what it can.
func check(t *testing.T, q string) {
	checkRewriteStarts(t, q)
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
