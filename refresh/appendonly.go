package refresh

import "context"

// APPEND_ONLY (R-I1): ROW_BASED's differentiation when every source change
// is an insert and the query is monotone, so the view only gains rows.
type appendOnly struct{}

func (appendOnly) Name() TechniqueName { return AppendOnly }

func (appendOnly) Applies(an *Analysis) (bool, string) { return allowed(an, AppendOnly, "") }

func (appendOnly) Run(ctx context.Context, r *techRun) (*change, error) {
	if !r.insertOnly {
		return nil, &refusal{why: "the changes are not inserts only", next: true}
	}
	d, err := r.diffQuery()
	if err != nil {
		return nil, err
	}
	if d.minus != nil {
		return nil, &refusal{why: "the changes are not inserts only", next: true}
	}
	return &change{plus: d.plus}, nil
}

func (appendOnly) Estimate(s *sizer, r *techRun, c *change) float64 {
	return changeCost(s, c, r.changed)
}
