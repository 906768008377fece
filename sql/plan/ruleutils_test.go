package plan

import (
	"testing"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/types"
)

// TestRuleutilsText checks CHECK conditions against the text PostgreSQL
// 15 prints for them, pg_get_constraintdef(oid) and (oid, true), each
// taken from a PostgreSQL 15.18 server.
func TestRuleutilsText(t *testing.T) {
	tb := &catalog.Table{ID: 100, Name: "ckt", Kind: catalog.KindTable, Columns: []catalog.Column{
		{Name: "a", Type: types.Text}, {Name: "n", Type: types.Int4}, {Name: "s", Type: types.T{Kind: types.KindVarchar, Width: 5}},
		{Name: "d", Type: types.Date}, {Name: "m", Type: types.Numeric}, {Name: "f", Type: types.Float8},
		{Name: "e", Type: types.Text}, {Name: "b", Type: types.Bool}, {Name: "big", Type: types.Int8}}}
	cat := (&catalog.Catalog{Database: "x"}).Clone()
	cat.PutTable(tb)
	cols := make([]string, len(tb.Columns))
	for i, c := range tb.Columns {
		cols[i] = c.Name
	}
	b := &Binder{Cat: cat}
	for _, c := range []struct{ in, plain, pretty string }{
		{"a IN ('x','y')", "(a = ANY (ARRAY['x'::text, 'y'::text]))", "a = ANY (ARRAY['x'::text, 'y'::text])"},
		{"n > 0", "(n > 0)", "n > 0"},
		{"s <> ''", "((s)::text <> ''::text)", "s::text <> ''::text"},
		{"d > '2020-01-01'", "(d > '2020-01-01'::date)", "d > '2020-01-01'::date"},
		{"m BETWEEN 1 AND 10", "((m >= (1)::numeric) AND (m <= (10)::numeric))", "m >= 1::numeric AND m <= 10::numeric"},
		{"b IS NOT NULL AND n < 100", "((b IS NOT NULL) AND (n < 100))", "b IS NOT NULL AND n < 100"},
		{"e LIKE 'a%' OR e = ANY (ARRAY['q','r'])", "((e ~~ 'a%'::text) OR (e = ANY (ARRAY['q'::text, 'r'::text])))", "e ~~ 'a%'::text OR (e = ANY (ARRAY['q'::text, 'r'::text]))"},
		{"n + 1 > 0 OR a IS NULL", "(((n + 1) > 0) OR (a IS NULL))", "(n + 1) > 0 OR a IS NULL"},
		{"f::int > 1", "((f)::integer > 1)", "f::integer > 1"},
		{"n > -1", "(n > '-1'::integer)", "n > '-1'::integer"},
		{"m > 1.5", "(m > 1.5)", "m > 1.5"},
		{"f > n", "(f > (n)::double precision)", "f > n::double precision"},
		{"lower(a) = 'x'", "(lower(a) = 'x'::text)", "lower(a) = 'x'::text"},
		{"s IN ('a', 'b')", "((s)::text = ANY ((ARRAY['a'::character varying, 'b'::character varying])::text[]))", "s::text = ANY (ARRAY['a'::character varying, 'b'::character varying]::text[])"},
		{"big > 5", "(big > 5)", "big > 5"},
		// The printed varchar IN list read back: the array cast is now
		// one cast per element, and PostgreSQL prints it so.
		{"(s)::text = ANY ((ARRAY['a'::character varying, 'b'::character varying])::text[])", "((s)::text = ANY (ARRAY[('a'::character varying)::text, ('b'::character varying)::text]))", "s::text = ANY (ARRAY['a'::character varying::text, 'b'::character varying::text])"},
		{"n * 2 + 1 > n - (n - 1)", "(((n * 2) + 1) > (n - (n - 1)))", "(n * 2 + 1) > (n - (n - 1))"},
		{"NOT b", "(NOT b)", "NOT b"},
		{"a NOT IN ('x')", "(a <> 'x'::text)", "a <> 'x'::text"},
		{"a NOT IN ('x', 'y')", "(a <> ALL (ARRAY['x'::text, 'y'::text]))", "a <> ALL (ARRAY['x'::text, 'y'::text])"},
		{"f > 1.5", "(f > (1.5)::double precision)", "f > 1.5::double precision"},
		{"f > 1", "(f > (1)::double precision)", "f > 1::double precision"},
		{"m > -1.5", "(m > '-1.5'::numeric)", "m > '-1.5'::numeric"},
		{"m > -1", "(m > ('-1'::integer)::numeric)", "m > '-1'::integer::numeric"},
		{"big > 5000000000", "(big > '5000000000'::bigint)", "big > '5000000000'::bigint"},
		{"length(a) < 10", "(length(a) < 10)", "length(a) < 10"},
		{"s LIKE 'x%'", "((s)::text ~~ 'x%'::text)", "s::text ~~ 'x%'::text"},
		{"a IS DISTINCT FROM 'q'", "(a IS DISTINCT FROM 'q'::text)", "a IS DISTINCT FROM 'q'::text"},
		{"b = true", "(b = true)", "b = true"},
		{"m > 1.50", "(m > 1.50)", "m > 1.50"},
	} {
		e, err := b.BindRowExpr(tb, c.in, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		for _, pretty := range []bool{false, true} {
			want := c.plain
			if pretty {
				want = c.pretty
			}
			got, ok := RuleutilsText(e, cols, pretty)
			if !ok || got != want {
				t.Errorf("%s (pretty %v):\n got %s (ok %v)\nwant %s", c.in, pretty, got, ok, want)
			}
		}
	}
}
