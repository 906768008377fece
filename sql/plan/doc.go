// Package plan binds statements parsed by sql/parse against a catalog
// snapshot — names, types, implicit casts, parameters — and produces plans:
// plain data structures (nodes and typed expressions) that sql/exec runs.
//
// Invariants:
//  1. Plans are data: no node holds storage handles or runs anything; the
//     planner never touches Pebble, the executor never parses.
//  2. Every expression is typed when bound; implicit casts are explicit Cast
//     nodes, so the executor never guesses a type.
//  3. A row flowing between nodes is a []types.Datum laid out as the node's
//     Columns() say; a Scan's row holds every table column (those the plan
//     does not need stay NULL and are never decoded) followed by the hidden
//     row-tracking columns.
//  4. Errors carry SQLSTATEs and positions into the client's text.
//
// Imports: sql/parse, sql/funcs, sql/types, catalog, pgerror.
package plan
