package parse

import (
	"strings"
	"testing"

	"github.com/mvserver/mvserver/pgerror"
)

func TestExtractStreams(t *testing.T) {
	for _, c := range []struct {
		in    string
		out   string   // the statement deparsed after the extraction
		names []string // the streams, in order
	}{
		{"SELECT * FROM STREAM(orders)", "SELECT * FROM orders", []string{"orders"}},
		{"SELECT o.id FROM STREAM(cat.sch.orders) AS o JOIN customers c ON c.id = o.cid",
			"SELECT o.id FROM cat.sch.orders o JOIN customers c ON c.id = o.cid", []string{"cat.sch.orders"}},
		{"SELECT * FROM stream(a) UNION ALL SELECT * FROM (SELECT * FROM STREAM(s.b) x) y",
			"SELECT * FROM a UNION ALL SELECT * FROM (SELECT * FROM s.b x) y", []string{"a", "s.b"}},
		// Not a FROM item: an ordinary call, left alone.
		{"SELECT stream(a) FROM t", "SELECT stream(a) FROM t", nil},
		{"SELECT * FROM t", "SELECT * FROM t", nil},
	} {
		st, err := ParseOne(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		refs, err := ExtractStreams(st)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		var names []string
		for _, r := range refs {
			names = append(names, r.StreamName())
		}
		if strings.Join(names, ",") != strings.Join(c.names, ",") {
			t.Errorf("%s: streams %v, want %v", c.in, names, c.names)
		}
		got, err := Deparse(st.AST)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.out {
			t.Errorf("%s: deparsed %q, want %q", c.in, got, c.out)
		}
	}
}

func TestExtractStreamsErrors(t *testing.T) {
	for _, q := range []string{
		"SELECT * FROM STREAM(read_files('/x'))",
		"SELECT * FROM STREAM(a, b)",
		"SELECT * FROM STREAM(a) WITH ORDINALITY",
		"SELECT * FROM STREAM(*)",
	} {
		st, err := ParseOne(q)
		if err != nil {
			continue // the grammar refuses it already
		}
		_, err = ExtractStreams(st)
		pe := pgerror.Convert(err)
		if err == nil || pe.Code != pgerror.FeatureNotSupported {
			t.Errorf("%s: %v, want 0A000", q, err)
			continue
		}
		if q[pe.Position-1:pe.Position-1+6] != "STREAM" {
			t.Errorf("%s: position %d, want STREAM's", q, pe.Position)
		}
	}
}
