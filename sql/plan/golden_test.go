package plan

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/types"
)

// TestGolden runs the planner's golden files, testdata/plan/*.txt at the
// repository's root (datadriven; `go test ./sql/plan -run TestGolden
// -rewrite` regenerates the expected output). Commands:
//
//	exec
//	CREATE TABLE …; CREATE INDEX …
//
// adds tables (columns, PRIMARY KEY, UNIQUE) and indexes to the file's
// catalog;
//
//	stats table=t rows=N [distinct=col:N,…] [nulls=col:F,…] [mcv=col:value:F,…] [hist=col:v1/v2/…,…]
//
// sets what the planner's statistics say of t (without: nothing known):
// its rows, and per column the distinct values, the NULL share, the most
// common values with their frequencies (most common first) and the
// histogram bounds, as ANALYZE would store them;
//
//	build
//	SELECT …
//
// prints EXPLAIN of the bound plan (what refresh analyzes: no Optimize);
//
//	opt [rules=a,b] [costs]
//	SELECT …
//
// prints EXPLAIN of the plan Optimize makes, with only the named rules
// when rules is given, with each node's estimated costs with costs.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("../../testdata/plan/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden files under testdata/plan")
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			g := newGoldenCatalog()
			datadriven.RunTest(t, path, g.run)
		})
	}
}

type goldenCatalog struct {
	cat    *catalog.Catalog
	schema *catalog.Schema
	stats  goldenStats
}

// goldenStats are the statistics a golden file sets (stats command).
type goldenStats map[string]goldenTableStats

type goldenTableStats struct {
	rows     float64
	distinct map[string]float64
	cols     map[string]*catalog.ColumnStats
}

func newGoldenCatalog() *goldenCatalog {
	c := (&catalog.Catalog{Database: "golden"}).Clone()
	s := &catalog.Schema{ID: c.AllocID(), Name: "public"}
	c.PutSchema(s)
	return &goldenCatalog{cat: c, schema: s, stats: goldenStats{}}
}

func (g *goldenCatalog) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "exec":
		for _, sql := range strings.Split(d.Input, ";") {
			if strings.TrimSpace(sql) == "" {
				continue
			}
			if err := g.exec(sql); err != nil {
				return "error: " + err.Error() + "\n"
			}
		}
		return ""
	case "stats":
		var name string
		d.ScanArgs(t, "table", &name)
		ts := goldenTableStats{distinct: map[string]float64{}}
		var rows int
		d.ScanArgs(t, "rows", &rows)
		ts.rows = float64(rows)
		if d.HasArg("distinct") {
			var vals []string
			d.ScanArgs(t, "distinct", &vals)
			for _, v := range vals {
				col, n, ok := strings.Cut(v, ":")
				f, err := strconv.ParseFloat(n, 64)
				if !ok || err != nil {
					d.Fatalf(t, "distinct wants col:N, not %q", v)
				}
				ts.distinct[col] = f
			}
		}
		g.columnStats(t, d, name, &ts)
		g.stats[name] = ts
		return ""
	case "build", "opt":
		root, err := g.bind(d.Input)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		if d.Cmd == "opt" {
			rules := Rules
			if d.HasArg("rules") {
				var names []string
				d.ScanArgs(t, "rules", &names)
				rules = nil
				for _, name := range names {
					r, ok := ruleNamed(name)
					if !ok {
						d.Fatalf(t, "no rule %q", name)
					}
					rules = append(rules, r)
				}
			}
			bound := strings.Join(Explain(root, nil), "\n")
			// Before any stats command the optimizer knows no table sizes.
			var stats Stats
			if len(g.stats) > 0 {
				stats = g.stats
			}
			o := &Optimizer{est: NewEstimator(g.cat, stats)}
			opt, err := optimizeWith(o, root, rules)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			// Rules build new nodes: the bound plan is as it was, and a
			// rule finds nothing more to do in the optimized plan.
			if again := strings.Join(Explain(root, nil), "\n"); again != bound {
				t.Errorf("%s: Optimize modified the bound plan:\n%s\nbecame\n%s", d.Pos, bound, again)
			}
			for _, r := range rules {
				if _, changed, err := r.Apply(o, opt); err != nil || changed {
					t.Errorf("%s: rule %s changes its own output (err %v)", d.Pos, r.Name, err)
				}
			}
			root = opt
			if d.HasArg("costs") {
				return strings.Join(ExplainCosts(root, nil, o.est), "\n") + "\n"
			}
		}
		return strings.Join(Explain(root, nil), "\n") + "\n"
	}
	d.Fatalf(t, "unknown command %s", d.Cmd)
	return ""
}

