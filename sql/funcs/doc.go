// Package funcs is the function registry: every scalar, aggregate and
// window-only (window.go) function callable from SQL, each with its
// overloads and its determinism flag (refresh/ uses the flag to decide
// whether a view can be maintained incrementally, R-Q3, R-I2).
//
// Invariants:
//  1. A new function is one registry entry: name, determinism, overloads
//     (parameter types, result type, implementation), and a logic-test block.
//  2. NullStrict overloads are never called with a NULL argument: the
//     executor returns NULL for them (a set-returning one gives no rows).
//  3. A set-returning function is an overload with SRF set: it returns a
//     row iterator (array_srf.go), its columns are Cols or one of type Ret.
//  4. Polymorphic parameters (Overload.Poly, array.go) are resolved by the
//     binder to one common element type before Ret and Fn see them.
//  5. Deterministic is per function: a spelling whose value depends on the
//     clock is written by the binder over now()/current_date (age(t),
//     unix_timestamp()), so the function itself stays deterministic and
//     refresh/ sees the time function it knows.
//  6. An ordered-set aggregate (AggDef.WithinGroup: percentile_cont,
//     mode) gets its direct arguments then its WITHIN GROUP key, in the
//     key's order (stats.go).
//  7. Results match PostgreSQL 15's, types, scales and errors included
//     (the func_*.slt logic tests take theirs from a real PostgreSQL),
//     except where a file says otherwise: double precision exp, ln, log,
//     log10, power, cbrt and the trigonometric functions reproduce glibc's
//     results (ddmath.go, math.go); the hyperbolic ones come from Go's
//     math package and may differ in the last digit.
//  8. A function that can build a large value, and a state that keeps
//     values, charge the memory budget (Ctx.Mem) before they allocate:
//     Reserve for a result of LargeValue or more, Grow for what a state
//     or a set-returning call keeps (budget.go); past the budget the call
//     fails with 53200.
//
// Files: budget.go, scalar.go and string2.go (strings), regexp.go, encode.go,
// format.go, math.go, ddmath.go, datetime.go, formatting.go (to_char/to_date/
// to_timestamp templates), numformat.go (to_char over numbers),
// spark_datetime.go (Databricks date functions), aggregates*.go, stats.go,
// string_agg.go, array*.go, window.go, misc.go, random.go, sequence.go.
//
// Imports: sql/types, pgerror only.
package funcs
