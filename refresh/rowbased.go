package refresh

import "context"

// ROW_BASED (R-I1): the rows the view gained and lost, from differentiating
// its whole query through select, project, filter, joins (inner, outer,
// semi, anti) and UNION ALL (delta.go).
type rowBased struct{}

func (rowBased) Name() TechniqueName { return RowBased }

func (rowBased) Applies(an *Analysis) (bool, string) { return allowed(an, RowBased, "") }

func (rowBased) Run(ctx context.Context, r *techRun) (*change, error) {
	return r.queryChange()
}

func (rowBased) Estimate(s *sizer, r *techRun, c *change) float64 { return changeCost(s, c, r.changed) }
