// Package refresh keeps materialized views equal to their queries: the
// refresh runner (one path for CREATE's first population, manual REFRESH and
// scheduled runs), the analysis of what can be maintained incrementally,
// the choice of technique for each refresh, checkpoints (which version of
// each source a view consumed), and the record of runs.
//
// A refresh (DESIGN.md "Incremental view maintenance"):
//  1. takes one storage snapshot for all sources, and binds the view's
//     query checking its owner's SELECT on every relation it names (and
//     each plain view's owner's on that view's): a refresh after a REVOKE
//     fails with 42501 and changes nothing; the query runs as the owner;
//  2. reads each source's version at that snapshot;
//  3. NO_OP when none moved since the checkpoint (unless FULL was asked,
//     optimal_refresh is off, or a WHERE reads the time);
//  4. otherwise plans (planner.go): the analysis (analyze.go) says which
//     techniques the query's shape allows and what blocks them; the change
//     of every source since the checkpoint is read from its change feed
//     (delta.go: per row id, first old image and last new image); the
//     view's change is built by differentiating the bound plan (delta.go;
//     a change joined to a table on its primary key looks its keys up
//     there instead of reading the table: lookup.go)
//     or, for a query ending in COUNT/SUM/AVG/MIN/MAX, by folding the
//     input's change into stored per-group states (groupagg.go); the cost
//     model (costmodel.go: the planner's statistics for both candidates,
//     in seconds at the rates the view's own earlier refreshes ran at,
//     kept in its checkpoint) weighs it against a full recompute; the
//     plans the differentiation itself runs are priced before they run
//     and stop it at a full recompute's estimate (budget.go), so choosing
//     never costs more than the refresh chosen against;
//     planning_information records each estimate and the actual time;
//     what is analyzed and differentiated is the query as bound; what is
//     evaluated — the full recompute, the change plans, the invariants
//     check — is first optimized as a SELECT's plan is (evalplan.go), the
//     change set a relation of its real size, so each change joins outward
//     from itself through the other sources' keys (a changed left side is
//     joined as L_new ⋈ ΔR with corrections, not L_old ⋈ ΔR, and touched
//     groups over a join are a join with their keys: delta.go, lookup.go);
//  5. writes the view's change (apply.go: rows gained minus rows lost,
//     consolidated by content) or its full recompute (full.go: only the
//     rows that differ, found by merging the sorted new rows with the
//     stored ones, fulldiff.go), the group states, the checkpoint and the run
//     record in ONE storage commit, so readers see the old or the new
//     content, never a mix, and a crash leaves the previous state whole.
//
// The techniques of R-I1 (typed TechniqueName) each implement the Technique
// interface (technique.go) in their own file: whether it applies to an
// analysed view and why not, its run, its estimate. The planner tries the
// table techniqueTable in order and runs the first that applies and does
// not refuse: GROUP_AGGREGATE (stored states, groupagg.go),
// GENERIC_AGGREGATE (touched groups, rows or set-operation keys recomputed
// on the old and new snapshots, generic.go), WINDOW_FUNCTION (window.go),
// APPEND_ONLY (only rows gained, from insert-only changes, appendonly.go),
// ROW_BASED (rows gained and lost through select/project/filter/joins/UNION
// ALL, rowbased.go), PARTITION_OVERWRITE (partition.go), TOP_K (ORDER BY …
// LIMIT k: the view's rows plus the input's change, kept when the answer
// cannot depend on rows outside the view, topk.go). A filter against an
// uncorrelated scalar subquery (TPC-H Q11/Q15/Q22) is linear while the
// scalar's sources do not change and runs again, old and new, when they do
// (scalarfilter.go); a MIN/MAX scalar keeps its value and the count of
// its input's rows at it in the checkpoint, so it moves with its input's
// change and the filter stays linear while it keeps its value
// (scalar_state.go). What stops a plan
// node from being maintained is answered once (localBlockers in
// analyze.go), for EXPLAIN's analysis and the differentiator alike. A
// change is a Z-set (zset.go: rows with integer weights); consolidate is
// the one place weights are summed, for the view's writes, the group
// states' folds and streaming appends.
// An aggregate inside the query whose every row an aggregate above reads
// (TPC-H Q13's orders per customer, Q15's revenue0 under its max) keeps
// per-group states too (inner_state.go): the differentiator folds its
// input's change into them instead of recomputing the touched groups, and
// the full recompute builds them and reads their rows.
// GROUP_AGGREGATE keeps SUM/AVG of decimals only over expressions of one
// fixed scale (fixed_scale.go), whose states taking rows back print as fresh
// ones; EXPLAIN REFRESH names the aggregate it refuses and the fix.
//
// Streaming tables (streaming.go) share the runner, the writer and the run
// record but not the planning: a refresh appends the query's result over the
// rows committed to each stream after the table's checkpoint (R-ST2).
//
// Invariants:
//  1. After a successful refresh the view holds exactly the rows its query
//     returns on the snapshot the refresh read (R-M5). The invariants build
//     tag checks it after every incremental refresh (panics otherwise); an
//     incremental change that cannot be applied (a row to remove is not
//     there) is recomputed in full and logged as drift.
//  2. At most one refresh of a view runs at a time (Runner's per-view lock).
//  3. A view's rows are keyed by content (hash, copy number), so one copy of
//     a row is found with one seek; views hold bags (copies are rows).
//  4. A view with Checkpoint.GroupState has one stored state per non-empty
//     group, equal to the aggregate over that group's input rows at the
//     checkpoint; any refresh that does not maintain them clears the flag.
//  5. A streaming table holds, for every stream row committed up to the
//     version its checkpoint names, the output of the definition in force
//     when the row was processed, once (FULL and RESET CHECKPOINTS aside);
//     rows and checkpoint change only together, in one commit.
//  6. A checkpoint's Scalars hold, for each MIN/MAX scalar subquery they
//     name, its value over the checkpoint's snapshot and the count of its
//     input's rows at that value; a refresh that did not compute one
//     leaves it out (the invariants build checks them after every
//     incremental refresh).
//  7. A checkpoint's InnerStates name the inner aggregates whose stored
//     states hold, per non-empty group, the aggregate over that group's
//     input rows at the checkpoint; an incremental refresh keeps an id
//     only when it folded that aggregate's change or none of its sources
//     moved (the invariants build checks the states after every
//     incremental refresh).
//
// Imports: sql/exec, sql/plan, sql/parse, sql/funcs, sql/types, catalog,
// storage, pgerror.
package refresh
