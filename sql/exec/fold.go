package exec

import (
	"context"

	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// The planner's estimator places a comparison's bound in the statistics
// only when it knows its value; this package's evaluator folds the
// constant expressions it meets (plan.RegisterConstFolder).
func init() { plan.RegisterConstFolder(foldConst) }

// foldConst evaluates e, an expression of constants, as a statement
// would (default settings); ok is false when that fails.
func foldConst(e plan.Expr) (types.Datum, bool) {
	f, err := compile(e, &Ctx{Context: context.Background(), Env: types.DefaultEnv})
	if err != nil {
		return types.Datum{}, false
	}
	d, err := f(nil)
	return d, err == nil
}