// TableRows reports the rows a stats command set.
func (s goldenStats) TableRows(t *catalog.Table) (float64, bool) {
	ts, ok := s[t.Name]
	return ts.rows, ok
}

// columnStats reads a stats command's nulls, mcv and hist arguments.
func (g *goldenCatalog) columnStats(t *testing.T, d *datadriven.TestData, table string, ts *goldenTableStats) {
	ts.cols = map[string]*catalog.ColumnStats{}
	tbl, err := g.cat.Resolve([]string{table}, []string{"public"})
	if err != nil {
		d.Fatalf(t, "%v", err)
	}
	col := func(name string) *catalog.ColumnStats {
		cs := ts.cols[name]
		if cs == nil {
			i := tbl.ColumnIndex(name)
			if i < 0 {
				d.Fatalf(t, "no column %s", name)
			}
			c := tbl.Columns[i]
			cs = &catalog.ColumnStats{ColID: c.ID, TypeOID: c.Type.OID(), NDistinct: ts.distinct[name]}
			ts.cols[name] = cs
		}
		return cs
	}
	value := func(name, v string) types.Datum {
		x, err := types.ParseText(v, tbl.Columns[tbl.ColumnIndex(name)].Type, &types.Env{})
		if err != nil {
			d.Fatalf(t, "%v", err)
		}
		return x
	}
	args := func(key string) []string {
		var vals []string
		if d.HasArg(key) {
			d.ScanArgs(t, key, &vals)
		}
		return vals
	}
	for name := range ts.distinct {
		col(name)
	}
	for _, a := range args("nulls") {
		name, f, _ := strings.Cut(a, ":")
		col(name).NullFrac, err = strconv.ParseFloat(f, 64)
		if err != nil {
			d.Fatalf(t, "nulls wants col:F, not %q", a)
		}
	}
	for _, a := range args("mcv") {
		parts := strings.Split(a, ":")
		if len(parts) != 3 {
			d.Fatalf(t, "mcv wants col:value:F, not %q", a)
		}
		f, err := strconv.ParseFloat(parts[2], 64)
		if err != nil {
			d.Fatalf(t, "mcv wants col:value:F, not %q", a)
		}
		cs := col(parts[0])
		cs.MCV = append(cs.MCV, value(parts[0], parts[1]))
		cs.MCF = append(cs.MCF, f)
	}
	for _, a := range args("hist") {
		name, bounds, _ := strings.Cut(a, ":")
		cs := col(name)
		for _, b := range strings.Split(bounds, "/") {
			cs.Histogram = append(cs.Histogram, value(name, b))
		}
	}
}

// Column reports the column statistics a stats command set.
func (s goldenStats) Column(t *catalog.Table, col int) *catalog.ColumnStats {
	return s[t.Name].cols[t.Columns[col].Name]
}

// ColumnDistinct reports the distinct values a stats command set.
func (s goldenStats) ColumnDistinct(t *catalog.Table, col int) (float64, bool) {
	n, ok := s[t.Name].distinct[t.Columns[col].Name]
	return n, ok
}

