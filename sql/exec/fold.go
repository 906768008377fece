package exec

import (
	"context"

	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// The planner folds constant expressions (the constant-folding rule) and
// places a comparison's bound in the statistics only when it knows its
// value; this package's evaluator computes them (plan.RegisterConstFolder).
func init() { plan.RegisterConstFolder(foldConst) }

// foldConst evaluates e, an expression of constants, as a statement
// would (default settings); ok is false when that fails. Its function
// context has no session, and a budget of foldLimit: an expression that
// builds a larger value (repeat('a', 10^8)) is not folded but evaluated
// by the statement, under its budget.
func foldConst(e plan.Expr) (d types.Datum, ok bool) {
	defer func() {
		// A function that panics on constants fails its statement when a
		// row evaluates it, not the planning of every statement.
		if recover() != nil {
			d, ok = types.Datum{}, false
		}
	}()
	bg := context.Background()
	mem := &Memory{Limit: foldLimit, Setting: "the planner's constant folding"}
	f, err := compile(e, &Ctx{Context: bg, Env: types.DefaultEnv, Mem: mem,
		Funcs: &funcs.Ctx{Env: types.DefaultEnv, Context: bg, Mem: mem}})
	if err != nil {
		return types.Datum{}, false
	}
	d, err = f(nil)
	return d, err == nil
}

// foldLimit is the folder's memory budget: values it charges past this
// are left to the statement.
const foldLimit = funcs.LargeValue
