// Package refresh keeps materialized views equal to their queries: the
// refresh runner (one path for CREATE's first population, manual REFRESH and
// scheduled runs), the choice of technique for each refresh, checkpoints
// (which version of each source a view consumed), and the record of runs.
//
// A refresh (DESIGN.md "Incremental view maintenance"):
//  1. takes one storage snapshot for all sources;
//  2. reads each source's version at that snapshot;
//  3. NO_OP when none moved since the checkpoint (unless FULL was asked or
//     optimal_refresh is off);
//  4. otherwise plans a technique — today FULL_RECOMPUTE; the incremental
//     techniques plug in behind the Technique interface;
//  5. writes the view's new content, the checkpoint and the run record in
//     ONE storage commit, so readers see the old or the new content, never
//     a mix, and a crash leaves the previous state whole.
//
// Invariants:
//  1. After a successful refresh the view holds exactly the rows its query
//     returns on the snapshot the refresh read (R-M5).
//  2. At most one refresh of a view runs at a time (Runner's per-view lock).
//
// Imports: sql/exec, sql/plan, sql/parse, sql/funcs, sql/types, catalog,
// storage, pgerror.
package refresh
