package plan

import (
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// TestExpandGroupingSets: GROUP BY a, ROLLUP (b, (c, d)), CUBE (e) is the
// product of its items' sets, in PostgreSQL's order, and equal
// expressions spelled at different places are one key.
func TestExpandGroupingSets(t *testing.T) {
	res, err := pg_query.Parse("SELECT 1 FROM x GROUP BY a, ROLLUP (b, (c, d)), CUBE (e), GROUPING SETS ((), (a))")
	if err != nil {
		t.Fatal(err)
	}
	s := res.Stmts[0].Stmt.GetSelectStmt()
	b := &Binder{}
	sets := [][]*pg_query.Node{nil}
	for _, g := range s.GroupClause {
		item, err := b.expandGroupItem(g, true)
		if err != nil {
			t.Fatal(err)
		}
		var next [][]*pg_query.Node
		for _, have := range sets {
			for _, more := range item {
				next = append(next, append(append([]*pg_query.Node(nil), have...), more...))
			}
		}
		sets = next
	}
	var got []string
	for _, set := range sets {
		var names []string
		for _, e := range set {
			names = append(names, strVal(e.GetColumnRef().Fields[0]))
		}
		got = append(got, "("+strings.Join(names, ",")+")")
	}
	want := "(a,b,c,d,e) (a,b,c,d,e,a) (a,b,c,d) (a,b,c,d,a) (a,b,e) (a,b,e,a) (a,b) (a,b,a) (a,e) (a,e,a) (a) (a,a)"
	if strings.Join(got, " ") != want {
		t.Fatalf("sets:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	// The two spellings of a (other locations) are one expression.
	if i := indexOfExpr(sets[1][:5], sets[1][5]); i != 0 {
		t.Fatalf("a at two places: index %d, want 0", i)
	}
}
