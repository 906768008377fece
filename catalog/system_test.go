package catalog

import (
	"strings"
	"testing"

	"github.com/mvserver/mvserver/sql/types"
)

// TestRowsQuery: the query of a computed system view lists its rows with
// every value cast to its column's type, quotes included, and keeps the
// columns' types when there are no rows (testdata/ivm_insights.slt reads
// such a query through the binder).
func TestRowsQuery(t *testing.T) {
	cols := []Column{{Name: "name", Type: types.Text}, {Name: "ok", Type: types.Bool}, {Name: "n", Type: types.Int8}}
	for _, c := range []struct {
		rows [][]types.Datum
		want string
	}{
		{nil, `SELECT CAST(NULL AS text) AS "name", CAST(NULL AS boolean) AS "ok", CAST(NULL AS bigint) AS "n" WHERE false`},
		{[][]types.Datum{{types.NewText("it's"), types.NewBool(true), types.NewInt8(-3)}, {types.NullDatum, types.NewBool(false)}},
			`SELECT * FROM (VALUES (CAST('it''s' AS text), TRUE, CAST('-3' AS bigint)), (CAST(NULL AS text), FALSE, CAST(NULL AS bigint))) AS v("name", "ok", "n")`},
	} {
		q := rowsQuery(cols, c.rows)
		if q != c.want {
			t.Errorf("got  %s\nwant %s", q, c.want)
		}
	}
}

// TestComputedSystemView: resolving mv_insights gives the rows of the
// resolving catalog; the descriptor by id keeps the empty query.
func TestComputedSystemView(t *testing.T) {
	saved := computedViews["mv_insights"]
	defer func() { computedViews["mv_insights"] = saved }()
	var seen *Catalog
	SetComputedRows("mv_insights", func(c *Catalog) [][]types.Datum {
		seen = c
		return [][]types.Datum{{types.NewText("public.v")}}
	})
	c := &Catalog{Database: "db", schemas: map[string]*Schema{}, tables: map[uint32]*Table{}, byName: map[uint32]map[string]*Table{}}
	v, err := c.Resolve([]string{"system", "mv_insights"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if seen != c || !strings.Contains(v.Query, "'public.v'") || v.ID != MVInsightsID || len(v.Columns) != 8 {
		t.Fatalf("%+v", v)
	}
	if byID, _ := c.Table(MVInsightsID); strings.Contains(byID.Query, "public.v") {
		t.Fatalf("the registered descriptor changed: %s", byID.Query)
	}
}
