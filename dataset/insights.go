package dataset

import (
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// The mv_insights system view (R-I9): one row per materialized view and
// relevant blocker, computed from the catalog snapshot the statement reads.
func init() {
	exec.RegisterRowSource(plan.GenMVInsights, func(_ *exec.Ctx, arg any) ([]exec.Row, error) {
		rows := InsightRows(arg.(*catalog.Catalog))
		out := make([]exec.Row, len(rows))
		for i, r := range rows {
			out[i] = r
		}
		return out, nil
	})
}

// ReasonInvalidDefinition is mv_insights' problem for a view whose query
// no longer binds (a source column dropped, R-M8).
const ReasonInvalidDefinition = "INVALID_DEFINITION"

// InsightRows are mv_insights' rows over catalog c.
func InsightRows(c *catalog.Catalog) [][]types.Datum {
	env := &types.Env{Loc: time.UTC}
	text := func(s string) types.Datum {
		if s == "" {
			return types.NullDatum
		}
		return types.NewText(s)
	}
	var rows [][]types.Datum
	for _, v := range c.Tables() {
		if v.Kind != catalog.KindMaterializedView {
			continue
		}
		name := c.QualifiedName(v)
		va, err := AnalyzeStored(c, v, env)
		if err != nil {
			rows = append(rows, []types.Datum{text(name), types.NullDatum, types.NullDatum, text(ReasonInvalidDefinition), types.NullDatum,
				text(pgerror.Convert(err).Message), text("CREATE OR REPLACE the materialized view with a query that reads existing columns"), types.NewBool(false)})
			continue
		}
		bs, _ := va.RelevantBlockers()
		for _, b := range bs {
			var source string
			switch b.Code {
			case refresh.ReasonCDFOff, refresh.ReasonRowTrackingOff, refresh.ReasonExpectationsView:
				source = b.Object
			}
			rows = append(rows, []types.Datum{text(name), text(source), text(b.Object), text(b.Code), text(va.Where(b)),
				text(b.Message), text(b.Fix), types.NewBool(b.Permanent)})
		}
	}
	return rows
}
