package refresh

import (
	"fmt"

	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
)

// Pricing the differentiation's own plans (R-I6, costmodel.go). Building
// a view's change runs some plans before the change plans exist: a join
// side's change is computed once so its terms read the other side only for
// its keys (restrict.go), an aggregate's touched keys are collected
// (delta.go). Each of these is priced from the planner's statistics
// (sizer.work of its optimized plan) before it runs, and the price is part
// of the technique's estimate. When the running total passes a full
// recompute's estimate, the differentiation stops before running the plan
// that passed it, and the refresh goes full: choosing a technique never
// costs more than the refresh it chooses against (TPC-H Q15: a change to
// the scalar max re-runs its filter's input, old and new, twice a full
// recompute's work, which is now refused before either runs).

// changeBudget is the running price of the plans a differ ran.
type changeBudget struct {
	sizes *sizer
	// spent is the estimated work of the plans run so far; limit is a
	// full recompute's estimate in the same units (0: no limit: STRICT,
	// tiny sources).
	spent, limit float64
	// over is set when spent passed limit (the refresh went full).
	over bool
}

// errOverBudget is the refusal of a change that would cost more than a
// full recompute.
func (b *changeBudget) errOverBudget() *refusal {
	return &refusal{why: fmt.Sprintf("building the change was estimated at %.0f units before it was done, above a full recompute's %.0f", b.spent, b.limit), full: true}
}

// charge adds the work of the optimized plans to spent, and refuses when
// it passes the limit (the plans are not run then).
func (b *changeBudget) charge(opt ...plan.Node) error {
	if b.sizes == nil {
		return nil
	}
	for _, o := range opt {
		b.spent += b.sizes.work(o)
	}
	if b.limit > 0 && b.spent > b.limit {
		b.over = true
		return b.errOverBudget()
	}
	return nil
}

// build optimizes n, charges its work and builds its operator.
func (df *differ) build(n plan.Node) (exec.Operator, error) {
	o, err := optimizeWith(df.est, n)
	if err != nil {
		return nil, err
	}
	if err := df.budget.charge(o); err != nil {
		return nil, err
	}
	return exec.Build(df.ctx, o)
}
