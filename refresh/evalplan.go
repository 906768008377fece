package refresh

import (
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
)

// Evaluated plans. A refresh analyzes and differentiates the view's query
// as the binder bound it (Input.Query): the node kinds analyze.go and
// delta.go know, with one Scan per source for the change to enter at. What
// it evaluates — the full recompute, the invariants build's check, CHECK,
// the change plans delta.go builds, the inputs GROUP_AGGREGATE folds — goes
// through the optimizer first, exactly as a SELECT's plan does
// (plan.Optimize: join order, index scans, index nested-loop joins and the
// other rules of its table, with the estimator over the snapshot's table
// sizes). The optimizer's rules keep a plan's rows (they are correct on
// any plan), so a view still equals its query, and a full recompute runs
// the plan the same SELECT would run.
//
// A change plan holds the change set as a Given node of its real size:
// the estimator counts its rows, so the join-order rule starts each term
// ΔR ⋈ S ⋈ … from the change and joins outward, and the index-join rule
// turns a join of the small change with a table keyed on the join columns
// into lookups (work ∝ |Δ| × fan-out, not |S|). Scans of a source as of
// the checkpoint (Scan.Exclude) are never read through an index (the rules
// leave them whole), and a time filter's old side compares with the
// checkpoint's time as a constant, so key bounds drawn from it are those
// of the old side.

// estimator is the estimator of in's snapshot, made once per refresh.
func (in *Input) estimator() *plan.Estimator {
	if in.est == nil {
		in.est = plan.NewEstimator(in.Catalog, exec.PlanStats(in.Txn))
	}
	return in.est
}

// optimized is n as the optimizer rewrites a SELECT's plan (nil for nil).
func (in *Input) optimized(n plan.Node) (plan.Node, error) {
	return optimizeWith(in.estimator(), n)
}

// evalQuery is the view's query as a SELECT of it runs: the bound query
// optimized (once per refresh).
func (in *Input) evalQuery() (plan.Node, error) {
	if in.eval == nil {
		q, err := in.optimized(in.Query)
		if err != nil {
			return nil, err
		}
		in.eval = q
	}
	return in.eval, nil
}

func optimizeWith(est *plan.Estimator, n plan.Node) (plan.Node, error) {
	if n == nil {
		return nil, nil
	}
	return plan.Optimize(n, est)
}

// buildOptimized builds the operator of n after the optimizer rewrote it.
func buildOptimized(xc *exec.Ctx, est *plan.Estimator, n plan.Node) (exec.Operator, error) {
	o, err := optimizeWith(est, n)
	if err != nil {
		return nil, err
	}
	return exec.Build(xc, o)
}