func (g *goldenCatalog) bind(sql string) (Node, error) {
	st, err := parse.ParseOne(sql)
	if err != nil {
		return nil, err
	}
	sel := st.AST.GetSelectStmt()
	if sel == nil {
		return nil, fmt.Errorf("not a SELECT: %s", sql)
	}
	b := &Binder{Cat: g.cat, SearchPath: []string{"public"}, Stmt: st, Env: &types.Env{}}
	q, err := b.BindSelect(sel)
	if err != nil {
		return nil, err
	}
	return q.Root, nil
}

// exec adds the table of a CREATE TABLE or the index of a CREATE INDEX.
func (g *goldenCatalog) exec(sql string) error {
	st, err := parse.ParseOne(sql)
	if err != nil {
		return err
	}
	b := &Binder{Cat: g.cat, SearchPath: []string{"public"}, Stmt: st, Env: &types.Env{}}
	switch x := st.AST.Node.(type) {
	case *pg_query.Node_CreateStmt:
		cs := x.CreateStmt
		t := &catalog.Table{ID: g.cat.AllocID(), SchemaID: g.schema.ID, Name: cs.Relation.Relname, Kind: catalog.KindTable}
		colID := func(name string) (uint32, error) {
			for _, c := range t.Columns {
				if c.Name == name {
					return c.ID, nil
				}
			}
			return 0, fmt.Errorf("no column %s", name)
		}
		var uniques [][]string
		var pk []string
		constraint := func(c *pg_query.Constraint, col string) {
			var keys []string
			if col != "" {
				keys = []string{col}
			}
			for _, k := range c.Keys {
				keys = append(keys, k.GetString_().Sval)
			}
			switch c.Contype {
			case pg_query.ConstrType_CONSTR_PRIMARY:
				pk = keys
			case pg_query.ConstrType_CONSTR_UNIQUE:
				uniques = append(uniques, keys)
			}
		}
		for _, e := range cs.TableElts {
			switch el := e.Node.(type) {
			case *pg_query.Node_ColumnDef:
				typ, err := b.TypeName(el.ColumnDef.TypeName)
				if err != nil {
					return err
				}
				t.NextColID++
				col := catalog.Column{ID: t.NextColID, Name: el.ColumnDef.Colname, Type: typ}
				t.Columns = append(t.Columns, col)
				for _, c := range el.ColumnDef.Constraints {
					constraint(c.GetConstraint(), col.Name)
				}
			case *pg_query.Node_Constraint:
				constraint(el.Constraint, "")
			}
		}
		for _, name := range pk {
			id, err := colID(name)
			if err != nil {
				return err
			}
			t.PrimaryKey = append(t.PrimaryKey, id)
		}
		for _, u := range uniques {
			ix := catalog.Index{ID: g.cat.AllocID(), Name: t.Name + "_" + strings.Join(u, "_") + "_key", Unique: true}
			for _, name := range u {
				id, err := colID(name)
				if err != nil {
					return err
				}
				ix.Columns = append(ix.Columns, catalog.IndexColumn{Col: id})
			}
			t.Indexes = append(t.Indexes, ix)
		}
		g.cat.PutTable(t)
		return nil
	case *pg_query.Node_IndexStmt:
		is := x.IndexStmt
		t, err := b.ResolveTable(is.Relation)
		if err != nil {
			return err
		}
		nt := t.Clone()
		ix := catalog.Index{ID: g.cat.AllocID(), Name: is.Idxname, Unique: is.Unique}
		for _, p := range is.IndexParams {
			name := p.GetIndexElem().Name
			i := nt.ColumnIndex(name)
			if i < 0 {
				return fmt.Errorf("no column %s", name)
			}
			ix.Columns = append(ix.Columns, catalog.IndexColumn{Col: nt.Columns[i].ID})
		}
		nt.Indexes = append(nt.Indexes, ix)
		g.cat.PutTable(nt)
		return nil
	}
	return fmt.Errorf("exec takes CREATE TABLE and CREATE INDEX, not %s", sql)
}
