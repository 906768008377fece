// Package stats is ANALYZE: it samples a table's rows as PostgreSQL does
// (a reservoir of 300 × the statistics target rows, 30000 by default) and
// computes per column what the planner's estimates read
// (catalog.ColumnStats: null_frac, avg_width, n_distinct by PostgreSQL's
// Haas–Stokes estimator, the most common values chosen by PostgreSQL 15's
// significance test, an equi-depth histogram of the rest, and the
// correlation of value order with key order). catalog stores the result;
// sql/exec's plan.Stats and pg_stats read it back.
//
// Auto (auto.go) keeps the statistics current without blocking writers:
// a commit subscriber marks the tables a commit changed, and one
// background goroutine re-analyzes a table once the rows changed since
// its last analysis (storage's history) pass PostgreSQL's
// autovacuum_analyze_threshold + autovacuum_analyze_scale_factor ×
// reltuples (50 + 0.1 × rows).
//
// Invariants:
//  1. Statistics are advisory: they are read at any snapshot and never
//     make an answer wrong, only a plan slower.
//  2. Collecting reads one snapshot and writes only the table's statistics
//     record (never the catalog generation), so it conflicts with no
//     writer and no DDL.
//
// Imports: catalog, storage, sql/types, pgerror.
package stats
