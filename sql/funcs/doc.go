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
//
// Imports: sql/types, pgerror only.
package funcs
