package refresh

import "context"

// WINDOW_FUNCTION (R-I1): the window partitions the changes touch are
// recomputed as of the checkpoint and now (differ.window in delta.go); the
// rest of the query is differentiated as ROW_BASED's is.
type windowFunction struct{}

func (windowFunction) Name() TechniqueName { return WindowFunction }

func (windowFunction) Applies(an *Analysis) (bool, string) {
	return allowed(an, WindowFunction, "the query has no window function")
}

func (windowFunction) Run(ctx context.Context, r *techRun) (*change, error) {
	return r.queryChange()
}

func (windowFunction) Estimate(s *sizer, r *techRun, c *change) float64 {
	return changeCost(s, c, r.changed)
}
