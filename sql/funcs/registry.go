package funcs

import (
	"strings"
	"time"

	"github.com/mvserver/mvserver/sql/types"
)

// Ctx is what a function may read at run time.
type Ctx struct {
	Env *types.Env
	// StatementTime is now() / current_timestamp: the start of the
	// transaction, as PostgreSQL defines it.
	StatementTime time.Time
	Database      string
	User          string
	BackendPID    int64
	// Notify queues a NOTIFY for the end of the transaction (pg_notify);
	// nil where notifications cannot be sent (refreshes).
	Notify func(channel, payload string) error
	// CancelBackend cancels the statement of the session with that process
	// id (pg_cancel_backend); nil where it cannot.
	CancelBackend func(pid int64) bool
	// Activity lists the server's sessions as pg_stat_activity rows; nil
	// where it cannot.
	Activity func() [][]types.Datum
}

// Overload is one signature of a scalar function.
type Overload struct {
	// Params are the parameter types; KindUnknown accepts any type.
	Params []types.T
	// Variadic: the last parameter may repeat (zero or more times).
	Variadic bool
	// Ret computes the result type from the (cast) argument types.
	Ret func(args []types.T) types.T
	// Fn computes the result.
	Fn func(ctx *Ctx, args []types.Datum) (types.Datum, error)
	// NullStrict: any NULL argument gives NULL without calling Fn.
	NullStrict bool
	// Poly, when set, marks the polymorphic parameters (parallel to
	// Params): the binder finds the one element type common to all of
	// them and passes them as that type or an array of it (array.go).
	Poly []Poly
	// SRF is set for a set-returning function: it starts the rows of one
	// call (array_srf.go). Fn is unused; NullStrict gives no rows.
	SRF func(ctx *Ctx, args []types.Datum) (RowIter, error)
	// Cols lists the output columns of a set-returning overload for its
	// (cast) argument types; nil: one column, named after the function,
	// of type Ret.
	Cols func(args []types.T) []Col
}

// Func is a named function.
type Func struct {
	Name          string
	Deterministic bool
	Overloads     []*Overload
	// Agg is set for aggregate functions.
	Agg *AggDef
	// Window is set for window-only functions (window.go).
	Window *WindowDef
}

// AggState accumulates one group's values.
type AggState interface {
	Add(ctx *Ctx, args []types.Datum) error
	Result(ctx *Ctx) (types.Datum, error)
}

// AggDef resolves an aggregate for its argument types.
type AggDef struct {
	// Resolve returns the result type and a state constructor; ok=false
	// when the argument types are not accepted.
	Resolve func(args []types.T) (ret types.T, newState func() AggState, ok bool)
	// Star: count(*) form accepted.
	Star bool
	// Ordered: the result depends on the order values are added in
	// (array_agg). With DISTINCT such an aggregate takes its values
	// sorted, so its result is deterministic.
	Ordered bool
	// Distinct: the aggregate always removes duplicates (collect_set).
	Distinct bool
}

var registry = map[string]*Func{}

func register(f *Func) {
	registry[f.Name] = f
}

// Lookup finds a function by (lower-case, unqualified) name.
func Lookup(name string) (*Func, bool) {
	name = strings.ToLower(name)
	name = strings.TrimPrefix(name, "pg_catalog.")
	f, ok := registry[name]
	return f, ok
}

func ret(t types.T) func([]types.T) types.T { return func([]types.T) types.T { return t } }

func sameAsFirst(args []types.T) types.T {
	if len(args) == 0 {
		return types.Text
	}
	return args[0]
}
