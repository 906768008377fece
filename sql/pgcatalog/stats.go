package pgcatalog

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/types"
)

// pg_stats: ANALYZE's column statistics (catalog.ColumnStats) in
// PostgreSQL 15's layout, one row per analyzed column of the relations
// the user may read. The value arrays (anyarray in PostgreSQL) are text
// arrays of the values' text forms, which print as PostgreSQL's do.
func init() {
	generators["pg_catalog.pg_stats"] = func(v *View, b *builder) {
		env := types.DefaultEnv
		if v.F != nil && v.F.Env != nil {
			env = v.F.Env
		}
		for _, r := range v.relations() {
			t := r.table
			if t == nil || r.kind == 'v' || r.kind == 'S' {
				continue
			}
			if v.F != nil && !v.Cat.Allowed(v.F.User, v.F.RequireRoles, t, catalog.PrivSelect) {
				continue
			}
			ts := v.tableStats(t.ID)
			if ts == nil {
				continue
			}
			schema, _ := v.namespaceName(r.ns)
			for _, col := range t.Columns {
				cs := ts.Column(col)
				if cs == nil {
					continue
				}
				row := vals{"schemaname": schema, "tablename": t.Name, "attname": col.Name, "inherited": false,
					"null_frac": cs.NullFrac, "avg_width": cs.AvgWidth, "n_distinct": cs.NDistinct}
				if len(cs.MCV) > 0 {
					row["most_common_vals"] = textArray(cs.MCV, env)
					row["most_common_freqs"] = float4Array(cs.MCF)
				}
				if len(cs.Histogram) > 0 {
					row["histogram_bounds"] = textArray(cs.Histogram, env)
				}
				if cs.HasCorrelation {
					row["correlation"] = cs.Correlation
				} else {
					row["correlation"] = nil
				}
				b.add(row)
			}
		}
	}
}

func textArray(vals []types.Datum, env *types.Env) types.Datum {
	e := make([]types.Datum, len(vals))
	for i, d := range vals {
		e[i] = types.NewText(string(types.AppendText(nil, d, env)))
	}
	return types.NewArrayOf(e...)
}

func float4Array(fs []float64) types.Datum {
	e := make([]types.Datum, len(fs))
	for i, f := range fs {
		e[i] = types.NewFloat(types.KindFloat4, f)
	}
	return types.NewArrayOf(e...)
}
