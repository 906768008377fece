package funcs

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/mvserver/mvserver/sql/types"
)

// Ctx is what a function may read at run time.
type Ctx struct {
	Env *types.Env
	// Context is the running statement's: a function that waits
	// (pg_sleep) stops when it is canceled. The executor sets it.
	Context context.Context
	// StatementTime is now() / current_timestamp: the start of the
	// transaction, as PostgreSQL defines it.
	StatementTime time.Time
	// StatementStart is statement_timestamp(): the start of the current
	// statement (zero: StatementTime).
	StatementStart time.Time
	Database       string
	// User is current_user (the role of SET ROLE, else SessionUser);
	// SessionUser is session_user (SET SESSION AUTHORIZATION).
	User, SessionUser string
	BackendPID        int64
	// Notify queues a NOTIFY for the end of the transaction (pg_notify);
	// nil where notifications cannot be sent (refreshes).
	Notify func(channel, payload string) error
	// CancelBackend cancels the statement of the session with that process
	// id (pg_cancel_backend), reporting whether there is one, or fails
	// when the caller may not signal it; nil where it cannot.
	CancelBackend func(pid int64) (bool, error)
	// TerminateBackend ends the session with that process id
	// (pg_terminate_backend), waiting up to timeoutMS for it to end when
	// that is positive; it reports whether it ended (or, with no wait,
	// was signalled), or fails when the caller may not signal it; nil
	// where it cannot.
	TerminateBackend func(pid, timeoutMS int64) (bool, error)
	// Activity lists the server's sessions as pg_stat_activity rows; nil
	// where it cannot.
	Activity func() [][]types.Datum
	// Catalog is the catalog snapshot the statement runs against (a
	// *catalog.Catalog; any keeps funcs free of the catalog package) for
	// the catalog functions of sql/pgcatalog; nil where there is none.
	Catalog any
	// SearchPath is the session's schema search path (current_schemas).
	SearchPath []string
	// Settings lists the session's configuration parameters as
	// pg_settings rows (name, setting, short_desc, read-only); nil where
	// there is no session.
	Settings func() []Setting
	// RelationSize estimates a stored relation's bytes on disk, with its
	// change data feed and history when total (pg_table_size and
	// pg_total_relation_size); nil where there is no database.
	RelationSize func(id uint32, total bool) (int64, error)
	// Sequences runs nextval, currval, setval and lastval; nil where
	// sequences cannot be used (refreshes).
	Sequences Sequences
	// SetSetting sets a session configuration parameter as SET does and
	// returns its new value (set_config); nil where there is no session.
	SetSetting func(name, value string) (string, error)
	// RequireRoles: clients authenticate, so a user that is no role has no
	// privileges (has_table_privilege; catalog.Catalog.Allowed).
	RequireRoles bool
	// Mem is the memory budget large values and growing states are
	// charged to (budget.go); nil: none. The executor sets it.
	Mem Budget
}

// Sequences is what the sequence functions need from a session.
type Sequences interface {
	NextVal(oid uint32) (int64, error)
	CurrVal(oid uint32) (int64, error)
	SetVal(oid uint32, v int64, isCalled bool) (int64, error)
	LastVal() (int64, error)
	// Written is the last value any session has been handed
	// (pg_sequences.last_value); ok is false before the first nextval or
	// without the privilege to read the sequence, where PostgreSQL shows
	// NULL.
	Written(oid uint32) (last int64, ok bool, err error)
}

// Setting is one configuration parameter as a session sees it.
type Setting struct {
	Name, Value, Desc string
	ReadOnly          bool
	// Hidden: not a row of pg_settings (PostgreSQL's GUC_NO_SHOW_ALL:
	// role, session_authorization, is_superuser); current_setting reads it.
	Hidden bool
	// PostgreSQL's description of the parameter, where it has one
	// (pg_settings' vartype, unit, context, category, enumvals, range);
	// Setting (pg_settings.setting: Value in Unit) and Default in Unit.
	VarType, Unit, Context, Category string
	EnumVals                         []string
	Min, Max, Setting, Default       string
}

// Register adds a function to the registry (packages that own functions
// needing more than funcs knows, like sql/pgcatalog's, register them at init).
func Register(f *Func) { register(f) }

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
	// Named lists the parameter names a call may use (name => value),
	// each with the default a call that leaves it out gets; the binder
	// turns such a call into a positional one (make_interval).
	Named []NamedParam
}

// NamedParam is a parameter a call may name, and its default.
type NamedParam struct {
	Name    string
	Default types.Datum
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
	// WithinGroup: an ordered-set aggregate (percentile_cont, mode):
	// called as f(direct args) WITHIN GROUP (ORDER BY key), it is
	// resolved and fed with the direct arguments followed by the key,
	// in the key's order (stats.go).
	WithinGroup bool
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

// All lists every registered function, sorted by name (pg_proc).
func All() []*Func {
	out := make([]*Func, 0, len(registry))
	for _, f := range registry {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
